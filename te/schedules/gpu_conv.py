"""The GPU schedule of `Conv2D`: a thread per output element, or several
threads sharing one where the outputs alone are too few to fill the GPU.

At batch 1, ResNet-50's late 3×3 convolutions have 25 000–50 000 outputs,
each a sum of 2 304–4 608 products: with a thread an output most of an
H200's 132 multiprocessors idle, and each thread runs a long chain of
dependent loads and multiply-adds (docs/gpu.md, "Measured on a GPU").
Here the outputs are `split_sum`s (`hetero.te.schedules.gpu`) over
the group's input channels: lane `l` of `lanes` sums the channels
`c ≡ l (mod lanes)`, all taps of each.  The lanes are lane-major (a warp is
one lane of 32 neighbouring outputs), so a warp's input reads are
contiguous and its weight reads mostly one address.

Each thread sums `CHANNELS` output channels of one pixel (fewer where a
group's output channels do not divide by it): the input element a tap
loads serves each of them.  Whatever the lanes, the sums are kept in
registers and each result is stored once, through the problem's `store`:
the fused epilogue (bias, ReLU, a residual add) runs in the same kernel,
where the plain template accumulates in the output and passes over it again
in a second launch.
"""

from __future__ import annotations

import math

from xdsl.dialects import math as math_dialect
from xdsl.ir import SSAValue

from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import ForKind
from hetero.te.emit import Emitter, Index
from hetero.te.schedules.gpu import SumLane, lanes, split_sum
from hetero.te.schedules.problems import Conv2D

CHANNELS = 4
"""Output channels a thread sums: an input load per `CHANNELS` multiply-adds
rather than one each (the weight loads stay one each, mostly one address
for the whole warp)."""


UNROLLED_TAPS = 9
"""Windows of up to this many taps are unrolled whole; larger ones unroll
their rows only, keeping the kernel and its compile time small (ResNet-50's
7×7 window compiles faster and runs no slower: docs/performance.md)."""


def channels_a_thread(problem: Conv2D) -> int:
    """`CHANNELS`, or the largest divisor of it that divides a group's
    output channels (so that a thread's channels share their inputs)."""
    return math.gcd(CHANNELS, problem.weight.shape[0] // problem.groups)


def _channels_lane(problem: Conv2D, tile: int) -> SumLane:
    """A lane's share of `out[n, o, y, x]` for the `tile` channels `o` from
    `ot * tile`: in[n, g*C/G + c, window] * w[o, c, window] over its input
    channels `c` and the window's taps inside the input (padding reads as 0)."""
    out_channels, group_channels, kh, kw = problem.weight.shape
    sizes = problem.data.shape[2:]

    def sum_lane(
        e: Emitter, output: list[Index], lane: Index, count: int, acc: SSAValue
    ) -> None:
        n, ot, y, x = output
        first = e.mul(ot, tile)
        group = (
            0 if problem.groups == 1 else e.div(first, out_channels // problem.groups)
        )
        base = e.mul(group, group_channels)
        channels, c = e.range(lane, group_channels, count)
        whole = ForKind.UNROLLED if kh * kw <= UNROLLED_TAPS else ForKind.SERIAL
        rows, ky = channels.loop(kh, whole)
        taps, kx = rows.loop(kw, ForKind.UNROLLED)
        source = [
            taps.sub(taps.add(taps.mul(p, s), taps.mul(k, d)), pad)
            for p, k, s, d, pad in zip(
                (y, x), (ky, kx), problem.strides, problem.dilation, problem.padding
            )
        ]
        inside = taps.all_of(
            [taps.in_range(i, 0, size) for i, size in zip(source, sizes)]
        )
        if (tap := taps.when(inside)) is not None:
            pixel = problem.data.load(tap, [n, tap.add(base, c), *source])
            # An `unrolled` TIR loop, not `tile` copies: LLVM unrolls it.
            each, j = tap.loop(tile, ForKind.UNROLLED)
            weight = problem.weight.load(each, [each.add(first, j), c, ky, kx])
            total = each.op(math_dialect.FmaOp(pixel, weight, each.load(acc, [j])))
            each.store(total, acc, [j])

    return sum_lane


def conv2d(e: Emitter, problem: Conv2D, target: TargetAttr | None) -> None:
    """The `(cuda, Conv2D)` schedule (see the module docstring).  Weights in
    a packed or Winograd-domain layout are read through the problem's `OIHW`
    view of them, element by element."""
    n, channels, *pixels = problem.out_shape
    tile = channels_a_thread(problem)
    shape = [n, channels // tile, *pixels]

    def store(f: Emitter, output: list[Index], j: Index, value: SSAValue) -> None:
        n, ot, y, x = output
        problem.store(f, [n, f.add(f.mul(ot, tile), j), y, x], value)

    split_sum(
        e,
        shape,
        lanes(math.prod(shape), problem.weight.shape[1]),
        problem.data.element_type,
        _channels_lane(problem, tile),
        store,
        width=tile,
    )
