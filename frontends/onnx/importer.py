"""The graph walk: an ONNX model's graph inputs, initializers and nodes, in
graph order, into one `relay.func @main` (`from_onnx`)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Region, SSAValue

from hetero.dialects import relay
from hetero.frontends.onnx import (
    elementwise,
    nn,
    reductions,
    resize,
    sizes,
    transform,
)
from hetero.frontends.onnx.folding import fold_node
from hetero.frontends.onnx.node import (
    Converter,
    Graph,
    Node,
    attribute_values,
    element_type,
    helper,
    node_label,
    numpy_helper,
    onnx,
)
from hetero.utils.dense_resources import handle_name
from hetero.utils.diagnostics import HeteroError

RESOURCE_THRESHOLD = 16
"""Constants with more elements than this (and not splats) are printed as
`dense_resource`s, as MLIR elides elements attributes larger than 16."""

Batch = Literal["dynamic"] | None

CONVERTERS: dict[str, Converter] = {
    **elementwise.CONVERTERS,
    **nn.CONVERTERS,
    **transform.CONVERTERS,
    **reductions.CONVERTERS,
    **resize.CONVERTERS,
}
"""ONNX op type → converter (the default domain, opsets 6–21) of the
operators that are no one relay op (those that are: `converter_of`)."""


def _tensor_type(
    value_info: Any,
    batch: Batch,
    fixed: Sequence[int] | None = None,
    named: Mapping[str, int] | None = None,
) -> TensorType[Attribute]:
    """A graph input's type; symbolic dimensions (and the batch dimension,
    with batch="dynamic") are `?`, unless `fixed` gives the input's shape or
    `named` the size of a `dim_param` (another input's fixed shape)."""
    tensor = value_info.type.tensor_type
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type))
    sizes = named if fixed is None and named else {}
    dims = [
        d.dim_value
        if d.HasField("dim_value")
        else sizes.get(d.dim_param, relay.DYNAMIC)
        for d in tensor.shape.dim
    ]
    if any(d < 0 and d != relay.DYNAMIC for d in dims):
        raise HeteroError(
            f"graph input '{value_info.name}': negative dimension in {dims}"
        )
    if fixed is not None:
        dims = _fixed(value_info.name, dims, fixed)
    elif batch == "dynamic" and dims:
        dims[0] = relay.DYNAMIC
    return TensorType(element_type(dtype, f"graph input '{value_info.name}'"), dims)


def _named_sizes(
    params: Sequence[Any], shapes: Mapping[str, Sequence[int]]
) -> dict[str, int]:
    """The sizes `shapes` gives the inputs' `dim_param`s: a name fixed for one
    input is that size in every input (as onnxruntime's free dimension
    overrides are by name); two sizes for one name are refused."""
    named: dict[str, int] = {}
    for value_info in params:
        fixed = shapes.get(value_info.name)
        if fixed is None:
            continue
        for dim, size in zip(value_info.type.tensor_type.shape.dim, fixed):
            name = dim.dim_param if dim.HasField("dim_param") else None
            if name and named.setdefault(name, size) != size:
                raise HeteroError(
                    f"shapes: dimension '{name}' is {named[name]} and {size}"
                )
    return named


def _fixed(name: str, dims: list[int], fixed: Sequence[int]) -> list[int]:
    """`fixed`, a shape the caller gives graph input `name`, which must keep
    its rank and static sizes."""
    shape = list(fixed)
    if not all(
        isinstance(d, int | np.integer) and not isinstance(d, bool) for d in shape
    ):
        raise HeteroError(
            f"shapes: graph input '{name}': sizes must be integers, got {fixed!r}"
        )
    if len(shape) != len(dims) or any(
        d not in (n, relay.DYNAMIC) for d, n in zip(dims, shape)
    ):
        declared = ", ".join("?" if d == relay.DYNAMIC else str(d) for d in dims)
        raise HeteroError(
            f"shapes: graph input '{name}' is [{declared}]; {shape} does not fit it"
        )
    if any(n < 1 for n in shape):
        raise HeteroError(
            f"shapes: graph input '{name}': sizes must be positive, got {shape}"
        )
    return shape


def _same_sizes(
    params: Sequence[Any], types: Sequence[TensorType[Attribute]], batch: Batch
) -> list[list[tuple[int, int]]]:
    """The graph inputs' dynamic dimensions (input, axis) grouped by name:
    ONNX's `dim_param`s of one name are one size (as onnxruntime takes
    them).  The batch dimensions that batch="dynamic" makes of static ones
    are each their own; those `shapes` fixed are none."""
    groups: dict[str, list[tuple[int, int]]] = {}
    for index, (value_info, tensor) in enumerate(zip(params, types)):
        dynamic = tensor.get_shape()
        for axis, dim in enumerate(value_info.type.tensor_type.shape.dim):
            named = dim.HasField("dim_param") and dim.dim_param
            if (
                named
                and dynamic[axis] == relay.DYNAMIC
                and not (batch == "dynamic" and axis == 0)
            ):
                groups.setdefault(dim.dim_param, []).append((index, axis))
    return [group for group in groups.values() if len(group) > 1]


def _declared_shapes(graph: Any) -> dict[str, tuple[int, ...]]:
    """The static shapes of the values the graph declares (`value_info` and
    outputs) with every dimension a number."""
    shapes = {}
    for value_info in [*graph.value_info, *graph.output]:
        tensor = value_info.type.tensor_type
        dims = tensor.shape.dim
        if tensor.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            shapes[value_info.name] = tuple(d.dim_value for d in dims)
    return shapes


def _default_opset(model: Any) -> int:
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    return 1


def converter_of(op_type: str) -> Converter | None:
    """The converter of ONNX `op_type` (default domain): to the relay op
    that names it in its `ONNX`, ahead of `CONVERTERS` (so that an op added
    for an operator the importer built of others takes it over)."""
    return elementwise.op_converter(op_type) or CONVERTERS.get(op_type)


def _convert_node(graph: Graph, node: Any) -> None:
    attrs = attribute_values(node)
    converter = converter_of(node.op_type) if node.domain in ("", "ai.onnx") else None
    if fold_node(graph, node, attrs, converter):
        return
    if converter is None:
        domain = f"{node.domain}." if node.domain not in ("", "ai.onnx") else ""
        raise HeteroError(
            f"ONNX node '{node.name or node.output[0]}': unsupported operator '{domain}{node.op_type}'"
        )
    results = converter(Node(node, graph, attrs))
    results = [results] if isinstance(results, SSAValue) else list(results)
    for name, value in zip(node.output, results):
        if name:
            graph.values[name] = value


def _load(model_or_path: Any) -> Any:
    if onnx is None:
        raise HeteroError(
            "the ONNX frontend needs the 'onnx' package: pip install 'hetero[onnx]'"
        )
    if isinstance(model_or_path, str | os.PathLike):
        try:
            return onnx.load(os.fspath(model_or_path))
        except Exception as e:  # missing file, not a protobuf, ...
            raise HeteroError(
                f"cannot read ONNX model '{os.fspath(model_or_path)}': {e}"
            ) from e
    return model_or_path


@contextmanager
def _reading(what: str) -> Iterator[None]:
    """Any failure while `what` (a node, an initializer, a graph input) is
    read, as a diagnostic naming it: a corrupted model reaches converters in
    more ways (an attribute of another type, a tensor whose dims and data
    disagree, ...) than each of them could check."""
    try:
        yield
    except HeteroError:
        raise
    except Exception as e:  # a corrupted model's failures share no base
        raise HeteroError(f"{what}: {type(e).__name__}: {e}") from e


@contextmanager
def _fixed_sizes_hint(
    params: Sequence[Any], types: Sequence[TensorType[Attribute]]
) -> Iterator[None]:
    """A node that does not import while inputs have `?` sizes says that
    the model may import for given sizes (`from_onnx(..., shapes=...)`):
    the shape arithmetic of every model exported for any sizes does, though
    an unsupported operator stays one."""
    try:
        yield
    except HeteroError as e:
        dynamic = [p.name for p, t in zip(params, types) if not t.has_static_shape()]
        if not dynamic:
            raise
        example = ", ".join(f"'{name}': [...]" for name in dynamic)
        hint = (
            f"; where that is the ? sizes, the model may import for given ones: "
            f"from_onnx(model, shapes={{{example}}})"
        )
        raise HeteroError(e.message + hint, e.op, e.notes, e.location) from e


def from_onnx(
    model_or_path: Any,
    batch: Batch = None,
    *,
    shapes: Mapping[str, Sequence[int]] | None = None,
    resource_threshold: int = RESOURCE_THRESHOLD,
) -> ModuleOp:
    """The relay module of an ONNX model (a `ModelProto` or a path).

    `batch="dynamic"` makes the first dimension of every graph input `?`.
    `shapes` fixes the shapes of the graph inputs it names (TVM's
    `shape_dict`, onnxruntime's free dimension overrides): a model exported
    for any batch and sequence then imports as for those sizes, whatever its
    shape arithmetic.  Constants with more than `resource_threshold`
    elements (splats excepted) become `dense_resource`s.
    """
    if batch not in (None, "dynamic"):
        raise HeteroError(f"batch must be None or 'dynamic', got {batch!r}")
    model = _load(model_or_path)
    shapes = dict(shapes or {})
    graph_proto = model.graph
    initializers = {}
    for tensor in graph_proto.initializer:
        with _reading(f"initializer '{tensor.name}'"):
            initializers[tensor.name] = numpy_helper.to_array(tensor)
    params = [v for v in graph_proto.input if v.name not in initializers]
    types = []
    named = _named_sizes(params, shapes)
    for value_info in params:
        with _reading(f"graph input '{value_info.name}'"):
            fixed = shapes.pop(value_info.name, None)
            types.append(_tensor_type(value_info, batch, fixed, named))
    if shapes:
        names = ", ".join(f"'{p.name}'" for p in params)
        raise HeteroError(
            f"shapes: no graph input {', '.join(map(repr, shapes))} (the inputs: {names})"
        )
    block = Block(arg_types=types)
    graph = Graph(
        _default_opset(model),
        block,
        resource_threshold,
        constants=initializers,
        declared=_declared_shapes(graph_proto) if batch is None else {},
        same_sizes=_same_sizes(params, types, batch),
        materialize=sizes.materialize,
    )
    for value_info, arg in zip(params, block.args):
        arg.name_hint = handle_name(value_info.name)
        graph.values[value_info.name] = arg
    producers = {}
    for node in graph_proto.node:
        with _reading(node_label(node)), _fixed_sizes_hint(params, types):
            _convert_node(graph, node)
        producers.update(dict.fromkeys(node.output, node))
    outputs = []
    for output in graph_proto.output:
        if output.name in graph.sizes:  # a shape of a dynamic value: at run time
            node = producers[output.name]
            with _reading(node_label(node)):
                Node(node, graph, {}).materialize(output.name)
        if output.name not in graph.values and output.name not in graph.constants:
            raise HeteroError(
                f"graph output '{output.name}' is not produced by any node"
            )
        outputs.append(graph.value(output.name))
    result = outputs[0] if len(outputs) == 1 else graph.emit(relay.TupleOp(outputs))
    block.add_op(relay.ReturnOp(result))
    main = relay.FuncOp("main", types, result.type, Region(block))
    main.set_max_sizes(graph.max_sizes)
    return ModuleOp([main])
