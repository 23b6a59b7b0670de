"""`fold-constant`: evaluate at compile time what depends on constants only.

TVM's `FoldConstant` (spec: run by `relay.build` before device planning):

* a tensor operator whose operands are all `relay.constant`s becomes the
  `relay.constant` of its value, computed by the reference interpreter (so
  folding means exactly what running means);
* `relay.shape_of` of a statically shaped tensor becomes its shape;
* constants left without users are erased.

Functions, calls, tuples, `relay.if`, `relay.on_device` and
`relay.device_copy` are never folded: they carry control or placement, not
values.  A folded constant keeps the op's `vdevice`.  Boolean results stay
unfolded (their storage convention is the interpreter's business).  Results
with more than `INLINE_LIMIT` elements are stored as `dense_resource` blobs,
as large weights are, so that the printed IR stays readable.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from hetero.dialects import relay
from hetero.interpreter.relay import constant_value, element_dtype, evaluate_op
from hetero.utils.dense_resources import dense_resource

INLINE_LIMIT = 64
"""Folded constants with more elements than this become `dense_resource`s."""


def constant_of(
    array: np.ndarray, type: TensorType[Attribute], hint: str = "folded"
) -> relay.ConstantOp:
    """A `relay.constant` of type `type` holding `array`."""
    data = np.ascontiguousarray(array, element_dtype(type.element_type).newbyteorder("<"))
    if data.size > INLINE_LIMIT:
        return relay.ConstantOp(dense_resource(data, type, hint))
    return relay.ConstantOp(DenseIntOrFPElementsAttr(type, BytesAttr(data.tobytes())))


def _foldable(op: Operation) -> bool:
    type = op.results[0].type if len(op.results) == 1 else None
    return (
        isinstance(op, relay.TensorOp)
        and isinstance(type, TensorType)
        and type.element_type != IntegerType(1)
        and all(isinstance(v.owner, relay.ConstantOp) for v in op.operands)
    )


def _replace(op: Operation, value: np.ndarray, rewriter: PatternRewriter) -> None:
    type = op.results[0].type
    assert isinstance(type, TensorType)
    folded = constant_of(value, type, op.name.removeprefix("relay.").replace(".", "_"))
    if (device := getattr(op, "vdevice", None)) is not None:
        folded.properties["vdevice"] = device
    rewriter.replace(op, folded)


class FoldTensorOp(RewritePattern):
    """A tensor operator of constants → the constant of its value."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not _foldable(op):
            return
        args = [constant_value(v.owner) for v in op.operands]  # type: ignore[arg-type]
        value = evaluate_op(op, args)
        # Fresh, or a view of the (read-only) constants: a blob without a copy.
        value.setflags(write=False)
        _replace(op, value, rewriter)


class FoldStaticShapeOf(RewritePattern):
    """`relay.shape_of` of a statically shaped tensor → its shape."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, relay.ShapeOfOp):
            return
        type = op.operands[0].type
        if isinstance(type, TensorType) and type.has_static_shape():
            _replace(op, np.array(type.get_shape(), np.int64), rewriter)


class EraseDeadConstant(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, relay.ConstantOp) and not op.result.uses:
            rewriter.erase(op)


@dataclass(frozen=True)
class FoldConstantPass(ModulePass):
    """Folds constant subexpressions (see the module docstring)."""

    name = "fold-constant"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [FoldTensorOp(), FoldStaticShapeOf(), EraseDeadConstant()]
            )
        ).rewrite_module(op)
