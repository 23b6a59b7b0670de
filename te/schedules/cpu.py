"""CPU schedules: a register-blocked FMA micro-kernel for GEMM and direct conv2d.

Both ops are computed one *register tile* at a time: `rows × nr` output
elements (`nr` = `VECTORS` SIMD registers wide) accumulate in a `local`
buffer while a reduction loop adds `a[i] * b[j]`, `a` broadcast from one
scalar per row, `b` loaded as vectors (`_accumulate_tile`).  In TIR the
rows are an `unrolled` loop and the columns a `vectorized` one, so after
`convert-tir-to-scf` every access to the tile is at constant indices and
LLVM keeps it in registers (SROA); the multiply-add carries the `contract`
flag and becomes one `vfmadd231ps`.  The output tile is written once, at
the end, through the problem's `store` (which applies a fused epilogue).

* `gemm` packs `b` into zero-padded panels `[batch, panel, k, nr]`
  (contiguous per `k`, in one parallel loop), then runs a parallel loop
  over blocks of row tiles (at most `L2_BLOCK_BYTES` of packed `a`) × panels.
  A task packs its rows of `a` (zero rows past `m`), then for each panel
  runs every row tile over the whole of `k` and stores it, the last row
  tile with `m % mr` rows, the last panel with `n % nr` columns.  A dense's constant weight comes packed in those
  panels (`alter-op-layout`, layout `NK<nr>n` as `dense_weight_block`
  asks): its panels are read in place, nothing is packed per call.
  A single row (`m = 1`, a GEMV: a classifier's dense layer) skips the
  packing, whose copy of `b` would be read once: `gemv` streams `b` once.
* `conv2d` is a direct convolution: a zero-padded copy of the input, split
  into planes by stride phase (`_Planes`), removes the bounds checks and
  makes every window tap a contiguous run of input for consecutive output
  pixels.  A panel is `nr` output pixels: of one output row (`x0 .. x0 +
  nr`), or, for small images, of the *wide* domain `y * wq + x` that runs
  across rows (a 7×7 image fills 49 of 64 lanes instead of 7 of 32 per
  row; its garbage columns are dropped when an epilogue pass moves the
  output out of the wide buffer).  Tasks are blocks of `mr`-channel tiles
  (their weights within `L2_BLOCK_BYTES`) × blocks of panels; a tile's
  reduction over `(c, ky, kx)` broadcasts weights and loads the panel's
  input as vectors.  No im2col buffer.
* Deep conv2d reductions put the output channels in the lanes instead
  (`_conv2d_channel_lanes`): tiles of pixels × channels, from weights that
  `alter-op-layout` packed at compile time in the layout
  `conv2d_weight_block` asks for; no lane is wasted on small images.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import Attribute, SSAValue

from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import ForKind
from hetero.targets.cpu import num_threads, parallel_chunk
from hetero.te.emit import Emitter, Index, Tensor
from hetero.te.schedules.isa import vector_isa
from hetero.te.schedules.problems import Conv2D, Gemm

VECTORS = 2
"""SIMD registers per GEMM tile row: the tile is `VECTORS * lanes` columns wide."""


def conv_vectors(target: TargetAttr | None) -> int:
    """SIMD registers per row of a conv2d pixel tile.  Where a multiply-add
    takes a broadcast from memory (AVX-512's `vfmadd231ps (mem){1to16}`),
    one: each weight is used by one multiply-add, with no broadcast
    instruction (two, with `vbroadcastss` competing with the multiply-adds
    for the FP pipes on AMD Zen 4, measured 7-15 % slower on every
    pixel-tile shape of squeezenet and resnet50).  Elsewhere (AVX2) the
    broadcast is an instruction of its own either way, and two vectors
    share it: the 7x7 stride-2 stem 3.65 -> 2.93 ms, 1x1 64 -> 256 at 56x56
    1.53 -> 1.17 ms (Zen 4 as AVX2, one thread)."""
    return 1 if vector_isa(target).broadcast_operand else 2


MAX_ROWS = 12
"""Most rows of a register tile (`mr`), within what the registers hold."""

L2_BLOCK_BYTES = 256 * 1024
"""The part of a core's L2 a cache block of `a` rows may take."""

CACHE_LINE_BYTES = 64
"""The unit a prefetch fetches (x86-64 and most AArch64 cores)."""

TASKS_PER_THREAD = 4
"""Parallel tasks per thread, so that uneven tasks still balance."""

CONTRACT = arith.FastMathFlagsAttr([arith.FastMathFlag.ALLOW_CONTRACT])
"""`a * b + c` may become one fused multiply-add."""

Reader = Callable[[Emitter, Index, Sequence[Index]], SSAValue]
"""Reads an operand of a tile: (emitter, row or column, reduction indices)."""


@dataclass(frozen=True)
class Tiles:
    """Register tile of a target: `mr` rows × `nr` columns (`lanes` per vector)."""

    lanes: int
    mr: int
    nr: int


def tiles(
    target: TargetAttr | None, element_type: Attribute, vectors: int = VECTORS
) -> Tiles:
    """The largest tile `vectors` registers wide whose accumulators, `b`
    vectors and broadcast `a` fit in the vector registers (`VectorIsa`)."""
    isa = vector_isa(target)
    lanes = isa.lanes(element_type)
    mr = min(MAX_ROWS, (isa.registers - vectors - 1) // vectors)
    return Tiles(lanes, mr, vectors * lanes)


def _zero_tile(e: Emitter, t: Tiles, acc: SSAValue, rows: int) -> None:
    """`acc[i, j] = 0` over a `rows × nr` tile."""
    init, i = e.loop(rows, ForKind.UNROLLED)
    lane, j = init.loop(t.nr, ForKind.VECTORIZED)
    element = acc.type.element_type  # type: ignore[attr-defined]
    lane.store(lane.constant(0.0, element), acc, [i, j])


Loops = Callable[[Emitter], tuple[Emitter, Sequence[Index]]]
"""Emits the reduction loops: their body and indices."""


def _accumulate_tile(
    e: Emitter, t: Tiles, acc: SSAValue, rows: int, loops: Loops, a: Reader, b: Reader
) -> None:
    """`acc[i, j] += a(i) * b(j)` over the reduction `loops`, as fused
    multiply-adds on the `local` `rows × nr` tile."""
    body, ks = loops(e)
    row, i = body.loop(rows, ForKind.UNROLLED)
    x = a(row, i, ks)
    lane, j = row.loop(t.nr, ForKind.VECTORIZED)
    product = lane.op(arith.MulfOp(x, b(lane, j, ks), CONTRACT))
    total = lane.op(arith.AddfOp(lane.load(acc, [i, j]), product, CONTRACT))
    lane.store(total, acc, [i, j])


def _register_tile(
    e: Emitter,
    t: Tiles,
    rows: int,
    loops: Loops,
    a: Reader,
    b: Reader,
    element: Attribute,
) -> SSAValue:
    """A zeroed `local` tile, accumulated over `loops`."""
    acc = e.alloc([rows, t.nr], element, "local")
    _zero_tile(e, t, acc, rows)
    _accumulate_tile(e, t, acc, rows, loops, a, b)
    return acc


def _store_tile(
    e: Emitter,
    acc: SSAValue,
    rows: int,
    cols: int,
    store: Callable[[Emitter, Index, Index, SSAValue], None],
) -> None:
    """Hands the first `cols` columns of each row of the tile to `store`."""
    row, i = e.loop(rows, ForKind.UNROLLED)
    lane, j = row.loop(cols, ForKind.VECTORIZED)
    store(lane, i, j, lane.load(acc, [i, j]))


def _split(count: int, parts: int) -> tuple[int, int]:
    """`count` items in at most `parts` even blocks: (items per block, blocks)."""
    per = math.ceil(count / max(1, min(parts, count)))
    return per, math.ceil(count / per)


# ----------------------------------------------------------------------------
# GEMM
# ----------------------------------------------------------------------------


def _cache_rows(t: Tiles, depth: int, element_bytes: int) -> int:
    """Rows of `a` per cache block: as many whole tiles of `depth` elements
    as fit `L2_BLOCK_BYTES`."""
    return t.mr * max(1, L2_BLOCK_BYTES // (depth * element_bytes * t.mr))


def _pack_panel(
    e: Emitter, g: Gemm, t: Tiles, packed: SSAValue, batch: Index, p: Index, cols: int
) -> None:
    """`packed[batch, p, k, j] = b(batch, k, p * nr + j)`, zero for `j >= cols`."""
    n0 = e.mul(p, t.nr)
    if g.b_along_k:
        lane, j = e.loop(cols)
        body, k = lane.loop(g.k)
    else:
        row, k = e.loop(g.k)
        body, j = row.loop(cols, ForKind.VECTORIZED)
    body.store(g.b(body, batch, k, body.add(n0, j)), packed, [batch, p, k, j])
    if cols < t.nr:
        row, k = e.loop(g.k)
        lane, j = row.range(cols, t.nr, kind=ForKind.VECTORIZED)
        lane.store(lane.constant(0.0, g.element_type), packed, [batch, p, k, j])


def _each_panel(
    e: Emitter, t: Tiles, n: int, p: Index, emit: Callable[[Emitter, int], None]
) -> None:
    """`emit(e, cols)` for panel `p`: all `nr` columns, or the last panel's rest."""
    whole, rest = divmod(n, t.nr)
    if not rest or not whole:
        return emit(e, rest or t.nr)
    if (full := e.when(e.less(p, whole))) is not None:
        emit(full, t.nr)
    if (last := e.when(e.less(whole - 1, p))) is not None:
        emit(last, rest)


def _panels_of_b(
    e: Emitter, g: Gemm, t: Tiles, panels: int
) -> Callable[[Emitter, Sequence[Index]], SSAValue]:
    """A reader of `b`'s panels, element `[batch, p, k, j]` = `b(batch, k,
    p * nr + j)`: the weight `alter-op-layout` packed so at compile time
    (`Gemm.packed_b`, when its panels are `nr` wide), else a copy packed
    here, per call, in one parallel loop (`_pack_panel`)."""
    if g.packed_b is not None and g.packed_b.shape[-1] == t.nr:
        return lambda r, at: g.packed_b.load(r, at[1:])  # type: ignore[union-attr]
    packed = e.alloc([g.batch, panels, g.k, t.nr], g.element_type)
    pack, flat = e.loop(g.batch * panels, ForKind.PARALLEL)
    batch, p = pack.div(flat, panels), pack.rem(flat, panels)
    _each_panel(
        pack, t, g.n, p, lambda at, cols: _pack_panel(at, g, t, packed, batch, p, cols)
    )
    return lambda r, at: r.load(packed, at)


def dense_weight_block(
    weight_shape: Sequence[int],
    rows: int,
    element_type: Attribute,
    target: TargetAttr | None,
) -> int:
    """The panel width `nr` of the `NK<nr>n` weight layout `gemm` wants for
    a dense of `rows` rows and an `[N, K]` weight (0: plain `NK`).  Packed at
    compile time, its panels are read in place; from `NK`, `gemm` packs
    them on every call, a gather with a stride of `K` (ViT-B's QKV
    projection, 197 x 768 x 2304: 9.3 ms against 6.8 of onnxruntime, one
    thread).  A GEMV (`rows = 1`) reads `NK` as it is: its dot products
    run along `k`."""
    if rows == 1 or not isinstance(element_type, AnyFloat):
        return 0
    return tiles(target, element_type).nr


def _pack_rows(
    e: Emitter,
    g: Gemm,
    t: Tiles,
    packed: SSAValue,
    batch: Index,
    m0: Index,
    tile: Index,
) -> None:
    """`packed[tile, k, i] = a(batch, m0 + i, k)`, zero for rows past `m`."""
    row, i = e.loop(t.mr)
    m = row.add(m0, i)
    if (inside := row.when(row.less(m, g.m))) is not None:
        lane, k = inside.loop(g.k)
        lane.store(g.a(lane, batch, m, k), packed, [tile, k, i])
    if (outside := row.when(row.less(g.m - 1, m))) is not None:
        lane, k = outside.loop(g.k)
        lane.store(lane.constant(0.0, g.element_type), packed, [tile, k, i])


def _copy_tile(
    e: Emitter,
    t: Tiles,
    rows: int,
    source: SSAValue,
    source_at: Sequence[Index],
    to: SSAValue,
    to_at: Sequence[Index],
    columns_at: Index = 0,
) -> None:
    """`to[*to_at + i, columns_at + j] = source[*source_at, i, j]` over a
    `rows × nr` tile (`to_at`'s last index offset by the row)."""
    row, i = e.loop(rows, ForKind.UNROLLED)
    lane, j = row.loop(t.nr, ForKind.VECTORIZED)
    value = lane.load(source, [*source_at, i, j])
    if columns_at == 0:
        lane.store(value, to, [*to_at, i, j])
        return
    *outer, last = to_at
    lane.store(value, to, [*outer, lane.add(last, i), lane.add(columns_at, j)])


def gemm(e: Emitter, g: Gemm, target: TargetAttr | None) -> None:
    """Packed-panel GEMM with register tiles (see the module docstring)."""
    t = tiles(target, g.element_type)
    if g.m == 1:
        return gemv(e, g, t, target)
    panels = math.ceil(g.n / t.nr)
    panel_b = _panels_of_b(e, g, t, panels)
    tasks = TASKS_PER_THREAD * num_threads(target)
    row_tiles = math.ceil(g.m / t.mr)
    cache_tiles = _cache_rows(t, g.k, g.element_type.bitwidth // 8) // t.mr  # type: ignore[attr-defined]
    tiles_per_block, row_blocks = _split(
        row_tiles,
        max(math.ceil(row_tiles / cache_tiles), math.ceil(tasks / g.batch)),
    )
    per_block, blocks = _split(panels, math.ceil(tasks / (g.batch * row_blocks)))
    task, flat = e.loop(g.batch * row_blocks * blocks, ForKind.PARALLEL)
    batch = task.div(flat, row_blocks * blocks)
    within = task.rem(flat, row_blocks * blocks)
    rb, pb = task.div(within, blocks), task.rem(within, blocks)
    first_tile = task.mul(rb, tiles_per_block)
    count = task.sub(
        task.min(task.add(first_tile, tiles_per_block), row_tiles), first_tile
    )
    p_lo = task.mul(pb, per_block)
    p_hi = task.min(task.add(p_lo, per_block), panels)
    packed_a = task.alloc([tiles_per_block, g.k, t.mr], g.element_type)
    packing, tt = task.range(0, count)
    m0 = packing.mul(packing.add(first_tile, tt), t.mr)
    _pack_rows(packing, g, t, packed_a, batch, m0, tt)

    panel, p = task.range(p_lo, p_hi)
    row, tt = panel.range(0, count)
    m0 = row.mul(row.add(first_tile, tt), t.mr)
    acc = _register_tile(
        row,
        t,
        t.mr,
        lambda r: _one_loop(r, g.k),
        lambda r, i, ks: r.load(packed_a, [tt, ks[0], i]),
        lambda r, j, ks: panel_b(r, [batch, p, ks[0], j]),
        g.element_type,
    )
    n0 = row.mul(p, t.nr)

    def store(at: Emitter, rows: int) -> None:
        _each_panel(
            at,
            t,
            g.n,
            p,
            lambda s, cols: _store_tile(
                s,
                acc,
                rows,
                cols,
                lambda w, i, j, v: g.store(w, [batch, w.add(m0, i), w.add(n0, j)], v),
            ),
        )

    whole_rows = g.m - g.m % t.mr
    if not g.m % t.mr or not whole_rows:
        return store(row, g.m % t.mr or t.mr)
    if (full := row.when(row.less(m0, whole_rows))) is not None:
        store(full, t.mr)
    if (edge := row.when(row.less(whole_rows - 1, m0))) is not None:
        store(edge, g.m % t.mr)


GEMV_ROWS = 8
"""Dot products a GEMV task row computes together (independent FMA chains
that share each loaded vector of `a`)."""


def gemv(e: Emitter, g: Gemm, t: Tiles, target: TargetAttr | None) -> None:
    """`m = 1`: no packing.  With `b` contiguous along `k` (dense), each
    output is a dot product, `GEMV_ROWS` at a time, over vectors of `k`;
    else each panel of `nr` outputs is a one-row register tile reading `b`
    in place."""
    tasks = TASKS_PER_THREAD * num_threads(target)
    if not g.b_along_k:
        panels = math.ceil(g.n / t.nr)
        per_task, _ = _split(g.batch * panels, tasks)
        task, flat = e.loop(math.ceil(g.batch * panels / per_task), ForKind.PARALLEL)
        first = task.mul(flat, per_task)
        body, q = task.range(
            first, task.min(task.add(first, per_task), g.batch * panels)
        )
        batch, p = body.div(q, panels), body.rem(q, panels)
        n0 = body.mul(p, t.nr)
        acc = _register_tile(
            body,
            t,
            1,
            lambda r: _one_loop(r, g.k),
            lambda r, i, ks: g.a(r, batch, 0, ks[0]),
            lambda r, j, ks: g.b(r, batch, ks[0], r.add(n0, j)),
            g.element_type,
        )
        _each_panel(
            body,
            t,
            g.n,
            p,
            lambda s, cols: _store_tile(
                s,
                acc,
                1,
                cols,
                lambda w, i, j, v: g.store(w, [batch, 0, w.add(n0, j)], v),
            ),
        )
        return
    groups = math.ceil(g.n / GEMV_ROWS)
    per_task, _ = _split(g.batch * groups, tasks)
    task, flat = e.loop(math.ceil(g.batch * groups / per_task), ForKind.PARALLEL)
    first = task.mul(flat, per_task)
    body, q = task.range(first, task.min(task.add(first, per_task), g.batch * groups))
    batch, n0 = body.div(q, groups), body.mul(body.rem(q, groups), GEMV_ROWS)
    rows = GEMV_ROWS if g.n % GEMV_ROWS == 0 else 1
    if rows == 1:
        group, r = body.range(0, body.min(GEMV_ROWS, body.sub(g.n, n0)))
        _dot_products(group, g, t, batch, group.add(n0, r), 1)
    else:
        _dot_products(body, g, t, batch, n0, rows)


def _dot_products(
    e: Emitter, g: Gemm, t: Tiles, batch: Index, n0: Index, rows: int
) -> None:
    """`out[batch, 0, n0 + i] = sum_k a(k) * b(k, n0 + i)` for `i < rows`:
    lane-wise partial sums over whole vectors of `k`, then the lanes and
    the `k % lanes` tail added per row."""
    whole = g.k - g.k % t.lanes
    acc = e.alloc([rows, t.lanes], g.element_type, "local")
    init, i = e.loop(rows, ForKind.UNROLLED)
    zero, j = init.loop(t.lanes, ForKind.VECTORIZED)
    zero.store(zero.constant(0.0, g.element_type), acc, [i, j])
    if whole:
        step, kb = e.range(0, whole, t.lanes)
        row, i = step.loop(rows, ForKind.UNROLLED)
        lane, j = row.loop(t.lanes, ForKind.VECTORIZED)
        k = lane.add(kb, j)
        product = lane.op(
            arith.MulfOp(
                g.a(lane, batch, 0, k), g.b(lane, batch, k, lane.add(n0, i)), CONTRACT
            )
        )
        total = lane.op(arith.AddfOp(lane.load(acc, [i, j]), product, CONTRACT))
        lane.store(total, acc, [i, j])
    out, i = e.loop(rows, ForKind.UNROLLED)
    sum_ = out.alloc([1], g.element_type, "local")
    out.store(out.load(acc, [i, 0]), sum_, [0])
    lanes, j = out.range(1, t.lanes)
    lanes.store(
        lanes.op(arith.AddfOp(lanes.load(sum_, [0]), lanes.load(acc, [i, j]))),
        sum_,
        [0],
    )
    if g.k % t.lanes:
        tail, k = out.range(whole, g.k)
        product = tail.op(
            arith.MulfOp(g.a(tail, batch, 0, k), g.b(tail, batch, k, tail.add(n0, i)))
        )
        tail.store(tail.op(arith.AddfOp(tail.load(sum_, [0]), product)), sum_, [0])
    g.store(out, [batch, 0, out.add(n0, i)], out.load(sum_, [0]))


def _one_loop(e: Emitter, extent: Index) -> tuple[Emitter, Sequence[Index]]:
    """A reduction over `0 ≤ k < extent`."""
    body, k = e.range(0, extent)
    return body, [k]


# ----------------------------------------------------------------------------
# conv2d
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Planes:
    """The zero-padded input of a conv2d, split by stride phase: padded pixel
    `(row, col)` is element `(row // sh) * wq + col // sw` of plane
    `(row % sh) * sw + col % sw`.  In a plane, the pixels that output pixels
    `(y, x)` and `(y, x + 1)` read for one window tap are neighbours, and so
    are `(y, wq - 1)` and `(y + 1, 0)`: the *wide* output domain `y * wq + x`
    (`x < wq`, columns `x >= out_w` are garbage) reads every tap as one
    contiguous run, so a panel of `nr` wide pixels is `nr` consecutive lanes
    whatever the image width."""

    wq: int
    """Columns of a plane row."""
    length: int
    """Elements of a plane: its rows, and the tail the last panel overreads."""


def _planes(c: Conv2D, panels_end: int) -> _Planes:
    """The plane geometry for panels that read wide pixels below `panels_end`."""
    _, _, height, width = c.data.shape
    _, _, kh, kw = c.weight.shape
    _, _, out_h, out_w = c.out_shape
    (sh, sw), (dh, dw) = c.strides, c.dilation
    rows = max((out_h - 1) * sh + (kh - 1) * dh + 1, c.padding[0] + height)
    cols = max((out_w - 1) * sw + (kw - 1) * dw + 1, c.padding[1] + width)
    wq = math.ceil(cols / sw)
    last_tap = ((kh - 1) * dh // sh) * wq + (kw - 1) * dw // sw
    return _Planes(wq, max(math.ceil(rows / sh) * wq, panels_end + last_tap))


def _pad_input(e: Emitter, c: Conv2D, planes: _Planes) -> SSAValue:
    """The input, zero-padded and split into stride-phase planes (`_Planes`),
    one parallel task per input channel (per block of channels of blocked
    data, whose planes keep the block: `[N, C / b, phases, length * b]`,
    element `pixel * b + c % b`).  Only the planes some window tap reads are
    filled (a 1x1 stride-2 conv reads one of four), and only their padding
    and tail are zeroed."""
    block = _data_block(c)
    batch, channels, _, _ = c.data.shape
    sh, sw = c.strides
    blocks = channels // block
    padded = e.alloc(
        [batch, blocks, sh * sw, planes.length * block], c.data.element_type
    )
    body, flat = e.loop(batch * blocks, ForKind.PARALLEL)
    n, ch = body.div(flat, blocks), body.rem(flat, blocks)
    for rp, cp in _used_phases(c):
        _fill_plane(body, c, planes, padded, [n, ch, rp * sw + cp], rp, cp)
    return padded


def _data_block(c: Conv2D) -> int:
    """The channel block of the data as stored (1: `NCHW`)."""
    return 1 if c.blocked_data is None else c.blocked_data.shape[-1]


def _tap(
    e: Emitter, c: Conv2D, planes: _Planes, ky: Index, kx: Index
) -> tuple[Index, Index]:
    """Where tap `(ky, kx)` reads: its stride-phase plane, and the shift of
    its whole rows and columns of that plane from the output pixel's own
    element (`_Planes`)."""
    (sh, sw), (dh, dw) = c.strides, c.dilation
    row, col = e.mul(ky, dh), e.mul(kx, dw)
    plane = e.add(e.mul(e.rem(row, sh), sw), e.rem(col, sw))
    shift = e.add(e.mul(e.div(row, sh), planes.wq), e.div(col, sw))
    return plane, shift


def _used_phases(c: Conv2D) -> list[tuple[int, int]]:
    """The (row, column) stride phases that the window taps read."""
    _, _, kh, kw = c.weight.shape
    (sh, sw), (dh, dw) = c.strides, c.dilation
    rows = sorted({ky * dh % sh for ky in range(kh)})
    cols = sorted({kx * dw % sw for kx in range(kw)})
    return [(rp, cp) for rp in rows for cp in cols]


def _interior(pad: int, size: int, stride: int, phase: int) -> tuple[int, int]:
    """The plane rows (columns) `q` whose padded index `q * stride + phase`
    is an input one, `pad <= . < pad + size`: [start, end)."""
    start = max(0, -(-(pad - phase) // stride))
    return start, max(start, -(-(pad + size - phase) // stride))


def _fill_plane(
    e: Emitter,
    c: Conv2D,
    planes: _Planes,
    padded: SSAValue,
    at: list[Index],
    rp: int,
    cp: int,
) -> None:
    """Plane (`rp`, `cp`): its rows and columns that hold input pixels
    (padded row `rq * sh + rp`, column `cq * sw + cp`) copied, the rest zero
    (blocked data: a block of channels per pixel, `_pad_input`)."""
    _, _, height, width = c.data.shape
    (sh, sw), (top, left) = c.strides, c.padding[:2]
    wq = planes.wq
    block = _data_block(c)
    r0, r1 = _interior(top, height, sh, rp)
    q0, q1 = _interior(left, width, sw, cp)
    zero = e.constant(0.0, c.data.element_type)

    def zeros(em: Emitter, start: Index, count: int) -> None:
        if count > 0:
            lane, i = em.loop(count * block, ForKind.VECTORIZED)
            lane.store(zero, padded, [*at, lane.add(lane.mul(start, block), i)])

    zeros(e, 0, r0 * wq)
    rows, rq = e.range(r0, r1)
    start = rows.mul(rq, wq)
    zeros(rows, start, q0)
    y = rows.sub(rows.add(rows.mul(rq, sh), rp), top)
    if c.blocked_data is None:
        lane, cq = rows.range(q0, q1, kind=ForKind.VECTORIZED)
        x = lane.sub(lane.add(lane.mul(cq, sw), cp), left)
        value = c.data.load(lane, [*at[:2], y, x])
        lane.store(value, padded, [*at, lane.add(start, cq)])
    else:
        column, cq = rows.range(q0, q1)
        x = column.sub(column.add(column.mul(cq, sw), cp), left)
        lane, ci = column.loop(block, ForKind.VECTORIZED)
        value = c.blocked_data.load(lane, [*at[:2], y, x, ci])
        at_pixel = lane.mul(lane.add(start, cq), block)
        lane.store(value, padded, [*at, lane.add(at_pixel, ci)])
    zeros(rows, rows.add(start, q1), wq - q1)
    zeros(e, r1 * wq, planes.length - r1 * wq)


@dataclass(frozen=True)
class _ConvTiles:
    """How a conv2d's output is cut: register tiles of `mr` output channels
    × `nr` wide pixels (`panels` per image), grouped into parallel tasks of
    `block` channel tiles × `per_task` panels."""

    t: Tiles
    planes: _Planes
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
    buffer to copy out of (13 columns: 13 vectors each way, 0.045 against
    0.048 ms).  A reduction shallower than `ROW_PANEL_DEPTH` costs
    less than the wide buffer's extra pass over the output, more than the
    lanes a row's last panel wastes (a first conv, 3 x 3 x 3 deep, 111
    columns: 0.62 ms wide, 0.53 ms in rows; 16 x 3 x 3 deep, 55 columns:
    0.55 ms wide, 0.59 ms in rows)."""
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
    return _flat_windows(c) and out_h * out_w >= t.nr


MOST_PLANES = 16
"""Most stride-phase planes a channel-lanes conv2d copies its input into
(`_in_place_windows`)."""


def _in_place_windows(c: Conv2D) -> bool:
    """Whether a channel-lanes conv2d reads its input where it is rather
    than from a padded copy in stride-phase planes: one-column stride-1
    windows (`_flat_windows`), and unpadded windows whose planes would be
    more than `MOST_PLANES` (a ViT's 32x32 stride-32 patches: 1024 planes,
    each filled by code of its own, 14k TIR ops and 24 s of code generation
    for one kernel; 0.3 s read in place).  Fewer planes pay for their copy:
    the compact planes are read once per channel tile (ResNet-50's 1x1
    stride-2 conv read in place measured 2.85 -> 3.5 ms with AVX2's
    16-channel tiles)."""
    if _flat_windows(c):
        return True
    return not any(c.padding) and len(_used_phases(c)) > MOST_PLANES


def _flat_windows(c: Conv2D) -> bool:
    """Stride 1, no padding, windows one column wide: output pixel `p` of
    the flattened image reads input pixel `p + ky * dh * W` for tap `ky`."""
    return c.strides == (1, 1) and not any(c.padding) and c.weight.shape[3] == 1


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
    wq = _planes(c, 0).wq
    wide_panels = math.ceil(out_h * wq / t.nr)
    in_place = _in_place(c, t)
    depth = group_channels * kh * kw
    wide = not in_place and not _row_panels_win(t, out_h, out_w, wide_panels, depth)
    panels = wide_panels if wide or in_place else out_h * row_panels
    end = panels * t.nr if wide else (out_h - 1) * wq + row_panels * t.nr
    channel_tiles = math.ceil(out_channels // c.groups / t.mr)
    tile_bytes = t.mr * group_channels * kh * kw * c.data.element_type.bitwidth // 8  # type: ignore[attr-defined]
    block, blocks = _split(
        channel_tiles, math.ceil(channel_tiles * tile_bytes / L2_BLOCK_BYTES)
    )
    tasks = TASKS_PER_THREAD * num_threads(target)
    per_task, _ = _split(panels, math.ceil(tasks / (batch * c.groups * blocks)))
    return _ConvTiles(
        t, _planes(c, end), panels, wide, in_place, channel_tiles, block, per_task
    )


def conv2d(e: Emitter, c: Conv2D, target: TargetAttr | None) -> None:
    """Direct NCHW conv2d on register tiles (see the module docstring); with
    the weights in the layout `conv2d_weight_block` asks for, channels in
    the lanes (`_conv2d_channel_lanes`)."""
    # Imported here: the Winograd schedule is built from this module's pieces.
    from hetero.te.schedules.cpu_winograd import conv2d_winograd, winograd_applies

    if c.winograd:
        if winograd_applies(c, target):
            return conv2d_winograd(e, c, target)
        c = replace(c, packed=None, winograd=0)  # read through the OIHW view
    element = c.data.element_type
    packed = c.packed
    lanes = _lane_tiles(target, element).lanes
    if packed is not None and c.groups == 1 and packed.shape[-1] % lanes == 0:
        return _conv2d_channel_lanes(e, c, packed, target)
    c = replace(c, blocked_data=None)  # pixel lanes read blocked data through its view
    g = _conv_tiles(c, tiles(target, element, conv_vectors(target)), target)
    if g.in_place:
        e = e.uniformly()  # no image width in the kernel: alike for merge-kernels
    t = g.t
    fits = packed is not None and c.groups == 1 and packed.shape[-1] == t.mr
    rows_packed = packed if fits else None
    batch = c.data.shape[0]
    out_channels, group_channels, kh, kw = c.weight.shape
    out_w = c.out_shape[3]
    dh = c.dilation[0]
    per_group = out_channels // c.groups
    padded = None if g.in_place else _pad_input(e, c, g.planes)
    wide = e.alloc([batch, out_channels, g.panels * t.nr], element) if g.wide else None
    grid = [
        batch,
        c.groups,
        math.ceil(g.channel_tiles / g.block),
        math.ceil(g.panels / g.per_task),
    ]
    task, flat = e.loop(math.prod(grid), ForKind.PARALLEL)
    n, grp, cb, pt = task.unflatten(flat, grid)
    first_panel = task.mul(pt, g.per_task)
    panels = (first_panel, task.min(task.add(first_panel, g.per_task), g.panels))
    first_tile = task.mul(cb, g.block)
    channel_tiles = (
        first_tile,
        task.min(task.add(first_tile, g.block), g.channel_tiles),
    )
    # Channel tiles outer: the tiles of one channel tile run along its
    # pixels, so the epilogue's reads (a residual) and the stores are a
    # few sequential streams, not jumps across channel planes.
    channel_loop, tt = task.range(*channel_tiles)
    tile_loop, q = channel_loop.range(*panels)
    if g.in_place:
        pixels = c.out_shape[2] * out_w
        p0 = tile_loop.min(tile_loop.mul(q, t.nr), pixels - t.nr)
    elif g.wide:
        p0 = tile_loop.mul(q, t.nr)
    else:
        row_panels = math.ceil(out_w / t.nr)
        y, xp = tile_loop.div(q, row_panels), tile_loop.rem(q, row_panels)
        x0 = tile_loop.mul(xp, t.nr)
        p0 = tile_loop.add(tile_loop.mul(y, g.planes.wq), x0)
    base = tile_loop.mul(grp, group_channels)

    def b(r: Emitter, j: Index, ks: Sequence[Index]) -> SSAValue:
        """Lane `j` of the panel for tap (ky, kx): in the tap's plane, `p0 +
        j` shifted by the tap's whole rows and columns of that plane."""
        ch, ky, kx = ks
        if padded is None:
            width = c.data.shape[3]
            pixel = r.add(r.add(p0, r.mul(ky, dh * width)), j)
            # A buffer (not a view of blocked data) is read flattened too.
            at = (
                [0, pixel] if c.data.buffer is not None else _row_major(r, pixel, width)
            )
            return c.data.load(r, [n, r.add(base, ch), *at])
        plane, shift = _tap(r, c, g.planes, ky, kx)
        return r.load(padded, [n, r.add(base, ch), plane, r.add(r.add(p0, shift), j)])

    def tile(at: Emitter, rows: int) -> None:
        o0 = at.mul(tt, t.mr)
        first = at.add(at.mul(grp, per_group), o0)

        def weight(r: Emitter, i: Index, ks: Sequence[Index]) -> SSAValue:
            """Row `i`'s weight for tap `ks`: from the tile's packed rows
            (`_pixel_tile_rows`), else from `OIHW` (or a view of it)."""
            if rows_packed is not None:
                return rows_packed.load(r, [tt, *ks, i])
            return c.weight.load(r, [r.add(first, i), *ks])

        acc = _register_tile(
            at, t, rows, lambda r: r.nest([group_channels, kh, kw]), weight, b, element
        )
        if wide is not None:
            _copy_tile(at, t, rows, acc, [], wide, [n, first], columns_at=p0)
            return
        if g.in_place:
            _store_tile(
                at,
                acc,
                rows,
                t.nr,
                lambda w, i, j, v: c.store(
                    w, [n, w.add(first, i), *_output_pixel(w, c, w.add(p0, j))], v
                ),
            )
            return
        _each_panel(
            at,
            t,
            out_w,
            xp,
            lambda s, cols: _store_tile(
                s,
                acc,
                rows,
                cols,
                lambda w, i, j, v: c.store(w, [n, w.add(first, i), y, w.add(x0, j)], v),
            ),
        )

    whole = per_group // t.mr
    if per_group % t.mr == 0:
        tile(tile_loop, t.mr)
    else:
        if (full := tile_loop.when(tile_loop.less(tt, whole))) is not None:
            tile(full, t.mr)
        if (edge := tile_loop.when(tile_loop.less(whole - 1, tt))) is not None:
            tile(edge, per_group % t.mr)
    if wide is not None:
        _unwiden(e, c, g.planes.wq, wide)


def _next_task(e: Emitter, flat: Index, tasks: int, target: TargetAttr | None) -> Index:
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


def _row_major(e: Emitter, pixel: Index, width: int) -> list[Index]:
    """Row and column of element `pixel` of a flattened image `width` wide
    (the vectorizer addresses consecutive pixels as one run across rows)."""
    return [e.div(pixel, width), e.rem(pixel, width)]


def _output_pixel(e: Emitter, c: Conv2D, pixel: Index) -> list[Index]:
    """The last two indices of output pixel `pixel` of the flattened image:
    `[0, pixel]` where the store takes it (`Conv2D.flat_store`: no image
    width in the kernel, which `merge-kernels` can then share between
    layers of other sizes), else its row and column."""
    return [0, pixel] if c.flat_store else _row_major(e, pixel, c.out_shape[3])


def _unwiden(e: Emitter, c: Conv2D, wq: int, wide: SSAValue) -> None:
    """The output from the wide domain (`y * wq + x`), through the epilogue."""
    batch, out_channels, out_h, out_w = c.out_shape
    body, flat = e.loop(batch * out_channels, ForKind.PARALLEL)
    n, o = body.div(flat, out_channels), body.rem(flat, out_channels)
    row, y = body.loop(out_h)
    start = row.mul(y, wq)
    lane, x = row.loop(out_w, ForKind.VECTORIZED)
    c.store(lane, [n, o, y, x], lane.load(wide, [n, o, lane.add(start, x)]))


# ----------------------------------------------------------------------------
# conv2d, output channels in the vector lanes
# ----------------------------------------------------------------------------

LANE_DEPTH = 256
"""Least reduction depth (`I * KH * KW`) for which `conv2d_weight_block`
puts output channels in the lanes: each tile ends with a transposing store
(a vector of pixels gathered from the tile's lanes per channel), which a
shallower reduction does not pay for (against pixel lanes, measured: depth
64 12 % slower, 128 3 % slower, 144 alike, 288 7 % faster)."""

LANE_USE = 0.9
"""Least share of the channel tiles' lanes that must hold real output
channels (1000 of 1024: yes; 16 of 64: no)."""

LANE_ROW_CHOICES = {False: 3, True: 2}
"""How many pixel counts a channel-lanes tile chooses among (`_lane_tiles`),
from the most its registers hold down, for `NCHW` data and for blocked
data, whose pixels each need an address of their own: with AVX-512, 7, 6
or 5 pixels (28 accumulators and 4 weight vectors; the broadcast is the
multiply-add's memory operand), blocked 6 or 5 (seven spilled address
registers: ResNet-50 93 ms against 79 with six); with AVX2, 6, 5 or 4
(12 accumulators, 2 weight vectors, the broadcast register), blocked 5 or
4.  Seven-pixel tiles with AVX2 spilled accumulators on every step
(ResNet-50's 3x3 stride-2 conv, 128 channels at 56x56: 24.7 ms against
4.3 with six, Zen 4 as AVX2)."""

LEAST_ROW_TILE = 4
"""Fewest pixels of a channel-lanes tile kept within an image row
(`_conv2d_channel_lanes`); narrower images' tiles run across rows."""

LANE_TILE_STEP = 2
"""A channel-lanes tile's per-step cost beyond its pixels' multiply-adds,
in pixels: loading the weight vectors and the loop's own instructions.  A
tile of `r` pixels costs `r + LANE_TILE_STEP` a step, so fewer, larger
tiles win unless the last one wastes more than that saves (AVX-512: 7
pixels for 7x7 images, where six measured 4-7 % slower)."""


def _lane_tiles(
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
    the one before: `_conv2d_channel_lanes`)."""
    if not row_width:
        return math.ceil(pixels / rows)
    return pixels // row_width * math.ceil(row_width / rows)


PREFETCH_PIXEL_TILES = 48
"""Most pixel tiles per channel tile for which `_conv2d_channel_lanes`
prefetches the next channel tile's weights.  The first pass over a channel
tile's weights, from memory, costs about one pixel tile's time again: a
share of about 1 / pixel tiles, which pays for a prefetch on small images
(7x7: 7-10 tiles, 14x14: 28-33; ResNet-50's layers there 3-18 % faster, 2.5
ms in all) but is lost in the noise at 28x28 (112 tiles), where the next
tile's weights would also share L2 with the current ones and the input."""

BLOCKED_OUTPUT_DEPTH = 64
"""Least reduction depth (`I * KH * KW`) for which a conv2d of `NCHW` data
writes a blocked result: a shallower one (SqueezeNet's first, 27 deep)
took 0.82 ms in channel-lane tiles against 0.65-0.72 ms in pixel-lane ones;
ResNet-50's first (147) 2.3-2.4 ms against 2.7."""


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
    the output channels in the lanes (`_conv2d_channel_lanes`), which then
    store whole vectors (no transposition) and read `b` consecutive input
    channels of a pixel from one cache line (in `NCHW`, each channel of a
    reduction step is a plane of the image away).

    Not the default: on the Zen 4 of docs/frontends/onnx.md, ResNet-50 ran
    5-7 % and SqueezeNet 1-7 % slower end to end with blocked activations
    (the residual and 1x1 convolutions faster, the 3x3 ones on 7x7 and
    14x14 images slower).  `data_blocked` says whether the data would come
    blocked; if not, only a deep enough reduction (`BLOCKED_OUTPUT_DEPTH`)
    blocks the result."""
    if target is None or target.option("data_layout") != "NCHWc":
        return 0
    if groups != 1 or not isinstance(element_type, AnyFloat):
        return 0
    _, group_channels, kh, kw = weight_shape
    if not data_blocked and group_channels * kh * kw < BLOCKED_OUTPUT_DEPTH:
        return 0
    return _lane_tiles(target, element_type).lanes


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
    the lanes (`_conv2d_channel_lanes`) wastes none when the channels fill
    whole vectors, but needs the weights of `nr` channels contiguous for
    each tap (the packed layout, made at compile time by `alter-op-layout`)
    and stores its tile transposed.  That pays for deep reductions
    (`LANE_DEPTH`): 12 to 15 % faster on ResNet-50's 7x7 and 14x14 layers
    and on 3x3 convs of 28x28 images.  Otherwise a 1x1 conv's pixel tiles
    may want their rows of weights side by side (`_pixel_tile_rows`)."""
    out_channels, group_channels, kh, kw = weight_shape
    if groups != 1 or not isinstance(element_type, AnyFloat):
        return 0
    t = _lane_tiles(target, element_type)
    if blocked:
        if out_channels % t.lanes == 0:
            return _dividing_block(out_channels, t)
        return t.lanes * min(math.ceil(out_channels / t.lanes), t.nr // t.lanes)
    if group_channels * kh * kw >= LANE_DEPTH:
        nr = t.nr
        if out_channels / (math.ceil(out_channels / nr) * nr) >= LANE_USE:
            return nr
    return _pixel_tile_rows(weight_shape, element_type, target)


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
    of input channels (SqueezeNet: 6 fewer kernels to compile).  Wider
    windows keep `OIHW`: their layers differ in padding code anyway, and
    SqueezeNet's and ResNet-50's first convolutions measured 2-5 % slower
    packed."""
    out_channels, _, kh, kw = weight_shape
    if (kh, kw) != (1, 1):
        return 0
    rows = _dividing_rows(
        tiles(target, element_type, conv_vectors(target)), out_channels
    ).mr
    return 0 if rows % _lane_tiles(target, element_type).lanes == 0 else rows


def _dividing_block(channels: int, t: Tiles) -> int:
    """The widest channel block of whole vectors, at most `t.nr`, that
    divides `channels` (a multiple of the lanes; 48 channels: one block of 3
    vectors, where 64-channel blocks would leave a quarter of the lanes
    empty)."""
    vectors = channels // t.lanes
    return t.lanes * max(v for v in range(1, t.nr // t.lanes + 1) if vectors % v == 0)


def _conv2d_channel_lanes(
    e: Emitter, c: Conv2D, packed: Tensor, target: TargetAttr | None
) -> None:
    """conv2d with tiles of `mr` output pixels x `nr` output channels from
    `OIHW<nr>o` weights: each reduction step loads `nr / lanes` weight
    vectors and broadcasts one input value per pixel.  Tasks are output
    channel tiles x blocks of pixel tiles, each tile the whole reduction (a
    channel tile's packed weights are one sequential stream, which the
    prefetchers follow: blocking the reduction to keep them in L2 measured
    4-20 % slower, even at 4608 deep); the next channel tile's weights are
    prefetched as the first pixel tiles of a task run (`loops`).  The last
    pixel tile overlaps the one before.  Blocked data (`NCHW<b>c`) is read
    a block of channels per pixel; a blocked output is stored a vector of
    channels at a time."""
    if _flat_windows(c):
        e = e.uniformly()  # no image width in the kernel: alike for merge-kernels
    element = c.data.element_type
    batch, _, _, width = c.data.shape
    out_channels, channels, kh, kw = c.weight.shape
    _, _, out_h, out_w = c.out_shape
    pixels = out_h * out_w
    blocked = c.blocked_data is not None
    dh = c.dilation[0]
    block = _data_block(c)
    assert c.groups == 1
    planes = _planes(c, 0)
    padded = None if _in_place_windows(c) else _pad_input(e, c, planes)
    # Tiles within an image row where windows are not flat: the pixels of a
    # tile are then the same distance apart in every tap, addressed from one
    # register (across rows, each needs one of its own).
    row_width = out_w if not _flat_windows(c) and out_w >= LEAST_ROW_TILE else 0
    t = _lane_tiles(target, element, pixels, packed.shape[-1], blocked, row_width)
    rows = min(t.mr, row_width or pixels)
    pixel_tiles = _pixel_tiles(pixels, rows, row_width)
    per_row = math.ceil(row_width / rows) if row_width else 0
    channel_tiles = math.ceil(out_channels / t.nr)
    tasks = TASKS_PER_THREAD * num_threads(target)
    per_task, blocks = _split(pixel_tiles, math.ceil(tasks / (batch * channel_tiles)))

    grid = [batch, channel_tiles, blocks]
    task, flat = e.loop(math.prod(grid), ForKind.PARALLEL)
    n, ot, pb = task.unflatten(flat, grid)
    first = task.mul(pb, per_task)
    prefetching = (
        packed.buffer is not None
        and channel_tiles > 1
        and pixel_tiles <= PREFETCH_PIXEL_TILES
    )
    if prefetching:
        later = _next_task(task, flat, math.prod(grid), target)
        next_tile = task.rem(task.div(later, blocks), channel_tiles)
    tile, q = task.range(first, task.min(task.add(first, per_task), pixel_tiles))
    if row_width:
        y0 = tile.div(q, per_row)
        x0 = tile.min(tile.mul(tile.rem(q, per_row), rows), out_w - rows)
        p0 = tile.add(tile.mul(y0, out_w), x0)
        wide0 = tile.add(tile.mul(y0, planes.wq), x0)
    else:
        p0 = tile.min(tile.mul(q, rows), pixels - rows)

    def pixel(r: Emitter, i: Index, ks: Sequence[Index]) -> SSAValue:
        """Input value of tap (c, ky, kx) for output pixel `p0 + i` (blocked
        data: tap (c // b, ky, kx, c % b))."""
        cb, ky, kx, *ci = ks
        p = r.add(p0, i)
        if _flat_windows(c):
            # Stride 1, no padding, one column: pixel p's tap ky is input
            # pixel p + ky * dh * W of the flattened image.
            at = r.add(p, r.mul(ky, dh * width))
            if c.blocked_data is None:
                return c.data.load(r, [n, cb, 0, at])
            return c.blocked_data.load(r, [n, cb, 0, at, *ci])
        if padded is None:  # no padding: every tap is inside the image
            (sh, sw), dw = c.strides, c.dilation[1]
            y, x = (
                (y0, r.add(x0, i)) if row_width else (r.div(p, out_w), r.rem(p, out_w))
            )
            at = [
                r.add(r.mul(y, sh), r.mul(ky, dh)),
                r.add(r.mul(x, sw), r.mul(kx, dw)),
            ]
            if c.blocked_data is None:
                return c.data.load(r, [n, cb, *at])
            return c.blocked_data.load(r, [n, cb, *at, *ci])
        plane, shift = _tap(r, c, planes, ky, kx)
        if row_width:
            wide = r.add(wide0, i)
        else:
            wide = r.add(r.mul(r.div(p, out_w), planes.wq), r.rem(p, out_w))
        at = r.add(wide, shift)
        if block == 1:
            return r.load(padded, [n, cb, plane, at])
        return r.load(padded, [n, cb, plane, r.add(r.mul(at, block), *ci)])

    def weight_index(
        r: Emitter, tile: Index, j: Index, ks: Sequence[Index]
    ) -> list[Index]:
        """Where the packed weight of output channel `j` of channel tile
        `tile` for tap (c, ky, kx) (blocked data: (c // b, ky, kx, c % b)) is."""
        cb, ky, kx, *ci = ks
        ch = r.add(r.mul(cb, block), *ci) if ci else cb
        return [tile, ch, ky, kx, j]

    def weights(r: Emitter, j: Index, ks: Sequence[Index]) -> SSAValue:
        return packed.load(r, weight_index(r, ot, j, ks))

    # Blocked data: a block's channels innermost, read along one cache line.
    reduction = [channels // block, kh, kw] + ([block] if block > 1 else [])
    per_line = CACHE_LINE_BYTES * 8 // element.bitwidth
    lines = math.ceil(t.nr / per_line)
    # Each pixel tile of a task fetches `step_lines` of them per step, so
    # that the first `lines / step_lines` pixel tiles of every task (the
    # last block's too, which may have fewer) fetch all.
    fewest = pixel_tiles - (blocks - 1) * per_task
    step_lines = next(
        k for k in range(1, lines + 1) if lines % k == 0 and k * fewest >= lines
    )
    groups = lines // step_lines
    if prefetching and groups > 1:
        line = tile.mul(tile.rem(tile.sub(q, first), groups), step_lines)
    else:
        line = 0

    def loops(r: Emitter) -> tuple[Emitter, Sequence[Index]]:
        """The reduction, each step of which also prefetches (on images of
        at most `PREFETCH_PIXEL_TILES` pixel tiles, with more than one
        channel tile) cache lines of the weights of the channel tile that
        this thread likely computes next (that of `_next_task`): of the
        lines of the step's `nr` weights, the one numbered by the pixel
        tile's rank in the task (modulo their count; several a step where a
        task has fewer pixel tiles than lines), so the task's first few
        pixel tiles fetch all.  A channel tile's weights come from memory
        on their first pass (a network's weights do not stay in cache from
        one call to the next), at the rate one core's misses allow, slower
        than the pixel tile's multiply-adds; prefetched while the tile
        before computes, they wait in L2 or L3.  Cold weights, measured:
        512-channel 3x3 at 7x7 2.86 -> 2.63 ms, 1x1 1024 -> 256 at 14x14
        1.16 -> 1.08 ms."""
        body, ks = r.nest(reduction)
        if prefetching:
            assert packed.buffer is not None
            for k in range(step_lines):
                j = body.mul(body.add(line, k), per_line)
                body.prefetch(packed.buffer, weight_index(body, next_tile, j, ks))
        return body, ks

    acc = _register_tile(tile, t, rows, loops, pixel, weights, element)

    def store(s: Emitter, cols: int) -> None:
        """The tile transposed, through the epilogue: for each channel, its
        `mr` pixels as one vector gathered from the tile (register lanes
        where LLVM unrolls the channels, else the tile spilled to the stack
        once), stored along the image."""
        column, j = s.loop(cols, ForKind.UNROLLED)
        lane, i = column.loop(rows, ForKind.VECTORIZED)
        o = lane.add(lane.mul(ot, t.nr), j)
        at = _output_pixel(lane, c, lane.add(p0, i))
        c.store(lane, [n, o, *at], lane.load(acc, [i, j]))

    def store_blocked(s: Emitter, cols: int) -> None:
        """The tile as it is: each pixel's channels, a vector at a time, to
        their blocks (`c.out_block` = the lanes)."""
        assert c.blocked_store is not None
        vector, v = s.loop(cols // t.lanes, ForKind.UNROLLED)
        row, i = vector.loop(rows, ForKind.UNROLLED)
        at = _row_major(row, row.add(p0, i), out_w)
        ob = row.add(row.mul(ot, t.nr // t.lanes), v)
        lane, k = row.loop(t.lanes, ForKind.VECTORIZED)
        value = lane.load(acc, [i, lane.add(lane.mul(v, t.lanes), k)])
        c.blocked_store(lane, [n, ob, *at, k], value)

    vector_blocks = c.out_block == t.lanes and t.nr % t.lanes == 0
    _each_panel(tile, t, out_channels, ot, store_blocked if vector_blocks else store)
