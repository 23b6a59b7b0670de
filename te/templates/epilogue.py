"""Epilogues: the elementwise tail of an anchor (dense, conv2d, a pooling,
layer_norm), applied to each element where the anchor computes it and
stored in its place, so the tail costs no pass over the result.

The tail is a small DAG, not only a chain: `fuse-ops` joins diamonds (SiLU's
`y * sigmoid(y)`, GELU's `0.5 * y * (1 + erf(y / √2))`), so a value of the
tail may feed several of its ops.  The epilogue computes each op once per
element, in order, and hands its value to every op that reads it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from hetero.analysis.shape_functions import Dim
from hetero.dialects import relay
from hetero.te.emit import Emitter, Index, Tensor, shape_of
from hetero.te.schedules.problems import Store
from hetero.te.templates.base import channel_axis
from hetero.te.templates.elementwise import scalar_bodies


@dataclass(frozen=True)
class Epilogue:
    """A fused elementwise tail of an anchor: (indices, computed element) →
    the element to store (see `lower-te`: bias_add, relu, ... after
    dense/conv2d)."""

    apply: Callable[[Emitter, Sequence[Index], SSAValue], SSAValue]
    flat_pixels: bool = False
    """It reads the same elements at `[..., 0, y * W + x]` as at `[..., y,
    x]` (its other operands are buffers as wide and high as the result, or
    broadcast along both, or per channel): a schedule may address the
    result as one flattened image (`Conv2D.flat_store`)."""

    def __call__(self, e: Emitter, idx: Sequence[Index], element: SSAValue) -> SSAValue:
        return self.apply(e, idx, element)


def store_into(out: SSAValue, epilogue: Epilogue | None) -> Store:
    """The schedules' output writer: the epilogue, then a store into `out`."""
    if epilogue is None:
        return lambda e, idx, value: e.store(value, out, idx)
    return lambda e, idx, value: e.store(epilogue(e, idx, value), out, idx)


def finish(
    e: Emitter, out: SSAValue, shape: Sequence[int], epilogue: Epilogue | None
) -> None:
    """Without a schedule, the epilogue runs over the finished output, in place."""
    if epilogue is not None:
        body, idx = e.nest(shape, parallel=True)
        body.store(epilogue(body, idx, body.load(out, idx)), out, idx)


def is_epilogue(op: Operation) -> bool:
    """An elementwise op that an anchor can apply to each computed element
    and store where the anchor would (of the anchor's element type: not a
    comparison)."""
    if isinstance(op, relay.BiasAddOp | relay.BatchNormOp):
        return True
    return "float" in scalar_bodies(type(op)) and not isinstance(op, relay.ComparisonOp)


EPILOGUE_ANCHORS: frozenset[type[Operation]] = frozenset(
    {
        relay.DenseOp,
        relay.MatmulOp,
        relay.Conv2DOp,
        relay.Conv2DTransposeOp,
        relay.Conv3DOp,
        relay.MaxPool2DOp,
        relay.MaxPool3DOp,
        relay.AvgPool3DOp,
        relay.AvgPool2DOp,
        relay.GlobalAvgPool2DOp,
        relay.LayerNormOp,
    }
)
"""Nest templates taking `epilogue=`: they apply it once per output element,
where the element is computed (a schedule: per register tile)."""


def epilogue_ops(
    anchor: Operation, values: Mapping[SSAValue, Tensor]
) -> list[Operation]:
    """The elementwise ops after `anchor` that it applies as it stores: in
    block order, each of the anchor's type, reading the anchor's result or an
    earlier one's, its other operands computed already (in `values`); the
    longest such run after which no value but the last is used outside it
    (a diamond has closed), so that only the last needs storing."""
    if type(anchor) not in EPILOGUE_ANCHORS:
        return []
    result = anchor.results[0]
    inside = {result}
    taken: list[Operation] = []
    closed: list[Operation] = []
    op = anchor.next_op
    while (
        op is not None
        and is_epilogue(op)
        and op.results[0].type == result.type
        and any(v in inside for v in op.operands)
        and all(v in inside or v in values for v in op.operands)
    ):
        taken.append(op)
        inside.add(op.results[0])
        if _used_inside(inside - {op.results[0]}, taken):
            closed = list(taken)
        op = op.next_op
    return closed


def _used_inside(values: set[SSAValue], ops: Sequence[Operation]) -> bool:
    users = set(ops)
    return all(use.operation in users for v in values for use in v.uses)


def epilogue_of(
    anchor: Operation, ops: Sequence[Operation], values: Mapping[SSAValue, Tensor]
) -> Epilogue:
    """The ops' lazy templates applied to the anchor's computed element (all
    of its shape, so every op reads its operands of the tail at the stored
    indices): each op's element is computed once and read by every later op
    that uses it."""
    from hetero.te.templates import lazy_template  # the package imports this module

    result = anchor.results[0].type
    assert isinstance(result, TensorType)
    shape = shape_of(anchor.results[0])

    def apply(e: Emitter, idx: Sequence[Index], element: SSAValue) -> SSAValue:
        computed = {anchor.results[0]: element}
        for op in ops:
            inputs = [
                Tensor(shape, result.element_type, partial(_known, computed[v]))
                if v in computed
                else values[v]
                for v in op.operands
            ]
            template = lazy_template(type(op))
            assert template is not None  # `is_epilogue`
            computed[op.results[0]] = template(op, inputs).load(e, idx)
        return computed[ops[-1].results[0]]

    return Epilogue(apply, _flat_pixels(anchor, ops, values))


def _known(element: SSAValue, e: Emitter, idx: Sequence[Index]) -> SSAValue:
    """The loader of an element of the tail computed already."""
    return element


def _flat_pixels(
    anchor: Operation, ops: Sequence[Operation], values: Mapping[SSAValue, Tensor]
) -> bool:
    """Whether the tail reads the same elements at `[..., 0, y * W + x]` as
    at `[..., y, x]` (`Epilogue.flat_pixels`): each operand from outside the
    tail is a per-channel one of a `bias_add` or `batch_norm` on an axis
    before the last two, or a buffer whose last two dimensions (aligned to
    the result's) are the result's or both broadcast."""
    shape = shape_of(anchor.results[0])
    if len(shape) < 2 or any(isinstance(d, Dim) for d in shape):
        return False  # (not asked of sizes known at run time only)
    inside = {anchor.results[0], *(op.results[0] for op in ops)}
    for op in ops:
        if isinstance(op, relay.BiasAddOp | relay.BatchNormOp):
            if channel_axis(op, len(shape)) >= len(shape) - 2:
                return False
            continue
        for v in op.operands:
            if v in inside:
                continue
            tensor = values[v]
            rows, columns = (1, 1, *tensor.shape)[-2:]
            if (rows, columns) != (1, 1) and (
                tensor.buffer is None or (rows, columns) != tuple(shape[-2:])
            ):
                return False
    return True
