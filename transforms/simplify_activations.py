"""`simplify-activations`: activations written as products become one op.

PyTorch exports SiLU (swish) as `Mul(x, Sigmoid(x))`: in relay, `x` has two
users, the sigmoid and the product.  `fuse-ops` joins an elementwise op to
the convolution or dense before it only where that op is the value's one
user, so the activation stayed a kernel of its own, which reads and writes
the whole tensor again (a large share of EfficientNet-B1's time,
docs/performance.md).  As
`relay.silu(x)` it is one elementwise op, which the convolution applies as
it stores its tiles:

    multiply(x, sigmoid(x)) → silu(x)      (either operand order)

(`relay.hard_swish`, MobileNet-v3's `x * hard_sigmoid(x)`, comes as one op
from the ONNX importer already.)
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from hetero.dialects import relay


def _gated(value: SSAValue, x: SSAValue) -> bool:
    """Whether `value` is `sigmoid(x)`."""
    return isinstance(value.owner, relay.SigmoidOp) and value.owner.x == x


class FormSilu(RewritePattern):
    """`multiply(x, sigmoid(x))` → `silu(x)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.MultiplyOp, rewriter: PatternRewriter, /):
        lhs, rhs = op.operands
        x = lhs if _gated(rhs, lhs) else rhs if _gated(lhs, rhs) else None
        if x is None:
            return
        gate = (rhs if x is lhs else lhs).owner
        silu = relay.SiluOp(x)
        if (device := op.vdevice) is not None:
            silu.properties["vdevice"] = device
        rewriter.replace(op, silu)
        if not gate.results[0].uses:
            rewriter.erase(gate)


@dataclass(frozen=True)
class SimplifyActivationsPass(ModulePass):
    """Forms one-op activations from their products (see the module docstring)."""

    name = "simplify-activations"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FormSilu()).rewrite_module(op)
