"""The templates of the reductions along rows: softmax and log-softmax,
layer_norm, lrn, sum, mean, max, min and prod, argmax and argmin.  A row's partial results are kept in a
`local` buffer, a vector's lanes on a CPU (`lane_partials`, `halve`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import IntegerType, f32, i64
from xdsl.ir import Attribute, Operation, SSAValue

from hetero.analysis.shape_functions import Dim
from hetero.dialects import relay
from hetero.dialects.tir import ForKind
from hetero.targets.cpu import is_cpu
from hetero.te.emit import Emitter, Index, Tensor
from hetero.te.schedules.gpu import block_reduce, row_blocks
from hetero.te.schedules.isa import vector_isa
from hetero.te.templates.base import (
    NestTemplate,
    accumulate,
    channel_axis,
    one,
    require_float,
    result_shape,
)
from hetero.te.templates.epilogue import Epilogue, store_into


@dataclass(frozen=True)
class _RowNormalization:
    """What a softmax-like op makes of a row's maximum `m` and the sum `s`
    of `exp(x - m)` (`relay.RowNormalizationOp`)."""

    keeps_exp: bool
    """The sum's pass stores `exp(x - m)` as the output, which the last pass
    reads back (else it reads `x - m`)."""
    of_sum: Callable[[Emitter, SSAValue], SSAValue]
    """The row's constant, computed once from `s`."""
    element: Callable[[Emitter, SSAValue, SSAValue], SSAValue]
    """(stored `exp(x - m)` or `x - m`, the row's constant) → the result."""


ROW_NORMALIZATIONS: dict[type[Operation], _RowNormalization] = {
    relay.SoftmaxOp: _RowNormalization(
        True,
        lambda e, s: e.op(arith.DivfOp(one(e, s), s)),
        lambda e, v, c: e.op(arith.MulfOp(v, c)),
    ),
    relay.LogSoftmaxOp: _RowNormalization(
        False,
        lambda e, s: e.op(math_dialect.LogOp(s)),
        lambda e, v, c: e.op(arith.SubfOp(v, c)),
    ),
}


def _softmax(
    e: Emitter, op: Operation, inputs: Sequence[Tensor], out: SSAValue
) -> None:
    """Softmax and log-softmax in three passes over each row along `axis`
    (a maximum, a sum of `exp(x - max)`, the result), in parallel over the
    rows.  On a CPU each pass is vectorized: along the row when `axis` is
    the innermost one (`_softmax_along`), else across the innermost axis,
    neighbouring rows in the lanes (`_softmax_across`).  A row holding NaN
    or +inf, or only -inf, is NaN: the maximum is `fmax` (one `vmaxps`, a
    quarter of `fmaximum`'s instructions), which may pass a NaN over, but
    that element's `exp(x - max)` is NaN, and so is the sum every element
    is divided by (or, for log-softmax, the log subtracted)."""
    (data,) = inputs
    require_float(op, data.element_type)
    axis = channel_axis(op, len(data.shape))
    kind = ROW_NORMALIZATIONS[type(op)]
    if axis == len(data.shape) - 1:
        if not is_cpu(e.target):
            return _softmax_blocks(e, kind, data, out)
        return _softmax_along(e, kind, data, out)
    _softmax_across(e, kind, data, out, axis)


def _softmax_blocks(
    e: Emitter, kind: _RowNormalization, data: Tensor, out: SSAValue
) -> None:
    """Rows along the innermost axis on a GPU: a block per row
    (`row_blocks`), each pass strided over the row by its threads, their
    maxima and sums met by `block_reduce` (one thread per row ran GPT-2's
    128-wide attention rows in 140 µs on an H200)."""
    element, (*outer, size) = data.element_type, data.shape
    body, row, thread, count = row_blocks(e, math.prod(outer), size)
    at = body.unflatten(row, outer)
    peak, total = lane_partials(body, 1, element, -math.inf, 0.0)
    visit, p = body.range(thread, size, count)
    visit.store(
        visit.fmax(visit.load(peak, [0]), data.load(visit, [*at, p])), peak, [0]
    )
    partial = [body.load(peak, [0])]
    (top,) = block_reduce(body, partial, thread, count, element, Emitter.fmax)
    visit, p = body.range(thread, size, count)
    value = visit.op(
        math_dialect.ExpOp(visit.op(arith.SubfOp(data.load(visit, [*at, p]), top)))
    )
    if kind.keeps_exp:
        visit.store(value, out, [*at, p])
    accumulate(visit, total, [0], value, arith.AddfOp)
    partial = [body.load(total, [0])]
    (sum_,) = block_reduce(body, partial, thread, count, element, _add)
    constant = kind.of_sum(body, sum_)
    visit, p = body.range(thread, size, count)
    if kind.keeps_exp:
        value = visit.load(out, [*at, p])
    else:
        value = visit.op(arith.SubfOp(data.load(visit, [*at, p]), top))
    visit.store(kind.element(visit, value, constant), out, [*at, p])


SOFTMAX_VECTORS = 4
"""Vectors of partial results a softmax row keeps on a CPU: independent
chains of maxima and sums, so that each step need not wait for the last
(faster than one chain, even of AVX-512's 16 lanes), few enough to leave
AVX2 registers for `exp`'s constants."""


def _row_lanes(e: Emitter, element: Attribute, size: int | Dim) -> int:
    """Partial results a softmax row keeps: `SOFTMAX_VECTORS` vectors on a
    CPU, one on a GPU (whose threads are its lanes)."""
    if not is_cpu(e.target):
        return 1
    lanes = SOFTMAX_VECTORS * vector_isa(e.target).lanes(element)
    return lanes if isinstance(size, Dim) else min(lanes, size)


def _softmax_along(
    e: Emitter, kind: _RowNormalization, data: Tensor, out: SSAValue
) -> None:
    """Rows along the innermost axis: the maximum and the sum each kept in
    `lanes` partial results (`lanes_over`), then `halve`d."""
    element, (*outer, size) = data.element_type, data.shape
    body, (row,) = e.nest([math.prod(outer)], parallel=True)
    at = body.unflatten(row, outer)
    lanes = _row_lanes(body, element, size)
    peak, total = lane_partials(body, lanes, element, -math.inf, 0.0)

    def fold_peak(e: Emitter, p: Index, j: Index) -> None:
        value = data.load(e, [*at, p])
        e.store(e.fmax(e.load(peak, [j]), value), peak, [j])

    lanes_over(body, size, lanes, fold_peak)
    halve(body, [peak], lanes, Emitter.fmax)
    top = body.load(peak, [0])

    def add_exp(e: Emitter, p: Index, j: Index) -> None:
        value = e.op(
            math_dialect.ExpOp(e.op(arith.SubfOp(data.load(e, [*at, p]), top)))
        )
        if kind.keeps_exp:
            e.store(value, out, [*at, p])
        accumulate(e, total, [j], value, arith.AddfOp)

    lanes_over(body, size, lanes, add_exp)
    halve(body, [total], lanes)
    constant = kind.of_sum(body, body.load(total, [0]))
    lane, p = body.loop(size, ForKind.VECTORIZED)
    if kind.keeps_exp:
        value = lane.load(out, [*at, p])
    else:
        value = lane.op(arith.SubfOp(data.load(lane, [*at, p]), top))
    lane.store(kind.element(lane, value, constant), out, [*at, p])


def _softmax_across(
    e: Emitter, kind: _RowNormalization, data: Tensor, out: SSAValue, axis: int
) -> None:
    """Rows along an outer axis: a task takes `lanes` neighbouring rows
    (consecutive along the innermost axis) and runs each pass over `axis`
    with them in the vector lanes, a maximum, a sum and then the row's
    constant per lane; the last block of the innermost axis may be
    narrower."""
    element, shape = data.element_type, data.shape
    lanes = _row_lanes(e, element, shape[-1])
    blocks, rest = -(-shape[-1] // lanes), shape[-1] % lanes
    outer = [1 if i == axis else d for i, d in enumerate(shape[:-1])]
    body, (task,) = e.nest([math.prod(outer) * blocks], parallel=True)
    *idx, block = body.unflatten(task, [*outer, blocks])
    first = body.mul(block, lanes)

    def rows(width: int) -> Callable[[Emitter], None]:
        def emit(at: Emitter) -> None:
            peak, total = lane_partials(at, width, element, -math.inf, 0.0)

            def each(
                visit: Callable[[Emitter, list[Index], Index], None],
            ) -> None:
                step, k = at.loop(shape[axis])
                lane, j = step.loop(width, ForKind.VECTORIZED)
                place = [k if i == axis else v for i, v in enumerate(idx)]
                visit(lane, [*place, lane.add(first, j)], j)

            def fold_peak(e: Emitter, where: list[Index], j: Index) -> None:
                value = data.load(e, where)
                e.store(e.fmax(e.load(peak, [j]), value), peak, [j])

            def shifted(e: Emitter, where: list[Index], j: Index) -> SSAValue:
                return e.op(arith.SubfOp(data.load(e, where), e.load(peak, [j])))

            def add_exp(e: Emitter, where: list[Index], j: Index) -> None:
                value = e.op(math_dialect.ExpOp(shifted(e, where, j)))
                if kind.keeps_exp:
                    e.store(value, out, where)
                accumulate(e, total, [j], value, arith.AddfOp)

            def finish(e: Emitter, where: list[Index], j: Index) -> None:
                value = e.load(out, where) if kind.keeps_exp else shifted(e, where, j)
                e.store(kind.element(e, value, e.load(total, [j])), out, where)

            each(fold_peak)
            each(add_exp)
            lane, j = at.loop(width, ForKind.VECTORIZED)
            lane.store(kind.of_sum(lane, lane.load(total, [j])), total, [j])
            each(finish)

        return emit

    if not rest:
        return rows(lanes)(body)
    if (full := body.when(body.less(block, blocks - 1))) is not None:
        rows(lanes)(full)
    if (last := body.when(body.less(blocks - 2, block))) is not None:
        rows(rest)(last)


LRN_ROW = 4096
"""The longest innermost row whose window sums `_lrn_rows` keeps on the
stack (a `local` row)."""


def _lrn(e: Emitter, op: Operation, inputs: Sequence[Tensor], out: SSAValue) -> None:
    """out = x / (bias + alpha / size * sum of x² over the channel window) ** beta,
    the window spanning (size-1)//2 channels before and size//2 after: on a
    CPU with the channels outside the innermost axis, by rows
    (`_lrn_rows`); else one output element at a time."""
    assert isinstance(op, relay.LRNOp)
    (x,) = inputs
    element = x.element_type
    require_float(op, element)
    axis = channel_axis(op, len(x.shape))
    static = all(isinstance(d, int) for d in x.shape)
    rows = static and axis < len(x.shape) - 1 and x.shape[-1] <= LRN_ROW
    if rows and is_cpu(e.target):
        return _lrn_rows(e, op, x, out, axis)
    body, idx = e.nest(result_shape(op), parallel=True)
    body.store(body.constant(0.0, element), out, idx)
    window, k = body.loop(op.size)
    channel = window.sub(window.add(idx[axis], k), (op.size - 1) // 2)
    at = [channel if i == axis else v for i, v in enumerate(idx)]
    if (tap := window.when(window.in_range(channel, 0, x.shape[axis]))) is not None:
        value = x.load(tap, at)
        accumulate(tap, out, idx, tap.op(arith.MulfOp(value, value)), arith.AddfOp)
    body.store(_lrn_value(body, op, x.load(body, idx), body.load(out, idx)), out, idx)


def _lrn_rows(e: Emitter, op: relay.LRNOp, x: Tensor, out: SSAValue, axis: int) -> None:
    """A task per row of the innermost axis (at one channel): the window's
    squares added into a `local` row by vectorized loops, the channel's
    bounds checked once a row rather than per element, then `_lrn_value`
    in a vectorized loop."""
    element, (*outer, width) = x.element_type, x.shape
    body, (task,) = e.nest([math.prod(outer)], parallel=True)
    at = body.unflatten(task, outer)
    (sums,) = lane_partials(body, width, element, 0.0)
    window, k = body.loop(op.size)
    channel = window.sub(window.add(at[axis], k), (op.size - 1) // 2)
    if (tap := window.when(window.in_range(channel, 0, x.shape[axis]))) is not None:
        lane, w = tap.loop(width, ForKind.VECTORIZED)
        value = x.load(
            lane, [*(channel if i == axis else v for i, v in enumerate(at)), w]
        )
        accumulate(lane, sums, [w], lane.op(arith.MulfOp(value, value)), arith.AddfOp)
    lane, w = body.loop(width, ForKind.VECTORIZED)
    value = _lrn_value(lane, op, x.load(lane, [*at, w]), lane.load(sums, [w]))
    lane.store(value, out, [*at, w])


def _lrn_value(e: Emitter, op: relay.LRNOp, x: SSAValue, total: SSAValue) -> SSAValue:
    """`x / base ** beta` of the window's sum of squares `total`, as
    `x · exp(-beta · log(base))`: `approximate-math` vectorizes log and exp
    on a CPU, where `pow` is a C library call per element (AlexNet's first
    LRN took 5 ms so, oneDNN's 0.16)."""
    if not op.beta:
        return x
    element = x.type
    scaled = e.op(arith.MulfOp(e.constant(op.alpha / op.size, element), total))
    base = e.op(arith.AddfOp(e.constant(op.bias, element), scaled))
    log = e.op(math_dialect.LogOp(base))
    power = e.op(arith.MulfOp(e.constant(-op.beta, element), log))
    return e.op(arith.MulfOp(x, e.op(math_dialect.ExpOp(power))))


@dataclass(frozen=True)
class _Reduction:
    """How a reduction over axes starts and combines its elements: floats,
    and signed integers (`integer`, None where the op takes floats only)."""

    start: float
    combine: Callable[[Emitter, SSAValue, SSAValue], SSAValue]
    integer: type[arith.SignlessIntegerBinaryOperation] | None = None


REDUCTIONS: dict[type[Operation], _Reduction] = {
    relay.SumOp: _Reduction(
        0.0, lambda e, a, b: e.op(arith.AddfOp(a, b)), arith.AddiOp
    ),
    relay.MeanOp: _Reduction(0.0, lambda e, a, b: e.op(arith.AddfOp(a, b))),
    relay.ProdOp: _Reduction(
        1.0, lambda e, a, b: e.op(arith.MulfOp(a, b)), arith.MuliOp
    ),
    relay.MaxOp: _Reduction(-math.inf, lambda e, a, b: e.fmaximum(a, b), arith.MaxSIOp),
    relay.MinOp: _Reduction(math.inf, lambda e, a, b: e.fminimum(a, b), arith.MinSIOp),
}
"""Reduction op → its start and combine (a NaN reaches the maximum and the
minimum, as NumPy's); an integer's infinite start is its type's extreme
(`_integer_start`)."""


def _integer_start(start: float, width: int) -> int:
    """`start` in a signed integer of `width` bits: ±inf its extremes."""
    if math.isinf(start):
        return -(2 ** (width - 1)) if start < 0 else 2 ** (width - 1) - 1
    return int(start)


def _reduce(e: Emitter, op: Operation, inputs: Sequence[Tensor], out: SSAValue) -> None:
    """out[kept] = the reduction (`REDUCTIONS`) of x over the reduced
    dimensions (÷ their count for mean): a parallel nest over the output, an
    inner serial nest over the reduced extents into a `local` total, in
    float32 for narrower floats (as the interpreter's `wide`: a float16 sum
    of 32768 values near 3 stalls at 2048 otherwise)."""
    assert isinstance(op, relay.ReduceOp)
    (x,) = inputs
    element = x.element_type
    reduction = REDUCTIONS[type(op)]
    integer = _is_integer(element) and reduction.integer is not None
    if not integer:
        require_float(op, element)
    wide = f32 if not integer and element.bitwidth < 32 else element  # type: ignore[attr-defined]
    start = (
        _integer_start(reduction.start, element.bitwidth)  # type: ignore[attr-defined]
        if integer
        else reduction.start
    )
    reduced, kept = _axes(op.axis, len(x.shape))
    body, idx = e.nest(result_shape(op), parallel=True)
    total = body.alloc([1], wide, "local")
    body.store(body.constant(start, wide), total, [0])
    inner, taps = body.nest([x.shape[i] for i in reduced])
    kept_idx = idx if not op.keepdims else [idx[i] for i in kept]
    value = x.load(inner, _source(len(x.shape), kept, kept_idx, reduced, taps))
    if wide != element:
        value = inner.op(arith.ExtFOp(value, wide))
    so_far = inner.load(total, [0])
    if integer:
        combined = inner.op(reduction.integer(so_far, value))  # type: ignore[misc]
    else:
        combined = reduction.combine(inner, so_far, value)
    inner.store(combined, total, [0])
    result = body.load(total, [0])
    if isinstance(op, relay.MeanOp):
        count = _count(body, math.prod(x.shape[i] for i in reduced), wide)
        result = body.op(arith.DivfOp(result, count))
    if wide != element:
        result = body.op(arith.TruncFOp(result, element))
    body.store(result, out, idx)


def _axes(axis: Sequence[int] | None, rank: int) -> tuple[list[int], list[int]]:
    """The reduced dimensions (`axis`, None: all) and the kept ones, in order."""
    reduced = set(range(rank)) if axis is None else {a % rank for a in axis}
    return sorted(reduced), [i for i in range(rank) if i not in reduced]


def _source(
    rank: int,
    kept: Sequence[int],
    kept_idx: Sequence[Index],
    reduced: Sequence[int],
    taps: Sequence[Index],
) -> list[Index]:
    """The input's index of output position `kept_idx` at reduction step `taps`."""
    source: list[Index] = [0] * rank
    for i, v in [*zip(kept, kept_idx), *zip(reduced, taps)]:
        source[i] = v
    return source


def _arg_reduce(
    e: Emitter, op: Operation, inputs: Sequence[Tensor], out: SSAValue
) -> None:
    """out[kept] = the position of the best element along `axis`: a
    parallel nest over the output, a serial walk along the axis from its
    first element keeping the best value and its position (`_replaces`)."""
    assert isinstance(op, relay.ArgReduceOp)
    (x,) = inputs
    element = x.element_type
    if not _is_integer(element):
        require_float(op, element)
    rank = len(x.shape)
    reduced, kept = _axes([op.axis], rank)
    body, idx = e.nest(result_shape(op), parallel=True)
    kept_idx = [idx[i] for i in kept] if op.keepdims else idx
    best = body.alloc([1], element, "local")
    body.store(x.load(body, _source(rank, kept, kept_idx, reduced, [0])), best, [0])
    body.store(body.constant(0, out.type.element_type), out, idx)  # type: ignore[attr-defined]
    step, k = body.range(1, x.shape[reduced[0]])
    value = x.load(step, _source(rank, kept, kept_idx, reduced, [k]))
    current = step.load(best, [0])
    take = _replaces(step, op, value, current)
    step.store(step.op(arith.SelectOp(take, value, current)), best, [0])
    position = step.op(arith.IndexCastOp(k, out.type.element_type))  # type: ignore[attr-defined]
    step.store(step.op(arith.SelectOp(take, position, step.load(out, idx))), out, idx)


BETTER: dict[type[Operation], tuple[str, str]] = {
    relay.ArgMaxOp: ("ogt", "oge"),
    relay.ArgMinOp: ("olt", "ole"),
}
"""Arg-reduction → the comparison of a better element: strictly (the first
of ties stays), or with `select_last_index` as good (the last one takes);
ordered floats' predicates, whose signed integer ones are `s` for `o`."""


def _is_integer(element: Attribute) -> bool:
    """A signless integer wider than a boolean (their sums wrap, as NumPy's
    of the same type)."""
    return isinstance(element, IntegerType) and element.width.data > 1


def _replaces(
    e: Emitter, op: relay.ArgReduceOp, value: SSAValue, best: SSAValue
) -> SSAValue:
    """Whether `value` takes the best's place: better, or as good with
    `select_last_index`; a NaN is better than any number (the first one
    stays, or with `select_last_index` the last one takes it), NumPy's rule."""
    better = BETTER[type(op)][op.select_last_index]
    if _is_integer(value.type):
        return e.op(arith.CmpiOp(value, best, "s" + better[1:]))
    compare = e.op(arith.CmpfOp(value, best, better))
    value_nan = e.op(arith.CmpfOp(value, value, "uno"))
    if not op.select_last_index:
        value_nan = e.op(arith.AndIOp(value_nan, e.op(arith.CmpfOp(best, best, "ord"))))
    return e.op(arith.OrIOp(compare, value_nan))


def _count(e: Emitter, size: int | Dim, element: Attribute) -> SSAValue:
    """`size` as a float of `element`: a constant, or converted at run time
    where it is a `Dim`."""
    if isinstance(size, int):
        return e.constant(float(size), element)
    as_int = e.op(arith.IndexCastOp(e.index(size), i64))
    return e.op(arith.SIToFPOp(as_int, element))


NORM_LANES = 16
"""Partial sums a `layer_norm` row keeps (`local`): a multiple of every CPU
target's f32 vector width, so each loop over them is whole vectors."""


def _layer_norm(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """One kernel over the rows (the axes before `axis`): per row, one pass
    adds `d = x - x[0]` and `d²` into partial sums, which are then combined;
    a second pass stores `(d - mean(d)) * rstd * gamma + beta` through the
    epilogue.  Working on `d`, shifted by the row's first element, keeps
    `E[d²] - E[d]²` from cancelling and the centred values exact when the
    mean is large next to the spread (a residual stream's rows).  On a CPU
    a row is a task, its passes vectorized into `NORM_LANES` partial sums
    halved to one; on a GPU a row is a block (`row_blocks`), its threads
    strided over it and their sums met by `block_reduce`."""
    assert isinstance(op, relay.LayerNormOp)
    x, gamma, beta = inputs
    element = x.element_type
    require_float(op, element)
    axis = channel_axis(op, len(x.shape))
    outer, inner = x.shape[:axis], x.shape[axis:]
    size = math.prod(inner)
    if is_cpu(e.target):
        body, (row,) = e.nest([math.prod(outer)], parallel=True)
    else:
        body, row, thread, count = row_blocks(e, math.prod(outer), size)
    at = body.unflatten(row, outer)

    def element_at(e: Emitter, p: Index) -> list[Index]:
        return [*at, *e.unflatten(p, inner)]

    shift = x.load(body, element_at(body, 0))

    def add_terms(e: Emitter, p: Index, j: Index) -> None:
        d = e.op(arith.SubfOp(x.load(e, element_at(e, p)), shift))
        for partial, term in zip(sums, (d, e.op(arith.MulfOp(d, d)))):
            accumulate(e, partial, [j], term, arith.AddfOp)

    if is_cpu(e.target):
        lanes = min(NORM_LANES, size)
        sums = lane_partials(body, lanes, element, 0.0, 0.0)
        lanes_over(body, size, lanes, add_terms)
        halve(body, sums, lanes)
        total, squares = (body.load(s, [0]) for s in sums)
    else:
        sums = lane_partials(body, 1, element, 0.0, 0.0)
        strided, p = body.range(thread, size, count)
        add_terms(strided, p, 0)
        partials = [body.load(s, [0]) for s in sums]
        total, squares = block_reduce(body, partials, thread, count, element, _add)
    n = body.constant(float(size), element)
    mean, square = (body.op(arith.DivfOp(s, n)) for s in (total, squares))
    variance = body.fmax(
        body.op(arith.SubfOp(square, body.op(arith.MulfOp(mean, mean)))),
        body.constant(0.0, element),
    )
    spread = body.op(arith.AddfOp(variance, body.constant(op.epsilon, element)))
    rstd = body.op(
        arith.DivfOp(body.constant(1.0, element), body.op(math_dialect.SqrtOp(spread)))
    )
    if is_cpu(e.target):
        lane, p = body.loop(size, ForKind.VECTORIZED)
    else:
        lane, p = body.range(thread, size, count)
    d = lane.op(arith.SubfOp(x.load(lane, element_at(lane, p)), shift))
    normal = lane.op(arith.MulfOp(lane.op(arith.SubfOp(d, mean)), rstd))
    index = lane.unflatten(p, inner)
    scaled = lane.op(arith.MulfOp(normal, gamma.load(lane, index)))
    value = lane.op(arith.AddfOp(scaled, beta.load(lane, index)))
    store_into(out, epilogue)(lane, element_at(lane, p), value)


def lane_partials(
    e: Emitter, lanes: int, element: Attribute, *starts: float
) -> list[SSAValue]:
    """A `local` row of `lanes` partial results for each of `starts`, filled
    with it (a row reduction's accumulators, one per lane)."""
    rows = [e.alloc([lanes], element, "local") for _ in starts]
    fill, j = e.loop(lanes, ForKind.VECTORIZED)
    for row, start in zip(rows, starts):
        fill.store(fill.constant(start, element), row, [j])
    return rows


def lanes_over(
    e: Emitter,
    size: int | Dim,
    lanes: int,
    visit: Callable[[Emitter, Index, Index], None],
) -> None:
    """`visit(e, p, j)` for each `p < size`, `j` the partial result it goes
    into (`p % lanes`): vectorized loops of `lanes` over the whole chunks,
    then one over the rest (of a size known at run time where `size` is)."""
    if isinstance(size, Dim):
        whole = e.div(size, lanes)
        chunks, c = e.loop(whole)  # type: ignore[arg-type]
        lane, j = chunks.loop(lanes, ForKind.VECTORIZED)
        visit(lane, lane.add(lane.mul(c, lanes), j), j)
        start = e.mul(whole, lanes)
        lane, j = e.range(0, e.sub(size, start), kind=ForKind.VECTORIZED)
        return visit(lane, lane.add(j, start), j)
    whole, rest = divmod(size, lanes)
    chunks, c = e.loop(whole)
    lane, j = chunks.loop(lanes, ForKind.VECTORIZED)
    visit(lane, lane.add(lane.mul(c, lanes), j), j)
    if rest:
        lane, j = e.loop(rest, ForKind.VECTORIZED)
        visit(lane, lane.add(j, whole * lanes), j)


def _add(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return e.op(arith.AddfOp(a, b))


def halve(
    e: Emitter,
    partials: Sequence[SSAValue],
    live: int,
    combine: Callable[[Emitter, SSAValue, SSAValue], SSAValue] = _add,
) -> None:
    """Each `local` row of partial results combined (added) into its element
    0, halving the live elements with one vectorized loop a step."""
    while live > 1:
        half = (live + 1) // 2
        lane, j = e.loop(live - half, ForKind.VECTORIZED)
        for partial in partials:
            other = lane.load(partial, [lane.add(j, half)])
            lane.store(combine(lane, lane.load(partial, [j]), other), partial, [j])
        live = half


TEMPLATES: dict[type[Operation], NestTemplate] = {
    relay.SoftmaxOp: _softmax,
    relay.LogSoftmaxOp: _softmax,
    relay.LRNOp: _lrn,
    **dict.fromkeys(REDUCTIONS, _reduce),
    relay.ArgMaxOp: _arg_reduce,
    relay.ArgMinOp: _arg_reduce,
    relay.LayerNormOp: _layer_norm,
}
"""Row reduction op → template writing its result into a buffer."""
