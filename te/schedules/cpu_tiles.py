"""The register tile the CPU schedules compute everything in.

GEMM and conv2d are computed one *register tile* at a time: `rows × nr`
output elements (`nr` = a few SIMD registers wide) accumulate in a `local`
buffer while a reduction loop adds `a[i] * b[j]`, `a` broadcast from one
scalar per row, `b` loaded as vectors (`register_tile`).  In TIR the rows
are an `unrolled` loop and the columns a `vectorized` one, so after
`convert-tir-to-scf` every access to the tile is at constant indices and
LLVM keeps it in registers (SROA); the multiply-add carries the `contract`
flag and becomes one fused multiply-add.  The output tile is written once,
at the end, through the problem's `store` (which applies a fused epilogue).

The tile's shape comes from the target's vector ISA (`isa.py`), never from
the host's, and the constants here are the cache and thread facts every
CPU schedule splits its work by.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from xdsl.dialects import arith
from xdsl.ir import Attribute, SSAValue

from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import ForKind
from hetero.targets.cpu import num_threads, parallel_chunk
from hetero.te.emit import Emitter, Index
from hetero.te.schedules.isa import VectorIsa, vector_isa
from hetero.te.schedules.problems import Conv2D, Gemm

VECTORS = 2
"""SIMD registers per GEMM tile row: the tile is `VECTORS * lanes` columns wide."""

MAX_ROWS = 12
"""Most rows of a register tile (`mr`), within what the registers hold."""

L2_BLOCK_BYTES = 256 * 1024
"""The part of a core's L2 a cache block of `a` rows may take."""

L1_WAY_BYTES = 4096
"""The bytes one way of the L1 data cache spans (64 sets of 64-byte lines,
on current x86 and Arm cores): addresses this far apart share a set."""

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


P = TypeVar("P", Gemm, Conv2D)


@dataclass(frozen=True)
class ScheduleParams(Generic[P]):
    """What every function of one CPU schedule reads: the problem it
    computes, the target it generates code for, and the register tile it
    chose for them.  A schedule makes one where it starts and hands it to
    short functions, which then need only the loop indices of their own
    step as further arguments (not closures over the schedule's locals,
    nor the same half-dozen values passed along every call)."""

    problem: P
    target: TargetAttr | None
    t: Tiles

    @property
    def isa(self) -> VectorIsa:
        """The target's vector registers, which sized `t`."""
        return vector_isa(self.target)

    @property
    def element(self) -> Attribute:
        """The element type of the problem's operands and result."""
        return self.problem.element_type

    @property
    def tasks(self) -> int:
        """How many parallel tasks to cut the work into: `TASKS_PER_THREAD`
        for each of the target's threads."""
        return TASKS_PER_THREAD * num_threads(self.target)


def zero_tile(e: Emitter, acc: SSAValue, rows: int, cols: int) -> None:
    """`acc[i, j] = 0` over a `rows × cols` tile."""
    init, i = e.loop(rows, ForKind.UNROLLED)
    lane, j = init.loop(cols, ForKind.VECTORIZED)
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


def register_tile(
    e: Emitter, p: ScheduleParams[Any], rows: int, loops: Loops, a: Reader, b: Reader
) -> SSAValue:
    """A zeroed `local` tile of `rows × p.t.nr`, accumulated over `loops`:
    `acc[i, j] += a(i) * b(j)`."""
    acc = e.alloc([rows, p.t.nr], p.element, "local")
    zero_tile(e, acc, rows, p.t.nr)
    _accumulate_tile(e, p.t, acc, rows, loops, a, b)
    return acc


Store = Callable[[Emitter, Index, Index, SSAValue], None]
"""Writes element (row, column) of a tile: (emitter, row, column, value)."""


def store_tile(
    e: Emitter, acc: SSAValue, rows: int, cols: int, store: Store, first: int = 0
) -> None:
    """Hands the first `cols` columns of rows `first` to `rows - 1` of the
    tile to `store`."""
    row, i = e.range(first, rows, kind=ForKind.UNROLLED)
    lane, j = row.loop(cols, ForKind.VECTORIZED)
    store(lane, i, j, lane.load(acc, [i, j]))


def each_panel(
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


BALANCE_SLACK = 0.03
"""How much longer than an even share of the work a parallel loop's busiest
thread may run (`makespan`) before a schedule cuts its tasks finer."""


def makespan(sizes: Sequence[int], threads: int) -> int:
    """The work of the busiest of `threads` running tasks of `sizes` in a
    parallel loop: each takes the next chunk (`parallel_chunk`) as it gets
    free, as the pool's threads do."""
    chunk = parallel_chunk(len(sizes), threads)
    loads = [0] * max(1, threads)
    for start in range(0, len(sizes), chunk):
        least = loads.index(min(loads))
        loads[least] += sum(sizes[start : start + chunk])
    return max(loads)


def split(count: int, parts: int) -> tuple[int, int]:
    """`count` items in at most `parts` even blocks: (items per block, blocks)."""
    per = math.ceil(count / max(1, min(parts, count)))
    return per, math.ceil(count / per)
