"""`simplify-inference`: inference-only operators become plain arithmetic.

TVM's `SimplifyInference`: `relay.nn.batch_norm` in inference form is an
affine map per channel,

    batch_norm(x, γ, β, μ, σ², axis, ε) = x · s + (β − μ · s),   s = γ / √(σ² + ε)

written with relay operators: `s` and the shift are `[C]` vectors, `s` is
given trailing unit dimensions so that it broadcasts along `axis`, and the
shift is a `relay.nn.bias_add` on `axis` — the form that `fold-scale-axis`
pushes into a preceding convolution and that `fuse-ops` fuses as an epilogue.
With constant statistics (the usual case), `fold-constant` then turns `s` and
the shift into constants.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from hetero.dialects import relay
from hetero.transforms.fold_constant import constant_of


class DecomposeBatchNorm(RewritePattern):
    """`batch_norm` → `bias_add(x * expand(s), β − μ·s)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.BatchNormOp, rewriter: PatternRewriter, /):
        x_type = op.x.type
        vector_type = op.gamma.type
        assert isinstance(x_type, TensorType) and isinstance(vector_type, TensorType)
        rank = x_type.get_num_dims()
        axis = op.axis % rank
        new: list[Operation] = []

        def emit(o: Operation) -> SSAValue:
            new.append(o)
            return o.results[0]

        epsilon = emit(
            constant_of(np.array(op.epsilon), TensorType(vector_type.element_type, []))
        )
        root = emit(relay.SqrtOp(emit(relay.AddOp(op.moving_var, epsilon))))
        scale = emit(relay.DivideOp(op.gamma, root))
        shift = emit(
            relay.SubtractOp(op.beta, emit(relay.MultiplyOp(op.moving_mean, scale)))
        )
        if rank - 1 - axis:
            scale = emit(relay.ExpandDimsOp(scale, axis=1, num_newaxis=rank - 1 - axis))
        scaled = emit(relay.MultiplyOp(op.x, scale))
        emit(relay.BiasAddOp(scaled, shift, axis=axis))
        if (device := op.vdevice) is not None:
            for o in new:
                o.properties["vdevice"] = device
        rewriter.replace(op, new)


@dataclass(frozen=True)
class SimplifyInferencePass(ModulePass):
    """Decomposes inference-only operators (see the module docstring)."""

    name = "simplify-inference"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(DecomposeBatchNorm()).rewrite_module(op)
