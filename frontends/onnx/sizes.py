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


Inputs = list["np.ndarray | None"]
"""A node's inputs by position, None for an optional one left empty."""

Fold = Callable[[Any, dict[str, Any], Inputs], np.ndarray]
"""A NumPy fold: the node, its attributes and its inputs → its value."""


def _optional(inputs: Inputs, index: int) -> np.ndarray | None:
    return inputs[index] if index < len(inputs) else None


def _axes(node: Any, attrs: dict[str, Any], inputs: Inputs) -> list[int]:
    """Squeeze/Unsqueeze axes: an attribute before opset 13, an input after."""
    if "axes" in attrs:
        return [int(a) for a in attrs["axes"]]
    axes = _optional(inputs, 1)
    return [] if axes is None else [int(a) for a in axes.reshape(-1)]


def _unsqueeze(node: Any, attrs: dict[str, Any], inputs: Inputs) -> np.ndarray:
    x, axes = inputs[0], _axes(node, attrs, inputs)
    rank = x.ndim + len(axes)
    for axis in sorted(a % rank for a in axes):
        x = np.expand_dims(x, axis)
    return x


def _squeeze(node: Any, attrs: dict[str, Any], inputs: Inputs) -> np.ndarray:
    axes = _axes(node, attrs, inputs)
    return np.squeeze(inputs[0], axis=tuple(axes) if axes else None)


def _slice(node: Any, attrs: dict[str, Any], inputs: Inputs) -> np.ndarray:
    """Slicing of the sizes, bounds clamped by ONNX's rule (`onnx_slice`)."""
    x = inputs[0]
    assert x is not None
    if "starts" in attrs:
        starts, ends = attrs["starts"], attrs["ends"]
        axes, steps = attrs.get("axes", range(len(starts))), [1] * len(starts)
    else:
        starts, ends = (_required(inputs, i).reshape(-1) for i in (1, 2))
        axes_input, steps_input = _optional(inputs, 3), _optional(inputs, 4)
        axes = range(len(starts)) if axes_input is None else axes_input.reshape(-1)
        steps = [1] * len(starts) if steps_input is None else steps_input.reshape(-1)
    index = [slice(None)] * x.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps):
        axis = int(axis) % x.ndim
        index[axis] = onnx_slice(x.shape[axis], int(start), int(end), int(step))
    return x[tuple(index)]


def onnx_slice(size: int, start: int, end: int, step: int) -> slice:
    """ONNX's `Slice` of an axis of `size` as a Python slice: negative
    bounds count from the end, then clamp to [0, size] (to [0, size - 1]
    and [-1, size - 1] for a negative step, where -1 is before the first
    element, which Python's slices cannot say but by None)."""
    if step == 0:
        raise DynamicShapeError("a slice step of 0")
    start, end = (b + size if b < 0 else b for b in (start, end))
    if step > 0:
        return slice(min(max(start, 0), size), min(max(end, 0), size), step)
    start, end = min(max(start, 0), size - 1), min(max(end, -1), size - 1)
    return slice(start, None if end < 0 else end, step)


def _required(inputs: Inputs, index: int) -> np.ndarray:
    value = _optional(inputs, index)
    if value is None:
        raise DynamicShapeError(f"input {index} is missing")
    return value


def _elementwise(
    op: Callable[[Size, Size], Size | bool],
) -> Fold:
    def fold(node: Any, attrs: dict[str, Any], inputs: Inputs) -> np.ndarray:
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


def _where(node: Any, attrs: dict[str, Any], inputs: Inputs) -> np.ndarray:
    condition = inputs[0]
    if condition.dtype != np.bool_:
        raise DynamicShapeError("a condition known at run time only")
    return np.where(condition, _sized(inputs[1]), _sized(inputs[2]))


def reduce_fold(
    reduce: Callable[..., np.ndarray],
) -> Callable[[Any, dict[str, Any], Inputs], np.ndarray]:
    """ReduceProd/Max/Min of shape arithmetic: axes an attribute or (opset
    18) an input; none reduce everything unless `noop_with_empty_axes`.  Of
    constants and of sizes alike (a product of sizes is one)."""

    def fold(node: Any, attrs: dict[str, Any], inputs: Inputs) -> np.ndarray:
        axes = attrs.get("axes")
        if axes is None and (given := _optional(inputs, 1)) is not None:
            axes = given.reshape(-1).tolist()
        if not axes and attrs.get("noop_with_empty_axes", 0):
            return inputs[0]
        axis = tuple(int(a) for a in axes) if axes else None
        return np.asarray(
            reduce(inputs[0], axis=axis, keepdims=bool(attrs.get("keepdims", 1)))
        )

    return fold


def _reshape_sizes(node: Any, attrs: dict[str, Any], inputs: Inputs) -> np.ndarray:
    """A reshape of sizes: `0` copies the dimension at its position (not with
    `allowzero`, left to the converter's error)."""
    x, target = inputs[0], _required(inputs, 1).astype(np.int64).tolist()
    assert x is not None
    if 0 in target and attrs.get("allowzero", 0):
        raise DynamicShapeError("allowzero")
    return x.reshape(
        [x.shape[i] if d == 0 and i < x.ndim else d for i, d in enumerate(target)]
    )


def gather(node: Any, attrs: dict[str, Any], inputs: Inputs) -> np.ndarray:
    """`Gather` by NumPy (a negative index counts from the end), of sizes
    and of constants alike."""
    return np.take(inputs[0], inputs[1].astype(np.int64), axis=attrs.get("axis", 0))


def _cast(node: Any, attrs: dict[str, Any], inputs: Inputs) -> np.ndarray:
    if not np.issubdtype(_cast_type(attrs), np.integer):
        raise DynamicShapeError("a size cast to a non-integer type")
    return inputs[0]


def _cast_type(attrs: dict[str, Any]) -> np.dtype[Any]:
    return np.dtype(helper.tensor_dtype_to_np_dtype(attrs["to"]))


def _integers(values: object) -> np.ndarray:
    """Sizes as `int64`, or as objects where a `Dim` is among them."""
    array = np.array(values, dtype=object)
    return array if has_dims(array) else array.astype(np.int64)


def _shape_slice(shape: Sequence[Size], attrs: dict[str, Any]) -> np.ndarray:
    """`Shape`'s value: `start`/`end` count as in Python slices."""
    return _integers(list(shape[attrs.get("start", 0) : attrs.get("end", len(shape))]))


SHAPE_FOLDS: dict[str, Callable[[Sequence[Size], dict[str, Any]], np.ndarray]] = {
    "Shape": _shape_slice,
    "Size": lambda shape, attrs: _integers(math.prod(shape)),
}
"""Ops whose value is a function of their input's shape (and attributes):
constants wherever that shape is static, sizes where it is not."""


SIZE_FOLDS: dict[str, Fold] = {
    "Identity": lambda node, attrs, inputs: inputs[0],
    "Cast": _cast,
    "Gather": gather,
    "Slice": _slice,
    "Concat": lambda node, attrs, inputs: np.concatenate(
        [_sized(x) for x in inputs], axis=attrs.get("axis", 0)
    ),
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Reshape": _reshape_sizes,
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
    graph: Graph, node: Any, attrs: dict[str, Any]
) -> list[np.ndarray | Sizes] | None:
    """The outputs of `Shape`/`Size` (`SHAPE_FOLDS`) of a value with
    dynamic dimensions, or of a `SIZE_FOLDS` node with a size among its
    inputs and constants for the rest: constants where no `Dim` is left,
    else sizes.  None where the node is none of these, a `Shape` of a value
    whose sizes are unknown (no product of the inputs', or one that depends
    on their values), or a fold that asks what the symbols do not decide
    (the node's converter then computes it at run time, from its sizes made
    tensors: `materialize`)."""
    names = list(node.input)
    try:
        if node.op_type in SHAPE_FOLDS and names and names[0] in graph.values:
            shape = graph.shapes().shape(graph.values[names[0]])
            values = SHAPE_FOLDS[node.op_type](shape, attrs)
            dtype = np.dtype(np.int64)
        elif node.op_type in SIZE_FOLDS and _sizes_and_constants(graph, names):
            inputs = [_known(graph, name) for name in names]
            values = SIZE_FOLDS[node.op_type](node, attrs, inputs)
            dtype = next(graph.sizes[i].dtype for i in names if i in graph.sizes)
            dtype = _RESULT_TYPES.get(node.op_type, lambda a, d: d)(attrs, dtype)
        else:
            return None
    except DynamicShapeError:
        return None  # the converter says so, or computes it at run time
    values = np.asarray(values, dtype=object)
    if has_dims(values):
        return [Sizes(values, dtype)]
    return [values.astype(dtype)]


def _sizes_and_constants(graph: Graph, names: Sequence[str]) -> bool:
    """Whether the inputs `names` are sizes (one at least) and constants."""
    return any(name in graph.sizes for name in names) and all(
        not name or name in graph.sizes or name in graph.constants for name in names
    )


def _known(graph: Graph, name: str) -> np.ndarray | None:
    """Input `name`'s sizes or constant value (None: an empty optional one)."""
    if not name:
        return None
    return graph.sizes[name].values if name in graph.sizes else graph.constants[name]


def reshape(n: Node, x: SSAValue, target: Sequence[Size]) -> SSAValue:
    """`x` reshaped to a target with sizes known at run time only: ONNX's
    `0` copies the input's dimension and its `-1` is worked out from the
    input's size (`[d, -1]` of a `[d * 128, 768]` input is `[d, 98304]`);
    then each size is written as relay can (`_relay_size`).  Where more
    than one `-1` is left (`[b·s]` to `[b, 1, 1, s]`), a
    `relay.reshape_like` of a tensor of the target's sizes (`broadcast_to`)."""
    shape = n.dims_of(x)
    if any(s == 0 and axis >= len(shape) for axis, s in enumerate(target)):
        raise n.error(f"reshape of {list(shape)} to {list(target)}: a 0 past its rank")
    known = [shape[a] if s == 0 else s for a, s in enumerate(target)]
    if -1 in known:
        rest = math.prod(s for s in known if not (isinstance(s, int) and s == -1))
        try:
            known[known.index(-1)] = math.prod(shape) // rest
        except DynamicShapeError as e:
            raise n.error(f"reshape of {list(shape)} to {list(target)}: {e}") from None
    newshape = [_relay_size(shape, axis, size) for axis, size in enumerate(known)]
    if newshape.count(-1) <= 1:
        return n.op(relay.ReshapeOp, x, newshape=tuple(newshape))
    true = n.graph.constant(np.array(True), "like")
    return n.op(relay.ReshapeLikeOp, x, broadcast_to(n, true, known))


def _relay_size(shape: Sequence[Size], axis: int, size: Size) -> int:
    """A target size in relay's `newshape`: a number as it is, the input's
    dimension at the same position `0` (copied), any other `-1` (inferred:
    the product of the target is the input's, so it comes out right when it
    is the only one)."""
    if isinstance(size, int):
        return size
    return 0 if axis < len(shape) and same_size(shape[axis], size) else -1


def broadcast_to(n: Node, x: SSAValue, target: Sequence[Size]) -> SSAValue:
    """`x` broadcast to `target`, NumPy's way: zeros of the target's static
    part added (booleans by `relay.where`), then each size known at run time
    that `x` lacks taken from a tensor of that size (`carrier`)."""
    shape = n.dims_of(x)
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
            if not (isinstance(have, int) and have == 1):
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
        arg_shape = n.dims_of(arg)
        if 0 in arg_shape:
            raise n.error(f"a size of an empty input ({arg.type}) is not supported")
        arg_rank = len(arg_shape)
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


def limit(n: Node, size: Dim, most: int) -> None:
    """Record that the program computes right for `size` up to `most` only:
    the graph input dimension it is gets that `max_sizes`."""
    if size.coefficient != 1 or len(size.symbols) != 1:
        raise n.error(f"a size {size} bounded by {most} is not supported")
    symbol = size.symbols[0]
    n.graph.max_sizes[symbol] = min(most, n.graph.max_sizes.get(symbol, most))
