"""The importer's state while an ONNX graph is converted, and one node as
its converter sees it.

`Graph` holds the relay values and the import-time constants by ONNX name
and emits into the relay block; `Node` gives a converter its node's inputs
(as relay values, or as constants where it needs them at import), its
attributes with ONNX's defaults, the opset, and errors that name the node.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from hetero.analysis.shape_functions import BlockShapes, Dim, DynamicShapeError
from hetero.dialects import relay
from hetero.interpreter.relay import element_dtype
from hetero.utils.dense_resources import dense_resource
from hetero.utils.diagnostics import HeteroError

try:  # the optional extra: hetero[onnx]; `from_onnx` says when it is missing
    import onnx
    from onnx import helper, numpy_helper
except ImportError:  # pragma: no cover - exercised only without the extra
    onnx = helper = numpy_helper = None  # type: ignore[assignment]

ELEMENT_TYPES: dict[np.dtype[Any], Attribute] = {
    np.dtype(np.float16): Float16Type(),
    np.dtype(np.float32): Float32Type(),
    np.dtype(np.float64): Float64Type(),
    np.dtype(np.int8): IntegerType(8),
    np.dtype(np.int16): IntegerType(16),
    np.dtype(np.int32): IntegerType(32),
    np.dtype(np.int64): IntegerType(64),
    np.dtype(np.uint8): IntegerType(8, Signedness.UNSIGNED),
    np.dtype(np.bool_): i1,
}


def element_type(dtype: np.dtype[Any], where: str) -> Attribute:
    """The relay element type of a NumPy dtype."""
    if dtype not in ELEMENT_TYPES:
        raise HeteroError(f"{where}: element type {dtype} is not supported")
    return ELEMENT_TYPES[dtype]


Converter = Callable[["Node"], "SSAValue | Sequence[SSAValue]"]
"""A converter: the relay value of its node's output, or of each output."""


class Sizes(NamedTuple):
    """An integer tensor known at import up to the dynamic dimensions it
    holds (`hetero.frontends.onnx.sizes`)."""

    values: np.ndarray
    """dtype object: ints and `Dim`s, at least one `Dim`."""
    dtype: np.dtype[Any]


@dataclass
class Graph:
    """Values by ONNX name while the graph is converted, and the relay block."""

    opset: int
    block: Block
    resource_threshold: int
    values: dict[str, SSAValue] = field(default_factory=dict)
    constants: dict[str, np.ndarray] = field(default_factory=dict)
    declared: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Static shapes the model declares for its values (`value_info`, graph
    outputs): what a shape computed at run time must come to."""
    sizes: dict[str, Sizes] = field(default_factory=dict)
    """Values of shape arithmetic on dynamic dimensions (`sizes`)."""
    same_sizes: Sequence[Sequence[tuple[int, int]]] = ()
    """Groups of the graph inputs' dynamic dimensions (input, axis) that the
    model names alike: one size."""
    max_sizes: dict[tuple[int, int], int] = field(default_factory=dict)
    """The largest size of graph inputs' dynamic dimensions (input, axis)
    that the program computes right (`relay.FuncOp.set_max_sizes`)."""
    materialize: Callable[[Node, str], SSAValue] | None = None
    """How a size used as data becomes a run-time tensor
    (`sizes.materialize`, given by the importer)."""
    _shapes: BlockShapes | None = None

    def shapes(self) -> BlockShapes:
        """The dimensions of the relay values so far, over the graph
        inputs' dynamic ones."""
        if self._shapes is None:
            self._shapes = BlockShapes(self.block, self.same_sizes)
        return self._shapes

    def emit(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def constant(self, array: np.ndarray, hint: str) -> SSAValue:
        """A `relay.constant`: inline when small or a splat, else a resource."""
        array = np.asarray(array)
        type_ = TensorType(element_type(array.dtype, hint), array.shape)
        flat = array.reshape(-1)
        if flat.size and (flat == flat[0]).all() and array.dtype != np.bool_:
            flat = flat[:1]
        if flat.size <= self.resource_threshold or array.dtype == np.bool_:
            data = flat.astype(flat.dtype.newbyteorder("<")).tobytes()
            if array.dtype == np.bool_:
                data = (flat.astype(np.int8) * -1).tobytes()  # i1 as 0 / -1
            value: Attribute = DenseIntOrFPElementsAttr(type_, BytesAttr(data))
        else:
            value = dense_resource(array, type_, hint)
        return self.emit(relay.ConstantOp(value))  # type: ignore[arg-type]

    def value(self, name: str) -> SSAValue:
        """The relay value of an ONNX tensor (constants are materialised once)."""
        if name not in self.values:
            self.values[name] = self.constant(self.constants[name], name)
        return self.values[name]


@dataclass
class Node:
    """One ONNX node as its converter sees it."""

    proto: Any  # onnx.NodeProto
    graph: Graph
    attrs: dict[str, Any]

    @property
    def opset(self) -> int:
        return self.graph.opset

    @property
    def op_type(self) -> str:
        return self.proto.op_type

    def error(self, message: str) -> HeteroError:
        return HeteroError(f"{node_label(self.proto)}: {message}")

    def has_input(self, index: int) -> bool:
        return index < len(self.proto.input) and self.proto.input[index] != ""

    def input(self, index: int) -> SSAValue:
        """Input `index` as a relay value."""
        if not self.has_input(index):
            raise self.error(f"input {index} is missing")
        name = self.proto.input[index]
        if name in self.graph.sizes:
            self.materialize(name)
        if name not in self.graph.values and name not in self.graph.constants:
            raise self.error(
                f"input {index} '{name}' is no graph input, initializer or earlier node's output"
            )
        return self.graph.value(name)

    def materialize(self, name: str) -> None:
        """Make the size `name` a run-time value of the graph, once: a size
        used as data, or a graph output."""
        if name not in self.graph.values:
            assert self.graph.materialize is not None  # the importer's graph has it
            self.graph.values[name] = self.graph.materialize(self, name)

    def inputs(self) -> list[SSAValue]:
        return [
            self.input(i) for i in range(len(self.proto.input)) if self.has_input(i)
        ]

    def is_constant(self, index: int) -> bool:
        return self.has_input(index) and self.proto.input[index] in self.graph.constants

    def const(self, index: int) -> np.ndarray:
        """Input `index`, which must be known at import time."""
        if self.is_size(index):
            values = self.graph.sizes[self.proto.input[index]].values.tolist()
            raise self.error(
                f"input {index} ('{self.proto.input[index]}') is {values}: "
                "sizes known at run time only, where this operator needs numbers"
            )
        if not self.is_constant(index):
            raise self.error(
                f"input {index} ('{self.proto.input[index] if self.has_input(index) else ''}') "
                "must be a constant (an initializer or computable at import)"
            )
        return self.graph.constants[self.proto.input[index]]

    def is_size(self, index: int) -> bool:
        return self.has_input(index) and self.proto.input[index] in self.graph.sizes

    def sizes(self, index: int) -> list[int | Dim]:
        """Input `index` as a flat list of sizes: a constant's numbers, or a
        size's numbers and `Dim`s (in the symbols unified since it was made)."""
        if self.is_size(index):
            values = self.graph.sizes[self.proto.input[index]].values
            return [self.graph.shapes().canonical(v) for v in values.reshape(-1)]
        return [int(v) for v in self.const(index).reshape(-1)]

    def dims_of(self, value: SSAValue) -> tuple[int | Dim, ...]:
        """`value`'s sizes over the graph inputs' dynamic dimensions
        (`Graph.shapes`); a located error where they are not known."""
        try:
            return self.graph.shapes().shape(value)
        except DynamicShapeError as e:
            raise self.error(
                f"the sizes of {value.type} are no product of the inputs' "
                f"dynamic dimensions ({e})"
            ) from None

    def ints(
        self, name: str | None, index: int, default: Sequence[int] | None = None
    ) -> list[int] | None:
        """An integer list given as attribute `name` (older opsets) or as
        constant input `index` (newer ones: Squeeze/Unsqueeze axes from 13,
        Pad pads from 11, Reshape shape from 5, ...)."""
        if name is not None and name in self.attrs:
            return [int(v) for v in self.attrs[name]]
        if self.has_input(index):
            return [int(v) for v in self.const(index).reshape(-1)]
        return None if default is None else list(default)

    def shape(self, index: int = 0) -> tuple[int, ...]:
        """Input `index`'s shape (a constant's without materialising it)."""
        if self.is_constant(index):
            return tuple(self.const(index).shape)
        type_ = self.input(index).type
        assert isinstance(type_, TensorType)
        return tuple(type_.get_shape())

    def emit(self, op: Operation) -> SSAValue:
        return self.graph.emit(op)

    def op(
        self, cls: type[relay.TensorOp], *operands: SSAValue, **params: Any
    ) -> SSAValue:
        """Build a relay tensor op (its type inferred); a type error names the node."""
        try:
            return self.emit(cls(*operands, **params))
        except VerifyException as e:  # the dialect's type inference
            raise self.error(f"cannot be expressed as {cls.name}: {e}") from e

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        """A rank-0 constant of `like`'s element type."""
        type_ = like.type
        assert isinstance(type_, TensorType)
        return self.graph.constant(
            np.array(value, dtype=element_dtype(type_.element_type)), "scalar"
        )


def node_label(node: Any) -> str:
    """How diagnostics name a node: its name (or first output) and op type."""
    name = node.name or (node.output[0] if node.output else "")
    return f"ONNX node '{name}' ({node.op_type})"


def attribute_values(node: Any) -> dict[str, Any]:
    """A node's attributes by name, as Python values (absent: not there,
    for the converter's ONNX default)."""
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}
