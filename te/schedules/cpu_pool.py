"""CPU schedule of 2-D pooling: branch-free windows along output rows.

A plane `(n, c)` per parallel iteration.  Which taps of a window lie inside
the input depends only on whether the output row (column) is near an edge,
and every shape is static, so the schedule sorts the output rows and columns
into *interior* ones (every tap inside) and the few *border* ones, and
emits each class with exactly its taps, unrolled: no bounds test at run
time, no padded copy, and the divisor of an average is a constant per class.

* The window is separable: a row's taps are first folded column by column
  into a scratch row (`vectorized`, unit stride: `kh` loads and `kh - 1`
  combines per column, no shuffles), and the row's outputs then combine
  `kw` taps of that row.  A 3×3 stride-2 maximum thus costs 3 strided taps
  (two loads and a shuffle each) per output instead of 9.  Rows are folded
  a block at a time (`FOLD_BYTES` of scratch rows, on the stack) before
  their outputs read them: a vector load of a row just stored, straddling
  two stores, would wait for them to reach the cache.  A window of one row,
  or of more than `MAX_TAPS` taps, reads the input directly.
* Interior rows are one serial loop (of blocks of rows, when folded); in
  each row the interior columns are one `vectorized` loop whose body loads
  the taps, combines them as a tree (`addf`, or `Emitter.fmaximum` for a
  maximum: NaN if a tap is NaN), divides an average by `kh · kw` and writes the element through
  the problem's `store` (any fused epilogue).  The body is straight-line code at `x * sw + offset`,
  which `convert-tir-to-scf`'s vectorizer takes for column strides 1 and 2;
  another stride keeps a plain counted loop, which LLVM's loop vectorizer
  turns into vector code (strided taps by shuffles) where rows are wide.
* Border rows and columns are each emitted at their constant position with
  only their inside taps (a window with no tap inside is `-inf` for a
  maximum, 0 for an average).
* Global pooling (the window is the whole unpadded plane) folds the rows of
  the plane into a `local` row (a vector loop per row), then halves that row
  with vector loops until one element is left.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import ForKind
from hetero.targets.cpu import STACK_BYTES
from hetero.te.emit import Emitter, Index
from hetero.te.schedules.problems import Pool2D

FOLD_BYTES = STACK_BYTES
"""Most bytes of folded rows (`_folded_rows`) a plane keeps at once: a
scratch buffer on the stack."""

MAX_TAPS = 64
"""Most taps of a window that are unrolled into the loop body; a larger
window is reduced by serial loops over its taps instead."""


@dataclass(frozen=True)
class Axis:
    """One spatial axis of a pooling: which taps of output position `o` lie
    inside the input, and how many count for an average."""

    size: int
    out: int
    window: int
    stride: int
    dilation: int
    before: int
    after: int

    def offset(self, k: int) -> int:
        """Input position of tap `k` of output 0 (output `o` adds `o * stride`)."""
        return k * self.dilation - self.before

    def position(self, e: Emitter, o: Index, k: Index) -> Index:
        """Input position of tap `k` of output `o`, emitted."""
        return e.add(
            e.mul(o, self.stride), e.add(e.mul(k, self.dilation), -self.before)
        )

    def taps(self, o: int) -> range:
        """The taps of output `o` inside the input (consecutive ones)."""
        inside = [
            k
            for k in range(self.window)
            if 0 <= o * self.stride + self.offset(k) < self.size
        ]
        return range(inside[0], inside[-1] + 1) if inside else range(0)

    def counted(self, o: int, include_pad: bool) -> int:
        """The taps of output `o` an average divides by: inside the input, or
        with `include_pad` inside the explicitly padded input."""
        if not include_pad:
            return len(self.taps(o))
        end = self.before + self.size + self.after
        return sum(
            0 <= o * self.stride + k * self.dilation < end for k in range(self.window)
        )

    def interior(self) -> range:
        """The outputs whose every tap is inside the input (a contiguous range)."""
        lo = min(self.out, -(-self.before // self.stride))
        last = self.size - 1 - self.offset(self.window - 1)
        return range(lo, max(lo, min(self.out, last // self.stride + 1)))

    def border(self) -> list[int]:
        inside = self.interior()
        return [o for o in range(self.out) if o not in inside]


def axes(p: Pool2D) -> tuple[Axis, Axis]:
    """The row and the column axis of `p`."""
    (height, width), (out_h, out_w) = p.data.shape[2:], p.out_shape[2:]
    top, left, bottom, right = p.padding
    return (
        Axis(height, out_h, p.pool_size[0], p.strides[0], p.dilation[0], top, bottom),
        Axis(width, out_w, p.pool_size[1], p.strides[1], p.dilation[1], left, right),
    )


def is_global(p: Pool2D) -> bool:
    """The window is the whole (unpadded) plane."""
    return (
        tuple(p.pool_size) == tuple(p.data.shape[2:])
        and not any(p.padding)
        and tuple(p.dilation) == (1, 1)
    )


Combine = Callable[[Emitter, SSAValue, SSAValue], SSAValue]
"""Combines two values of a window."""


def _combine(p: Pool2D) -> Combine:
    if p.average:
        return lambda e, a, b: e.op(arith.AddfOp(a, b))
    return Emitter.fmaximum


def _tree(e: Emitter, combine: Combine, values: Sequence[SSAValue]) -> SSAValue:
    """`values` combined pairwise (a short dependency chain)."""
    while len(values) > 1:
        pairs = [combine(e, a, b) for a, b in zip(values[::2], values[1::2])]
        values = pairs + list(values[len(pairs) * 2 :])
    return values[0]


Load = Callable[[Emitter, Index, Index], SSAValue]
"""Loads tap row `ky` of the output row at input column `col`."""


def _window(
    e: Emitter,
    p: Pool2D,
    load: Load,
    x: Index,
    taps: tuple[range, range],
) -> SSAValue:
    """The taps `taps` (rows × columns, all inside the input) of output
    column `x` combined: unrolled, or in loops for a window of more than
    `MAX_TAPS`."""
    _, cols = axes(p)
    combine = _combine(p)

    def tap(e: Emitter, ky: Index, kx: Index) -> SSAValue:
        return load(e, ky, cols.position(e, x, kx))

    element = p.data.element_type
    empty = e.constant(0.0 if p.average else -math.inf, element)
    if len(taps[0]) * len(taps[1]) <= MAX_TAPS:
        values = [tap(e, ky, kx) for ky in taps[0] for kx in taps[1]]
        return _tree(e, combine, values) if values else empty
    acc = e.alloc([1], element, "local")
    e.store(empty, acc, [0])
    row, ky = e.range(taps[0].start, taps[0].stop)
    body, kx = row.range(taps[1].start, taps[1].stop)
    body.store(combine(body, body.load(acc, [0]), tap(body, ky, kx)), acc, [0])
    return e.load(acc, [0])


def _output(
    e: Emitter,
    p: Pool2D,
    plane: Sequence[Index],
    load: Load,
    at: tuple[Index, Index],
    taps: tuple[range, range],
    count: int,
) -> None:
    """Output `[*plane, *at]` from its inside taps `taps`; an average divided
    by `count`."""
    value = _window(e, p, load, at[1], taps)
    if p.average:
        divisor = e.constant(float(max(count, 1)), p.data.element_type)
        value = e.op(arith.DivfOp(value, divisor))
    p.store(e, [*plane, *at], value)


def separable(p: Pool2D) -> bool:
    """Rows are folded first: the window has several rows, and is unrolled."""
    return 1 < p.pool_size[0] and math.prod(p.pool_size) <= MAX_TAPS


def block_rows(p: Pool2D) -> int:
    """Output rows folded together before their outputs are read (a block of
    at most `FOLD_BYTES`)."""
    row_bytes = p.data.shape[3] * p.data.element_type.bitwidth // 8  # type: ignore[union-attr]
    return max(1, min(p.out_shape[2], FOLD_BYTES // row_bytes))


def _fold_row(
    e: Emitter,
    p: Pool2D,
    plane: Sequence[Index],
    y: Index,
    row_taps: range,
    folded: SSAValue,
    r: Index,
) -> None:
    """`folded[r, col]` = the taps `row_taps` of output row `y` at input
    column `col` combined, for every column (one unit-stride vector loop)."""
    rows, _ = axes(p)
    lane, col = e.loop(p.data.shape[3], ForKind.VECTORIZED)
    values = [
        p.data.load(lane, [*plane, rows.position(lane, y, ky), col]) for ky in row_taps
    ]
    lane.store(_tree(lane, _combine(p), values), folded, [r, col])


def _columns(
    e: Emitter,
    p: Pool2D,
    plane: Sequence[Index],
    y: Index,
    load: Load,
    row_taps: range,
    row_count: int,
) -> None:
    """Output row `y` (its taps `row_taps`, `row_count` of them counted, read
    by `load`): its border columns one by one, then one loop over its
    interior columns."""
    _, cols = axes(p)
    for x in cols.border():
        count = row_count * cols.counted(x, p.count_include_pad)
        _output(e, p, plane, load, (y, x), (row_taps, cols.taps(x)), count)
    inside = cols.interior()
    if inside:
        lane, x = e.range(inside.start, inside.stop, kind=ForKind.VECTORIZED)
        count = row_count * cols.window
        _output(lane, p, plane, load, (y, x), (row_taps, range(cols.window)), count)


def _row(
    e: Emitter,
    p: Pool2D,
    plane: Sequence[Index],
    y: Index,
    row_taps: range,
    row_count: int,
) -> None:
    """Output row `y` from the input directly."""
    rows, _ = axes(p)

    def load(e: Emitter, ky: Index, col: Index) -> SSAValue:
        return p.data.load(e, [*plane, rows.position(e, y, ky), col])

    _columns(e, p, plane, y, load, row_taps, row_count)


def _rows(e: Emitter, count: int) -> tuple[Emitter, Index]:
    """A loop over `count` rows, or row 0 itself."""
    return (e, 0) if count == 1 else e.loop(count)


def _folded_rows(
    e: Emitter,
    p: Pool2D,
    plane: Sequence[Index],
    first: Index,
    count: int,
    row_taps: range,
    row_count: int,
    folded: SSAValue,
) -> None:
    """Output rows `first` to `first + count` (each with taps `row_taps`,
    `row_count` of them counted for an average): every row's taps folded
    into `folded` first, then every row's outputs, so that no load waits for
    the store just before it (a vector load that straddles two recent
    stores cannot take their data from the store buffer: on this CPU it
    stalls until they reach the cache)."""
    fold, r = _rows(e, count)
    _fold_row(fold, p, plane, fold.add(first, r), row_taps, folded, r)
    out, row = _rows(e, count)

    def load(e: Emitter, ky: Index, col: Index) -> SSAValue:
        return e.load(folded, [row, col])

    _columns(out, p, plane, out.add(first, row), load, range(1), row_count)


def _global(e: Emitter, p: Pool2D, plane: Sequence[Index]) -> None:
    """The whole plane combined: rows folded into a `local` row, which is
    then halved until one element is left."""
    height, width = p.data.shape[2:]
    element = p.data.element_type
    combine = _combine(p)
    acc = e.alloc([width], element, "local")
    first, x = e.loop(width, ForKind.VECTORIZED)
    first.store(p.data.load(first, [*plane, 0, x]), acc, [x])
    if height > 1:
        rows, y = e.range(1, height)
        lane, x = rows.loop(width, ForKind.VECTORIZED)
        value = combine(lane, lane.load(acc, [x]), p.data.load(lane, [*plane, y, x]))
        lane.store(value, acc, [x])
    live = width
    while live > 1:
        half = (live + 1) // 2
        lane, x = e.loop(live - half, ForKind.VECTORIZED)
        folded = combine(lane, lane.load(acc, [x]), lane.load(acc, [lane.add(x, half)]))
        lane.store(folded, acc, [x])
        live = half
    value = e.load(acc, [0])
    if p.average:
        value = e.op(arith.DivfOp(value, e.constant(float(height * width), element)))
    p.store(e, [*plane, 0, 0], value)


def pool2d(e: Emitter, p: Pool2D, target: TargetAttr | None) -> None:
    """Max or average pooling, one plane per parallel iteration (see the
    module docstring)."""
    batch, channels = p.data.shape[:2]
    body, flat = e.loop(batch * channels, ForKind.PARALLEL)
    plane = [body.div(flat, channels), body.rem(flat, channels)]
    if is_global(p):
        return _global(body, p, plane)
    rows, _ = axes(p)
    inside = rows.interior()
    if not separable(p):
        for y in rows.border():
            _row(body, p, plane, y, rows.taps(y), rows.counted(y, p.count_include_pad))
        if inside:
            row, y = body.range(inside.start, inside.stop)
            _row(row, p, plane, y, range(rows.window), rows.window)
        return
    block = block_rows(p)
    folded = body.alloc([block, p.data.shape[3]], p.data.element_type)
    for y in rows.border():
        taps, count = rows.taps(y), rows.counted(y, p.count_include_pad)
        if taps:
            _folded_rows(body, p, plane, y, 1, taps, count, folded)
        else:
            _row(body, p, plane, y, taps, count)
    window = (range(rows.window), rows.window)
    whole, rest = divmod(len(inside), block)
    if whole:
        blocks, b = body.loop(whole)
        first = blocks.add(blocks.mul(b, block), inside.start)
        _folded_rows(blocks, p, plane, first, block, *window, folded)
    if rest:
        first = inside.start + whole * block
        _folded_rows(body, p, plane, first, rest, *window, folded)
