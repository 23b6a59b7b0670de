"""Constant folding at import: the outputs of every node whose inputs are
all known at import become constants of the graph (`fold_node`), by the
node's converter run in the relay interpreter, a NumPy fold, or the `onnx`
package's reference evaluator."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Block, SSAValue

from hetero.dialects import relay
from hetero.frontends.onnx.node import (
    Converter,
    Graph,
    Node,
    Sizes,
    attribute_values,
    element_type,
    helper,
    numpy_helper,
    onnx,
)
from hetero.frontends.onnx.sizes import SHAPE_FOLDS, fold_sizes, gather, reduce_fold
from hetero.interpreter.relay import InterpreterError, evaluate_op
from hetero.utils.diagnostics import HeteroError


def _constant_node(
    node: Any, attrs: dict[str, Any], inputs: list[np.ndarray]
) -> np.ndarray:
    """`Constant`'s value in any of its attribute spellings."""
    for name in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if name in attrs:
            value = attrs[name]
            if name == "value":
                return numpy_helper.to_array(value)
            dtype = np.float32 if "float" in name else np.int64
            return np.array(value, dtype=dtype)
    raise HeteroError(
        f"ONNX node '{node.name}' (Constant): unsupported value attribute"
    )


def constant_of_shape_value(attrs: dict[str, Any]) -> np.ndarray:
    """`ConstantOfShape`'s element, rank 0 (a float32 0 by default)."""
    if "value" not in attrs:
        return np.zeros((), np.float32)
    return numpy_helper.to_array(attrs["value"]).reshape(-1)[0].copy()


def _constant_of_shape(
    node: Any, attrs: dict[str, Any], inputs: list[np.ndarray]
) -> np.ndarray:
    value = constant_of_shape_value(attrs)
    return np.full(tuple(int(d) for d in inputs[0]), value, dtype=value.dtype)


def _range_fold(
    node: Any, attrs: dict[str, Any], inputs: list[np.ndarray]
) -> np.ndarray:
    """`Range`: max(ceil((limit - start) / delta), 0) elements of `start`'s type."""
    start, limit, delta = (np.asarray(v).reshape(()) for v in inputs)
    count = max(math.ceil((limit - start) / delta), 0)
    return (start + np.arange(count) * delta).astype(start.dtype)


def _of_input_shape(
    fold: Callable[[Sequence[int], dict[str, Any]], np.ndarray],
) -> Callable[[Any, dict[str, Any], list[np.ndarray]], np.ndarray]:
    """A `SHAPE_FOLDS` entry as the fold of a constant input."""
    return lambda node, attrs, inputs: fold(inputs[0].shape, attrs)


def _mod_fold(node: Any, attrs: dict[str, Any], inputs: list[np.ndarray]) -> np.ndarray:
    """`Mod`: the divisor's sign (Python's `%`), or the dividend's with `fmod`."""
    return (np.fmod if attrs.get("fmod", 0) else np.mod)(inputs[0], inputs[1])


_NATIVE_FOLDS: dict[
    str, Callable[[Any, dict[str, Any], list[np.ndarray]], np.ndarray]
] = {
    "Constant": _constant_node,
    "ConstantOfShape": _constant_of_shape,
    **{name: _of_input_shape(fold) for name, fold in SHAPE_FOLDS.items()},
    "Range": _range_fold,
    "ReduceProd": reduce_fold(np.prod),
    "ReduceMax": reduce_fold(np.max),
    "ReduceMin": reduce_fold(np.min),
    "Mod": _mod_fold,
    "Gather": gather,
}
"""NumPy folds of the ops without a converter that shape arithmetic uses,
of the bulk of real models' constants (`Constant`, `ConstantOfShape`), and
of `Gather` of constants (its converter makes a slice per index: Swin-v2's
table of 2401 relative positions took seconds to fold through it)."""

_NOT_FOLDED = frozenset(
    {
        "RandomNormal",
        "RandomUniform",
        "RandomNormalLike",
        "RandomUniformLike",
        "Multinomial",
        "Bernoulli",
    }
)


@dataclass
class _FoldingGraph(Graph):
    """A scratch graph that a node of constants is converted in: its
    `relay.constant`s hold a placeholder and keep their arrays aside, which
    `_fold_by_converter` gives the relay interpreter."""

    arrays: dict[SSAValue, np.ndarray] = field(default_factory=dict)

    def constant(self, array: np.ndarray, hint: str) -> SSAValue:
        array = np.asarray(array)
        type_ = TensorType(element_type(array.dtype, hint), array.shape)
        dtype = np.int8 if array.dtype == np.bool_ else array.dtype  # i1 as a byte
        splat = np.zeros(min(array.size, 1), dtype)
        placeholder = DenseIntOrFPElementsAttr(type_, BytesAttr(splat.tobytes()))
        value = self.emit(relay.ConstantOp(placeholder))  # type: ignore[arg-type]
        self.arrays[value] = array
        return value


def _fold_by_converter(
    graph: Graph, node: Any, attrs: dict[str, Any], converter: Converter
) -> list[np.ndarray]:
    """The outputs of a node of constants: its converter's relay ops, run by
    the relay interpreter -- the meaning the node has at run time."""
    scratch = _FoldingGraph(
        graph.opset, Block(), graph.resource_threshold, constants=graph.constants
    )
    results = converter(Node(node, scratch, attrs))
    results = [results] if isinstance(results, SSAValue) else list(results)
    values = scratch.arrays
    for op in scratch.block.ops:
        if op.results[0] not in values:
            operands = [values[v] for v in op.operands]
            try:
                values[op.results[0]] = evaluate_op(op, operands)
            except InterpreterError as e:
                raise HeteroError(
                    f"ONNX node '{node.name or node.output[0]}' ({node.op_type}): "
                    f"cannot fold constant inputs: {e}"
                ) from e
    return [values[r] for r in results]


def _reference_fold(
    node: Any, opset: int, inputs: list[np.ndarray]
) -> list[np.ndarray]:
    """The outputs of a node of constants that has neither a converter nor
    a NumPy fold, by the `onnx` package's reference implementation (one
    small model per node)."""
    from onnx.reference import ReferenceEvaluator

    names = [i for i in node.input if i]
    graph = helper.make_graph(
        [node],
        "fold",
        [
            helper.make_tensor_value_info(i, onnx.TensorProto.UNDEFINED, None)
            for i in names
        ],
        [
            helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None)
            for o in node.output
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return [
        np.asarray(v)
        for v in ReferenceEvaluator(model).run(None, dict(zip(names, inputs)))
    ]


def _static_shape(graph: Graph, node: Any) -> np.ndarray | None:
    """`Shape` or `Size` of a value whose type is static: a constant (sizes
    have static shapes too)."""
    if node.op_type not in SHAPE_FOLDS:
        return None
    if (sizes := graph.sizes.get(node.input[0])) is not None:
        return SHAPE_FOLDS[node.op_type](sizes.values.shape, attribute_values(node))
    if node.input[0] not in graph.values:
        return None
    type_ = graph.values[node.input[0]].type
    assert isinstance(type_, TensorType)
    shape = list(type_.get_shape())
    if any(d < 0 for d in shape):
        return None
    return SHAPE_FOLDS[node.op_type](shape, attribute_values(node))


def fold_node(
    graph: Graph, node: Any, attrs: dict[str, Any], converter: Converter | None
) -> bool:
    """Whether `node`'s outputs are known at import: then they are constants
    of `graph`, or sizes of dynamic dimensions (`sizes`), and the node is
    not converted."""
    outputs = _folded(graph, node, attrs, converter)
    if outputs is None:
        outputs = fold_sizes(graph, node, attrs)
    for name, output in zip(node.output, outputs or ()):
        if isinstance(output, Sizes):
            graph.sizes[name] = output
        else:
            graph.constants[name] = output
    return outputs is not None


def _folded(
    graph: Graph, node: Any, attrs: dict[str, Any], converter: Converter | None
) -> list[np.ndarray] | None:
    """The outputs of `Shape` or `Size` of a static type, or of a node of
    constants (by a NumPy fold, the node's converter, or the reference
    evaluator, in that order of preference); None for any other node."""
    if (static := _static_shape(graph, node)) is not None:
        return [static]
    inputs = [i for i in node.input if i]
    if not all(i in graph.constants for i in inputs):
        return None
    arrays = [graph.constants[i] for i in inputs]
    if node.op_type in _NATIVE_FOLDS:
        return [_NATIVE_FOLDS[node.op_type](node, attrs, arrays)]
    if not inputs or node.domain not in ("", "ai.onnx"):
        return None
    if converter is not None:
        return _fold_by_converter(graph, node, attrs, converter)
    if node.op_type in _NOT_FOLDED:
        return None
    try:
        return _reference_fold(node, graph.opset, arrays)
    except Exception as e:  # the reference evaluator's own complaint
        raise HeteroError(
            f"ONNX node '{node.name}' ({node.op_type}): cannot fold constant inputs: {e}"
        ) from e
