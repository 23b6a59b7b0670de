"""conv2d by Winograd's minimal filtering F(m x m, 3 x 3) on the CPU.

A 3x3 convolution of stride 1 multiplies `9 m^2` times per `m x m` output
tile in the direct form and `(m + 2)^2` times in the Winograd domain
(`hetero.utils.winograd`): with F(2, 3), 2.25 times fewer multiply-adds,
paid for with two transforms and a round trip of the transformed input
through memory.  The weight is transformed at compile time
(`alter-op-layout`, layout `winograd<m>_OI<b>o` as `conv2d_winograd_tile`
asks); at run time:

1. **Padding** (a parallel task per input channel): the channel is copied,
   zero-padded, into `m` column-phase planes (`cpu_planes.fill_plane` with
   a column stride of `m`): the `a x a` patch of tile `(ty, tx)` reads plane
   `j % m` at `tx + j // m`, so consecutive tiles of a row read consecutive
   elements.
2. Then for each band of rows of tiles (`V_BAND_BYTES` of transformed
   patches, which stay in the caches until their products read them):
   **input transform** (a task per row of tiles and group of channels):
   `B^T d B` a vector of tiles at a time (adds and subtractions, F(4x4) a
   few multiplies) into `V[u * a + v, row, c, tx]`;
   **products and output transform** (tasks: output-channel tiles × rows
   of tiles × parts of rows): for each of the `a^2` positions, each block
   of `mr` tiles of the row is a register tile of `mr` tiles × `nr` output
   channels (4 vectors with AVX-512), the reduction over the input
   channels broadcasting `V` and loading the packed weight `U[u * a + v,
   ot, c, :]` as vectors, the kernel of
   `cpu_conv2d_lanes.conv2d_channel_lanes`; the `a^2` tiles wait in a
   `local` buffer.  Then each tile's outputs `A^T M
   A`, a vector of channels at a time, and the block is stored transposed
   through the epilogue: for each channel and output row, the block's `mr
   * m` pixels as one vector gathered from a staging buffer.  A task's
   weights are read once per position for all of its blocks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import Attribute, SSAValue

from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import ForKind
from hetero.te.emit import Emitter, Index
from hetero.te.schedules.cpu_conv2d_lanes import dividing_block, lane_tiles
from hetero.te.schedules.cpu_planes import Planes, fill_plane
from hetero.te.schedules.cpu_tiles import ScheduleParams, Tiles, register_tile, split
from hetero.te.schedules.problems import Conv2D
from hetero.utils.winograd import TRANSFORMS, Program, Transforms, program

OUTPUT_TILES = {2: 0, 4: 24}
"""The output tiles `m` of F(m x m, 3 x 3) that `conv2d_winograd_tile` may
ask for, each with the fewest output rows and columns it takes: the largest
that fits.  F(4x4) multiplies 1.8 times less than F(2x2) but wastes more of
its last tiles on a small image (14 columns: 16 computed) and is less
accurate (a 3x3 layer's error, relative to its largest output, about 5e-6
against 7e-7); on the images of at least 24 rows and columns it measured
faster, on 14x14 alike."""

TILE_OPTION = "winograd"
"""The `llvm` target's option capping the output tile (0: no Winograd): F(4x4)
put Inception-v3's logits 2.0e-4 of the largest from onnxruntime's, F(2x2)
6.2e-5 (docs/cpu-schedules.md)."""

WINOGRAD_DEPTH = 16
"""Fewest input channels for which a 3x3 conv2d goes to the Winograd domain
(SqueezeNet's 16 -> 64 at 55x55 is faster by Winograd than direct; fewer
channels leave the transforms a larger share, untried)."""

WINOGRAD_PIXELS = 7 * 7
"""Fewest output pixels for which a 3x3 conv2d goes to the Winograd domain
(ResNet-50's 512-channel 7x7 layers are faster by Winograd, alone and in
the network, where their 1.8x larger weights come from memory; smaller
images untried)."""

V_BAND_BYTES = 2 * 1024 * 1024
"""Most bytes of transformed patches `V` computed before their products:
the rows of tiles go in bands that keep `V` in the caches (and its buffer
small: a large one came fresh from the system, page by page, at every
call)."""

BLOCKS_PER_TASK = 4
"""Most blocks of tiles (of `mr` tiles each) a task of the products takes:
their products wait in a `local` (stack) buffer of `[blocks, a^2, mr,
nr]`, 4 x 36 x 7 x 64 floats for F(4x4) with AVX-512 (252 KiB; a thread's
stack is 8 MiB)."""


def conv2d_winograd_tile(
    weight_shape: Sequence[int],
    out_shape: Sequence[int],
    strides: Sequence[int],
    dilation: Sequence[int],
    groups: int,
    element_type: Attribute,
    target: TargetAttr | None,
    blocked: bool = False,
) -> tuple[int, int]:
    """The output tile `m` and channel block `b` of the Winograd layout this
    schedule wants for a conv2d's weight ((0, 0): none): 3x3 windows of
    stride 1, not dilated, one group, `NCHW` data and result, f32, and
    enough input channels and pixels."""
    out_channels, channels, kh, kw = weight_shape
    if (kh, kw) != (3, 3) or tuple(strides) != (1, 1) or tuple(dilation) != (1, 1):
        return 0, 0
    if groups != 1 or blocked or not isinstance(element_type, AnyFloat):
        return 0, 0
    if element_type.bitwidth != 32 or channels < WINOGRAD_DEPTH:
        return 0, 0
    t = lane_tiles(target, element_type)
    height, width = out_shape[2:]
    if out_channels % t.lanes or height * width < WINOGRAD_PIXELS:
        return 0, 0
    largest = target.option(TILE_OPTION) if target is not None else None
    tiles = [
        m
        for m, least in OUTPUT_TILES.items()
        if min(height, width) >= least and (largest is None or m <= largest)
    ]
    if not tiles:
        return 0, 0
    return max(tiles), dividing_block(out_channels, t)


def winograd_applies(c: Conv2D, target: TargetAttr | None) -> bool:
    """Whether `conv2d_winograd` computes `c` (else its weight is read as
    `OIHW` by the direct schedules): stride 1, one group, `NCHW`, and a
    channel block of whole vectors, at most a register tile's (a block
    written by hand, `winograd2_OI8o` with 16 lanes, would leave channels
    out of the vector loops; `winograd4_OI2048o` would want 8 MiB of
    stack)."""
    if c.packed is None or not isinstance(c.data.element_type, AnyFloat):
        return False
    t = lane_tiles(target, c.data.element_type)
    block = c.packed.shape[-1]
    return (
        c.winograd in TRANSFORMS
        and block % t.lanes == 0
        and block <= t.nr
        and c.strides == (1, 1)
        and c.dilation == (1, 1)
        and c.groups == 1
        and c.blocked_data is None
        and c.blocked_store is None
    )


STEPS = {"add": arith.AddfOp, "sub": arith.SubfOp}
"""The ops of a transform `Program`'s steps (and "scale", a multiply)."""


def _run(e: Emitter, program: Program, inputs: Sequence[SSAValue]) -> list[SSAValue]:
    """`program` (`matrix · inputs`) as float ops."""
    values = list(inputs)
    for op, a, b in program.steps:
        if op == "scale":
            factor = e.constant(b, values[a].type)
            values.append(e.op(arith.MulfOp(values[a], factor)))
        else:
            values.append(e.op(STEPS[op](values[a], values[int(b)])))
    return [values[k] for k in program.outputs]


def _phase_planes(c: Conv2D, tr: Transforms, th: int, tw: int) -> Planes:
    """The column-phase planes of the padded input: `th * m + 2` rows and
    `tw * m + 2` columns at least (every tile's patch inside), in `m`
    planes of `wq` columns."""
    _, _, height, width = c.data.shape
    top, left = c.padding[:2]
    rows = max(th * tr.m + 2, top + height)
    wq = math.ceil(max(tw * tr.m + 2, left + width) / tr.m)
    return Planes(wq, rows * wq)


Params = ScheduleParams[Conv2D]


@dataclass(frozen=True)
class _Geometry:
    """How `conv2d_winograd` cuts a conv2d: `th x tw` tiles per image, in
    register tiles of `t.mr` tiles x `t.nr` channels (`blocks` per row of
    tiles, `t` the schedule's), the rows of tiles of all images in bands of
    `band` rows; the input padded into the column-phase `planes`."""

    tr: Transforms
    th: int
    tw: int
    blocks: int
    band: int
    planes: Planes


@dataclass(frozen=True)
class _Block:
    """A block of register tiles of the products: the task's `k`-th, of
    tiles from `tx0` of row of tiles `nt` (of all images), for channel tile
    `ot`."""

    k: Index
    tx0: Index
    ot: Index
    nt: Index


def _input_transform(
    e: Emitter, p: Params, g: _Geometry, padded: SSAValue, v: SSAValue, first: Index
) -> None:
    """`V[u * a + v, r, c, tx]` for the band's rows of tiles `first + r`: a
    row of tiles (and a group of channels) a task, so that each task writes
    `a^2` runs of `V` that grow along its channels."""
    c, tr, th, tw, planes = p.problem, g.tr, g.th, g.tw, g.planes
    channels = c.data.shape[1]
    per_group, groups = split(channels, -(-p.tasks // g.band))
    task, flat = e.loop(g.band * groups, ForKind.PARALLEL)
    r, group = task.div(flat, groups), task.rem(flat, groups)
    nt = task.add(first, r)
    n, ty = task.div(nt, th), task.rem(nt, th)
    start = task.mul(group, per_group)
    # B^T d, a column of the patch at a time; then its rows times B.  Not
    # `local`: the vectorizer gives bodies touching `local` buffers no
    # masked remainder (a row of 14 tiles would take three bodies).
    partial = task.alloc([tr.alpha, tr.alpha, tw], c.data.element_type)
    row, ch = task.range(start, task.min(task.add(start, per_group), channels))
    steps = program(tr.bt)
    column, j = row.loop(tr.alpha)
    plane, shift = column.rem(j, tr.m), column.div(j, tr.m)
    lane, tx = _tiles_in_lanes(column, tw, p.t.lanes)
    top = lane.add(lane.add(lane.mul(ty, tr.m * planes.wq), shift), tx)
    patch = [
        lane.load(padded, [n, ch, plane, lane.add(top, i * planes.wq)])
        for i in range(tr.alpha)
    ]
    for u, value in enumerate(_run(lane, steps, patch)):
        lane.store(value, partial, [u, j, tx])
    rows, u = row.loop(tr.alpha)
    lane, tx = _tiles_in_lanes(rows, tw, p.t.lanes)
    values = [lane.load(partial, [u, k, tx]) for k in range(tr.alpha)]
    for w, value in enumerate(_run(lane, steps, values)):
        lane.store(value, v, [lane.add(lane.mul(u, tr.alpha), w), r, ch, tx])


def _tiles_in_lanes(e: Emitter, tiles: int, lanes: int) -> tuple[Emitter, Index]:
    """A vectorized loop over `tiles`: at most one vector, or a vector an
    iteration with the last overlapping the one before (one copy of the
    body's code, where LLVM unrolls a loop of whole vectors)."""
    if tiles <= lanes:
        return e.loop(tiles, ForKind.VECTORIZED)
    vector, q = e.loop(-(-tiles // lanes))
    lane, tl = vector.loop(lanes, ForKind.VECTORIZED)
    return lane, lane.add(lane.min(lane.mul(q, lanes), tiles - lanes), tl)


def _geometry(c: Conv2D, target: TargetAttr | None) -> tuple[Params, _Geometry]:
    """Tiles, register tiles and bands (`V_BAND_BYTES`) of `c`."""
    tr = TRANSFORMS[c.winograd]
    assert c.packed is not None
    batch, channels, _, _ = c.data.shape
    _, _, out_h, out_w = c.out_shape
    th, tw = math.ceil(out_h / tr.m), math.ceil(out_w / tr.m)
    element = c.data.element_type
    assert isinstance(element, AnyFloat)
    t = lane_tiles(target, element, tw, c.packed.shape[-1])
    t = replace(t, mr=min(t.mr, tw))
    row_bytes = tr.alpha**2 * channels * tw * element.bitwidth // 8
    band = min(batch * th, max(1, V_BAND_BYTES // row_bytes))
    planes = _phase_planes(c, tr, th, tw)
    blocks = math.ceil(tw / t.mr)
    return Params(c, target, t), _Geometry(tr, th, tw, blocks, band, planes)


def conv2d_winograd(e: Emitter, c: Conv2D, target: TargetAttr | None) -> None:
    """conv2d of 3x3 windows, stride 1, in the Winograd domain (module
    docstring): the padded planes, then for each band of rows of tiles, its
    transformed patches and its products and outputs."""
    p, g = _geometry(c, target)
    tr = g.tr
    batch, channels, _, _ = c.data.shape
    padded = _pad_phases(e, p, g)
    v = e.alloc([tr.alpha**2, g.band, channels, g.tw], c.element_type)
    rows_of_tiles = batch * g.th
    band, b = e.loop(math.ceil(rows_of_tiles / g.band))
    # The last band overlaps the one before rather than running past the end.
    first = band.min(band.mul(b, g.band), rows_of_tiles - g.band)
    _input_transform(band, p, g, padded, v, first)
    _products(band, p, g, v, first)


def _pad_phases(e: Emitter, p: Params, g: _Geometry) -> SSAValue:
    """The input, zero-padded, in the `m` column-phase planes, one parallel
    task per input channel (`fill_plane` with a column stride of `m`)."""
    c, m = p.problem, g.tr.m
    batch, channels, _, _ = c.data.shape
    phased = replace(c, strides=(1, m))
    padded = e.alloc([batch, channels, m, g.planes.length], c.element_type)
    fill, flat = e.loop(batch * channels, ForKind.PARALLEL)
    n, ch = fill.div(flat, channels), fill.rem(flat, channels)
    for phase in range(m):
        fill_plane(fill, phased, g.planes, padded, [n, ch, phase], 0, phase)
    return padded


def _products(e: Emitter, p: Params, g: _Geometry, v: SSAValue, first: Index) -> None:
    """The band's products, a position at a time, and its outputs.
    A task takes one channel tile of a row of tiles, or of a part of it: at
    most `BLOCKS_PER_TASK` blocks, whose products wait in a stack buffer,
    and fewer where tasks would be too few for the threads."""
    c, t = p.problem, p.t
    channel_tiles = math.ceil(c.weight.shape[0] / t.nr)
    parts = max(
        -(-g.blocks // BLOCKS_PER_TASK), -(-p.tasks // (channel_tiles * g.band))
    )
    per_task, parts = split(g.blocks, parts)
    task, flat = e.loop(channel_tiles * g.band * parts, ForKind.PARALLEL)
    ot, r, part = task.unflatten(flat, [channel_tiles, g.band, parts])
    shape = [per_task, g.tr.alpha**2, t.mr, t.nr]
    products = task.alloc(shape, c.element_type, "local")
    start = task.mul(part, per_task)
    position, xi = task.loop(g.tr.alpha**2)
    block, k = position.loop(per_task)
    tx0 = _first_tile(block, p, g, start, k)
    acc = register_tile(
        block,
        p,
        t.mr,
        lambda s: s.nest([c.data.shape[1]]),
        lambda s, i, ks: s.load(v, [xi, r, ks[0], s.add(tx0, i)]),
        lambda s, j, ks: c.packed.load(s, [xi, ot, ks[0], j]),  # type: ignore[union-attr]
    )
    copy, i = block.loop(t.mr, ForKind.UNROLLED)
    lane, j = copy.loop(t.nr, ForKind.VECTORIZED)
    lane.store(lane.load(acc, [i, j]), products, [k, xi, i, j])
    after, k = task.loop(per_task)
    nt = after.add(first, r)
    at = _Block(k, _first_tile(after, p, g, start, k), ot, nt)
    _output_transform(after, p, g, products, at)


def _first_tile(e: Emitter, p: Params, g: _Geometry, start: Index, k: Index) -> Index:
    """The first tile of the `k`-th block of the task whose first block is
    `start` (the last task's blocks past the row repeat its last block)."""
    return e.min(e.mul(e.add(start, k), p.t.mr), g.tw - p.t.mr)


def _channels_in_lanes(e: Emitter, t: Tiles) -> tuple[Emitter, Index]:
    """A vectorized loop over a tile's `nr` channels, a vector an iteration."""
    vector, q = e.loop(t.nr // t.lanes)
    lane, jl = vector.loop(t.lanes, ForKind.VECTORIZED)
    return lane, lane.add(lane.mul(q, t.lanes), jl)


def _output_transform(
    e: Emitter, p: Params, g: _Geometry, products: SSAValue, at: _Block
) -> None:
    """The outputs `A^T M A` of the block, a vector of channels at a time,
    into a staging buffer `[m, rows * m, nr]`, then stored transposed: for
    each channel and output row, the block's `rows * m` pixels as one
    vector."""
    staged = _transformed(e, p, g, products, at.k)
    c, t = p.problem, p.t
    out_channels = c.weight.shape[0]
    n, ty = e.div(at.nt, g.th), e.rem(at.nt, g.th)
    block = _Staged(staged, n, ty)
    channels_left = out_channels - (math.ceil(out_channels / t.nr) - 1) * t.nr
    if channels_left == t.nr:
        return _store_columns(e, p, g, at, block, t.nr)
    tiles_count = math.ceil(out_channels / t.nr)
    if (full := e.when(e.less(at.ot, tiles_count - 1))) is not None:
        _store_columns(full, p, g, at, block, t.nr)
    if (edge := e.when(e.less(tiles_count - 2, at.ot))) is not None:
        _store_columns(edge, p, g, at, block, channels_left)


def _transformed(
    e: Emitter, p: Params, g: _Geometry, products: SSAValue, k: Index
) -> SSAValue:
    """`A^T M A` of each tile of the task's `k`-th block, in two passes
    through a small buffer, into the staging buffer."""
    tr, t, rows = g.tr, p.t, p.t.mr
    element = p.element
    m, alpha = tr.m, tr.alpha
    staged = e.alloc([m, rows * m, t.nr], element, "local")
    partial = e.alloc([m, alpha, t.nr], element, "local")
    steps = program(tr.at)
    tile, i = e.loop(rows)
    # A^T M, a column of M at a time; then its rows times A.  A vector of
    # channels an iteration: LLVM unrolls a vectorized loop of up to 16
    # vectors, which here only multiplied the code.
    column, w = tile.loop(alpha)
    lane, j = _channels_in_lanes(column, t)
    at = [lane.load(products, [k, lane.add(w, u * alpha), i, j]) for u in range(alpha)]
    for y, value in enumerate(_run(lane, steps, at)):
        lane.store(value, partial, [y, w, j])
    row, y = tile.loop(m)
    lane, j = _channels_in_lanes(row, t)
    values = [lane.load(partial, [y, u, j]) for u in range(alpha)]
    for x, value in enumerate(_run(lane, steps, values)):
        lane.store(value, staged, [y, lane.add(lane.mul(i, m), x), j])
    return staged


@dataclass(frozen=True)
class _Staged:
    """A block's outputs in the staging buffer `staged`, of image `n` and
    row of tiles `ty`."""

    staged: SSAValue
    n: Index
    ty: Index


def _store_columns(
    e: Emitter, p: Params, g: _Geometry, at: _Block, block: _Staged, cols: int
) -> None:
    """The block's `cols` channels, its tiles' whole rows of pixels, or
    those inside the image for the last block of a row."""
    rows, m, tw = p.t.mr, g.tr.m, g.tw
    last = p.problem.out_shape[3] - (tw - rows) * m
    if last == rows * m:
        return _store_pixels(e, p, g, at, block, (cols, rows * m))
    if (full := e.when(e.less(at.tx0, tw - rows))) is not None:
        _store_pixels(full, p, g, at, block, (cols, rows * m))
    if (edge := e.when(e.less(tw - rows - 1, at.tx0))) is not None:
        _store_pixels(edge, p, g, at, block, (cols, last))


def _store_pixels(
    e: Emitter,
    p: Params,
    g: _Geometry,
    at: _Block,
    block: _Staged,
    size: tuple[int, int],
) -> None:
    """For each of the block's first `cols` channels and each output row,
    its first `pixels` pixels as one vector gathered from the staging
    buffer, through the epilogue (the last row of tiles clipped to the
    image)."""
    c, m = p.problem, g.tr.m
    cols, pixels = size
    out_h = c.out_shape[2]
    channel, jj = e.loop(cols)
    o = channel.add(channel.mul(at.ot, p.t.nr), jj)
    row, y = channel.loop(m)
    row_at = row.add(row.mul(block.ty, m), y)
    if out_h % m and (inside := row.when(row.less(row_at, out_h))) is not None:
        row = inside  # the last row of tiles, clipped to the image
    lane, q = row.loop(pixels, ForKind.VECTORIZED)
    x = lane.add(lane.mul(at.tx0, m), q)
    c.store(lane, [block.n, o, row_at, x], lane.load(block.staged, [y, q, jj]))
