"""GPU schedules of `lower-te`: how the compute templates become thread-bound TIR.

Three pieces, for functions whose target is a GPU:

* `GpuEmitter` (`lower-te`'s `EMITTERS`) — every loop nest that the templates ask to run in parallel
  over output elements (`Emitter.nest(shape, parallel=True)`: elementwise and
  injective results, and the reductions — softmax rows, pools — one
  thread per output element) becomes one flat launch, `blockIdx.x` ×
  `threadIdx.x` (`THREADS` threads a block) over the flattened output, the
  output indices recovered by division, the last partial block guarded;
* `split_sum` — a flat launch of sums (the conv2d schedule,
  `hetero.te.schedules.gpu_conv`, and GEMMs of `DOT_ROWS` rows or
  fewer), each in a register and stored once through the problem's store
  (with its fused epilogue); where the outputs are too few to fill the GPU,
  `lanes` threads share each output and add their partial sums through
  shared memory;
* `gemm` (the `(cuda, Gemm)` entry of `hetero.te.schedules.SCHEDULES`)
  — dense and (batched) matmul with shared-memory tiling: a block computes a
  `BLOCK`×`BLOCK` output tile with `(BLOCK/PER_THREAD)²` threads, each a
  `PER_THREAD`×`PER_THREAD` register tile (`LARGE`, `MEDIUM` or `SMALL`
  sizes, by how many blocks they make: `_tile`) of
  rows and columns in runs of 4 (`_owned`: 128-bit shared-memory reads);
  the K dimension goes in steps of `STEP`, both operand tiles are staged in
  `shared` buffers by all threads together, double-buffered (each step's
  global reads are issued before the current step's products, and land in
  the other buffer after them: one `gpu.barrier` a step), and every access
  is guarded (unless the tiles fit exactly), so any size works, odd sizes
  included.  The batch is `blockIdx.z`.

The thread-bound loops are what `convert-tir-to-gpu` turns into thread ids
and launch sizes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import arith, gpu
from xdsl.dialects import math as math_dialect
from xdsl.ir import Attribute, Block, SSAValue

from hetero.dialects import tir
from hetero.dialects.target import TargetAttr
from hetero.te.emit import Emitter, Index

if TYPE_CHECKING:  # the schedules package imports this module
    from hetero.te.schedules.problems import Gemm

THREADS = 256
"""Threads per block of a flat (one thread per output element) launch."""

LARGE = (128, 8)
"""(BLOCK, PER_THREAD) of large products: a block computes a BLOCK×BLOCK
output tile, each of its (BLOCK/PER_THREAD)² threads PER_THREAD×PER_THREAD."""

MEDIUM = (64, 8)
"""(BLOCK, PER_THREAD) where `LARGE` tiles are too few: 64 threads a block,
each still 8×8: four times the blocks of `LARGE` fill the GPU where
`LARGE`'s are too few (docs/performance.md)."""

SMALL = (32, 2)
"""(BLOCK, PER_THREAD) when neither fills `MIN_BLOCKS` blocks: less unrolled
code, still 256 threads a block."""

MIN_BLOCKS = 128
"""Blocks a grid needs to keep a large GPU busy (an H100 or H200 has 132
multiprocessors): `_tile` takes the largest tile that makes as many."""

STEP = 8
"""K elements staged in shared memory per step (the fastest of 4, 8 and 16
on an H200: docs/performance.md)."""

PAD = 4
"""Padding of a shared tile's rows, against bank conflicts when K is contiguous."""

DOT_ROWS = 4
"""Products of this many rows or fewer are dot products (`split_sum`), not
tiles: a tile of one row (a classifier's dense layer at batch 1) computed
32 rows to keep one, in too few blocks."""

MIN_THREADS = 1 << 17
"""Threads a launch of sums should reach before its outputs are split over
lanes: an H100 or H200 holds 132 × 2048 threads at once, and half of that
already hides the latency of the loads (on ResNet-50's convolutions 2^16
and 2^18 were slower with one output channel a thread, and 2^18 within
the noise with four: docs/gpu.md)."""

MAX_LANES = 32
"""The most threads an output gets."""

MIN_TERMS = 8
"""Terms (a convolution's input channels, a dot product's elements) each
lane sums at least: with fewer, the exchange through shared memory costs
more than the split saves."""


class GpuEmitter(Emitter):
    """An `Emitter` laying out parallel nests as thread-bound GPU launches."""

    def at(self, block: Block) -> GpuEmitter:
        return GpuEmitter(block, self.entry, self.constants, self.uniform)

    def bind(self, extent: int, axis: str) -> tuple[GpuEmitter, SSAValue]:
        """`tir.for %i = 0 to extent thread_binding axis`: its body and `%i`."""
        zero, one = self.index(0), self.index(1)
        loop = tir.ForOp(zero, self.index(extent), one, thread_tag=axis)
        self.op(loop)
        return self.at(loop.body.block), loop.induction_var

    def nest(
        self, shape: Sequence[int], parallel: bool = False
    ) -> tuple[Emitter, list[Index]]:
        """A parallel nest is one thread per element of `shape` (row-major);
        an empty one is the CPU's loops, which run zero times (a launch of
        zero threads is an error)."""
        total = math.prod(shape)
        if not parallel or total == 0:
            return super().nest(shape)
        threads = min(THREADS, total)
        blocks, body = math.ceil(total / threads), self
        grid, bx = body.bind(blocks, "blockIdx.x")
        block, tx = grid.bind(threads, "threadIdx.x")
        flat = block.add(block.mul(bx, threads), tx)
        inside = block.when(
            True if blocks * threads == total else block.in_range(flat, 0, total)
        )
        assert inside is not None
        indices: list[Index] = []
        stride = total
        for extent in shape:
            stride //= extent
            indices.append(
                0 if extent == 1 else inside.rem(inside.div(flat, stride), extent)
            )
        return inside, indices


# ----------------------------------------------------------------------------
# Sums split over lanes
# ----------------------------------------------------------------------------

SumLane = Callable[[Emitter, list[Index], Index, int, SSAValue], None]
"""(emitter, element index, lane, lanes, accumulators): adds the lane's share
of the element's sums into the `local` accumulators (one a sum)."""

SumStore = Callable[[Emitter, list[Index], Index, SSAValue], None]
"""(emitter, element index, which of its sums, the sum): stores it."""


def lanes(outputs: int, terms: int) -> int:
    """The threads each of `outputs` sums of `terms` terms gets: the fewest
    (a power of two) that make `MIN_THREADS`, within `MAX_LANES`, each lane
    summing `MIN_TERMS` terms or more."""
    count = 1
    while (
        outputs * count < MIN_THREADS
        and count < MAX_LANES
        and terms // (2 * count) >= MIN_TERMS
    ):
        count *= 2
    return count


def split_sum(
    e: Emitter,
    shape: Sequence[int],
    count: int,
    element: Attribute,
    sum_lane: SumLane,
    store: SumStore,
    lane_fastest: bool = False,
    width: int = 1,
) -> None:
    """One flat launch over the elements of `shape`, `count` threads (lanes)
    an element, each of whose `width` sums is kept in a register and stored
    once (`store`: a fused epilogue runs there).  With several lanes their
    partial sums meet in `shared` memory at one barrier and the first lane
    adds them up.  A block's threads are lane-major (a warp is one lane of
    32 neighbouring elements: for sums whose neighbouring outputs read
    neighbouring elements) or, `lane_fastest`, element-major (a warp is the
    lanes of 32 / count elements: for sums whose lanes read neighbouring
    elements)."""
    assert isinstance(e, GpuEmitter)
    outputs = math.prod(shape)
    if outputs == 0:
        return  # nothing to store, and a launch of no threads is an error
    per_block = min(THREADS // count, outputs)
    blocks = math.ceil(outputs / per_block)
    grid, bx = e.bind(blocks, "blockIdx.x")
    body, tx = grid.bind(per_block * count, "threadIdx.x")
    lane: Index
    if count == 1:
        lane, slot = 0, tx
    elif lane_fastest:
        slot, lane = body.div(tx, count), body.rem(tx, count)
    else:
        lane, slot = body.div(tx, per_block), body.rem(tx, per_block)
    flat = body.add(body.mul(bx, per_block), slot)
    output = body.unflatten(flat, shape)
    inside = True if blocks * per_block == outputs else body.less(flat, outputs)
    acc = body.alloc([width], element, "local")
    clear, j = body.loop(width, tir.ForKind.UNROLLED)
    clear.store(body.constant(0.0, element), acc, [j])
    if (sums := body.when(inside)) is not None:
        sum_lane(sums, output, lane, count, acc)
        if count == 1:
            each, j = sums.loop(width, tir.ForKind.UNROLLED)
            store(each, output, j, each.load(acc, [j]))
    if count == 1:
        return
    size = per_block * (count + 1) if lane_fastest else per_block * count

    def place(f: Emitter, lane: Index, j: Index) -> Index:
        """Where a lane's partial sum `j` goes: one array per `j`, and
        lane-fastest rows padded by one, so that the first lanes' reads
        fall in different banks."""
        if lane_fastest:
            return f.add(f.add(f.mul(slot, count + 1), lane), f.mul(j, size))
        return f.add(f.add(f.mul(lane, per_block), slot), f.mul(j, size))

    partial = body.alloc([size * width], element, "shared")
    each, j = body.loop(width, tir.ForKind.UNROLLED)
    each.store(each.load(acc, [j]), partial, [place(each, lane, j)])
    body.op(gpu.BarrierOp())
    first = body.all_of([inside, body.less(lane, 1)])
    if (last := body.when(first)) is not None:
        # Lane 0 adds the other lanes' partial sums to its own: TIR loops,
        # which LLVM unrolls (copies here cost compile time: 32 lanes of 4).
        each, j = last.loop(width, tir.ForKind.UNROLLED)
        lanes_e, other = each.range(1, count, 1, tir.ForKind.UNROLLED)
        value = lanes_e.load(partial, [place(lanes_e, other, j)])
        lanes_e.store(lanes_e.op(arith.AddfOp(lanes_e.load(acc, [j]), value)), acc, [j])
        store(each, output, j, each.load(acc, [j]))


# ----------------------------------------------------------------------------
# Rows reduced by a block
# ----------------------------------------------------------------------------

ROW_MIN_THREADS = 32
"""The fewest threads a row gets in `row_blocks`: a warp."""


def row_threads(size: int) -> int:
    """Threads of a block that reduces one row of `size` elements: a power
    of two, from a warp up to `THREADS`, each thread taking `MIN_TERMS`
    elements or more where the row is long enough."""
    count = ROW_MIN_THREADS
    while count < THREADS and size // (2 * count) >= MIN_TERMS:
        count *= 2
    return count


def row_blocks(e: Emitter, rows: int, size: int) -> tuple[Emitter, Index, Index, int]:
    """One block per row (`blockIdx.x`), `row_threads(size)` threads a block:
    (the body, the row, the thread, the threads).  Layer norm and softmax
    rows, one thread a row, ran a 768-wide row serially in 150 µs (ViT's 50
    rows kept 50 threads busy of an H200's 270 thousand)."""
    assert isinstance(e, GpuEmitter)
    count = row_threads(size)
    grid, row = e.bind(rows, "blockIdx.x")
    body, thread = grid.bind(count, "threadIdx.x")
    return body, row, thread, count


def block_reduce(
    e: Emitter,
    partials: Sequence[SSAValue],
    thread: Index,
    count: int,
    element: Attribute,
    combine: Callable[[Emitter, SSAValue, SSAValue], SSAValue],
) -> list[SSAValue]:
    """Each of `partials` (one value a thread) combined over the block's
    `count` threads, the totals read by every thread: a tree in `shared`
    memory, halving the live threads with a barrier a step."""
    shared = e.alloc([len(partials) * count], element, "shared")
    for i, value in enumerate(partials):
        e.store(value, shared, [e.add(thread, i * count)])
    live = count // 2
    while live:
        e.op(gpu.BarrierOp())
        if (low := e.when(e.less(thread, live))) is not None:
            for i in range(len(partials)):
                at = low.add(thread, i * count)
                other = low.load(shared, [low.add(at, live)])
                low.store(combine(low, low.load(shared, [at]), other), shared, [at])
        live //= 2
    e.op(gpu.BarrierOp())
    return [e.load(shared, [i * count]) for i in range(len(partials))]


def _dot_lane(problem: Gemm, batch: Index) -> SumLane:
    """A lane's share of `out(b, m, n)`: terms `k ≡ lane (mod lanes)`."""

    def sum_lane(
        e: Emitter, output: list[Index], lane: Index, count: int, acc: SSAValue
    ) -> None:
        m, n = output
        terms, k = e.range(lane, problem.k, count)
        a, b = problem.a(terms, batch, m, k), problem.b(terms, batch, k, n)
        terms.store(terms.op(math_dialect.FmaOp(a, b, terms.load(acc, [0]))), acc, [0])

    return sum_lane


# ----------------------------------------------------------------------------
# Tiled matmul
# ----------------------------------------------------------------------------

Load = Callable[[Emitter, Index, Index], SSAValue]
"""Reads element (row, column) of an operand."""


def _below(e: Emitter, value: Index, bound: int, tile: int) -> SSAValue | bool:
    """`value < bound` for an index of a tile of `tile`: True when tiles fit exactly."""
    return True if bound % tile == 0 else e.in_range(value, 0, bound)


def _guarded(
    e: Emitter,
    at: tuple[Index, Index],
    bounds: tuple[int, int],
    tiles: tuple[int, int],
    load: Load,
    element: Attribute,
) -> SSAValue:
    """`load(row, col)` inside an operand of shape `bounds`, else 0."""
    row, col = at
    inside = e.all_of(
        [_below(e, row, bounds[0], tiles[0]), _below(e, col, bounds[1], tiles[1])]
    )
    if isinstance(inside, bool):
        return load(e, row, col) if inside else e.constant(0.0, element)
    return e.choose(
        inside, element, lambda t: load(t, row, col), lambda f: f.constant(0.0, element)
    )


def _vector_width(per_thread: int) -> int:
    """The run of adjacent rows (columns) a thread owns: 4 where it can, so
    that its shared-memory reads become 128-bit `ld.shared.v4`."""
    return next(v for v in (4, 2, 1) if per_thread % v == 0)


def _owned(e: Emitter, t: Index, i: Index, per_thread: int, side: int) -> Index:
    """The `i`-th row (column) of thread `t` in a tile: runs of `_vector_width`
    adjacent ones, `side` threads apart (thread 0 rows 0-3 and 64-67 of
    128 for 8 a thread), so a warp reads a contiguous span without bank
    conflicts."""
    width = _vector_width(per_thread)
    run = e.add(e.mul(e.div(i, width), side * width), e.rem(i, width))
    return e.add(e.mul(t, width), run)


def _tile(rows: int, cols: int, batch: int) -> tuple[int, int]:
    """`LARGE` or `MEDIUM`, the first whose tiles fit in the output and make
    `MIN_BLOCKS` blocks or more, else `SMALL`."""
    for block, per_thread in (LARGE, MEDIUM):
        grid = math.ceil(rows / block) * math.ceil(cols / block) * batch
        if min(rows, cols) >= block and grid >= MIN_BLOCKS:
            return block, per_thread
    return SMALL


def tiled_product(
    e: Emitter,
    rows: int,
    cols: int,
    depth: int,
    element: Attribute,
    load_a: Load,
    load_b: Load,
    b_is_kn: bool,
    store: Callable[[Emitter, Index, Index, SSAValue], None],
    batch: int = 1,
) -> None:
    """out[m, n] = sum_k a(m, k) * b(k, n) tiled over a block of `e`'s GPU
    emitter (see the module docstring), one of `batch` products launched
    together; `b_is_kn` says that b's contiguous dimension is n (matmul)
    rather than k (dense: b(k, n) = w[n, k])."""
    assert isinstance(e, GpuEmitter)
    BLOCK, PER_THREAD = _tile(rows, cols, batch)
    side = BLOCK // PER_THREAD
    threads = side * side
    assert BLOCK * STEP % threads == 0, (
        f"a {BLOCK}x{STEP} tile is not staged by {threads} threads equally: "
        "elements would be skipped"
    )
    by_e, by = e.bind(math.ceil(rows / BLOCK), "blockIdx.y")
    bx_e, bx = by_e.bind(math.ceil(cols / BLOCK), "blockIdx.x")
    ty_e, ty = bx_e.bind(side, "threadIdx.y")
    body, tx = ty_e.bind(side, "threadIdx.x")
    a_row = BLOCK + PAD
    b_row = BLOCK if b_is_kn else BLOCK + PAD
    # Two tiles of each operand: one multiplied while the next is filled.
    a_tile = body.alloc([2 * STEP * a_row], element, "shared")
    b_tile = body.alloc([2 * STEP * b_row], element, "shared")
    # The register tile and a step's operand values: `local` buffers indexed
    # by `unrolled` loops, which LLVM unrolls and then keeps in registers.
    acc = body.alloc([PER_THREAD * PER_THREAD], element, "local")
    a_values = body.alloc([PER_THREAD], element, "local")
    b_values = body.alloc([PER_THREAD], element, "local")

    def tile_loops(f: Emitter) -> tuple[SSAValue, Emitter, SSAValue]:
        """`unrolled` loops over the register tile's rows, then its columns
        (each within `convert-tir-to-scf`'s `MAX_UNROLL`): the row, the
        inner loop's body, the column."""
        rows_e, i = f.loop(PER_THREAD, tir.ForKind.UNROLLED)
        return i, *rows_e.loop(PER_THREAD, tir.ForKind.UNROLLED)

    i, clear, j = tile_loops(body)
    at = [clear.add(clear.mul(i, PER_THREAD), j)]
    clear.store(body.constant(0.0, element), acc, at)
    tid = body.add(body.mul(ty, side), tx)
    row0, col0 = body.mul(by, BLOCK), body.mul(bx, BLOCK)

    def fetch(f: Emitter, step: Index) -> list[tuple[SSAValue, Index, SSAValue, Index]]:
        """This thread's share of K step `step` of both operands, read from
        global memory: (a value, its place in a tile, b value, its place)."""
        kbase = f.mul(step, STEP)
        staged = []
        for r in range(BLOCK * STEP // threads):
            flat = f.add(tid, r * threads)
            ml, kl = f.div(flat, STEP), f.rem(flat, STEP)
            a_at = (f.add(row0, ml), f.add(kbase, kl))
            a = _guarded(f, a_at, (rows, depth), (BLOCK, STEP), load_a, element)
            a_place = f.add(f.mul(kl, a_row), ml)
            if b_is_kn:
                kl, nl = f.div(flat, BLOCK), f.rem(flat, BLOCK)
            else:
                nl, kl = f.div(flat, STEP), f.rem(flat, STEP)
            b_at = (f.add(kbase, kl), f.add(col0, nl))
            b = _guarded(f, b_at, (depth, cols), (STEP, BLOCK), load_b, element)
            staged.append((a, a_place, b, f.add(f.mul(kl, b_row), nl)))
        return staged

    def put(
        f: Emitter, staged: list[tuple[SSAValue, Index, SSAValue, Index]], half: Index
    ) -> None:
        """Stores fetched values into tile `half` (0 or 1) of each operand."""
        a_base, b_base = f.mul(half, STEP * a_row), f.mul(half, STEP * b_row)
        for a, a_place, b, b_place in staged:
            f.store(a, a_tile, [f.add(a_base, a_place)])
            f.store(b, b_tile, [f.add(b_base, b_place)])

    # The first K step is staged before the loop; each iteration fetches the
    # next (the last one fetches itself again, unused) while it multiplies
    # the current, then stores it into the other tile: one barrier a step.
    put(body, fetch(body, 0), 0)
    body.op(gpu.BarrierOp())
    count = math.ceil(depth / STEP)
    steps, k0 = body.loop(count)
    staged = fetch(steps, steps.min(steps.add(k0, 1), count - 1))
    half = steps.rem(k0, 2)
    a_base, b_base = steps.mul(half, STEP * a_row), steps.mul(half, STEP * b_row)
    inner, kk = steps.loop(STEP, tir.ForKind.UNROLLED)
    for tile, base, stride, t, values in (
        (a_tile, a_base, a_row, ty, a_values),
        (b_tile, b_base, b_row, tx, b_values),
    ):
        read, i = inner.loop(PER_THREAD, tir.ForKind.UNROLLED)
        at = read.add(
            read.add(base, read.mul(kk, stride)), _owned(read, t, i, PER_THREAD, side)
        )
        read.store(read.load(tile, [at]), values, [i])
    i, cols_e, j = tile_loops(inner)
    at = [cols_e.add(cols_e.mul(i, PER_THREAD), j)]
    a, b = cols_e.load(a_values, [i]), cols_e.load(b_values, [j])
    cols_e.store(cols_e.op(math_dialect.FmaOp(a, b, cols_e.load(acc, at))), acc, at)
    put(steps, staged, steps.sub(1, half))
    steps.op(gpu.BarrierOp())
    # Write the register tile back, inside the output only.
    i, cols_e, j = tile_loops(body)
    row = cols_e.add(row0, _owned(cols_e, ty, i, PER_THREAD, side))
    col = cols_e.add(col0, _owned(cols_e, tx, j, PER_THREAD, side))
    inside = cols_e.all_of(
        [_below(cols_e, row, rows, BLOCK), _below(cols_e, col, cols, BLOCK)]
    )
    if (keep := cols_e.when(inside)) is not None:
        store(keep, row, col, keep.load(acc, [keep.add(keep.mul(i, PER_THREAD), j)]))


def gemm(e: Emitter, problem: Gemm, target: TargetAttr | None) -> None:
    """The GPU schedule of `Gemm` problems (dense, matmul): one `blockIdx.z`
    per batch element, then `tiled_product`, or, for `DOT_ROWS` rows or
    fewer, dot products split over lanes (`split_sum`; lane-fastest where
    `b` is contiguous along k, so that a warp reads both operands in runs)."""
    assert isinstance(e, GpuEmitter)
    if problem.batch * problem.m * problem.n == 0:
        return  # nothing to store, and a launch of no threads is an error
    body, batch = e, 0
    if problem.batch > 1:
        body, batch = e.bind(problem.batch, "blockIdx.z")
    if problem.m <= DOT_ROWS:
        shape = [problem.m, problem.n]
        split_sum(
            body,
            shape,
            lanes(math.prod(shape) * problem.batch, problem.k),
            problem.element_type,
            _dot_lane(problem, batch),
            lambda t, output, _, value: problem.store(t, [batch, *output], value),
            lane_fastest=problem.b_along_k,
        )
        return
    tiled_product(
        body,
        problem.m,
        problem.n,
        problem.k,
        problem.element_type,
        lambda t, i, k: problem.a(t, batch, i, k),
        lambda t, k, j: problem.b(t, batch, k, j),
        not problem.b_along_k,
        lambda t, i, j, value: problem.store(t, [batch, i, j], value),
        problem.batch,
    )
