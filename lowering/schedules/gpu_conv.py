"""The GPU schedule of `Conv2D`: a thread per output element, or several
threads sharing one where the outputs alone are too few to fill the GPU.

At batch 1, ResNet-50's late 3×3 convolutions have 25 000–50 000 outputs,
each a sum of 2 304–4 608 products: with a thread an output most of an
H200's 132 multiprocessors idle, and each thread runs a long chain of
dependent loads and multiply-adds (docs/gpu.md, "Measured on a GPU").
Here `lanes(...)` threads share an output where that brings the launch
towards `MIN_THREADS`: lane `l` sums the input channels `c ≡ l (mod lanes)`
of the output's group, the partial sums meet in `shared` memory, and lane 0
adds them up.

Whatever the lanes, the sum is kept in a register (a `local` buffer) and the
result is stored once, through the problem's `store`: the fused epilogue
(bias, ReLU, a residual add) runs in the same kernel, where the plain
template accumulates in the output and passes over it again in a second
launch.

A block is `THREADS` threads, `THREADS / lanes` outputs of consecutive flat
index, lane-major (thread `t` is lane `t // outputs_per_block`): a warp is
one lane of 32 neighbouring outputs, so its input reads are contiguous and
its weight reads mostly one address.
"""

from __future__ import annotations

import math

from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import ForKind
from hetero.lowering.gpu_schedules import THREADS, GpuEmitter
from hetero.lowering.schedules.problems import Conv2D
from hetero.lowering.te_emit import Emitter, Index
from xdsl.dialects import gpu
from xdsl.dialects import math as math_dialect
from xdsl.dialects.arith import AddfOp
from xdsl.ir import SSAValue

MIN_THREADS = 1 << 17
"""Threads a launch should reach before its outputs are split: an H100 or
H200 holds 132 × 2048 threads at once, and half of that already hides the
latency of the loads."""

MAX_LANES = 32
"""The most threads an output gets."""

MIN_CHANNELS = 8
"""Input channels each lane sums at least: with fewer, the exchange through
shared memory costs more than the split saves."""


def lanes(outputs: int, channels: int) -> int:
    """The threads each of `outputs` outputs gets: the fewest (a power of two)
    that make `MIN_THREADS`, within `MAX_LANES`, each lane summing the same
    number of the group's `channels`, `MIN_CHANNELS` or more."""
    count = 1
    while (
        outputs * count < MIN_THREADS
        and count < MAX_LANES
        and channels % (2 * count) == 0
        and channels // (2 * count) >= MIN_CHANNELS
    ):
        count *= 2
    return count


def _sum_taps(
    e: Emitter,
    problem: Conv2D,
    output: list[Index],
    lane: Index,
    count: int,
    acc: SSAValue,
) -> None:
    """acc += in[n, g*C/G + c, window] * w[o, c, window] over this lane's
    input channels `c` and the window's taps inside the input (padding reads
    as 0)."""
    n, o, y, x = output
    out_channels, group_channels, kh, kw = problem.weight.shape
    group = 0 if problem.groups == 1 else e.div(o, out_channels // problem.groups)
    base = e.mul(group, group_channels)
    steps, step = e.loop(group_channels // count)
    c = steps.add(steps.mul(step, count), lane)
    rows, ky = steps.loop(kh, ForKind.UNROLLED)
    taps, kx = rows.loop(kw, ForKind.UNROLLED)
    source = [
        taps.sub(taps.add(taps.mul(p, s), taps.mul(k, d)), pad)
        for p, k, s, d, pad in zip(
            (y, x), (ky, kx), problem.strides, problem.dilation, problem.padding
        )
    ]
    sizes = problem.data.shape[2:]
    inside = taps.all_of([taps.in_range(i, 0, size) for i, size in zip(source, sizes)])
    if (tap := taps.when(inside)) is not None:
        pixel = problem.data.load(tap, [n, tap.add(base, c), *source])
        weight = problem.weight.load(tap, [o, c, ky, kx])
        total = tap.op(math_dialect.FmaOp(pixel, weight, tap.load(acc, [0])))
        tap.store(total, acc, [0])


def conv2d(e: Emitter, problem: Conv2D, target: TargetAttr | None) -> None:
    """The `(cuda, Conv2D)` schedule (see the module docstring)."""
    assert isinstance(e, GpuEmitter)
    assert not problem.winograd, "no Winograd-domain weights on a GPU"
    shape = problem.out_shape
    outputs = math.prod(shape)
    if outputs == 0:
        return  # nothing to store, and a launch of no threads is an error
    element = problem.data.element_type
    count = lanes(outputs, problem.weight.shape[1])
    per_block = min(THREADS // count, outputs)
    blocks = math.ceil(outputs / per_block)
    grid, bx = e.bind(blocks, "blockIdx.x")
    body, tx = grid.bind(per_block * count, "threadIdx.x")
    lane, slot = body.div(tx, per_block), body.rem(tx, per_block)
    flat = body.add(body.mul(bx, per_block), slot)
    output = body.unflatten(flat, shape)
    inside = True if blocks * per_block == outputs else body.less(flat, outputs)
    acc = body.alloc([1], element, "local")
    body.store(body.constant(0.0, element), acc, [0])
    if (sums := body.when(inside)) is not None:
        _sum_taps(sums, problem, output, lane, count, acc)
        if count == 1:
            problem.store(sums, output, sums.load(acc, [0]))
    if count == 1:
        return
    partial = body.alloc([per_block * count], element, "shared")
    body.store(body.load(acc, [0]), partial, [tx])
    body.op(gpu.BarrierOp())
    first = body.all_of([inside, body.less(tx, per_block)])
    if (last := body.when(first)) is not None:
        total = last.load(partial, [slot])
        for other in range(1, count):
            value = last.load(partial, [last.add(slot, other * per_block)])
            total = last.op(AddfOp(total, value))
        problem.store(last, output, total)
