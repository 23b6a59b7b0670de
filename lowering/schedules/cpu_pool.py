"""CPU schedule of 2-D pooling: branch-free windows along output rows.

A plane `(n, c)` per parallel iteration.  Which taps of a window lie inside
the input depends only on whether the output row (column) is near an edge,
and every shape is static, so the schedule sorts the output rows and columns
into *interior* ones (every tap inside) and the few *border* ones, and
emits each class with exactly its taps, unrolled: no bounds test at run
time, no padded copy, and the divisor of an average is a constant per class.

* Interior rows are one serial loop; in each row the interior columns are
  one `vectorized` loop whose body loads the `kh × kw` taps, combines them
  as a tree (`addf`, or `a > b ? a : b` for a maximum), divides an average
  by `kh · kw` and writes the element through the problem's `store` (any
  fused epilogue).  The body is straight-line code at `x * sw + offset`,
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

from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import ForKind
from hetero.lowering.schedules.problems import Pool2D
from hetero.lowering.te_emit import Emitter, Index
from xdsl.dialects import arith
from xdsl.ir import SSAValue

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
        return e.add(e.mul(o, self.stride), e.add(e.mul(k, self.dilation), -self.before))

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
    return Emitter.fmax


def _tree(e: Emitter, combine: Combine, values: Sequence[SSAValue]) -> SSAValue:
    """`values` combined pairwise (a short dependency chain)."""
    while len(values) > 1:
        pairs = [combine(e, a, b) for a, b in zip(values[::2], values[1::2])]
        values = pairs + list(values[len(pairs) * 2 :])
    return values[0]


def _window(
    e: Emitter,
    p: Pool2D,
    plane: Sequence[Index],
    at: tuple[Index, Index],
    taps: tuple[range, range],
) -> SSAValue:
    """The taps `taps` (rows × columns, all inside the input) of output `at`
    combined: unrolled, or in loops for a window of more than `MAX_TAPS`."""
    rows, cols = axes(p)
    combine = _combine(p)

    def tap(e: Emitter, ky: Index, kx: Index) -> SSAValue:
        row, col = rows.position(e, at[0], ky), cols.position(e, at[1], kx)
        return p.data.load(e, [*plane, row, col])

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
    at: tuple[Index, Index],
    taps: tuple[range, range],
    count: int,
) -> None:
    """Output `[*plane, *at]` from its inside taps `taps`; an average divided
    by `count`."""
    value = _window(e, p, plane, at, taps)
    if p.average:
        divisor = e.constant(float(max(count, 1)), p.data.element_type)
        value = e.op(arith.DivfOp(value, divisor))
    p.store(e, [*plane, *at], value)


def _row(
    e: Emitter,
    p: Pool2D,
    plane: Sequence[Index],
    y: Index,
    row_taps: range,
    row_count: int,
) -> None:
    """Output row `y` (its taps `row_taps`, `row_count` of them counted): its
    border columns one by one, then one loop over its interior columns."""
    _, cols = axes(p)
    for x in cols.border():
        count = row_count * cols.counted(x, p.count_include_pad)
        _output(e, p, plane, (y, x), (row_taps, cols.taps(x)), count)
    inside = cols.interior()
    if inside:
        lane, x = e.range(inside.start, inside.stop, kind=ForKind.VECTORIZED)
        count = row_count * cols.window
        _output(lane, p, plane, (y, x), (row_taps, range(cols.window)), count)


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
    for y in rows.border():
        count = rows.counted(y, p.count_include_pad)
        _row(body, p, plane, y, rows.taps(y), count)
    inside = rows.interior()
    if inside:
        row, y = body.range(inside.start, inside.stop)
        _row(row, p, plane, y, range(rows.window), rows.window)
