"""The templates of dense and matmul: a `Gemm` problem for the target's
schedule, else a plain nest.  Their operands are read through loaders, so
a view fused before them (an attention block's per-head reshapes and
transposes, `VIEW_READERS`) is read in place."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.ir import Attribute, Block, Operation, SSAValue

from hetero.analysis.shape_functions import Dim
from hetero.dialects import relay
from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import ForKind
from hetero.targets.cpu import is_cpu
from hetero.te.emit import Emitter, Index, Shape, Tensor
from hetero.te.schedules import Schedule, problem_schedule
from hetero.te.schedules.cpu_gemm import gemm_in_place, gemm_rows
from hetero.te.schedules.isa import vector_isa
from hetero.te.schedules.problems import Gemm
from hetero.te.templates.base import (
    NestTemplate,
    accumulate,
    require_float,
    result_shape,
)
from hetero.te.templates.elementwise import broadcast_indices
from hetero.te.templates.epilogue import Epilogue, finish, store_into
from hetero.te.templates.injective import VIEW_OPS, unblocked
from hetero.te.templates.reduction import halve, lane_partials, lanes_over


def _plain_gemm(
    e: Emitter,
    out: SSAValue,
    shape: Sequence[int],
    extent: int,
    element_type: Attribute,
    operands: Callable[[Emitter, Sequence[Index], Index], tuple[SSAValue, SSAValue]],
    epilogue: Epilogue | None,
) -> None:
    """Without a schedule: out[idx] = sum_k a·b over `k < extent`, accumulated in
    `out`, where `operands(e, idx, k)` loads the pair `(a, b)` multiplied."""
    body, idx = e.nest(shape, parallel=True)
    body.store(body.constant(0.0, element_type), out, idx)
    inner, k = body.loop(extent)
    product = inner.op(arith.MulfOp(*operands(inner, idx, k)))
    accumulate(inner, out, idx, product, arith.AddfOp)
    finish(e, out, shape, epilogue)


def _dense(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """out[m, n] = sum_k x[m, k] * w[n, k] (`w` read through its panels
    when packed, `NK<b>n`)."""
    assert isinstance(op, relay.DenseOp)
    x, packed = inputs
    require_float(op, x.element_type)
    (m, n), k = result_shape(op), x.shape[1]
    w = _nk(op, packed)
    problem = Gemm(
        1,
        m,
        n,
        k,
        x.element_type,
        lambda e, _, i, kk: x.load(e, [i, kk]),
        lambda e, _, kk, j: w.load(e, [j, kk]),
        lambda e, idx, value: store_into(out, epilogue)(e, idx[1:], value),
        b_along_k=True,
        packed_b=packed if w is not packed else None,
        a_in_place=_rows_in_place(op.operands[0]),
    )
    if isinstance(m, Dim) and is_cpu(e.target) and _schedule(e, n, k) is not None:
        return gemm_rows(e, problem, e.target)
    if (schedule := _schedule(e, m, n, k)) is not None:
        return schedule(e, problem, e.target)

    def operands(
        e: Emitter, idx: Sequence[Index], kk: Index
    ) -> tuple[SSAValue, SSAValue]:
        return x.load(e, [idx[0], kk]), w.load(e, [idx[1], kk])

    _plain_gemm(e, out, (m, n), k, x.element_type, operands, epilogue)


def _schedule(e: Emitter, *sizes: int | Dim) -> Schedule | None:
    """The target's GEMM schedule; none where a size is known at run time
    only (a `Dim`): the plain nest is right for every size."""
    if any(isinstance(d, Dim) for d in sizes):
        return None
    return problem_schedule(e.target, Gemm)


def _nk(op: relay.DenseOp, weight: Tensor) -> Tensor:
    """The dense weight as `NK` (`[N, K]`), whatever its `weight_layout`."""
    block = relay.dense_block(op.weight_layout)
    return unblocked(weight, op.units, block) if block else weight


VIEW_READERS: frozenset[type[Operation]] = frozenset({relay.MatmulOp, relay.DenseOp})
"""Anchors whose schedule reads each operand element through a loader
(`Gemm.a`, `Gemm.b`, once per element when packing), so that a view of a
buffer fused before them (`fuse-ops`) is read in place, never copied."""


def _rows_in_place(value: SSAValue) -> bool:
    """Whether a kernel reads `value` as rows of a buffer, in place
    (`Gemm.a_in_place`): a parameter of the kernel, or reshapes of one that
    keep its last dimension (`[1, 128, 768]` read as `[128, 768]`), so that
    element `k` of a row is element `k` of a row of the buffer and a row's
    address takes the reshape's divisions once a row, not once an element.
    A transpose, or a reshape that splits or joins the last dimension, is
    read element by element: packed."""
    owner = value.owner
    if isinstance(owner, Block):
        return True
    if type(owner) not in VIEW_OPS or isinstance(owner, relay.TransposeOp):
        return False
    assert isinstance(owner, Operation)
    source = owner.operands[0]
    last = value.type.get_shape()[-1]  # type: ignore[attr-defined]
    return source.type.get_shape()[-1] == last and _rows_in_place(source)  # type: ignore[attr-defined]


def _contiguous_axis(value: SSAValue) -> int | None:
    """The axis along which neighbouring elements of `value` lie next to
    each other in memory as a kernel reads it: the last one of a buffer (a
    parameter, a materialised result), permuted by transposes and kept by
    other views that keep the last axis contiguous; None if no axis is."""
    rank = len(value.type.get_shape())  # type: ignore[attr-defined]
    owner = value.owner
    if type(owner) not in VIEW_OPS:
        return rank - 1
    assert isinstance(owner, Operation)
    source = owner.operands[0]
    inner = _contiguous_axis(source)
    if isinstance(owner, relay.TransposeOp):
        axes = owner.axes or tuple(reversed(range(rank)))
        return None if inner is None else [a % rank for a in axes].index(inner)
    last = len(source.type.get_shape()) - 1  # type: ignore[attr-defined]
    return rank - 1 if inner == last else None


def _matmul(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """out[..., m, n] = sum_k a[..., m, k] * b[..., k, n], batch dims broadcast;
    `b` read along `k` where that is its contiguous axis (`Kᵀ` as a
    transposed view of `K`, `VIEW_READERS`)."""
    a, b = inputs
    require_float(op, a.element_type)
    shape = result_shape(op)
    batch_shape = shape[:-2]
    along_k = _contiguous_axis(op.operands[1]) == len(b.shape) - 2
    if any(isinstance(d, Dim) for d in (*shape, a.shape[-1])) and is_cpu(e.target):
        problem = _matmul_problem(op, shape, a, b, out, epilogue, along_k)
        return (_dot_products if along_k else gemm_in_place)(e, problem, e.target)
    if (schedule := _schedule(e, *shape, a.shape[-1])) is not None:
        return schedule(
            e, _matmul_problem(op, shape, a, b, out, epilogue, along_k), e.target
        )

    def operands(
        e: Emitter, idx: Sequence[Index], k: Index
    ) -> tuple[SSAValue, SSAValue]:
        batch, (m, n) = idx[:-2], idx[-2:]
        a_idx = broadcast_indices(batch, batch_shape, a.shape[:-2]) + [m, k]
        b_idx = broadcast_indices(batch, batch_shape, b.shape[:-2]) + [k, n]
        return a.load(e, a_idx), b.load(e, b_idx)

    _plain_gemm(e, out, shape, a.shape[-1], a.element_type, operands, epilogue)


def _matmul_problem(
    op: Operation,
    shape: Shape,
    a: Tensor,
    b: Tensor,
    out: SSAValue,
    epilogue: Epilogue | None,
    along_k: bool,
) -> Gemm:
    """The matmul as a `Gemm` over its flattened batch dimensions."""
    batch_shape = shape[:-2]

    def operand(x: Tensor, e: Emitter, flat: Index) -> list[Index]:
        return broadcast_indices(
            e.unflatten(flat, batch_shape), batch_shape, x.shape[:-2]
        )

    return Gemm(
        math.prod(batch_shape),
        shape[-2],
        shape[-1],
        a.shape[-1],
        a.element_type,
        lambda e, t, i, k: a.load(e, [*operand(a, e, t), i, k]),
        lambda e, t, k, j: b.load(e, [*operand(b, e, t), k, j]),
        lambda e, idx, value: store_into(out, epilogue)(
            e, [*e.unflatten(idx[0], batch_shape), *idx[1:]], value
        ),
        b_along_k=along_k,
        a_in_place=_rows_in_place(op.operands[0]),
    )


DOT_GROUP = 4
"""Outputs a row of `_dot_products` computes together along `k`: each load
of `a` feeds as many products."""


def _dot_products(e: Emitter, g: Gemm, target: TargetAttr | None) -> None:
    """A matmul with sizes known at run time only whose `b` is contiguous
    along `k` (`Kᵀ` as a transposed view of `K`) on a CPU: a task per output
    row, its outputs dot products, `DOT_GROUP` at a time, each kept in a
    vector of partial sums (`lanes_over`, `halve`).  No tile is sized from
    a run-time extent, so every size is right.  (Contiguous along `n`,
    `gemm_in_place` runs register tiles.)"""
    body, flat = e.loop(g.batch * g.m, ForKind.PARALLEL)
    batch, m = body.div(flat, g.m), body.rem(flat, g.m)
    lanes = vector_isa(target).lanes(g.element_type)

    def dot_products(e: Emitter, n0: Index, count: int) -> None:
        """Outputs `n0` to `n0 + count`, each `a`'s row loaded once for all."""
        totals = lane_partials(e, lanes, g.element_type, *(0.0,) * count)

        def add_products(e: Emitter, k: Index, j: Index) -> None:
            x = g.a(e, batch, m, k)
            for c, total in enumerate(totals):
                product = e.op(arith.MulfOp(x, g.b(e, batch, k, e.add(n0, c))))
                accumulate(e, total, [j], product, arith.AddfOp)

        lanes_over(e, g.k, lanes, add_products)
        halve(e, totals, lanes)
        for c, total in enumerate(totals):
            g.store(e, [batch, m, e.add(n0, c)], e.load(total, [0]))

    groups = body.div(g.n, DOT_GROUP)
    each, group = body.loop(groups)  # type: ignore[arg-type]
    dot_products(each, each.mul(group, DOT_GROUP), DOT_GROUP)
    rest, n = body.range(body.mul(groups, DOT_GROUP), g.n)
    dot_products(rest, n, 1)


TEMPLATES: dict[type[Operation], NestTemplate] = {
    relay.DenseOp: _dense,
    relay.MatmulOp: _matmul,
}
"""Matrix product op → template writing its result into a buffer."""
