"""CPU schedule of conv2d: the choice among its forms, and the direct one.

`conv2d` computes a convolution by Winograd (`cpu_winograd`) where its
weight came in that domain, with the output channels in the vector lanes
(`cpu_conv2d_lanes`) where its weight came packed for that, and else here,
as a direct convolution with output pixels in the lanes: a zero-padded copy
of the input in stride-phase planes (`cpu_planes.Planes`) makes every window
tap a contiguous run of input for consecutive output pixels.  A panel is
`nr` output pixels: of one output row (`x0 .. x0 + nr`), or, for small
images, of the *wide* domain `y * wq + x` that runs across rows (a 7×7
image fills 49 of 64 lanes instead of 7 of 32 per row; its garbage columns
are dropped when an epilogue pass moves the output out of the wide
buffer).  Tasks are blocks of `mr`-channel tiles (their weights within
`L2_BLOCK_BYTES`) × blocks of panels; a tile's reduction over `(c, ky, kx)`
broadcasts weights and loads the panel's input as vectors.  No im2col
buffer.  `conv2d_weight_block` says which weight layout `alter-op-layout`
should make for each form.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial

from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import Attribute, SSAValue

from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import ForKind
from hetero.targets.cpu import num_threads
from hetero.te.emit import Emitter, Index, Tensor
from hetero.te.schedules.cpu_conv2d_lanes import (
    LANE_DEPTH,
    LANE_USE,
    SMALL_IMAGE_LANE_DEPTH,
    conv2d_channel_lanes,
    dividing_block,
    lane_tiles,
)
from hetero.te.schedules.cpu_depthwise import conv2d_depthwise, depthwise
from hetero.te.schedules.cpu_planes import (
    Planes,
    flat_windows,
    output_pixel,
    pad_input,
    row_major,
    tap,
)
from hetero.te.schedules.cpu_tiles import (
    L2_BLOCK_BYTES,
    TASKS_PER_THREAD,
    ScheduleParams,
    Tiles,
    each_panel,
    register_tile,
    split,
    store_tile,
    tiles,
)
from hetero.te.schedules.cpu_winograd import conv2d_winograd, winograd_applies
from hetero.te.schedules.isa import vector_isa
from hetero.te.schedules.problems import Conv2D


def conv_vectors(target: TargetAttr | None) -> int:
    """SIMD registers per row of a conv2d pixel tile.  Where a multiply-add
    takes a broadcast from memory (AVX-512's `vfmadd231ps (mem){1to16}`),
    one: each weight is used by one multiply-add, with no broadcast
    instruction (with two, a `vbroadcastss` competes with the multiply-adds
    for the FP pipes, slower on every pixel-tile shape measured).
    Elsewhere (AVX2) the broadcast is an instruction of its own either way,
    and two vectors share it (`docs/cpu-schedules.md`, *The register
    tile*)."""
    return 1 if vector_isa(target).broadcast_operand else 2


Params = ScheduleParams[Conv2D]


def conv2d(e: Emitter, c: Conv2D, target: TargetAttr | None) -> None:
    """conv2d on register tiles, in the form its weight's layout asks for
    (`conv2d_weight_block`, `cpu_winograd.conv2d_winograd_tile`): by
    Winograd, with channels in the lanes, or direct with pixels in the
    lanes (the module docstring)."""
    if c.winograd:
        if winograd_applies(c, target):
            return conv2d_winograd(e, c, target)
        c = replace(c, packed=None, winograd=0)  # read through the OIHW view
    packed = c.packed
    lanes = lane_tiles(target, c.element_type).lanes
    if packed is not None and c.groups == 1 and packed.shape[-1] % lanes == 0:
        return conv2d_channel_lanes(e, c, packed, target)
    # Pixel lanes read blocked data through its NCHW view.
    c = replace(c, blocked_data=None)
    if depthwise(c):
        return conv2d_depthwise(e, c, target)
    _direct(e, c, target)


@dataclass(frozen=True)
class _Direct:
    """A direct conv2d's parameters (`p`), how it cuts the output (`g`),
    and its buffers: the padded input (None: read in place), the wide
    output (None: stored straight through the epilogue), and the weight
    packed as the tile's rows side by side (`_pixel_tile_rows`; None: read
    from `OIHW`)."""

    p: Params
    g: _ConvTiles
    padded: SSAValue | None
    wide: SSAValue | None
    rows_packed: Tensor | None


@dataclass(frozen=True)
class _Panel:
    """Where the register tiles of a task of `_direct` are: image `n`,
    group `grp` (whose input channels start at `base`), channel tile `tt`,
    and the panel's first pixel `p0`, of the wide domain or the flattened
    image, or of output row `y` (row panels: its `xp`-th panel, from column
    `x0`)."""

    n: Index
    grp: Index
    tt: Index
    p0: Index
    base: Index
    y: Index = 0
    xp: Index = 0
    x0: Index = 0


def _direct(e: Emitter, c: Conv2D, target: TargetAttr | None) -> None:
    """Direct NCHW conv2d, output pixels in the lanes: a parallel loop over
    images × groups × blocks of channel tiles × blocks of panels."""
    g = _conv_tiles(c, tiles(target, c.element_type, conv_vectors(target)), target)
    if g.in_place:
        e = e.uniformly()  # no image width in the kernel: alike for merge-kernels
    packed = c.packed
    fits = packed is not None and c.groups == 1 and packed.shape[-1] == g.t.mr
    padded = None if g.in_place else pad_input(e, c, g.planes)
    batch, out_channels = c.out_shape[:2]
    shape = [batch, out_channels, g.panels * g.t.nr]
    wide = e.alloc(shape, c.element_type) if g.wide else None
    d = _Direct(Params(c, target, g.t), g, padded, wide, packed if fits else None)
    grid = [
        batch,
        c.groups,
        math.ceil(g.channel_tiles / g.block),
        math.ceil(g.panels / g.per_task),
    ]
    task, flat = e.loop(math.prod(grid), ForKind.PARALLEL)
    _task(task, d, task.unflatten(flat, grid))
    if wide is not None:
        _unwiden(e, c, g.planes.wq, wide)


def _task(task: Emitter, d: _Direct, at: Sequence[Index]) -> None:
    """Task `at` (image, group, block of channel tiles, block of panels):
    channel tiles outer, so that the tiles of one channel tile run along
    its pixels and the epilogue's reads (a residual) and the stores are a
    few sequential streams, not jumps across channel planes."""
    g = d.g
    n, grp, cb, pt = at
    first_panel = task.mul(pt, g.per_task)
    panels = (first_panel, task.min(task.add(first_panel, g.per_task), g.panels))
    first_tile = task.mul(cb, g.block)
    channel_tiles = (
        first_tile,
        task.min(task.add(first_tile, g.block), g.channel_tiles),
    )
    channel_loop, tt = task.range(*channel_tiles)
    tile_loop, q = channel_loop.range(*panels)
    _each_tile(tile_loop, d, _panel(tile_loop, d, q, [n, grp, tt]))


def _panel(e: Emitter, d: _Direct, q: Index, at: Sequence[Index]) -> _Panel:
    """Where panel `q` of the task at (image, group, channel tile) starts."""
    c, t, g = d.p.problem, d.p.t, d.g
    out_w = c.out_shape[3]
    group_channels = c.weight.shape[1]
    if g.in_place:
        pixels = c.out_shape[2] * out_w
        p0 = e.min(e.mul(q, t.nr), pixels - t.nr)
        return _Panel(*at, p0, e.mul(at[1], group_channels))
    if g.wide:
        p0 = e.mul(q, t.nr)
        return _Panel(*at, p0, e.mul(at[1], group_channels))
    row_panels = math.ceil(out_w / t.nr)
    y, xp = e.div(q, row_panels), e.rem(q, row_panels)
    x0 = e.mul(xp, t.nr)
    p0 = e.add(e.mul(y, g.planes.wq), x0)
    return _Panel(*at, p0, e.mul(at[1], group_channels), y, xp, x0)


def _each_tile(e: Emitter, d: _Direct, at: _Panel) -> None:
    """The panel's register tile of `mr` channels, or of the rest of a
    group's channels for its last channel tile (static code of its own)."""
    mr = d.p.t.mr
    per_group = d.p.problem.weight.shape[0] // d.p.problem.groups
    whole = per_group // mr
    if per_group % mr == 0:
        return _tile(e, d, at, mr)
    if (full := e.when(e.less(at.tt, whole))) is not None:
        _tile(full, d, at, mr)
    if (edge := e.when(e.less(whole - 1, at.tt))) is not None:
        _tile(edge, d, at, per_group % mr)


def _tile(e: Emitter, d: _Direct, at: _Panel, rows: int) -> None:
    """A register tile of `rows` output channels × the panel's `nr` pixels,
    the reduction over the group's (c, ky, kx), then stored."""
    c = d.p.problem
    out_channels, group_channels, kh, kw = c.weight.shape
    o0 = e.mul(at.tt, d.p.t.mr)
    first = e.add(e.mul(at.grp, out_channels // c.groups), o0)
    acc = register_tile(
        e,
        d.p,
        rows,
        lambda r: r.nest([group_channels, kh, kw]),
        partial(_weight, d, at, first),
        partial(_input, d, at),
    )
    if d.wide is not None:
        return _widen(e, d, at, first, acc, rows)
    if d.g.in_place:
        return _store_in_place(e, d, at, first, acc, rows)
    _store_row(e, d, at, first, acc, rows)


def _weight(
    d: _Direct, at: _Panel, first: Index, r: Emitter, i: Index, ks: Sequence[Index]
) -> SSAValue:
    """Row `i`'s weight for tap `ks` (output channel `first + i`): from the
    tile's packed rows (`_pixel_tile_rows`), else from `OIHW` (or a view of
    it)."""
    if d.rows_packed is not None:
        return d.rows_packed.load(r, [at.tt, *ks, i])
    return d.p.problem.weight.load(r, [r.add(first, i), *ks])


def _input(
    d: _Direct, at: _Panel, r: Emitter, j: Index, ks: Sequence[Index]
) -> SSAValue:
    """Lane `j` of the panel for tap (c, ky, kx): in the tap's plane, `p0 +
    j` shifted by the tap's whole rows and columns of that plane; read in
    place, the flattened image's pixel `p0 + j + ky * dh * W`."""
    c = d.p.problem
    ch, ky, kx = ks
    if d.padded is None:
        width = c.data.shape[3]
        pixel = r.add(r.add(at.p0, r.mul(ky, c.dilation[0] * width)), j)
        # A buffer (not a view of blocked data) is read flattened too.
        flat = [0, pixel] if c.data.buffer is not None else row_major(r, pixel, width)
        return c.data.load(r, [at.n, r.add(at.base, ch), *flat])
    plane, shift = tap(r, c, d.g.planes, ky, kx)
    channel = r.add(at.base, ch)
    return r.load(d.padded, [at.n, channel, plane, r.add(r.add(at.p0, shift), j)])


def _widen(
    e: Emitter, d: _Direct, at: _Panel, first: Index, acc: SSAValue, rows: int
) -> None:
    """The tile into the wide output buffer, `wide[n, first + i, p0 + j]`."""
    assert d.wide is not None
    row, i = e.loop(rows, ForKind.UNROLLED)
    lane, j = row.loop(d.p.t.nr, ForKind.VECTORIZED)
    value = lane.load(acc, [i, j])
    lane.store(value, d.wide, [at.n, lane.add(first, i), lane.add(at.p0, j)])


def _store_in_place(
    e: Emitter, d: _Direct, at: _Panel, first: Index, acc: SSAValue, rows: int
) -> None:
    """The tile through the epilogue, its pixels a run of the flattened
    image."""
    c = d.p.problem

    def store(w: Emitter, i: Index, j: Index, value: SSAValue) -> None:
        o = w.add(first, i)
        c.store(w, [at.n, o, *output_pixel(w, c, w.add(at.p0, j))], value)

    store_tile(e, acc, rows, d.p.t.nr, store)


def _store_row(
    e: Emitter, d: _Direct, at: _Panel, first: Index, acc: SSAValue, rows: int
) -> None:
    """The tile through the epilogue, its pixels a run of output row `y`
    (the row's last panel: its rest)."""
    c = d.p.problem

    def store(w: Emitter, i: Index, j: Index, value: SSAValue) -> None:
        c.store(w, [at.n, w.add(first, i), at.y, w.add(at.x0, j)], value)

    each_panel(
        e,
        d.p.t,
        c.out_shape[3],
        at.xp,
        lambda s, cols: store_tile(s, acc, rows, cols, store),
    )


def conv2d_weight_block(
    weight_shape: Sequence[int],
    out_shape: Sequence[int],
    groups: int,
    element_type: Attribute,
    target: TargetAttr | None,
    blocked: bool = False,
) -> int:
    """The output-channel block `b` of the `OIHW<b>o` weight layout this
    schedule wants for a conv2d with these shapes (0: plain `OIHW`), whose
    data or output is `blocked` (`NCHW<b>c`: always the channel lanes, `b`
    up to 4 vectors, dividing the output channels where they fill vectors).

    A tile with the output pixels in the lanes wastes the lanes past the
    last pixel of a small image (49 of 64 at 7x7, 196 of 224 at 14x14) and
    the padding columns of a padded one; a tile with the output channels in
    the lanes (`conv2d_channel_lanes`) wastes none when the channels fill
    whole vectors, but needs the weights of `nr` channels contiguous for
    each tap (the packed layout, made at compile time by `alter-op-layout`)
    and stores its tile transposed.  That pays for deep reductions
    (`LANE_DEPTH`) on small and middling images, and for shallower ones
    (`SMALL_IMAGE_LANE_DEPTH`) on images whose pixels fill less than
    `LANE_USE` of their lanes; there a channel count of whole vectors that
    fills too little of `nr`-wide tiles takes narrower ones that divide it
    (160 channels: five 32-channel tiles, not three 64-channel ones with a
    half-empty last: 960 -> 160 at 7x7, one Zen 4 thread, 0.21 -> 0.16 ms,
    onnxruntime 0.17).  Otherwise a 1x1 conv's
    pixel tiles may want their rows of weights side by side
    (`_pixel_tile_rows`)."""
    out_channels, group_channels, kh, kw = weight_shape
    if groups != 1 or not isinstance(element_type, AnyFloat):
        return 0
    t = lane_tiles(target, element_type)
    if blocked:
        if out_channels % t.lanes == 0:
            return dividing_block(out_channels, t)
        return t.lanes * min(math.ceil(out_channels / t.lanes), t.nr // t.lanes)
    depth = group_channels * kh * kw
    small = _lane_use(math.prod(out_shape[2:]), t.lanes) < LANE_USE
    if depth >= LANE_DEPTH or (small and depth >= SMALL_IMAGE_LANE_DEPTH):
        if _lane_use(out_channels, t.nr) >= LANE_USE:
            return t.nr
        if small and out_channels % t.lanes == 0:
            return dividing_block(out_channels, t)
    return _pixel_tile_rows(weight_shape, element_type, target)


def _lane_use(count: int, width: int) -> float:
    """The share of the lanes of `width`-wide tiles that `count` items fill."""
    return count / (math.ceil(count / width) * width)


def _pixel_tile_rows(
    weight_shape: Sequence[int], element_type: Attribute, target: TargetAttr | None
) -> int:
    """The block of a 1x1 conv2d's weight in pixel lanes: the tile's rows
    (`mr` output channels), whose weights each reduction step broadcasts,
    side by side for each input channel (`OIHW<mr>o`); 0 (`OIHW`) where
    the rows fill whole vectors (the block would ask for channel lanes).

    Unpacked, a step's `mr` weights are `I` apart: with the rows unrolled,
    each load is the tile's base plus a constant times `I`, which must then
    stay a constant; packed, they are consecutive, and `merge-kernels`
    gives the 1x1 layers of one schedule one kernel across their numbers
    of input channels.  Wider windows keep `OIHW`: their layers differ in
    padding code anyway, and the first convolutions of networks measured
    slower packed."""
    out_channels, _, kh, kw = weight_shape
    if (kh, kw) != (1, 1):
        return 0
    rows = _dividing_rows(
        tiles(target, element_type, conv_vectors(target)), out_channels
    ).mr
    return 0 if rows % lane_tiles(target, element_type).lanes == 0 else rows


@dataclass(frozen=True)
class _ConvTiles:
    """How a conv2d's output is cut: register tiles of `mr` output channels
    × `nr` wide pixels (`panels` per image), grouped into parallel tasks of
    `block` channel tiles × `per_task` panels."""

    t: Tiles
    planes: Planes
    panels: int
    wide: bool
    """Panels run over the wide domain (else: over output rows, `nr` columns
    at a time, storing straight into the output)."""
    in_place: bool
    """Panels run over the flattened image, reading the input and writing
    the output where they are (`_in_place`; no planes, no wide buffer)."""
    channel_tiles: int
    block: int
    per_task: int


def _dividing_rows(t: Tiles, channels: int) -> Tiles:
    """The tile with the most rows, down to two thirds of `t.mr`, that
    divides `channels` (no last tile of fewer rows: half the code, and the
    CNN widths 64..2048 take 8 rows as fast as 12 with a rest of 4 or 8);
    `t` itself when none does."""
    for rows in range(t.mr, max(1, 2 * t.mr // 3) - 1, -1):
        if channels % rows == 0:
            return replace(t, mr=rows)
    return t


ROW_PANEL_DEPTH = 64
"""Reductions shallower than this take row panels (`_row_panels_win`)."""


def _row_panels_win(
    t: Tiles, out_h: int, out_w: int, wide_panels: int, depth: int
) -> bool:
    """Whether row panels cost less than wide ones.  A row no wider than one
    vector computes no more vectors (a tile's unstored vectors are dropped
    by LLVM), and on a tie stores straight into the output, with no wide
    buffer to copy out of.  For a reduction shallower than
    `ROW_PANEL_DEPTH` the wide buffer's extra pass over the output costs
    more than the lanes a row's last panel wastes (a network's first
    convolution, 27 deep; at 144 deep the wide domain is faster)."""
    if depth < ROW_PANEL_DEPTH:
        return True
    return out_w <= t.lanes and out_h <= wide_panels * (t.nr // t.lanes)


def _in_place(c: Conv2D, t: Tiles) -> bool:
    """Whether panels can run over the flattened image `y * W + x` with no
    copy of the input or the output: with stride 1, no padding and windows
    one column wide (a 1x1 conv: a GEMM over `H * W` pixels), output pixel
    `p` reads input pixel `p + ky * dh * W` for tap `ky`, so every panel of
    `nr` pixels is one contiguous run of input and of output.  The image
    must have `nr` pixels: its last panel overlaps the one before (storing
    the same values twice) rather than running past the end."""
    _, _, out_h, out_w = c.out_shape
    return flat_windows(c) and out_h * out_w >= t.nr


def _conv_tiles(c: Conv2D, t: Tiles, target: TargetAttr | None) -> _ConvTiles:
    """In place where the conv allows it (`_in_place`), else wide panels,
    unless row panels cost less (`_row_panels_win`: rows one vector wide,
    or a shallow reduction; a 7x7 image fills 49 of 64 lanes instead of 7
    of 32 per row)."""
    batch, _, _, _ = c.data.shape
    out_channels, group_channels, kh, kw = c.weight.shape
    t = _dividing_rows(t, out_channels // c.groups)
    _, _, out_h, out_w = c.out_shape
    row_panels = math.ceil(out_w / t.nr)
    wq = Planes.of(c, 0).wq
    wide_panels = math.ceil(out_h * wq / t.nr)
    in_place = _in_place(c, t)
    depth = group_channels * kh * kw
    wide = not in_place and not _row_panels_win(t, out_h, out_w, wide_panels, depth)
    panels = wide_panels if wide or in_place else out_h * row_panels
    end = panels * t.nr if wide else (out_h - 1) * wq + row_panels * t.nr
    channel_tiles = math.ceil(out_channels // c.groups / t.mr)
    tile_bytes = t.mr * group_channels * kh * kw * c.data.element_type.bitwidth // 8  # type: ignore[attr-defined]
    block, blocks = split(
        channel_tiles, math.ceil(channel_tiles * tile_bytes / L2_BLOCK_BYTES)
    )
    tasks = TASKS_PER_THREAD * num_threads(target)
    per_task, _ = split(panels, math.ceil(tasks / (batch * c.groups * blocks)))
    return _ConvTiles(
        t, Planes.of(c, end), panels, wide, in_place, channel_tiles, block, per_task
    )


def _unwiden(e: Emitter, c: Conv2D, wq: int, wide: SSAValue) -> None:
    """The output from the wide domain (`y * wq + x`), through the epilogue."""
    batch, out_channels, out_h, out_w = c.out_shape
    body, flat = e.loop(batch * out_channels, ForKind.PARALLEL)
    n, o = body.div(flat, out_channels), body.rem(flat, out_channels)
    row, y = body.loop(out_h)
    start = row.mul(y, wq)
    lane, x = row.loop(out_w, ForKind.VECTORIZED)
    c.store(lane, [n, o, y, x], lane.load(wide, [n, o, lane.add(start, x)]))
