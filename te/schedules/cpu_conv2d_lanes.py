"""CPU conv2d with the output channels in the vector lanes.

With pixels in the lanes, a small image wastes lanes (49 of 64 at 7×7, the
padding columns of the wide domain, the rest of the last panel).  For deep
reductions the conv2d schedule therefore asks for its weights packed
`OIHW<nr>o` (`cpu_conv2d.conv2d_weight_block`), the `nr` output channels of
a tile contiguous for every tap, and computes tiles of pixels × channels
from them here (`conv2d_channel_lanes`): no lane is wasted on small images.
The same tiles read and write activations blocked `NCHW<b>c`
(`conv2d_data_block`), and the Winograd schedule's products are such tiles
too (`lane_tiles`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import Attribute, SSAValue

from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import ForKind
from hetero.targets.cpu import num_threads, parallel_chunk
from hetero.te.emit import Emitter, Index, Tensor
from hetero.te.schedules.cpu_planes import (
    Planes,
    data_block,
    flat_windows,
    output_pixel,
    pad_input,
    row_major,
    tap,
    used_phases,
)
from hetero.te.schedules.cpu_tiles import (
    CACHE_LINE_BYTES,
    ScheduleParams,
    Tiles,
    each_panel,
    register_tile,
    split,
)
from hetero.te.schedules.isa import vector_isa
from hetero.te.schedules.problems import Conv2D

LANE_DEPTH = 256
"""Least reduction depth (`I * KH * KW`) for which `conv2d_weight_block`
puts output channels in the lanes: each tile ends with a transposing store
(a vector of pixels gathered from the tile's lanes per channel), which a
shallower reduction does not pay for (against pixel lanes, the two were
measured alike near a depth of 144)."""

LANE_USE = 0.9
"""Least share of the channel tiles' lanes that must hold real output
channels (1000 of 1024: yes; 16 of 64: no)."""

SMALL_IMAGE_LANE_DEPTH = 128
"""`LANE_DEPTH` where pixel lanes fill less than `LANE_USE` of theirs (a
7x7 image fills 49 of 64): there channel lanes pay from a shallower
reduction (MobileNet-v3's and EfficientNet's 160 -> 960 and 192 -> 1152
1x1 layers at 7x7, one Zen 4 thread: 0.20 -> 0.17 and 0.29 -> 0.23 ms;
at 14x14 and 28x28, which fill 94 % and 100 %, depths 128-240 measured
5-15 % slower in channel lanes)."""

LANE_ROW_CHOICES = {False: 3, True: 2}
"""How many pixel counts a channel-lanes tile chooses among (`lane_tiles`),
from the most its registers hold down, for `NCHW` data and for blocked
data, whose pixels each need an address of their own: with AVX-512, 7, 6
or 5 pixels (28 accumulators and 4 weight vectors; the broadcast is the
multiply-add's memory operand), blocked 6 or 5 (seven spilled address
registers); with AVX2, 6, 5 or 4 (12 accumulators, 2 weight vectors, the
broadcast register), blocked 5 or 4.  Seven-pixel tiles with AVX2 spilled
accumulators on every step, several times slower
(`docs/cpu-schedules.md`, *The target's vector ISA*)."""

LEAST_ROW_TILE = 4
"""Fewest pixels of a channel-lanes tile kept within an image row
(`conv2d_channel_lanes`); narrower images' tiles run across rows."""

LANE_TILE_STEP = 2
"""A channel-lanes tile's per-step cost beyond its pixels' multiply-adds,
in pixels: loading the weight vectors and the loop's own instructions.  A
tile of `r` pixels costs `r + LANE_TILE_STEP` a step, so fewer, larger
tiles win unless the last one wastes more than that saves (AVX-512: 7
pixels for 7x7 images, where six measured slower)."""


def lane_tiles(
    target: TargetAttr | None,
    element_type: Attribute,
    pixels: int = 0,
    nr: int = 0,
    blocked: bool = False,
    row_width: int = 0,
) -> Tiles:
    """`mr` pixels x `nr` output channels: at most 4 vectors wide with 32
    registers (each step loads 4 weight vectors and broadcasts one value
    per pixel), 2 with 16, or the `nr` of the packed weights.  `mr` is the
    one of the `LANE_ROW_CHOICES` counts the registers hold whose tiles
    cover `pixels` at the least cost (`LANE_TILE_STEP`), the largest on a
    tie."""
    isa = vector_isa(target)
    lanes = isa.lanes(element_type)
    vectors = 4 if isa.registers >= 32 else 2
    most = (isa.registers - vectors - isa.broadcast_registers()) // vectors
    most -= blocked
    choices = range(most, most - LANE_ROW_CHOICES[blocked], -1)
    rows = min(
        choices,
        key=lambda r: (_pixel_tiles(pixels, r, row_width) * (r + LANE_TILE_STEP), -r),
    )
    return Tiles(lanes, rows, nr or vectors * lanes)


def _pixel_tiles(pixels: int, rows: int, row_width: int = 0) -> int:
    """Tiles of `rows` pixels that cover `pixels`: across the image's rows,
    or within each row of `row_width` pixels (the last of a row overlapping
    the one before: `conv2d_channel_lanes`)."""
    if not row_width:
        return math.ceil(pixels / rows)
    return pixels // row_width * math.ceil(row_width / rows)


def dividing_block(channels: int, t: Tiles) -> int:
    """The widest channel block of whole vectors, at most `t.nr`, that
    divides `channels` (a multiple of the lanes; 48 channels: one block of 3
    vectors, where 64-channel blocks would leave a quarter of the lanes
    empty)."""
    vectors = channels // t.lanes
    return t.lanes * max(v for v in range(1, t.nr // t.lanes + 1) if vectors % v == 0)


BLOCKED_OUTPUT_DEPTH = 64
"""Least reduction depth (`I * KH * KW`) for which a conv2d of `NCHW` data
writes a blocked result: a shallower one (SqueezeNet's first, 27 deep) ran
slower in channel-lane tiles than in pixel-lane ones, a deeper one
(ResNet-50's first, 147 deep) faster."""


def conv2d_data_block(
    weight_shape: Sequence[int],
    groups: int,
    element_type: Attribute,
    target: TargetAttr | None,
    data_blocked: bool = True,
) -> int:
    """The channel block `b` of the `NCHW<b>c` data and output layout this
    schedule wants for a conv2d (0: `NCHW`), where the target's
    `data_layout` option is `NCHWc`: one vector of channels, for tiles with
    the output channels in the lanes (`conv2d_channel_lanes`), which then
    store whole vectors (no transposition) and read `b` consecutive input
    channels of a pixel from one cache line (in `NCHW`, each channel of a
    reduction step is a plane of the image away).

    Not the default: ResNet-50 and SqueezeNet ran slower end to end with
    blocked activations (the residual and 1x1 convolutions faster, the 3x3
    ones on 7x7 and 14x14 images slower; `docs/cpu-schedules.md`).
    `data_blocked` says whether the data would come
    blocked; if not, only a deep enough reduction (`BLOCKED_OUTPUT_DEPTH`)
    blocks the result."""
    if target is None or target.option("data_layout") != "NCHWc":
        return 0
    if groups != 1 or not isinstance(element_type, AnyFloat):
        return 0
    _, group_channels, kh, kw = weight_shape
    if not data_blocked and group_channels * kh * kw < BLOCKED_OUTPUT_DEPTH:
        return 0
    return lane_tiles(target, element_type).lanes


MOST_PLANES = 16
"""Most stride-phase planes a channel-lanes conv2d copies its input into
(`in_place_windows`)."""


def in_place_windows(c: Conv2D) -> bool:
    """Whether a channel-lanes conv2d reads its input where it is rather
    than from a padded copy in stride-phase planes: one-column stride-1
    windows (`flat_windows`), and unpadded windows whose planes would be
    more than `MOST_PLANES` (a ViT's 32x32 stride-32 patches: 1024 planes,
    each filled by code of its own, which made its one kernel take many
    times longer to compile than read in place).  Fewer planes pay for
    their copy: the compact planes are read once per channel tile (a 1x1
    stride-2 conv read in place measured slower with AVX2's 16-channel
    tiles)."""
    if flat_windows(c):
        return True
    return not any(c.padding) and len(used_phases(c)) > MOST_PLANES


PREFETCH_PIXEL_TILES = 48
"""Most pixel tiles per channel tile for which `conv2d_channel_lanes`
prefetches the next channel tile's weights.  The first pass over a channel
tile's weights, from memory, costs about one pixel tile's time again: a
share of about 1 / pixel tiles, which pays for a prefetch on small images
(7x7: 7-10 tiles, 14x14: 28-33) but is lost in the noise at 28x28 (112
tiles), where the next tile's weights would also share L2 with the current
ones and the input."""

Params = ScheduleParams[Conv2D]


@dataclass(frozen=True)
class _Cut:
    """How `conv2d_channel_lanes` cuts its output: tiles of `rows` pixels
    (`pixel_tiles` of them: across the image's rows, or within rows of
    `row_width` pixels, `per_row` tiles a row), `channel_tiles` tiles of
    `nr` channels, and tasks of one channel tile × `per_task` pixel tiles
    (`blocks` of them per channel tile)."""

    rows: int
    row_width: int
    per_row: int
    pixel_tiles: int
    channel_tiles: int
    per_task: int
    blocks: int


@dataclass(frozen=True)
class _Prefetch:
    """Which cache lines of the next channel tile's weights each reduction
    step prefetches (`_reduction`): `step_lines` lines a step, numbered from
    the pixel tile's rank in its task modulo `groups`; `per_line` weights a
    line.  `on`: whether to prefetch at all (`PREFETCH_PIXEL_TILES`, and a
    next channel tile to prefetch)."""

    on: bool
    step_lines: int
    groups: int
    per_line: int


@dataclass(frozen=True)
class _Lanes:
    """A channel-lanes conv2d: its parameters, its weights packed
    `OIHW<nr>o`, its input (the padded stride-phase `planes`, or None: read
    in place) with channels in blocks of `block` (1: `NCHW`), how it cuts
    the output, and what it prefetches."""

    p: Params
    packed: Tensor
    padded: SSAValue | None
    planes: Planes
    block: int
    cut: _Cut
    prefetch: _Prefetch


@dataclass(frozen=True)
class _PixelTile:
    """Where a register tile of `conv2d_channel_lanes` is: image `n`,
    channel tile `ot`, pixel tile `q` of the task that starts at pixel tile
    `first`, its first pixel `p0` of the flattened output and, for tiles
    within a row, that pixel's row `y0`, column `x0` and element `wide0` of
    the planes' wide domain."""

    n: Index
    ot: Index
    q: Index
    first: Index
    p0: Index
    y0: Index = 0
    x0: Index = 0
    wide0: Index = 0


def conv2d_channel_lanes(
    e: Emitter, c: Conv2D, packed: Tensor, target: TargetAttr | None
) -> None:
    """conv2d with tiles of `mr` output pixels x `nr` output channels from
    `OIHW<nr>o` weights: each reduction step loads `nr / lanes` weight
    vectors and broadcasts one input value per pixel.  Tasks are output
    channel tiles x blocks of pixel tiles, each tile the whole reduction (a
    channel tile's packed weights are one sequential stream, which the
    prefetchers follow: blocking the reduction to keep them in L2 measured
    slower); the next channel tile's weights are prefetched as the first
    pixel tiles of a task run (`_reduction`).  The last pixel tile overlaps
    the one before.  Blocked data (`NCHW<b>c`) is read a block of channels
    per pixel; a blocked output is stored a vector of channels at a time."""
    if flat_windows(c):
        e = e.uniformly()  # no image width in the kernel: alike for merge-kernels
    s = _lanes(e, c, packed, target)
    cut = s.cut
    grid = [c.data.shape[0], cut.channel_tiles, cut.blocks]
    task, flat = e.loop(math.prod(grid), ForKind.PARALLEL)
    n, ot, pb = task.unflatten(flat, grid)
    first = task.mul(pb, cut.per_task)
    next_tile = _next_channel_tile(task, s, flat, math.prod(grid))
    last = task.min(task.add(first, cut.per_task), cut.pixel_tiles)
    tile, q = task.range(first, last)
    at = _pixel_tile(tile, s, [n, ot, q, first])
    line = _prefetch_line(tile, s, at)
    acc = register_tile(
        tile,
        s.p,
        cut.rows,
        partial(_reduction, s, next_tile, line),
        partial(_pixel, s, at),
        partial(_weights, s, at),
    )
    t = s.p.t
    store = _store_blocked if c.out_block == t.lanes and t.nr % t.lanes == 0 else _store
    each_panel(tile, t, c.weight.shape[0], ot, partial(store, s, at, acc))


def _lanes(e: Emitter, c: Conv2D, packed: Tensor, target: TargetAttr | None) -> _Lanes:
    """The schedule of `c`, its input padded into planes where it is not
    read in place (`in_place_windows`).  Tiles stay within an image row
    where windows are not flat: the pixels of a tile are then the same
    distance apart in every tap, addressed from one register (across rows,
    each needs one of its own)."""
    planes = Planes.of(c, 0)
    padded = None if in_place_windows(c) else pad_input(e, c, planes)
    out_h, out_w = c.out_shape[2:]
    row_width = out_w if not flat_windows(c) and out_w >= LEAST_ROW_TILE else 0
    blocked = c.blocked_data is not None
    t = lane_tiles(
        target, c.element_type, out_h * out_w, packed.shape[-1], blocked, row_width
    )
    p = Params(c, target, t)
    cut = _cut(p, row_width)
    return _Lanes(
        p, packed, padded, planes, data_block(c), cut, _prefetch(p, packed, cut)
    )


def _cut(p: Params, row_width: int) -> _Cut:
    """Pixel tiles of at most `t.mr` pixels, and enough tasks for
    `p.tasks`."""
    c, t = p.problem, p.t
    pixels = c.out_shape[2] * c.out_shape[3]
    rows = min(t.mr, row_width or pixels)
    pixel_tiles = _pixel_tiles(pixels, rows, row_width)
    per_row = math.ceil(row_width / rows) if row_width else 0
    channel_tiles = math.ceil(c.weight.shape[0] / t.nr)
    per_task, blocks = split(
        pixel_tiles, math.ceil(p.tasks / (c.data.shape[0] * channel_tiles))
    )
    return _Cut(rows, row_width, per_row, pixel_tiles, channel_tiles, per_task, blocks)


def _prefetch(p: Params, packed: Tensor, cut: _Cut) -> _Prefetch:
    """Prefetching on images of at most `PREFETCH_PIXEL_TILES` pixel tiles,
    with more than one channel tile.  Each pixel tile of a task fetches
    `step_lines` of the lines of a step's `nr` weights, so that the first
    `lines / step_lines` pixel tiles of every task (the last block's too,
    which may have fewer) fetch all."""
    on = (
        packed.buffer is not None
        and cut.channel_tiles > 1
        and cut.pixel_tiles <= PREFETCH_PIXEL_TILES
    )
    per_line = CACHE_LINE_BYTES * 8 // p.element.bitwidth  # type: ignore[attr-defined]
    lines = math.ceil(p.t.nr / per_line)
    fewest = cut.pixel_tiles - (cut.blocks - 1) * cut.per_task
    step_lines = next(
        k for k in range(1, lines + 1) if lines % k == 0 and k * fewest >= lines
    )
    return _Prefetch(on, step_lines, lines // step_lines, per_line)


def _next_channel_tile(e: Emitter, s: _Lanes, flat: Index, tasks: int) -> Index | None:
    """The channel tile of the task this thread likely runs after task
    `flat` (`next_task`), when prefetching."""
    if not s.prefetch.on:
        return None
    later = next_task(e, flat, tasks, s.p.target)
    return e.rem(e.div(later, s.cut.blocks), s.cut.channel_tiles)


def _pixel_tile(e: Emitter, s: _Lanes, at: Sequence[Index]) -> _PixelTile:
    """Where pixel tile `q` of (image, channel tile, pixel tile, task's
    first pixel tile) `at` starts: within its image row (the last tile of a
    row overlapping the one before), or across rows (the last tile of the
    image overlapping the one before)."""
    c, cut = s.p.problem, s.cut
    out_h, out_w = c.out_shape[2:]
    q, rows = at[2], cut.rows
    if not cut.row_width:
        return _PixelTile(*at, e.min(e.mul(q, rows), out_h * out_w - rows))
    y0 = e.div(q, cut.per_row)
    x0 = e.min(e.mul(e.rem(q, cut.per_row), rows), out_w - rows)
    p0 = e.add(e.mul(y0, out_w), x0)
    return _PixelTile(*at, p0, y0, x0, e.add(e.mul(y0, s.planes.wq), x0))


def _prefetch_line(e: Emitter, s: _Lanes, at: _PixelTile) -> Index:
    """The first of the lines the tile prefetches: its rank in the task,
    modulo the groups of `step_lines`."""
    f = s.prefetch
    if not f.on or f.groups <= 1:
        return 0
    return e.mul(e.rem(e.sub(at.q, at.first), f.groups), f.step_lines)


def _reduction(
    s: _Lanes, next_tile: Index | None, line: Index, r: Emitter
) -> tuple[Emitter, Sequence[Index]]:
    """The reduction over (c, ky, kx) (blocked data: (c // b, ky, kx, c %
    b), a block's channels innermost, read along one cache line), each step
    of which also prefetches (`_prefetch`) cache lines of the weights of
    the channel tile that this thread likely computes next.  A channel
    tile's weights come from memory on their first pass (a network's
    weights do not stay in cache from one call to the next), at the rate
    one core's misses allow, slower than the pixel tile's multiply-adds;
    prefetched while the tile before computes, they wait in L2 or L3."""
    _, channels, kh, kw = s.p.problem.weight.shape
    block = s.block
    reduction = [channels // block, kh, kw] + ([block] if block > 1 else [])
    body, ks = r.nest(reduction)
    if next_tile is not None:
        assert s.packed.buffer is not None
        for k in range(s.prefetch.step_lines):
            j = body.mul(body.add(line, k), s.prefetch.per_line)
            body.prefetch(s.packed.buffer, _weight_index(s, body, next_tile, j, ks))
    return body, ks


def _weight_index(
    s: _Lanes, r: Emitter, tile: Index, j: Index, ks: Sequence[Index]
) -> list[Index]:
    """Where the packed weight of output channel `j` of channel tile `tile`
    for tap (c, ky, kx) (blocked data: (c // b, ky, kx, c % b)) is."""
    cb, ky, kx, *ci = ks
    ch = r.add(r.mul(cb, s.block), *ci) if ci else cb
    return [tile, ch, ky, kx, j]


def _weights(
    s: _Lanes, at: _PixelTile, r: Emitter, j: Index, ks: Sequence[Index]
) -> SSAValue:
    """Output channel `j` of the tile's weights for tap `ks`."""
    return s.packed.load(r, _weight_index(s, r, at.ot, j, ks))


def _pixel(
    s: _Lanes, at: _PixelTile, r: Emitter, i: Index, ks: Sequence[Index]
) -> SSAValue:
    """Input value of tap (c, ky, kx) for output pixel `p0 + i` (blocked
    data: tap (c // b, ky, kx, c % b))."""
    p = r.add(at.p0, i)
    if flat_windows(s.p.problem):
        return _flat_pixel(s, at, r, p, ks)
    if s.padded is None:
        return _unpadded_pixel(s, at, r, i, p, ks)
    return _plane_pixel(s, at, r, i, p, ks)


def _flat_pixel(
    s: _Lanes, at: _PixelTile, r: Emitter, p: Index, ks: Sequence[Index]
) -> SSAValue:
    """Stride 1, no padding, one column: pixel `p`'s tap `ky` is input
    pixel `p + ky * dh * W` of the flattened image."""
    c = s.p.problem
    cb, ky, _, *ci = ks
    pixel = r.add(p, r.mul(ky, c.dilation[0] * c.data.shape[3]))
    if c.blocked_data is None:
        return c.data.load(r, [at.n, cb, 0, pixel])
    return c.blocked_data.load(r, [at.n, cb, 0, pixel, *ci])


def _unpadded_pixel(
    s: _Lanes, at: _PixelTile, r: Emitter, i: Index, p: Index, ks: Sequence[Index]
) -> SSAValue:
    """No padding: every tap is inside the image, read where it is."""
    c = s.p.problem
    cb, ky, kx, *ci = ks
    (sh, sw), (dh, dw) = c.strides, c.dilation
    out_w = c.out_shape[3]
    if s.cut.row_width:
        y, x = at.y0, r.add(at.x0, i)
    else:
        y, x = r.div(p, out_w), r.rem(p, out_w)
    pixel = [
        r.add(r.mul(y, sh), r.mul(ky, dh)),
        r.add(r.mul(x, sw), r.mul(kx, dw)),
    ]
    if c.blocked_data is None:
        return c.data.load(r, [at.n, cb, *pixel])
    return c.blocked_data.load(r, [at.n, cb, *pixel, *ci])


def _plane_pixel(
    s: _Lanes, at: _PixelTile, r: Emitter, i: Index, p: Index, ks: Sequence[Index]
) -> SSAValue:
    """From the tap's stride-phase plane, at the pixel's own element of the
    wide domain shifted by the tap."""
    assert s.padded is not None
    c = s.p.problem
    cb, ky, kx, *ci = ks
    plane, shift = tap(r, c, s.planes, ky, kx)
    if s.cut.row_width:
        wide = r.add(at.wide0, i)
    else:
        out_w = c.out_shape[3]
        wide = r.add(r.mul(r.div(p, out_w), s.planes.wq), r.rem(p, out_w))
    element = r.add(wide, shift)
    if s.block == 1:
        return r.load(s.padded, [at.n, cb, plane, element])
    return r.load(s.padded, [at.n, cb, plane, r.add(r.mul(element, s.block), *ci)])


def _store(s: _Lanes, at: _PixelTile, acc: SSAValue, e: Emitter, cols: int) -> None:
    """The tile transposed, through the epilogue: for each channel, its
    `mr` pixels as one vector gathered from the tile (register lanes
    where LLVM unrolls the channels, else the tile spilled to the stack
    once), stored along the image."""
    c = s.p.problem
    column, j = e.loop(cols, ForKind.UNROLLED)
    lane, i = column.loop(s.cut.rows, ForKind.VECTORIZED)
    o = lane.add(lane.mul(at.ot, s.p.t.nr), j)
    pixel = output_pixel(lane, c, lane.add(at.p0, i))
    c.store(lane, [at.n, o, *pixel], lane.load(acc, [i, j]))


def _store_blocked(
    s: _Lanes, at: _PixelTile, acc: SSAValue, e: Emitter, cols: int
) -> None:
    """The tile as it is: each pixel's channels, a vector at a time, to
    their blocks (`c.out_block` = the lanes)."""
    c, t = s.p.problem, s.p.t
    assert c.blocked_store is not None
    vector, v = e.loop(cols // t.lanes, ForKind.UNROLLED)
    row, i = vector.loop(s.cut.rows, ForKind.UNROLLED)
    pixel = row_major(row, row.add(at.p0, i), c.out_shape[3])
    ob = row.add(row.mul(at.ot, t.nr // t.lanes), v)
    lane, k = row.loop(t.lanes, ForKind.VECTORIZED)
    value = lane.load(acc, [i, lane.add(lane.mul(v, t.lanes), k)])
    c.blocked_store(lane, [at.n, ob, *pixel, k], value)


def next_task(e: Emitter, flat: Index, tasks: int, target: TargetAttr | None) -> Index:
    """The task of a parallel loop over `tasks` that the thread running task
    `flat` likely runs next: the next of its chunk, else the first of the
    chunk after the other threads' (threads take chunks in turn,
    `parallel_chunk`); the last task, past the end."""
    threads = min(num_threads(target), tasks)
    chunk = parallel_chunk(tasks, threads)
    if chunk == 1 and not e.uniform:  # the same ops for any chunk, uniform
        later = e.add(flat, threads)
    else:
        after = e.add(flat, 1)
        chunk_ends = e.sub(1, e.min(e.rem(after, chunk), 1))
        later = e.add(after, e.mul(chunk_ends, (threads - 1) * chunk))
    return e.min(later, tasks - 1)
