"""The GPU schedule of `Conv2D`: a thread per output element, or several
threads sharing one where the outputs alone are too few to fill the GPU.

At batch 1, ResNet-50's late 3×3 convolutions have 25 000–50 000 outputs,
each a sum of 2 304–4 608 products: with a thread an output most of an
H200's 132 multiprocessors idle, and each thread runs a long chain of
dependent loads and multiply-adds (docs/gpu.md, "Measured on a GPU").
Here the outputs are `split_sum`s (`hetero.lowering.gpu_schedules`) over
the group's input channels: lane `l` of `lanes` sums the channels
`c ≡ l (mod lanes)`, all taps of each.  The lanes are lane-major (a warp is
one lane of 32 neighbouring outputs), so a warp's input reads are
contiguous and its weight reads mostly one address.

Whatever the lanes, the sum is kept in a register and the result is stored
once, through the problem's `store`: the fused epilogue (bias, ReLU, a
residual add) runs in the same kernel, where the plain template accumulates
in the output and passes over it again in a second launch.
"""

from __future__ import annotations

import math

from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import ForKind
from hetero.lowering.gpu_schedules import SumLane, lanes, split_sum
from hetero.lowering.schedules.problems import Conv2D
from hetero.lowering.te_emit import Emitter, Index
from xdsl.dialects import math as math_dialect
from xdsl.ir import SSAValue


def _channels_lane(problem: Conv2D) -> SumLane:
    """A lane's share of `out[n, o, y, x]`: in[n, g*C/G + c, window] *
    w[o, c, window] over its input channels `c` and the window's taps inside
    the input (padding reads as 0)."""
    out_channels, group_channels, kh, kw = problem.weight.shape
    sizes = problem.data.shape[2:]

    def sum_lane(
        e: Emitter, output: list[Index], lane: Index, count: int, acc: SSAValue
    ) -> None:
        n, o, y, x = output
        group = 0 if problem.groups == 1 else e.div(o, out_channels // problem.groups)
        base = e.mul(group, group_channels)
        channels, c = e.range(lane, group_channels, count)
        rows, ky = channels.loop(kh, ForKind.UNROLLED)
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
            weight = problem.weight.load(tap, [o, c, ky, kx])
            total = tap.op(math_dialect.FmaOp(pixel, weight, tap.load(acc, [0])))
            tap.store(total, acc, [0])

    return sum_lane


def conv2d(e: Emitter, problem: Conv2D, target: TargetAttr | None) -> None:
    """The `(cuda, Conv2D)` schedule (see the module docstring)."""
    assert not problem.winograd, "no Winograd-domain weights on a GPU"
    shape = problem.out_shape
    count = lanes(math.prod(shape), problem.weight.shape[1])
    split_sum(
        e,
        shape,
        count,
        problem.data.element_type,
        _channels_lane(problem),
        problem.store,
    )
