"""Converters of the reductions over axes (ReduceSum, ReduceMean,
ReduceMax, ReduceMin, ReduceProd, the norms ReduceL1, ReduceL2,
ReduceSumSquare, ReduceLogSum and ReduceLogSumExp), of the positions of a
maximum or minimum along one (ArgMax, ArgMin) and of the running sum along
one (CumSum)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import SSAValue

from hetero.dialects import relay
from hetero.frontends.onnx.node import Converter, Node
from hetero.frontends.onnx.transform import slice_bounds

Elementwise = Callable[[Node, SSAValue], SSAValue]


def _square(n: Node, x: SSAValue) -> SSAValue:
    return n.op(relay.MultiplyOp, x, x)


def _unary(cls: type[relay.TensorOp]) -> Elementwise:
    return lambda n, x: n.op(cls, x)


def _reduced_axes(n: Node) -> tuple[int, ...] | None | bool:
    """The node's axes: an attribute, or an input (ReduceSum from opset 13,
    the others from 18); none reduce everything (None) unless
    `noop_with_empty_axes`, which reduces nothing (False)."""
    axes = n.ints("axes", 1)
    if not axes and n.attrs.get("noop_with_empty_axes", 0):
        return False
    return tuple(axes) if axes else None


def _reduce(
    cls: type[relay.ReduceOp],
    before: Elementwise | None = None,
    after: Elementwise | None = None,
) -> Converter:
    """A reduction as relay's between elementwise steps (the norms: ReduceL2
    is `sqrt(sum(x * x))`) over `_reduced_axes`; reducing nothing still
    applies the steps (as onnxruntime does: ReduceL2 of no axes is `|x|`)."""

    def convert(n: Node) -> SSAValue:
        x = n.input(0) if before is None else before(n, n.input(0))
        axis = _reduced_axes(n)
        if axis is not False:
            keepdims = bool(n.attrs.get("keepdims", 1))
            x = n.op(cls, x, axis=axis, keepdims=keepdims)
        return x if after is None else after(n, x)

    return convert


def _log_sum_exp(n: Node) -> SSAValue:
    """log(sum(exp(x - max))) + max over `_reduced_axes`: finite where
    `exp(x)` overflows; a row whose maximum is ±inf is not shifted
    (`inf - inf` would be NaN where the answer is ±inf)."""
    x = n.input(0)
    axis = _reduced_axes(n)
    if axis is False:
        return x
    peak = n.op(relay.MaxOp, x, axis=axis, keepdims=True)
    finite = n.op(relay.LessOp, n.op(relay.AbsOp, peak), n.scalar(np.inf, x))
    peak = n.op(relay.WhereOp, finite, peak, n.scalar(0.0, x))
    shifted = n.op(relay.ExpOp, n.op(relay.SubtractOp, x, peak))
    total = n.op(relay.SumOp, shifted, axis=axis, keepdims=True)
    result = n.op(relay.AddOp, n.op(relay.LogOp, total), peak)
    if n.attrs.get("keepdims", 1):
        return result
    rank = len(n.shape(0))
    return n.op(relay.SqueezeOp, result, axis=axis or tuple(range(rank)))


def _arg(cls: type[relay.ArgReduceOp]) -> Converter:
    """ArgMax, ArgMin: `axis` (default 0), `keepdims` (default 1),
    `select_last_index` (opset 12)."""

    def convert(n: Node) -> SSAValue:
        return n.op(
            cls,
            n.input(0),
            axis=n.attrs.get("axis", 0),
            keepdims=bool(n.attrs.get("keepdims", 1)),
            select_last_index=bool(n.attrs.get("select_last_index", 0)),
        )

    return convert


def _shifted(n: Node, x: SSAValue, axis: int, by: int, reverse: bool) -> SSAValue:
    """`x` moved `by` places along `axis` (towards lower indices with
    `reverse`), zeros where nothing moves in."""
    shape = n.shape(0)
    size, rank = shape[axis], len(shape)
    start, stop = (by, size) if reverse else (0, size - by)
    part = slice_bounds(n, x, shape, [start], [stop], [axis], [1])
    widths = [0] * 2 * rank
    widths[2 * axis + (1 if reverse else 0)] = by
    return n.op(relay.PadOp, part, pad_width=tuple(widths), pad_value=0.0)


def _cumsum(n: Node) -> SSAValue:
    """Running sums along the constant `axis` in log2(size) steps of
    `x + (x shifted by 2^i)` (Hillis and Steele's scan: exact for integers,
    linear kernels, no triangular matrix); `exclusive` shifts by one more,
    `reverse` sums from the end."""
    shape = n.shape(0)
    axis = int(n.const(1).reshape(-1)[0]) % len(shape)
    size = shape[axis]
    if size < 0:
        raise n.error("CumSum needs a static size along its axis")
    reverse = bool(n.attrs.get("reverse", 0))
    result, step = n.input(0), 1
    while step < size:
        result = n.op(relay.AddOp, result, _shifted(n, result, axis, step, reverse))
        step *= 2
    if n.attrs.get("exclusive", 0) and size:
        result = _shifted(n, result, axis, 1, reverse)
    return result


CONVERTERS: dict[str, Converter] = {
    "ReduceSum": _reduce(relay.SumOp),
    "ReduceMean": _reduce(relay.MeanOp),
    "ReduceMax": _reduce(relay.MaxOp),
    "ReduceMin": _reduce(relay.MinOp),
    "ReduceProd": _reduce(relay.ProdOp),
    "ReduceLogSumExp": _log_sum_exp,
    "ArgMax": _arg(relay.ArgMaxOp),
    "ArgMin": _arg(relay.ArgMinOp),
    "ReduceSumSquare": _reduce(relay.SumOp, _square),
    "ReduceL1": _reduce(relay.SumOp, _unary(relay.AbsOp)),
    "ReduceL2": _reduce(relay.SumOp, _square, _unary(relay.SqrtOp)),
    "ReduceLogSum": _reduce(relay.SumOp, None, _unary(relay.LogOp)),
    "CumSum": _cumsum,
}
"""ONNX op type → converter: the reductions' rows of `importer.CONVERTERS`."""
