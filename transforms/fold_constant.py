"""`fold-constant`: evaluate at compile time what depends on constants only.

TVM's `FoldConstant` (which `relay.build` runs before device planning):

* a tensor operator whose operands are all `relay.constant`s becomes the
  `relay.constant` of its value, computed by the reference interpreter (so
  folding means exactly what running means);
* `relay.shape_of` of a statically shaped tensor becomes its shape;
* a `relay.if` of a constant condition becomes its taken branch (TVM's
  `SimplifyExpr`): the branch's ops move before it and its yielded value
  replaces the if's, so that `lower-aot-main` never meets control flow that
  was decided at compile time;
* constants left without users are erased.

Functions, calls, tuples, `relay.on_device` and `relay.device_copy` are
never folded: they carry control or placement, not values.  A folded
constant keeps the op's `vdevice`; a folded `relay.if` placed (`vdevice`)
elsewhere than its taken branch's value stays, as that placement is a
device copy.  Boolean results stay unfolded (their storage convention is
the interpreter's business).  Results
with more than `INLINE_LIMIT` elements are stored as `dense_resource` blobs,
as large weights are, so that the printed IR stays readable; those of more
than `LATER_LIMIT` elements of an elementwise operator (a weight scaled by
`fold-scale-axis`) are computed on the background thread
(`hetero.utils.background`) while the passes go on, and those of an
operator that only views its operand (`VIEWS`: `matmul-to-dense`'s
transpose of a weight) are kept as that view until their bytes are read
(`dense_resource_view`): `alter-op-layout` packs such a weight from the
array it views, in one pass instead of a copy and a pass over the copy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    ModuleOp,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint

from hetero.analysis.devices import device_of
from hetero.dialects import relay
from hetero.interpreter.relay import (
    array_evaluator,
    attribute_value,
    element_dtype,
    evaluate_op,
)
from hetero.utils.dense_resources import (
    dense_resource,
    dense_resource_later,
    dense_resource_view,
)

INLINE_LIMIT = 64
"""Folded constants with more elements than this become `dense_resource`s."""

LATER_LIMIT = 1 << 16
"""Folded constants with more elements than this (256 KiB of `f32`) are
computed in the background where they can be (`array_evaluator`): such
weights (a network's scaled convolution weights) are most of the pass's
time (docs/performance.md)."""


VIEWS = (relay.TransposeOp, relay.ExpandDimsOp)
"""Operators whose NumPy rule returns a view of the operand, never a copy
(a reshape copies a view it cannot reshape in place)."""


def constant_of(
    array: np.ndarray, type: TensorType[Attribute], hint: str = "folded"
) -> relay.ConstantOp:
    """A `relay.constant` of type `type` holding `array`."""
    data = _elements(array, type)
    if data.size > INLINE_LIMIT:
        return relay.ConstantOp(dense_resource(data, type, hint))
    return relay.ConstantOp(DenseIntOrFPElementsAttr(type, BytesAttr(data.tobytes())))


def constant_later(
    make: Callable[[], np.ndarray], type: TensorType[Attribute], hint: str
) -> relay.ConstantOp:
    """A `relay.constant` of type `type` (more than `INLINE_LIMIT` elements)
    holding the array `make()` returns, on the background thread
    (`dense_resource_later`)."""
    return relay.ConstantOp(
        dense_resource_later(lambda: _elements(make(), type), type, hint)
    )


def constant_view(
    view: Callable[[], np.ndarray], type: TensorType[Attribute], hint: str
) -> relay.ConstantOp:
    """A `relay.constant` of type `type` holding the values `view()` returns,
    a view of other constants, made when first read (`dense_resource_view`)."""
    return relay.ConstantOp(dense_resource_view(view, type, hint))


def _elements(array: np.ndarray, type: TensorType[Attribute]) -> np.ndarray:
    return np.ascontiguousarray(
        array, element_dtype(type.element_type).newbyteorder("<")
    )


def _foldable(op: Operation) -> bool:
    """A tensor operator of constants, of one non-boolean tensor result (the
    cheap tests first: the pass asks it of every op, most of which are not)."""
    return (
        isinstance(op, relay.TensorOp)
        and all(isinstance(v.owner, relay.ConstantOp) for v in op.operands)
        and len(op.results) == 1
        and isinstance(type := op.results[0].type, TensorType)
        and type.element_type != i1
    )


def _replace(
    op: Operation,
    constant: Callable[[TensorType[Attribute], str], relay.ConstantOp],
    rewriter: PatternRewriter,
) -> None:
    """Replace `op` by the `relay.constant` that `constant(type, hint)` makes."""
    type = op.results[0].type
    assert isinstance(type, TensorType)
    folded = constant(type, op.name.removeprefix("relay.").replace(".", "_"))
    if (device := getattr(op, "vdevice", None)) is not None:
        folded.properties["vdevice"] = device
    rewriter.replace(op, folded)


class FoldTensorOp(RewritePattern):
    """A tensor operator of constants → the constant of its value."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not _foldable(op):
            return
        values = [v.owner.value for v in op.operands]  # type: ignore[attr-defined]
        type = op.results[0].type
        assert isinstance(type, TensorType)
        evaluate = array_evaluator(op)
        if evaluate is not None and type.element_count() > LATER_LIMIT:
            make = partial(_evaluated, evaluate, values)
            later = constant_view if isinstance(op, VIEWS) else constant_later
            _replace(op, partial(later, make), rewriter)
            return
        value = evaluate_op(op, [attribute_value(v) for v in values])
        # Fresh, or a view of the (read-only) constants: a blob without a copy.
        value.setflags(write=False)
        _replace(op, partial(constant_of, value), rewriter)


def _evaluated(
    evaluate: Callable[[Sequence[np.ndarray]], np.ndarray],
    values: Sequence[DenseIntOrFPElementsAttr | DenseResourceAttr],
) -> np.ndarray:
    """`evaluate` of the constants `values` (read here: one of them may be
    made in the background too)."""
    return evaluate([attribute_value(v) for v in values])


class FoldStaticShapeOf(RewritePattern):
    """`relay.shape_of` of a statically shaped tensor → its shape."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, relay.ShapeOfOp):
            return
        type = op.operands[0].type
        if isinstance(type, TensorType) and type.has_static_shape():
            shape = np.array(type.get_shape(), np.int64)
            _replace(op, partial(constant_of, shape), rewriter)


class FoldConstantIf(RewritePattern):
    """`relay.if` of a constant condition → its taken branch, chosen as the
    reference interpreter chooses it (the condition's truth value)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, relay.IfOp) or not isinstance(
            condition := op.cond.owner, relay.ConstantOp
        ):
            return
        truth = bool(attribute_value(condition.value))
        block = (op.true_branch if truth else op.false_branch).block
        terminator = block.last_op
        assert isinstance(terminator, relay.YieldOp)
        value = terminator.value
        if op.vdevice is not None and device_of(value) != op.vdevice:
            return
        rewriter.erase(terminator)
        rewriter.inline_block(block, InsertPoint.before(op))
        rewriter.replace(op, [], [value])


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
                [
                    FoldTensorOp(),
                    FoldStaticShapeOf(),
                    FoldConstantIf(),
                    EraseDeadConstant(),
                ]
            )
        ).rewrite_module(op)
