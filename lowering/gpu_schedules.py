"""GPU schedules of `lower-te`: how the compute templates become thread-bound TIR.

Two pieces, for functions whose target is a GPU:

* `GpuEmitter` (`lower-te`'s `EMITTERS`) — every loop nest that the templates ask to run in parallel
  over output elements (`Emitter.nest(shape, parallel=True)`: elementwise and
  injective results, and the reductions — softmax rows, pools, conv2d — one
  thread per output element) becomes one flat launch, `blockIdx.x` ×
  `threadIdx.x` (`THREADS` threads a block) over the flattened output, the
  output indices recovered by division, the last partial block guarded;
* `gemm` (the `(cuda, Gemm)` entry of `hetero.lowering.schedules.SCHEDULES`)
  — dense and (batched) matmul with shared-memory tiling: a block computes a
  `BLOCK`×`BLOCK` output tile with `(BLOCK/PER_THREAD)²` threads, each a
  `PER_THREAD`×`PER_THREAD` register tile (`LARGE` or `SMALL` sizes);
  the K dimension goes in steps of `STEP`, both operand tiles are staged in
  `shared` buffers by all threads together between two `gpu.barrier`s, and
  every access is guarded (unless the tiles fit exactly), so any size works,
  odd sizes included.  The batch is `blockIdx.z`.

The thread-bound loops are what `convert-tir-to-gpu` turns into thread ids
and launch sizes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from hetero.dialects import tir
from hetero.dialects.target import TargetAttr
from hetero.lowering.te_emit import Emitter, Index
from xdsl.dialects import gpu
from xdsl.dialects import math as math_dialect
from xdsl.ir import Attribute, Block, SSAValue

if TYPE_CHECKING:  # the schedules package imports this module
    from hetero.lowering.schedules.problems import Gemm

THREADS = 256
"""Threads per block of a flat (one thread per output element) launch."""

LARGE = (128, 8)
"""(BLOCK, PER_THREAD) of large products: a block computes a BLOCK×BLOCK
output tile, each of its (BLOCK/PER_THREAD)² threads PER_THREAD×PER_THREAD."""

SMALL = (32, 2)
"""(BLOCK, PER_THREAD) when the output has fewer than BLOCK rows or columns of
`LARGE`: less unrolled code, still 256 threads a block."""

STEP = 8
"""K elements staged in shared memory per step."""

PAD = 4
"""Padding of a shared tile's rows, against bank conflicts when K is contiguous."""


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
) -> None:
    """out[m, n] = sum_k a(m, k) * b(k, n) tiled over a block of `e`'s GPU
    emitter (see the module docstring); `b_is_kn` says that b's contiguous
    dimension is n (matmul) rather than k (dense: b(k, n) = w[n, k])."""
    assert isinstance(e, GpuEmitter)
    large = rows >= LARGE[0] and cols >= LARGE[0]
    BLOCK, PER_THREAD = LARGE if large else SMALL
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
    a_tile = body.alloc([STEP * a_row], element, "shared")
    b_tile = body.alloc([STEP * b_row], element, "shared")
    acc = body.alloc([PER_THREAD * PER_THREAD], element, "local")
    zero = body.constant(0.0, element)
    for i in range(PER_THREAD * PER_THREAD):
        body.store(zero, acc, [i])
    tid = body.add(body.mul(ty, side), tx)
    row0, col0 = body.mul(by, BLOCK), body.mul(bx, BLOCK)
    steps, k0 = body.loop(math.ceil(depth / STEP))
    kbase = steps.mul(k0, STEP)
    # Stage the tiles: each thread loads BLOCK * STEP / threads elements of each.
    fill, r = steps.loop(BLOCK * STEP // threads, tir.ForKind.UNROLLED)
    flat = fill.add(fill.mul(r, threads), tid)
    ml, kl = fill.div(flat, STEP), fill.rem(flat, STEP)
    a_at = (fill.add(row0, ml), fill.add(kbase, kl))
    a = _guarded(fill, a_at, (rows, depth), (BLOCK, STEP), load_a, element)
    fill.store(a, a_tile, [fill.add(fill.mul(kl, a_row), ml)])
    if b_is_kn:
        kl, nl = fill.div(flat, BLOCK), fill.rem(flat, BLOCK)
    else:
        nl, kl = fill.div(flat, STEP), fill.rem(flat, STEP)
    b_at = (fill.add(kbase, kl), fill.add(col0, nl))
    b = _guarded(fill, b_at, (depth, cols), (STEP, BLOCK), load_b, element)
    fill.store(b, b_tile, [fill.add(fill.mul(kl, b_row), nl)])
    steps.op(gpu.BarrierOp())
    # Multiply the staged tiles into the register tile.
    inner, kk = steps.loop(STEP, tir.ForKind.UNROLLED)
    a_values = [
        inner.load(a_tile, [inner.add(inner.mul(kk, a_row), inner.add(ty, i * side))])
        for i in range(PER_THREAD)
    ]
    b_values = [
        inner.load(b_tile, [inner.add(inner.mul(kk, b_row), inner.add(tx, j * side))])
        for j in range(PER_THREAD)
    ]
    for i, av in enumerate(a_values):
        for j, bv in enumerate(b_values):
            at = [i * PER_THREAD + j]
            total = inner.op(math_dialect.FmaOp(av, bv, inner.load(acc, at)))
            inner.store(total, acc, at)
    steps.op(gpu.BarrierOp())
    # Write the register tile back, inside the output only.
    for i in range(PER_THREAD):
        row = body.add(row0, body.add(ty, i * side))
        for j in range(PER_THREAD):
            col = body.add(col0, body.add(tx, j * side))
            inside = body.all_of(
                [_below(body, row, rows, BLOCK), _below(body, col, cols, BLOCK)]
            )
            if (keep := body.when(inside)) is not None:
                store(keep, row, col, keep.load(acc, [i * PER_THREAD + j]))


def gemm(e: Emitter, problem: Gemm, target: TargetAttr | None) -> None:
    """The GPU schedule of `Gemm` problems (dense, matmul): one `blockIdx.z`
    per batch element, then `tiled_product`."""
    assert isinstance(e, GpuEmitter)
    body, batch = e, 0
    if problem.batch > 1:
        body, batch = e.bind(problem.batch, "blockIdx.z")
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
    )
