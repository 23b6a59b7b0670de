"""The templates of the poolings: 2-D ones as a `Pool2D` problem for the
target's schedule, blocked layouts a block of channels per vector, else a
nest over the window's taps."""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from hetero.dialects import relay
from hetero.dialects.tir import ForKind
from hetero.te.emit import Emitter, Index, Tensor
from hetero.te.schedules import problem_schedule
from hetero.te.schedules.problems import Pool2D
from hetero.te.templates.base import (
    NestTemplate,
    accumulate,
    require_float,
    result_shape,
)
from hetero.te.templates.conv import window_taps
from hetero.te.templates.epilogue import Epilogue, finish, store_into


def _pool_window(
    e: Emitter, op: relay.Pool2DOp | relay.Pool3DOp, position: Sequence[Index]
) -> tuple[Emitter, list[Index], list[Index]]:
    """Loops over a pooling window: the body, the input element on each
    spatial axis, and the tap's offsets from the padded origin (for
    `count_include_pad`)."""
    body, taps = e.nest(op.pool_size)
    source = window_taps(body, op, position, taps)
    return body, source, [body.add(i, pad) for i, pad in zip(source, op.padding)]


def _scheduled_pool(
    e: Emitter,
    op: Operation,
    data: Tensor,
    out: SSAValue,
    epilogue: Epilogue | None,
    average: bool,
) -> bool:
    """Hands a pooling to the target's `Pool2D` schedule, if it has one (a
    global pooling as a window over the whole plane)."""
    if (schedule := problem_schedule(e.target, Pool2D)) is None:
        return False
    window = (
        (op.pool_size, op.strides, op.dilation, op.padding)
        if isinstance(op, relay.Pool2DOp)
        else (data.shape[2:], (1, 1), (1, 1), (0, 0, 0, 0))
    )
    include_pad = isinstance(op, relay.AvgPool2DOp) and op.count_include_pad
    store = store_into(out, epilogue)
    problem = Pool2D(data, result_shape(op), average, *window, include_pad, store)
    schedule(e, problem, e.target)
    return True


def _max_pool(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """out = max over the window's taps inside the input (padding never
    wins); 2-D through the target's pooling schedule where it has one."""
    assert isinstance(op, relay.MaxPool2DOp | relay.MaxPool3DOp)
    (data,) = inputs
    require_float(op, data.element_type)
    if block := _pool_block(op):
        return _blocked_max_pool(e, op, data, out, epilogue, block)
    if isinstance(op, relay.MaxPool2DOp) and _scheduled_pool(
        e, op, data, out, epilogue, average=False
    ):
        return
    body, (n, c, *position) = e.nest(result_shape(op), parallel=True)
    at = [n, c, *position]
    body.store(body.constant(-math.inf, data.element_type), out, at)
    window, source, _ = _pool_window(body, op, position)
    inside = window.all_of(
        [window.in_range(i, 0, size) for i, size in zip(source, data.shape[2:])]
    )
    if (tap := window.when(inside)) is not None:
        accumulate(tap, out, at, data.load(tap, [n, c, *source]), arith.MaximumfOp)
    finish(e, out, result_shape(op), epilogue)


def _blocked_max_pool(
    e: Emitter,
    op: relay.MaxPool2DOp,
    data: Tensor,
    out: SSAValue,
    epilogue: Epilogue | None,
    block: int,
) -> None:
    """Max pooling of blocked data: per output pixel, the vectors of its
    block of channels at the window's taps (unrolled), maxed in a register.
    Where every window is dense and has a tap inside the input
    (`_clamps_safely`), a tap outside reads the nearest pixel inside
    instead, another tap of its window, which cannot change the maximum: no
    branch; otherwise the taps outside are skipped."""
    body, (n, c, *position) = _pool_nest(e, op)
    acc = body.alloc([block], data.element_type, "local")
    init, ci = _lanes(body, block)
    init.store(init.constant(-math.inf, data.element_type), acc, ci)
    taps, window = [], body
    for extent in op.pool_size:
        window, tap = window.loop(extent, ForKind.UNROLLED)
        taps.append(tap)
    sizes = data.shape[2:4]
    source = window_taps(window, op, position, taps)
    tap_body: Emitter | None = window
    if _clamps_safely(op, sizes, result_shape(op)[2:4]):
        source = [
            window.min(window.max(i, 0), size - 1) for i, size in zip(source, sizes)
        ]
    else:
        inside = [window.in_range(i, 0, size) for i, size in zip(source, sizes)]
        tap_body = window.when(window.all_of(inside))
    if tap_body is not None:
        lane, ci = _lanes(tap_body, block)
        value = lane.fmaximum(lane.load(acc, ci), data.load(lane, [n, c, *source, *ci]))
        lane.store(value, acc, ci)
    lane, ci = _lanes(body, block)
    store_into(out, epilogue)(lane, [n, c, *position, *ci], lane.load(acc, ci))


def _clamps_safely(
    op: relay.MaxPool2DOp, sizes: Sequence[int], out_sizes: Sequence[int]
) -> bool:
    """Whether clamping a max pooling's taps into the input keeps its
    result: no dilation (a window's taps are consecutive, so the nearest
    pixel inside is a tap of it) and, along each axis, every window has a
    tap inside (none lies wholly in the padding)."""
    if any(d != 1 for d in op.dilation):
        return False
    return all(
        y * stride - pad + extent > 0 and y * stride - pad < size
        for size, out_size, extent, stride, pad in zip(
            sizes, out_sizes, op.pool_size, op.strides, op.padding
        )
        for y in range(out_size)
    )


def _pool_block(op: Operation) -> int:
    """The channel block of a pooling's blocked layout (0: none)."""
    return relay.data_block(getattr(op, "layout", "NCHW"))


def _pool_nest(e: Emitter, op: Operation) -> tuple[Emitter, list[Index]]:
    """The parallel nest over a pooling's output pixels (a blocked layout's
    channels of a pixel are the vector lanes of `_lanes`)."""
    shape = result_shape(op)
    return e.nest(shape[:-1] if _pool_block(op) else shape, parallel=True)


def _lanes(e: Emitter, block: int) -> tuple[Emitter, list[Index]]:
    """A vectorized loop over the channels of a block (blocked layouts: the
    index to append to a pixel's), else nothing."""
    if not block:
        return e, []
    lane, ci = e.loop(block, ForKind.VECTORIZED)
    return lane, [ci]


def _avg_pool(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """Sum of the taps inside the input divided by the number of counted taps:
    those inside the input, or with `count_include_pad` inside the explicitly
    padded input (never the rows `ceil_mode` adds); at least 1."""
    assert isinstance(op, relay.AvgPool2DOp | relay.AvgPool3DOp)
    (data,) = inputs
    element = data.element_type
    require_float(op, element)
    block = _pool_block(op)
    if (
        not block
        and isinstance(op, relay.AvgPool2DOp)
        and _scheduled_pool(e, op, data, out, epilogue, average=True)
    ):
        return
    rank = len(op.pool_size)
    sizes = data.shape[2 : 2 + rank]
    body, (n, c, *position) = _pool_nest(e, op)
    zero, one = body.constant(0.0, element), body.constant(1.0, element)
    count = body.alloc([1], element, "local")
    init, ci = _lanes(body, block)
    init.store(zero, out, [n, c, *position, *ci])
    body.store(zero, count, [0])
    window, source, padded = _pool_window(body, op, position)
    inside = window.all_of(
        [window.in_range(i, 0, size) for i, size in zip(source, sizes)]
    )
    if (tap := window.when(inside)) is not None:
        lane, ci = _lanes(tap, block)
        value = data.load(lane, [n, c, *source, *ci])
        accumulate(lane, out, [n, c, *position, *ci], value, arith.AddfOp)
    counted = inside
    if op.count_include_pad:
        extents = [op.padding[d] + sizes[d] + op.padding[rank + d] for d in range(rank)]
        counted = window.all_of(
            [window.in_range(i, 0, extent) for i, extent in zip(padded, extents)]
        )
    if (tally := window.when(counted)) is not None:
        accumulate(tally, count, [0], one, arith.AddfOp)
    divisor = body.op(arith.MaximumfOp(body.load(count, [0]), one))
    lane, ci = _lanes(body, block)
    at = [n, c, *position, *ci]
    lane.store(lane.op(arith.DivfOp(lane.load(out, at), divisor)), out, at)
    finish(e, out, result_shape(op), epilogue)


def _global_avg_pool2d(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """out[n, c, 0, 0] = mean of in[n, c, :, :]."""
    (data,) = inputs
    require_float(op, data.element_type)
    block = _pool_block(op)
    if not block and _scheduled_pool(e, op, data, out, epilogue, average=True):
        return
    height, width = data.shape[2:4]
    body, (n, c, _, _) = _pool_nest(e, op)
    init, ci = _lanes(body, block)
    init.store(init.constant(0.0, data.element_type), out, [n, c, 0, 0, *ci])
    window, (row, col) = body.nest([height, width])
    lane, ci = _lanes(window, block)
    value = data.load(lane, [n, c, row, col, *ci])
    accumulate(lane, out, [n, c, 0, 0, *ci], value, arith.AddfOp)
    lane, ci = _lanes(body, block)
    at = [n, c, 0, 0, *ci]
    size = lane.constant(float(height * width), data.element_type)
    lane.store(lane.op(arith.DivfOp(lane.load(out, at), size)), out, at)
    finish(e, out, result_shape(op), epilogue)


TEMPLATES: dict[type[Operation], NestTemplate] = {
    relay.MaxPool2DOp: _max_pool,
    relay.AvgPool2DOp: _avg_pool,
    relay.MaxPool3DOp: _max_pool,
    relay.AvgPool3DOp: _avg_pool,
    relay.GlobalAvgPool2DOp: _global_avg_pool2d,
}
"""Pooling op → template writing its result into a buffer."""
