"""CPU schedule of GEMM (dense, matmul, batched matmul) on register tiles.

`gemm` packs `b` into zero-padded panels `[batch, panel, k, nr]`
(contiguous per `k`, in one parallel loop), then runs a parallel loop over
blocks of row tiles (at most `L2_BLOCK_BYTES` of `a`) × panels.  A task
packs its rows of `a` (zero rows past `m`) unless it reads them where they
are (`_RowsOfA`), then for each panel runs every row tile over the whole of
`k` and stores it, the last row tile with `m % mr` rows, the last panel
with `n % nr` columns.  A dense's constant
weight comes packed in those panels (`alter-op-layout`, layout `NK<nr>n` as
`dense_weight_block` asks): its panels are read in place, nothing is packed
per call.  A single row (`m = 1`, a GEMV: a classifier's dense layer) skips
the packing, whose copy of `b` would be read once: `gemv` streams `b` once.
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
from hetero.targets.cpu import num_threads
from hetero.te.emit import Emitter, Index
from hetero.te.schedules.cpu_tiles import (
    BALANCE_SLACK,
    CACHE_LINE_BYTES,
    CONTRACT,
    L1_WAY_BYTES,
    L2_BLOCK_BYTES,
    ScheduleParams,
    Tiles,
    each_panel,
    makespan,
    register_tile,
    split,
    store_tile,
    tiles,
)
from hetero.te.schedules.problems import Gemm, Store

Params = ScheduleParams[Gemm]

PanelReader = Callable[[Emitter, Sequence[Index]], SSAValue]
"""Reads element `[batch, panel, k, j]` of `b`'s panels."""


def gemm(e: Emitter, g: Gemm, target: TargetAttr | None) -> None:
    """Packed-panel GEMM with register tiles (see the module docstring)."""
    p = Params(g, target, _even_rows(tiles(target, g.element_type), g.m))
    if g.m == 1:
        return gemv(e, p)
    panel_b = _panels_of_b(e, p, math.ceil(g.n / p.t.nr))
    b = _blocks(p)
    task, flat = e.loop(g.batch * b.row_blocks * b.panel_blocks, ForKind.PARALLEL)
    _task(task, p, b, panel_b, flat)


def gemm_rows(e: Emitter, g: Gemm, target: TargetAttr | None) -> None:
    """`gemm` of a row count `g.m` known at run time only (a `Dim`: a dense
    over a dynamic sequence length, `g.batch` 1): `b`'s panels as `gemm`
    has them (a packed weight read in place), then the rows in chunks of
    one cache block of row tiles, each chunk `gemm`'s parallel tasks for
    that many rows (its rows of `a` read in place where `gemm` would read
    them so, `_reads_a_in_place`).  The rows left are a last chunk of their whole row
    tiles (its tasks' tile count a run-time value), then one tile that
    reads its rows past the end as the last row (in bounds, no branch in
    the packing) into a scratch tile, whose rows that exist are then
    stored: right for every row count, with no branch per element."""
    t = tiles(target, g.element_type)
    chunk = _cache_rows(t, g.k, g.element_type.bitwidth // 8)  # type: ignore[attr-defined]
    p = Params(replace(g, m=chunk), target, t)
    panel_b = _panels_of_b(e, p, math.ceil(g.n / t.nr))
    b = _blocks(p)
    rows = e.index(g.m)
    whole = e.div(rows, chunk)
    body, c = e.loop(whole)  # type: ignore[arg-type]
    m0 = body.mul(c, chunk)
    _chunk(body, p, b, panel_b, _from(m0), g.store, m0)
    first = e.mul(whole, chunk)
    if (rest := e.when(e.less(first, rows))) is not None:
        _last_chunk(rest, p, b, panel_b, first, rows)


def gemm_in_place(e: Emitter, g: Gemm, target: TargetAttr | None) -> None:
    """`gemm` of sizes known at run time only (`Dim`s: an attention's
    `Q·Kᵀ` and `P·V` over a dynamic sequence length), `b` contiguous along
    `n`: register tiles reading `a` and `b` where they are, nothing packed
    and no tile sized from a run-time extent, so every size is right.

    A parallel task per batch and tile of `mr` rows, the last tile's rows
    past `m` reading row `m - 1` and not stored; each task's panels of `nr`
    columns, the last one ending at column `n` (it overlaps the one before,
    whose columns it computes again, equal, and stores again: a kernel's
    output aliases none of its inputs, which `plan-memory` keeps apart and a
    call's `out=` arrays may not overlap).  Fewer than `nr` columns are summed
    in a row accumulator read and written through masks.  A row of dot
    products accumulated into the output in place, as before, ran the 12
    heads of `Q·Kᵀ` at 128 tokens 4x slower than the static schedule."""
    assert not g.b_along_k
    p = Params(g, target, tiles(target, g.element_type))
    t = p.t
    rows, columns = (d if isinstance(d, int) else e.index(d) for d in (g.m, g.n))
    row_tiles = e.div(e.add(rows, t.mr - 1), t.mr)
    tasks = e.mul(row_tiles, e.index(g.batch))
    task, flat = e.range(0, tasks, kind=ForKind.PARALLEL)
    rows_of = _RowsLeft(
        task.div(flat, row_tiles), task.mul(task.rem(flat, row_tiles), t.mr), rows
    )
    if (wide := task.when(task.less(t.nr - 1, columns))) is not None:
        panels = wide.div(wide.add(columns, t.nr - 1), t.nr)
        panel, q = wide.loop(panels)  # type: ignore[arg-type]
        _panel_in_place(
            panel, p, rows_of, panel.min(panel.mul(q, t.nr), panel.sub(columns, t.nr))
        )
    if (narrow := task.when(task.less(columns, t.nr))) is not None:
        _narrow_columns(narrow, p, rows_of, columns)


@dataclass(frozen=True)
class _RowsLeft:
    """A `gemm_in_place` task's rows: its batch, first row and the row count `m`."""

    batch: Index
    m0: Index
    rows: Index

    def read(self, e: Emitter, i: Index) -> Index:
        """The row its row `i` reads: past `m`, the last one."""
        return e.min(e.add(self.m0, i), e.sub(self.rows, 1))

    def stored(self, e: Emitter, i: int) -> Emitter | None:
        """An emitter for its row `i`'s stores, run only if that row exists."""
        return e.when(e.less(e.add(self.m0, i), self.rows))


def _panel_in_place(e: Emitter, p: Params, rows: _RowsLeft, n0: Index) -> None:
    """The task's register tile of columns `n0` to `n0 + nr`, stored row by row."""
    g, t = p.problem, p.t
    acc = register_tile(
        e,
        p,
        t.mr,
        lambda r: _one_loop(r, g.k),
        lambda r, i, ks: g.a(r, rows.batch, rows.read(r, i), ks[0]),
        lambda r, j, ks: g.b(r, rows.batch, ks[0], r.add(n0, j)),
    )
    for i in range(t.mr):
        if (row := rows.stored(e, i)) is not None:
            lane, j = row.loop(t.nr, ForKind.VECTORIZED)
            at = [rows.batch, lane.add(rows.m0, i), lane.add(n0, j)]
            g.store(lane, at, lane.load(acc, [i, j]))


def _narrow_columns(e: Emitter, p: Params, rows: _RowsLeft, columns: Index) -> None:
    """All `columns` (fewer than `nr`) of the task's rows that exist: each
    row's sums in an accumulator of `nr`, a vector loop of run-time extent
    (masked) per step of `k`."""
    g = p.problem
    row, i = e.range(0, e.min(p.t.mr, e.sub(rows.rows, rows.m0)))
    m = row.add(rows.m0, i)
    acc = row.alloc([p.t.nr], g.element_type, "local")
    zero, j = row.range(0, columns, kind=ForKind.VECTORIZED)
    zero.store(zero.constant(0.0, g.element_type), acc, [j])
    step, (k,) = _one_loop(row, g.k)
    lane, j = step.range(0, columns, kind=ForKind.VECTORIZED)
    b = g.b(lane, rows.batch, k, j)
    product = lane.op(arith.MulfOp(g.a(lane, rows.batch, m, k), b, CONTRACT))
    lane.store(lane.op(arith.AddfOp(lane.load(acc, [j]), product, CONTRACT)), acc, [j])
    out, j = row.range(0, columns, kind=ForKind.VECTORIZED)
    g.store(out, [rows.batch, m, j], out.load(acc, [j]))


Row = Callable[[Emitter, Index], Index]
"""The row of the problem's `a` that row `i` of a chunk reads."""


def _chunk(
    e: Emitter,
    p: Params,
    b: _Blocks,
    panel_b: PanelReader,
    row: Row,
    store: Store,
    m0: Index,
    tail: Tail | None = None,
) -> None:
    """`gemm`'s parallel tasks over one chunk of `p.problem.m` rows from
    `m0`, reading `a`'s row `row(i)` for its row `i` and storing through
    `store` at the chunk's own rows plus `m0`; `tail` after each panel's
    row tiles (`_task`)."""
    g = p.problem

    def a(e: Emitter, batch: Index, i: Index, k: Index) -> SSAValue:
        return g.a(e, batch, row(e, i), k)

    def shifted(e: Emitter, idx: list[Index], value: SSAValue) -> None:
        store(e, [idx[0], e.add(m0, idx[1]), *idx[2:]], value)

    chunk = Params(replace(g, a=a, store=shifted), p.target, p.t)
    task, flat = e.loop(g.batch * b.row_blocks * b.panel_blocks, ForKind.PARALLEL)
    _task(task, chunk, b, panel_b, flat, tail)


def _last_chunk(
    e: Emitter, p: Params, b: _Blocks, panel_b: PanelReader, m0: Index, rows: SSAValue
) -> None:
    """`gemm_rows`' rows from `m0` to `rows` (fewer than a chunk): the whole
    row tiles stored in place, and in the same pass over `b`, after each
    panel's whole tiles in the last row block's tasks, the last rows
    (`_last_tile`).  A pass of their own read the weight twice: GPT-2's
    154 MB output projection at 37 tokens took 6 ms more than compiled for
    37 (one Zen 4 thread)."""
    g, t = p.problem, p.t
    whole = e.div(e.sub(rows, m0), t.mr)
    m1 = e.add(m0, e.mul(whole, t.mr))
    last_block = e.div(e.max(e.sub(whole, 1), 0), b.row_block)

    def tail(panel: Emitter, batch: Index, q: Index, rb: Index) -> None:
        mine = panel.op(arith.CmpiOp(panel.index(rb), panel.index(last_block), "eq"))
        if (last := panel.when(mine)) is None:
            return
        left, below = last.sub(rows, m1), 0
        for height in _last_tile_heights(t.mr):
            if (
                fits := last.when(last.in_range(left, below + 1, height + 1))
            ) is not None:
                _last_tile(
                    fits,
                    p,
                    height,
                    panel_b,
                    _Tile(batch, q, m1, fits.mul(q, t.nr)),
                    rows,
                )
            below = height

    b = replace(b, row_tiles=whole)  # type: ignore[arg-type]
    _chunk(e, p, b, panel_b, _from(m0), g.store, m0, tail)


def _last_tile_heights(mr: int) -> list[int]:
    """The row tiles the last rows of `gemm_rows` may take: a third, two
    thirds or all of `mr` (even), the smallest that holds them, so that 7
    rows compute 8, not 12."""
    return sorted({max(2, mr * q // 3 // 2 * 2) for q in (1, 2)} | {mr})


def _last_tile(
    e: Emitter,
    p: Params,
    height: int,
    panel_b: PanelReader,
    tile: _Tile,
    rows: SSAValue,
) -> None:
    """Panel `tile.panel` of the rows from `tile.m0` to `rows` (at most
    `height`) in one register tile of `height` rows, its rows past the end
    reading and storing the last row (its values computed again, equal: a
    kernel's output aliases none of its inputs)."""
    g = p.problem
    last = e.sub(rows, 1)

    def row(e: Emitter, i: Index) -> Index:
        return e.min(e.add(tile.m0, i), last)

    def clamped(e: Emitter, idx: list[Index], value: SSAValue) -> None:
        g.store(e, [idx[0], e.min(idx[1], last), *idx[2:]], value)

    p_tile = Params(
        replace(g, m=height, store=clamped), p.target, replace(p.t, mr=height)
    )
    acc = register_tile(
        e,
        p_tile,
        height,
        lambda r: _reduction(r, p, None),
        lambda r, i, ks: g.a(r, tile.batch, row(r, i), ks[0]),
        lambda r, j, ks: panel_b(r, [tile.batch, tile.panel, ks[0], j]),
    )
    _store_columns(e, p_tile, tile, acc, height)


def _from(m0: Index) -> Row:
    """Row `i` of a chunk from `m0` reads row `m0 + i`."""
    return lambda e, i: e.add(m0, i)


def _even_rows(t: Tiles, m: int) -> Tiles:
    """The tile with the fewest rows that covers `m` rows in as many row
    tiles as `t` does: ViT's 50 tokens in five tiles of 10 rows, not five
    of 12 whose last computes 10 rows of zeros."""
    return replace(t, mr=math.ceil(m / math.ceil(m / t.mr)))


@dataclass(frozen=True)
class _Blocks:
    """How `gemm` cuts its output into parallel tasks: blocks of
    `row_block` row tiles (`row_blocks` of them) × blocks of
    `panel_block` panels (`panel_blocks`), for each batch."""

    panels: int
    row_tiles: int
    row_block: int
    row_blocks: int
    panel_block: int
    panel_blocks: int


def _blocks(p: Params) -> _Blocks:
    """Row blocks of at most `L2_BLOCK_BYTES` of packed `a`, and at least
    `p.tasks` tasks, made by splitting the panels (each then read once per
    row block), the rows further only where panels are too few; the panels
    further where the threads' shares of the tasks would be uneven
    (`_balanced_panel_blocks`)."""
    g, t = p.problem, p.t
    panels = math.ceil(g.n / t.nr)
    row_tiles = math.ceil(g.m / t.mr)
    cache_tiles = _cache_rows(t, g.k, g.element_type.bitwidth // 8) // t.mr  # type: ignore[attr-defined]
    row_block, row_blocks = split(
        row_tiles,
        max(
            math.ceil(row_tiles / cache_tiles), math.ceil(p.tasks / (g.batch * panels))
        ),
    )
    least = math.ceil(p.tasks / (g.batch * row_blocks))
    panel_block, panel_blocks = _balanced_panel_blocks(
        g.batch, row_tiles, row_block, panels, least, num_threads(p.target)
    )
    return _Blocks(panels, row_tiles, row_block, row_blocks, panel_block, panel_blocks)


def _balanced_panel_blocks(
    batch: int, row_tiles: int, row_block: int, panels: int, least: int, threads: int
) -> tuple[int, int]:
    """`split` of `panels` into at least `least` blocks, and more where the
    tasks (each batch × each block of `row_block` of the `row_tiles` row
    tiles × each panel block, in `_task`'s order) would leave a thread more
    than `BALANCE_SLACK` beyond an even share: GPT-2's 128×3072 · 3072×768
    dense, 11 row blocks of one tile on two threads, ran 6 of them on one
    (1.82× one thread's speed, against 1.95× for the same GEMM of 768
    deep).  Splitting the panels costs a task's packing of its rows of `a`
    once more per block.  Where the tasks are so many that each thread's
    share is within the slack anyway, they are not listed."""
    least = max(1, least)
    row_blocks = math.ceil(row_tiles / row_block)
    if batch * row_blocks * least * BALANCE_SLACK >= threads:
        return split(panels, least)
    rows = [min(row_block, row_tiles - r * row_block) for r in range(row_blocks)]
    rows *= batch

    def work(parts: int) -> int:
        block, blocks = split(panels, parts)
        sizes = [min(block, panels - q * block) for q in range(blocks)]
        return makespan([r * s for r in rows for s in sizes], threads)

    even = sum(rows) * panels / max(1, threads)
    tried = range(least, max(least, min(panels, 2 * threads * least)) + 1)
    for parts in tried:
        if work(parts) <= even * (1 + BALANCE_SLACK):
            return split(panels, parts)
    return split(panels, min(tried, key=work))


def _cache_rows(t: Tiles, depth: int, element_bytes: int) -> int:
    """Rows of `a` per cache block: as many whole tiles of `depth` elements
    as fit `L2_BLOCK_BYTES`."""
    return t.mr * max(1, L2_BLOCK_BYTES // (depth * element_bytes * t.mr))


@dataclass(frozen=True)
class _Tile:
    """Where a register tile of `gemm` is: its batch, its panel of `b`, the
    first row and column of its output."""

    batch: Index
    panel: Index
    m0: Index
    n0: Index


Tail = Callable[[Emitter, Index, Index, Index], None]
"""What a task does after a panel's row tiles: (emitter, batch, panel, row
block)."""


def _task(
    task: Emitter,
    p: Params,
    b: _Blocks,
    panel_b: PanelReader,
    flat: Index,
    tail: Tail | None = None,
) -> None:
    """Task `flat`: its rows of `a` packed (or read in place: `_RowsOfA`),
    then for each of its panels each row tile over the whole of `k`, stored
    through the epilogue, then `tail` of the panel."""
    t = p.t
    tasks_per_batch = b.row_blocks * b.panel_blocks
    batch = task.div(flat, tasks_per_batch)
    within = task.rem(flat, tasks_per_batch)
    rb, pb = task.div(within, b.panel_blocks), task.rem(within, b.panel_blocks)
    first_tile = task.mul(rb, b.row_block)
    count = task.sub(
        task.min(task.add(first_tile, b.row_block), b.row_tiles), first_tile
    )
    p_lo = task.mul(pb, b.panel_block)
    p_hi = task.min(task.add(p_lo, b.panel_block), b.panels)
    a = _rows_of_a(task, p, b, batch, first_tile, count)

    panel, q = task.range(p_lo, p_hi)
    following = None
    if _packed_in_place(p):
        following = panel.min(panel.add(q, 1), panel.sub(p_hi, 1))
    row, tt = panel.range(0, count)
    m0 = row.mul(row.add(first_tile, tt), t.mr)
    top = a.top(row, p, m0)
    acc = register_tile(
        row,
        p,
        t.mr,
        lambda r: _reduction(r, p, following),
        lambda r, i, ks: a.read(r, p, tt, top, i, ks[0]),
        lambda r, j, ks: panel_b(r, [batch, q, ks[0], j]),
    )
    _store_rows(row, p, _Tile(batch, q, m0, row.mul(q, t.nr)), acc, a, top)
    if tail is not None:
        tail(panel, batch, q, rb)


@dataclass(frozen=True)
class _RowsOfA:
    """How a task's register tiles read `a`: from its rows packed per call
    (`packed`, `[row tile, k, mr]`, zero rows past `m`), or, where `a` is a
    buffer of rows contiguous along `k` (`Gemm.a_in_place`), where they
    are.  Packing is a transpose written element by element, which only
    a task's many panels pay back: an attention's `Q·Kᵀ` (12 × 128×64 ·
    64×128, four panels) spent 12 % of its time packing, `P·V` (64 columns,
    two panels) 22 %; read in place, each step of a tile loads its `mr`
    rows' elements from `mr` cache lines per 16 steps, as many as packed."""

    batch: Index
    packed: SSAValue | None

    def top(self, e: Emitter, p: Params, m0: Index) -> Index:
        """The first row a tile of `m0` computes: `m0`, but in place the
        last tile of a ragged `m` ends at row `m` (it overlaps the tile
        before, whose rows it does not store again: `_store_rows`) rather
        than read past it."""
        g, t = p.problem, p.t
        if self.packed is not None or g.m % t.mr == 0:
            return m0
        return e.min(m0, g.m - t.mr)

    def read(
        self, e: Emitter, p: Params, tile: Index, top: Index, i: Index, k: Index
    ) -> SSAValue:
        """`a` of the tile's row `i` at `k`."""
        if self.packed is not None:
            return e.load(self.packed, [tile, k, i])
        return p.problem.a(e, self.batch, e.add(top, i), k)


ROWS_PER_SET = 4
"""Most rows of a register tile whose elements at one `k` may share an L1
set when the tile reads `a` in place (of the set's 8 or more ways: the
panel of `b` streams through the same sets)."""


def _reads_a_in_place(p: Params) -> bool:
    """Whether the register tiles read `a`'s rows where they are: `a` is
    a buffer of rows (`Gemm.a_in_place`) whose stride does not put more
    than `ROWS_PER_SET` of a tile's rows in one L1 set.  Rows 12 KiB apart
    (3072 floats) share every set: a 128×3072·3072×768 dense took 7.5-8.0
    ms read in place, 6.5 packed; 768 floats apart, 4 rows a set, 1.44
    against 1.52-1.61 ms (128×768·768×768)."""
    g, t = p.problem, p.t
    stride = g.k * g.element_type.bitwidth // 8  # type: ignore[attr-defined]
    rows_apart = L1_WAY_BYTES // math.gcd(stride, L1_WAY_BYTES)
    return g.a_in_place and math.ceil(t.mr / rows_apart) <= ROWS_PER_SET


def _rows_of_a(
    task: Emitter, p: Params, b: _Blocks, batch: Index, first_tile: Index, count: Index
) -> _RowsOfA:
    """The task's rows of `a`: read in place (`_reads_a_in_place`), else
    packed here (`_pack_rows`)."""
    g, t = p.problem, p.t
    if _reads_a_in_place(p):
        return _RowsOfA(batch, None)
    packed = task.alloc([b.row_block, g.k, t.mr], g.element_type)
    packing, tt = task.range(0, count)
    m0 = packing.mul(packing.add(first_tile, tt), t.mr)
    _pack_rows(packing, p, packed, batch, m0, tt)
    return _RowsOfA(batch, packed)


PREFETCH_LOCALITY = 1
"""`memref.prefetch`'s locality for the next panel of a packed weight: into
the outer caches (x86's `prefetcht2`), not L1, where the row tile's own
panel and packed rows are."""


def _reduction(
    e: Emitter, p: Params, following: Index | None
) -> tuple[Emitter, Sequence[Index]]:
    """The loop over `k`.  Where `b` is a weight packed at compile time, each
    step also prefetches its row of panel `following` (the task's next; its
    last prefetches itself): a network's weights come from memory on a
    call's first pass (GPT-2's 154 MB output projection), and a panel's
    first row tile would otherwise wait on them at the rate one core's
    misses allow.  One thread, Zen 4, in one process: 128×768·768×50257
    93.8-95.6 -> 92.0-93.1 ms, 50×768·768×3072 2.39-2.43 -> 2.31 ms."""
    g, t = p.problem, p.t
    body, ks = _one_loop(e, g.k)
    if following is not None:
        assert g.packed_b is not None and g.packed_b.buffer is not None
        line = CACHE_LINE_BYTES * 8 // g.element_type.bitwidth  # type: ignore[attr-defined]
        for j in range(0, t.nr, line):
            body.prefetch(
                g.packed_b.buffer, [following, ks[0], j], locality=PREFETCH_LOCALITY
            )
    return body, ks


def _store_rows(
    e: Emitter, p: Params, tile: _Tile, acc: SSAValue, a: _RowsOfA, top: Index
) -> None:
    """The tile's rows that are inside the output and not another tile's:
    all `mr`, or the last row tile's `m % mr` (in place, the last of its
    rows, from `top`: `_RowsOfA.top`)."""
    g, t = p.problem, p.t
    rest = g.m % t.mr
    whole_rows = g.m - rest
    if not rest or not whole_rows:
        return _store_columns(e, p, tile, acc, rest or t.mr)
    if (full := e.when(e.less(tile.m0, whole_rows))) is not None:
        _store_columns(full, p, tile, acc, t.mr)
    if (edge := e.when(e.less(whole_rows - 1, tile.m0))) is not None:
        if a.packed is not None:
            _store_columns(edge, p, tile, acc, rest)
        else:
            _store_columns(edge, p, replace(tile, m0=top), acc, t.mr, t.mr - rest)


def _store_columns(
    e: Emitter, p: Params, tile: _Tile, acc: SSAValue, rows: int, first: int = 0
) -> None:
    """The tile's rows `first` to `rows - 1` through the epilogue (row `i`
    at `tile.m0 + i`): all `nr` columns, or the last panel's `n % nr`."""

    def store(w: Emitter, i: Index, j: Index, value: SSAValue) -> None:
        at = [tile.batch, w.add(tile.m0, i), w.add(tile.n0, j)]
        p.problem.store(w, at, value)

    each_panel(
        e,
        p.t,
        p.problem.n,
        tile.panel,
        lambda s, cols: store_tile(s, acc, rows, cols, store, first),
    )


def _panels_of_b(e: Emitter, p: Params, panels: int) -> PanelReader:
    """A reader of `b`'s panels, element `[batch, p, k, j]` = `b(batch, k,
    p * nr + j)`: the weight `alter-op-layout` packed so at compile time
    (`Gemm.packed_b`, when its panels are `nr` wide), else a copy packed
    here, per call, in one parallel loop (`_pack_panel`)."""
    g, t = p.problem, p.t
    if _packed_in_place(p):
        return lambda r, at: g.packed_b.load(r, at[1:])  # type: ignore[union-attr]
    packed = e.alloc([g.batch, panels, g.k, t.nr], g.element_type)
    pack, flat = e.loop(g.batch * panels, ForKind.PARALLEL)
    batch, q = pack.div(flat, panels), pack.rem(flat, panels)
    each_panel(
        pack, t, g.n, q, lambda at, cols: _pack_panel(at, p, packed, batch, q, cols)
    )
    return lambda r, at: r.load(packed, at)


def _packed_in_place(p: Params) -> bool:
    """Whether `b` is a weight packed at compile time in the tile's panels,
    read where it is."""
    packed = p.problem.packed_b
    return packed is not None and packed.shape[-1] == p.t.nr


def _pack_panel(
    e: Emitter, p: Params, packed: SSAValue, batch: Index, panel: Index, cols: int
) -> None:
    """`packed[batch, panel, k, j] = b(batch, k, panel * nr + j)`, zero for
    `j >= cols`.  matmul's `b` is read row-wise (vectorized); dense's
    weight `[n, k]` (`b_along_k`) along `k`."""
    g, t = p.problem, p.t
    n0 = e.mul(panel, t.nr)
    if g.b_along_k:
        lane, j = e.loop(cols)
        body, k = lane.loop(g.k)
    else:
        row, k = e.loop(g.k)
        body, j = row.loop(cols, ForKind.VECTORIZED)
    body.store(g.b(body, batch, k, body.add(n0, j)), packed, [batch, panel, k, j])
    if cols < t.nr:
        row, k = e.loop(g.k)
        lane, j = row.range(cols, t.nr, kind=ForKind.VECTORIZED)
        lane.store(lane.constant(0.0, g.element_type), packed, [batch, panel, k, j])


def _pack_rows(
    e: Emitter, p: Params, packed: SSAValue, batch: Index, m0: Index, tile: Index
) -> None:
    """`packed[tile, k, i] = a(batch, m0 + i, k)`, zero for rows past `m`."""
    g = p.problem
    row, i = e.loop(p.t.mr)
    m = row.add(m0, i)
    if (inside := row.when(row.less(m, g.m))) is not None:
        lane, k = inside.loop(g.k)
        lane.store(g.a(lane, batch, m, k), packed, [tile, k, i])
    if (outside := row.when(row.less(g.m - 1, m))) is not None:
        lane, k = outside.loop(g.k)
        lane.store(lane.constant(0.0, g.element_type), packed, [tile, k, i])


def dense_weight_block(
    weight_shape: Sequence[int],
    rows: int,
    element_type: Attribute,
    target: TargetAttr | None,
) -> int:
    """The panel width `nr` of the `NK<nr>n` weight layout `gemm` wants for
    a dense of `rows` rows and an `[N, K]` weight (0: plain `NK`).  Packed at
    compile time, its panels are read in place; from `NK`, `gemm` packs
    them on every call, a gather with a stride of `K`, which costs a large
    share of a call (`docs/cpu-schedules.md`).  A GEMV (`rows = 1`) reads
    `NK` as it is: its dot products run along `k`."""
    if rows == 1 or not isinstance(element_type, AnyFloat):
        return 0
    return tiles(target, element_type).nr


GEMV_ROWS = 8
"""Dot products a GEMV task row computes together (independent FMA chains
that share each loaded vector of `a`)."""


def gemv(e: Emitter, p: Params) -> None:
    """`m = 1`: no packing, whose copy of `b` would be read only once.  With
    `b` contiguous along `k` (dense), each output is a dot product,
    `GEMV_ROWS` at a time, over vectors of `k`; else each panel of `nr`
    outputs is a one-row register tile reading `b` in place."""
    g = p.problem
    if not g.b_along_k:
        panels = math.ceil(g.n / p.t.nr)
        body, q = _each_item(e, p, g.batch * panels)
        return _gemv_panel(body, p, body.div(q, panels), body.rem(q, panels))
    groups = math.ceil(g.n / GEMV_ROWS)
    body, q = _each_item(e, p, g.batch * groups)
    batch, n0 = body.div(q, groups), body.mul(body.rem(q, groups), GEMV_ROWS)
    if g.n % GEMV_ROWS == 0:
        return _dot_products(body, p, batch, n0, GEMV_ROWS)
    group, r = body.range(0, body.min(GEMV_ROWS, body.sub(g.n, n0)))
    _dot_products(group, p, batch, group.add(n0, r), 1)


def _each_item(e: Emitter, p: Params, items: int) -> tuple[Emitter, Index]:
    """A parallel loop over `items` in `p.tasks` even tasks: the body of
    each item, and its index."""
    per_task, _ = split(items, p.tasks)
    task, flat = e.loop(math.ceil(items / per_task), ForKind.PARALLEL)
    first = task.mul(flat, per_task)
    return task.range(first, task.min(task.add(first, per_task), items))


def _gemv_panel(e: Emitter, p: Params, batch: Index, panel: Index) -> None:
    """Panel `panel` of the one output row, a one-row register tile whose
    `b` is read in place (matmul's `b[k, n]`, contiguous along `n`)."""
    g = p.problem
    n0 = e.mul(panel, p.t.nr)
    acc = register_tile(
        e,
        p,
        1,
        lambda r: _one_loop(r, g.k),
        lambda r, i, ks: g.a(r, batch, 0, ks[0]),
        lambda r, j, ks: g.b(r, batch, ks[0], r.add(n0, j)),
    )

    def store(w: Emitter, i: Index, j: Index, value: SSAValue) -> None:
        g.store(w, [batch, 0, w.add(n0, j)], value)

    each_panel(e, p.t, g.n, panel, lambda s, cols: store_tile(s, acc, 1, cols, store))


def _dot_products(e: Emitter, p: Params, batch: Index, n0: Index, rows: int) -> None:
    """`out[batch, 0, n0 + i] = sum_k a(k) * b(k, n0 + i)` for `i < rows`:
    lane-wise partial sums over whole vectors of `k`, then the lanes and
    the `k % lanes` tail added per row."""
    g, lanes = p.problem, p.t.lanes
    acc = _lane_sums(e, p, batch, n0, rows)
    out, i = e.loop(rows, ForKind.UNROLLED)
    sum_ = out.alloc([1], g.element_type, "local")
    out.store(out.load(acc, [i, 0]), sum_, [0])
    each_lane, j = out.range(1, lanes)
    total = each_lane.load(sum_, [0])
    each_lane.store(
        each_lane.op(arith.AddfOp(total, each_lane.load(acc, [i, j]))), sum_, [0]
    )
    if g.k % lanes:
        tail, k = out.range(g.k - g.k % lanes, g.k)
        product = tail.op(
            arith.MulfOp(g.a(tail, batch, 0, k), g.b(tail, batch, k, tail.add(n0, i)))
        )
        tail.store(tail.op(arith.AddfOp(tail.load(sum_, [0]), product)), sum_, [0])
    g.store(out, [batch, 0, out.add(n0, i)], out.load(sum_, [0]))


def _lane_sums(e: Emitter, p: Params, batch: Index, n0: Index, rows: int) -> SSAValue:
    """`acc[i, j]`: the sum over the whole vectors of `k` of lane `j` of
    `a(k) * b(k, n0 + i)` (8 independent FMA chains for 8 rows)."""
    g, lanes = p.problem, p.t.lanes
    whole = g.k - g.k % lanes
    acc = e.alloc([rows, lanes], g.element_type, "local")
    init, i = e.loop(rows, ForKind.UNROLLED)
    zero, j = init.loop(lanes, ForKind.VECTORIZED)
    zero.store(zero.constant(0.0, g.element_type), acc, [i, j])
    if whole:
        step, kb = e.range(0, whole, lanes)
        row, i = step.loop(rows, ForKind.UNROLLED)
        lane, j = row.loop(lanes, ForKind.VECTORIZED)
        k = lane.add(kb, j)
        a, b = g.a(lane, batch, 0, k), g.b(lane, batch, k, lane.add(n0, i))
        product = lane.op(arith.MulfOp(a, b, CONTRACT))
        total = lane.op(arith.AddfOp(lane.load(acc, [i, j]), product, CONTRACT))
        lane.store(total, acc, [i, j])
    return acc


def _one_loop(e: Emitter, extent: Index) -> tuple[Emitter, Sequence[Index]]:
    """A reduction over `0 ≤ k < extent`."""
    body, k = e.range(0, extent)
    return body, [k]
