"""Epilogues: the elementwise tail of an anchor (dense, conv2d, a pooling,
layer_norm), applied to each element where the anchor computes it and
stored in its place, so the tail costs no pass over the result."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from hetero.dialects import relay
from hetero.te.emit import Emitter, Index
from hetero.te.schedules.problems import Store
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
