"""CPU schedule of depthwise conv2d: each channel's plane on its own.

A depthwise convolution (one input channel per group) does `KH * KW`
multiply-adds per output, with no reduction across channels to share a
loaded value: the direct schedule's tiles of output channels have one row,
so each multiply-add needed a load of its own and waited on the one before
(one accumulator).  Here a task is one output channel: its input channel is
copied, zero-padded and split by stride phase (`cpu_planes.Planes`), into a
buffer on the task's stack, where it stays in L1 or L2 for all of its tiles;
a register tile is `rows` output rows × `nr` columns (`vectors` SIMD
registers of pixels).  For each window column (a loop), the tile's rows and
the window's rows are unrolled, grouped by the input vector they read:
output rows `i` and `i + 1` read the same plane row for taps `ky + 1` and
`ky` (stride 1), so each input vector is loaded once and feeds every
multiply-add that reads it, up to `KH` of them, then is dead.  Stride 2
reads each tap from its phase plane as a unit-stride run (no gathers), and
the padding is in the planes (no per-tap branch).  Tiles overlap at the
image's bottom and right edges rather than run past them; the epilogue
(bias, activation) runs on the tile as it is stored.

Channels stay in `NCHW` and the pixels in the lanes: with channels in the
lanes, an `NCHW` input and output would each need a transposing copy, a
gather or scatter per element, against `KH * KW / lanes` multiply-adds per
output (9/16 for a 3x3 window with AVX-512).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import SSAValue

from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import ForKind
from hetero.te.emit import Emitter, Index
from hetero.te.schedules.cpu_planes import Planes, fill_plane, used_phases
from hetero.te.schedules.cpu_tiles import CONTRACT, MAX_ROWS, store_tile, zero_tile
from hetero.te.schedules.isa import vector_isa
from hetero.te.schedules.problems import Conv2D

SPARE_REGISTERS = 4
"""Vector registers a depthwise tile leaves to what is not an accumulator:
the input vector being read, the next one in flight, and (without
broadcasts from memory, AVX2) the broadcast weights."""

LEAST_ROWS = 4
"""Fewest output rows a tile keeps when it chooses its width: a row's
input vectors are shared with the `KH - 1` rows below it, so more rows
load each one fewer times."""


def depthwise(c: Conv2D) -> bool:
    """Whether `c` is a depthwise convolution this schedule takes: one input
    channel per group (`O` a multiple of the groups), of floats."""
    channels = c.data.shape[1]
    return (
        c.groups > 1
        and c.groups == channels
        and c.weight.shape[1] == 1
        and isinstance(c.element_type, AnyFloat)
    )


@dataclass(frozen=True)
class DepthwiseTile:
    """A depthwise conv2d's register tile: `rows` output rows × `vectors`
    SIMD registers of `lanes` columns, `row_tiles` of them down the image
    and `col_tiles` across it."""

    lanes: int
    rows: int
    vectors: int
    row_tiles: int
    col_tiles: int

    @property
    def nr(self) -> int:
        """Columns of the tile."""
        return self.vectors * self.lanes


NARROWEST_BITS = 128
"""The narrowest vector a depthwise tile takes for rows narrower than a
register (`depthwise_tile`)."""


def depthwise_tile(c: Conv2D, target: TargetAttr | None) -> DepthwiseTile:
    """The tile whose accumulators fit the ISA's registers (less
    `SPARE_REGISTERS`): as few vectors as cover a row in the fewest column
    tiles (at most as many as leave `LEAST_ROWS` rows), then as many rows,
    up to `MAX_ROWS`, evened over the image's rows.  A row of at most half
    a register takes vectors of half the width, down to `NARROWEST_BITS`
    (7x7 images with AVX-512: 8 lanes, not 16): a core whose multiply-adds
    are narrower than its registers (AMD Zen 4 runs a 512-bit one as two
    256-bit halves) spends no time on lanes past the row."""
    isa = vector_isa(target)
    lanes = isa.lanes(c.element_type)
    out_h, out_w = c.out_shape[2:]
    width = c.element_type.bitwidth  # type: ignore[attr-defined]
    while out_w <= lanes // 2 and lanes // 2 * width >= NARROWEST_BITS:
        lanes //= 2
    budget = isa.registers - SPARE_REGISTERS
    widest = max(1, budget // LEAST_ROWS)
    col_tiles = math.ceil(out_w / (widest * lanes))
    vectors = math.ceil(out_w / col_tiles / lanes)
    most = min(out_h, MAX_ROWS, budget // vectors)
    row_tiles = math.ceil(out_h / most)
    return DepthwiseTile(
        lanes, math.ceil(out_h / row_tiles), vectors, row_tiles, col_tiles
    )


@dataclass(frozen=True)
class _Depthwise:
    """A depthwise conv2d: the problem, its tile, its planes, and the
    task's padded input channel."""

    c: Conv2D
    t: DepthwiseTile
    planes: Planes
    padded: SSAValue


def conv2d_depthwise(e: Emitter, c: Conv2D, target: TargetAttr | None) -> None:
    """One parallel task per image and output channel: the input channel
    padded into planes on the stack, then the tiles row by row."""
    t = depthwise_tile(c, target)
    batch, out_channels, out_h, out_w = c.out_shape
    wq = Planes.of(c, 0).wq
    planes = Planes.of(c, (out_h - 1) * wq + max(out_w, t.nr))
    sh, sw = c.strides
    task, flat = e.loop(batch * out_channels, ForKind.PARALLEL)
    n, o = task.div(flat, out_channels), task.rem(flat, out_channels)
    ch = task.div(o, out_channels // c.groups)
    padded = task.alloc([sh * sw, planes.length], c.element_type, "local")
    for rp, cp in used_phases(c):
        fill_plane(task, c, planes, padded, [rp * sw + cp], rp, cp, source=[n, ch])
    d = _Depthwise(c, t, planes, padded)
    rows, yt = task.loop(t.row_tiles)
    y0 = rows.min(rows.mul(yt, t.rows), out_h - t.rows)
    cols, xt = rows.loop(t.col_tiles)
    x0 = cols.min(cols.mul(xt, t.nr), max(0, out_w - t.nr))
    _tile(cols, d, [n, o, y0, x0])


def _tile(e: Emitter, d: _Depthwise, at: list[Index]) -> None:
    """The tile at output (image, channel, row, column) `at`: zeroed, a
    loop over the window's columns (`_column`), then stored through the
    epilogue."""
    c, t = d.c, d.t
    n, o, y0, x0 = at
    acc = e.alloc([t.rows, t.nr], c.element_type, "local")
    zero_tile(e, acc, t.rows, t.nr)
    _column(e, d, acc, [o, e.add(e.mul(y0, d.planes.wq), x0)])

    def store(w: Emitter, i: Index, j: Index, value: SSAValue) -> None:
        c.store(w, [n, o, w.add(y0, i), w.add(x0, j)], value)

    store_tile(e, acc, t.rows, min(t.nr, c.out_shape[3]), store)


def _column(e: Emitter, d: _Depthwise, acc: SSAValue, at: list[Index]) -> None:
    """For each window column `kx` (a loop: unrolled, a 5x5 window's tiles
    made kernels several times slower to compile), the tile's input
    vectors in that column, each loaded once and multiplied into every row
    that reads it (`_reads`) by the weight of its `ky`.  `at`: the output
    channel and the tile's first element in the planes."""
    c, t = d.c, d.t
    o, start = at
    sw, dw = c.strides[1], c.dilation[1]
    step, kx = e.loop(c.weight.shape[3])
    column = step.mul(kx, dw)
    phase, shift = step.rem(column, sw), step.add(start, step.div(column, sw))
    weights = [c.weight.load(step, [o, 0, ky, kx]) for ky in range(c.weight.shape[2])]
    for (row_phase, row), uses in _reads(c, t.rows).items():
        plane = step.add(row_phase * sw, phase)
        lane, j = step.loop(t.nr, ForKind.VECTORIZED)
        element = lane.add(lane.add(shift, row * d.planes.wq), j)
        value = lane.load(d.padded, [plane, element])
        for i, ky in uses:
            product = lane.op(arith.MulfOp(weights[ky], value, CONTRACT))
            total = lane.op(arith.AddfOp(lane.load(acc, [i, j]), product, CONTRACT))
            lane.store(total, acc, [i, j])


def _reads(c: Conv2D, rows: int) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """The input vectors of one window column that a tile of `rows` output
    rows reads, by (row phase, plane row from the tile's first), in order
    of plane rows, each with the (row, ky) multiply-adds that read it:
    output rows `i` and `i + 1` read plane row `i + 1` for taps `ky` and
    `ky - 1` (stride 1; stride 2: `ky` and `ky - 2` of one row phase)."""
    sh, dh = c.strides[0], c.dilation[0]
    reads: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    uses = [(i, ky) for i in range(rows) for ky in range(c.weight.shape[2])]
    for i, ky in sorted(uses, key=lambda u: (u[0] + u[1] * dh // sh, u[1] * dh % sh)):
        reads[ky * dh % sh, i + ky * dh // sh].append((i, ky))
    return reads
