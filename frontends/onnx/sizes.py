"""Shape arithmetic on dynamic dimensions, at import.

A model whose batch is dynamic computes shapes from its values' shapes
(`x.view(x.size(0), -1)` is `Shape`, `Gather`, `Unsqueeze`, `Concat`,
`Reshape`).  The importer folds that arithmetic as it folds constants, over
*sizes*: integer arrays whose elements are numbers or `Dim`s, products of
the graph inputs' dynamic dimensions (`hetero.analysis.shape_functions`:
exact arithmetic that refuses what it cannot decide for every size).

* `Shape` of a value with `?` dimensions is a size (`BlockShapes` knows
  every value's dimensions over the inputs' symbols); `SIZE_FOLDS` carry
  sizes through the ops of shape arithmetic.
* A result without a `Dim` is an ordinary constant: `Shape(x)[1]` of a
  `[?, 768, 14, 14]` value is 768, and the graph goes on as if the model
  were static there.
* A result with a `Dim` stays a size (`Graph.sizes`), which the converters
  that take shapes read (`Node.sizes`): a reshape writes a size it cannot
  name as `0` (the input's own dimension) or `-1` (`reshape`); a
  broadcast to a size that no operand has is a `relay.where` against a
  tensor of that size made from the graph input it comes from
  (`broadcast_to`).
* A fold the symbols do not decide (`d0.0 + 1`, `d0.0 == 4`) is left to
  the node's converter, which computes it at run time: a size used as data
  becomes a tensor (`materialize`).  A shape that only such a computation
  gives (a reshape to `[d0.0 + 1]`) is a located error, as any shape known
  at run time only.  Nothing is guessed, so nothing is wrong for another
  size.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from hetero.analysis.shape_functions import (
    SIZE_LIMIT,
    Dim,
    DynamicShapeError,
    same_size,
)
from hetero.dialects import relay
from hetero.frontends.onnx.node import Graph, Node, Sizes, element_type, helper

Size = int | Dim


def has_dims(values: np.ndarray) -> bool:
    return any(isinstance(v, Dim) for v in values.reshape(-1))


def _sized(array: np.ndarray) -> np.ndarray:
    return np.asarray(array).astype(object)


def _axes(node: Any, attrs: dict[str, Any], inputs: list[np.ndarray]) -> list[int]:
    """Squeeze/Unsqueeze axes: an attribute before opset 13, an input after."""
    if "axes" in attrs:
        return [int(a) for a in attrs["axes"]]
    return [int(a) for a in inputs[1].reshape(-1)] if len(inputs) > 1 else []


def _unsqueeze(
    node: Any, attrs: dict[str, Any], inputs: list[np.ndarray]
) -> np.ndarray:
    x, axes = inputs[0], _axes(node, attrs, inputs)
    rank = x.ndim + len(axes)
    for axis in sorted(a % rank for a in axes):
        x = np.expand_dims(x, axis)
    return x


def _squeeze(node: Any, attrs: dict[str, Any], inputs: list[np.ndarray]) -> np.ndarray:
    axes = _axes(node, attrs, inputs)
    return np.squeeze(inputs[0], axis=tuple(axes) if axes else None)


def _slice(node: Any, attrs: dict[str, Any], inputs: list[np.ndarray]) -> np.ndarray:
    """Python slicing of the sizes: ONNX clamps bounds as Python does."""
    x = inputs[0]
    if "starts" in attrs:
        starts, ends = attrs["starts"], attrs["ends"]
        axes, steps = attrs.get("axes", range(len(starts))), [1] * len(starts)
    else:
        starts, ends = inputs[1].reshape(-1), inputs[2].reshape(-1)
        axes = inputs[3].reshape(-1) if len(inputs) > 3 else range(len(starts))
        steps = inputs[4].reshape(-1) if len(inputs) > 4 else [1] * len(starts)
    index = [slice(None)] * x.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps):
        index[int(axis) % x.ndim] = slice(int(start), int(end), int(step))
    return x[tuple(index)]


def _elementwise(
    op: Callable[[Size, Size], Size | bool],
) -> Callable[[Any, dict[str, Any], list[np.ndarray]], np.ndarray]:
    def fold(node: Any, attrs: dict[str, Any], inputs: list[np.ndarray]) -> np.ndarray:
        a, b = np.broadcast_arrays(_sized(inputs[0]), _sized(inputs[1]))
        return np.array(
            [op(x, y) for x, y in zip(a.reshape(-1), b.reshape(-1))], dtype=object
        ).reshape(a.shape)

    return fold


def _divide(a: Size, b: Size) -> Size:
    """ONNX's integer division truncates; sizes divide exactly or refuse."""
    if isinstance(a, int) and isinstance(b, int):
        return abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return a // b


def _where(node: Any, attrs: dict[str, Any], inputs: list[np.ndarray]) -> np.ndarray:
    condition = inputs[0]
    if condition.dtype != np.bool_:
        raise DynamicShapeError("a condition known at run time only")
    return np.where(condition, _sized(inputs[1]), _sized(inputs[2]))


def reduce_fold(
    reduce: Callable[..., np.ndarray],
) -> Callable[[Any, dict[str, Any], list[np.ndarray]], np.ndarray]:
    """ReduceProd/Max/Min of shape arithmetic: axes an attribute or (opset
    18) an input; none reduce everything unless `noop_with_empty_axes`.  Of
    constants and of sizes alike (a product of sizes is one)."""

    def fold(node: Any, attrs: dict[str, Any], inputs: list[np.ndarray]) -> np.ndarray:
        axes = attrs.get("axes")
        if axes is None and len(inputs) > 1:
            axes = inputs[1].reshape(-1).tolist()
        if not axes and attrs.get("noop_with_empty_axes", 0):
            return inputs[0]
        axis = tuple(int(a) for a in axes) if axes else None
        return np.asarray(
            reduce(inputs[0], axis=axis, keepdims=bool(attrs.get("keepdims", 1)))
        )

    return fold


def gather(node: Any, attrs: dict[str, Any], inputs: list[np.ndarray]) -> np.ndarray:
    """`Gather` by NumPy (a negative index counts from the end), of sizes
    and of constants alike."""
    return np.take(inputs[0], inputs[1].astype(np.int64), axis=attrs.get("axis", 0))


def _cast(node: Any, attrs: dict[str, Any], inputs: list[np.ndarray]) -> np.ndarray:
    if not np.issubdtype(_cast_type(attrs), np.integer):
        raise DynamicShapeError("a size cast to a non-integer type")
    return inputs[0]


def _cast_type(attrs: dict[str, Any]) -> np.dtype[Any]:
    return np.dtype(helper.tensor_dtype_to_np_dtype(attrs["to"]))


SIZE_FOLDS: dict[str, Callable[[Any, dict[str, Any], list[np.ndarray]], np.ndarray]] = {
    "Identity": lambda node, attrs, inputs: inputs[0],
    "Cast": _cast,
    "Gather": gather,
    "Slice": _slice,
    "Concat": lambda node, attrs, inputs: np.concatenate(
        [_sized(x) for x in inputs], axis=attrs.get("axis", 0)
    ),
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Reshape": lambda node, attrs, inputs: inputs[0].reshape(
        [d or s for d, s in zip(inputs[1].astype(np.int64), inputs[0].shape)]
        if 0 in inputs[1]
        else inputs[1].astype(np.int64)
    ),
    "Mul": _elementwise(lambda a, b: a * b),
    "Div": _elementwise(_divide),
    "Add": _elementwise(lambda a, b: a + b),  # with a `Dim`: only `+ 0`
    "Sub": _elementwise(lambda a, b: a - b),
    "Equal": _elementwise(lambda a, b: a == b),
    "Where": _where,
    "ReduceProd": reduce_fold(np.prod),
}
"""The ops of shape arithmetic, folded over sizes (object arrays of ints and
`Dim`s).  A `DynamicShapeError` (a question the symbols do not decide)
leaves the node to its converter."""

_RESULT_TYPES: dict[str, Callable[[dict[str, Any], np.dtype[Any]], np.dtype[Any]]] = {
    "Cast": lambda attrs, dtype: _cast_type(attrs),
    "Equal": lambda attrs, dtype: np.dtype(np.bool_),
}
"""The element type of a fold's result where it is not its sizes' type."""


def fold_sizes(
    graph: Graph,
    node: Any,
    attrs: dict[str, Any],
    shape_folds: dict[str, Callable[[Sequence[int], dict[str, Any]], np.ndarray]],
) -> list[np.ndarray | Sizes] | None:
    """The outputs of `Shape`/`Size` (`shape_folds`) of a value with dynamic
    dimensions, or of a `SIZE_FOLDS` node with a size among its inputs and
    constants for the rest: constants where no `Dim` is left, else sizes.
    None where the node is none of these, a `Shape` of a value whose sizes
    are unknown (no product of the inputs'), or a fold that asks what the
    symbols do not decide (the node's converter then computes it at run
    time, from its sizes made tensors: `materialize`)."""
    inputs = [i for i in node.input if i]
    if node.op_type in shape_folds and inputs and inputs[0] in graph.values:
        try:
            shape = graph.shapes().shape(graph.values[inputs[0]])
        except DynamicShapeError:
            return None  # `Shape`'s converter says so
        values, dtype = shape_folds[node.op_type](shape, attrs), np.dtype(np.int64)
    elif node.op_type in SIZE_FOLDS and any(i in graph.sizes for i in inputs):
        if not all(i in graph.sizes or i in graph.constants for i in inputs):
            return None
        arrays = [
            graph.sizes[i].values if i in graph.sizes else graph.constants[i]
            for i in inputs
        ]
        try:
            values = SIZE_FOLDS[node.op_type](node, attrs, arrays)
        except DynamicShapeError:
            return None  # computed at run time, by the converter
        dtype = next(graph.sizes[i].dtype for i in inputs if i in graph.sizes)
        dtype = _RESULT_TYPES.get(node.op_type, lambda a, d: d)(attrs, dtype)
    else:
        return None
    values = np.asarray(values, dtype=object)
    if has_dims(values):
        return [Sizes(values, dtype)]
    return [values.astype(dtype)]


def reshape(n: Node, x: SSAValue, target: Sequence[Size]) -> SSAValue:
    """`x` reshaped to a target with sizes known at run time only: ONNX's
    `-1` worked out from the input's size first (`[d, -1]` of a `[d * 128,
    768]` input is `[d, 98304]`); then a size that is the input's dimension
    at the same position is `0` (copied), and one other may be relay's `-1`
    (inferred: the product of the target is the input's, so it comes out as
    that size).  Where more are left (`[b·s]` to `[b, 1, 1, s]`), a
    `relay.reshape_like` of a tensor of the target's sizes (`broadcast_to`)."""
    shape = n.graph.shapes().shape(x)
    known = [
        shape[axis] if isinstance(size, int) and size == 0 else size
        for axis, size in enumerate(target)
    ]
    if -1 in known:
        rest = math.prod(s for s in known if not (isinstance(s, int) and s == -1))
        try:
            known[known.index(-1)] = math.prod(shape) // rest
        except DynamicShapeError as e:
            raise n.error(f"reshape of {list(shape)} to {list(target)}: {e}") from None
    newshape = [
        size
        if isinstance(size, int)
        else 0
        if axis < len(shape) and same_size(shape[axis], size)
        else -1
        for axis, size in enumerate(known)
    ]
    if newshape.count(-1) <= 1:
        return n.op(relay.ReshapeOp, x, newshape=tuple(newshape))
    true = n.graph.constant(np.array(True), "like")
    return n.op(relay.ReshapeLikeOp, x, broadcast_to(n, true, known))


def broadcast_to(n: Node, x: SSAValue, target: Sequence[Size]) -> SSAValue:
    """`x` broadcast to `target`, NumPy's way: zeros of the target's static
    part added (booleans by `relay.where`), then each size known at run time
    that `x` lacks taken from a tensor of that size (`carrier`)."""
    shape = n.graph.shapes().shape(x)
    rank = max(len(shape), len(target))
    shape = (1,) * (rank - len(shape)) + tuple(shape)
    target = (1,) * (rank - len(target)) + tuple(target)
    static = tuple(t if isinstance(t, int) else 1 for t in target)
    type_ = x.type
    assert isinstance(type_, TensorType)
    if any(s != 1 for s in static):
        zeros = n.graph.constant(np.zeros(static, np.int8), "zeros")
        x = n.op(relay.WhereOp, n.op(relay.EqualOp, zeros, zeros), x, x)
    for axis, (have, want) in enumerate(zip(shape, target)):
        if isinstance(want, Dim) and not (
            isinstance(have, Dim) and same_size(have, want)
        ):
            if have != 1:
                raise n.error(f"{list(shape)} does not broadcast to {list(target)}")
            x = n.op(relay.WhereOp, carrier(n, want, rank, axis), x, x)
    return x


def carrier(n: Node, size: Dim, rank: int, axis: int) -> SSAValue:
    """A boolean tensor of `size` at `axis` and 1 elsewhere, made from the
    graph inputs whose dynamic dimensions `size` multiplies (a slice of each
    along that dimension, outer products by `relay.where`)."""
    columns: list[SSAValue] = []
    for parameter, dim in size.symbols:
        arg = n.graph.block.args[parameter]
        arg_rank = len(n.graph.shapes().shape(arg))
        end = [1] * arg_rank
        end[dim] = SIZE_LIMIT
        column = n.op(
            relay.StridedSliceOp,
            arg,
            begin=(0,) * arg_rank,
            end=tuple(end),
            strides=(1,) * arg_rank,
        )
        column = n.op(relay.ReshapeOp, column, newshape=(-1,))
        columns.append(n.op(relay.EqualOp, column, column))
    if size.coefficient != 1:
        zeros = n.graph.constant(np.zeros(size.coefficient, np.int8), "zeros")
        columns.append(n.op(relay.EqualOp, zeros, zeros))
    carrier = columns[0]
    for column in columns[1:]:
        outer = n.op(relay.ReshapeOp, carrier, newshape=(-1, 1))
        carrier = n.op(
            relay.ReshapeOp,
            n.op(relay.WhereOp, outer, column, column),
            newshape=(-1,),
        )
    newshape = [1] * rank
    newshape[axis] = -1
    return n.op(relay.ReshapeOp, carrier, newshape=tuple(newshape))


def materialize(n: Node, name: str) -> SSAValue:
    """The size `name` used as data (`b * 128` multiplying a tensor, `b +
    1`): a run-time tensor of its values.  A dimension `d` is the last
    element of `arange_like(carrier(d), start=1)`; a `Dim`, the product of
    its symbols' and its coefficient."""
    sizes = n.graph.sizes[name]
    elements = [
        n.graph.constant(np.array([v], sizes.dtype), "size")
        if isinstance(v, int)
        else run_time_size(n, v, sizes.dtype)
        for v in sizes.values.reshape(-1)
    ]
    flat = (
        elements[0]
        if len(elements) == 1
        else n.op(relay.ConcatenateOp, *elements, axis=0)
    )
    return n.op(relay.ReshapeOp, flat, newshape=sizes.values.shape)


def run_time_size(n: Node, size: Dim, dtype: np.dtype[Any]) -> SSAValue:
    """`size` as a one-element tensor of `dtype`."""
    last = n.graph.constant(np.array([-1], np.int64), "last")
    value = n.graph.constant(np.array([size.coefficient], dtype), "coefficient")
    for symbol in size.symbols:
        counts = n.op(
            relay.ArangeLikeOp,
            carrier(n, Dim(1, (symbol,)), 1, 0),
            start=1,
            dtype=element_type(dtype, "a size"),
        )
        last_count = n.op(relay.TakeOp, counts, last, axis=0)
        value = n.op(relay.MultiplyOp, value, last_count)
    return value
