"""ONNX models as relay modules (docs/frontends/onnx.md).

    module = from_onnx("resnet50.onnx")              # static shapes
    module = from_onnx(model, batch="dynamic")       # batch dimension `?`

The graph becomes one `relay.func @main` whose parameters are the graph
inputs that are not initializers and whose result is the graph output (a
`relay.tuple` for several).  Nodes are converted in graph order by
`CONVERTERS`, a table from ONNX op type to a converter function; each reads
its node through `Node` (inputs as relay values or as constants, attributes
with ONNX's defaults, the opset) and builds relay ops with the dialect's
inferring constructors, so every relay type is the dialect's own inference.

Constants are kept apart until a converter needs them as a value:
initializers, `Constant`, and every node whose inputs are all constants
(shape arithmetic such as `Shape -> Gather -> Concat -> Reshape`, weights
built by `ConstantOfShape`) are folded at import -- `ConstantOfShape` and
`Constant` natively, anything else by the `onnx` package's reference
evaluator.  A constant that reaches the relay graph becomes a
`relay.constant`: splats and small tensors inline, larger ones as
`dense_resource`s (`hetero.utils.dense_resources`), so printed modules stay
readable and still round-trip.

An operator without a converter, or an attribute value the converter does
not support, is a `HeteroError` naming the op type and the node.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    ModuleOp,
    Signedness,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from hetero.dialects import relay
from hetero.interpreter.relay import InterpreterError, element_dtype, evaluate_op
from hetero.utils.dense_resources import dense_resource, handle_name
from hetero.utils.diagnostics import HeteroError

try:  # the optional extra: hetero[onnx]
    import onnx
    from onnx import helper, numpy_helper
except ImportError:  # pragma: no cover - exercised only without the extra
    onnx = None  # type: ignore[assignment]

RESOURCE_THRESHOLD = 16
"""Constants with more elements than this (and not splats) are printed as
`dense_resource`s, as MLIR elides elements attributes larger than 16."""

Batch = Literal["dynamic"] | None

_ELEMENT_TYPES: dict[np.dtype[Any], Attribute] = {
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
    if dtype not in _ELEMENT_TYPES:
        raise HeteroError(f"{where}: element type {dtype} is not supported")
    return _ELEMENT_TYPES[dtype]


Converter = Callable[["Node"], "SSAValue | Sequence[SSAValue]"]


# ----------------------------------------------------------------------------
# The importer state and the view of one node
# ----------------------------------------------------------------------------


@dataclass
class _Graph:
    """Values by ONNX name while the graph is converted, and the relay block."""

    opset: int
    block: Block
    resource_threshold: int
    values: dict[str, SSAValue] = field(default_factory=dict)
    constants: dict[str, np.ndarray] = field(default_factory=dict)
    declared: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Static shapes the model declares for its values (`value_info`, graph
    outputs): what a shape computed at run time must come to."""

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
    graph: _Graph
    attrs: dict[str, Any]

    @property
    def opset(self) -> int:
        return self.graph.opset

    @property
    def op_type(self) -> str:
        return self.proto.op_type

    def error(self, message: str) -> HeteroError:
        return HeteroError(f"{_node_label(self.proto)}: {message}")

    def has_input(self, index: int) -> bool:
        return index < len(self.proto.input) and self.proto.input[index] != ""

    def input(self, index: int) -> SSAValue:
        """Input `index` as a relay value."""
        if not self.has_input(index):
            raise self.error(f"input {index} is missing")
        name = self.proto.input[index]
        if name not in self.graph.values and name not in self.graph.constants:
            raise self.error(
                f"input {index} '{name}' is no graph input, initializer or earlier node's output"
            )
        return self.graph.value(name)

    def inputs(self) -> list[SSAValue]:
        return [
            self.input(i) for i in range(len(self.proto.input)) if self.has_input(i)
        ]

    def is_constant(self, index: int) -> bool:
        return self.has_input(index) and self.proto.input[index] in self.graph.constants

    def const(self, index: int) -> np.ndarray:
        """Input `index`, which must be known at import time."""
        if not self.is_constant(index):
            raise self.error(
                f"input {index} ('{self.proto.input[index] if self.has_input(index) else ''}') "
                "must be a constant (an initializer or computable at import)"
            )
        return self.graph.constants[self.proto.input[index]]

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


# ----------------------------------------------------------------------------
# Converters
# ----------------------------------------------------------------------------


def _unary(cls: type[relay.TensorOp]) -> Converter:
    return lambda n: n.op(cls, n.input(0))


def _binary(cls: type[relay.TensorOp]) -> Converter:
    """NumPy broadcasting; before opset 7, `broadcast=1` with `axis` aligns
    the second operand's dimensions to the first's starting at `axis`."""

    def convert(n: Node) -> SSAValue:
        lhs, rhs = n.input(0), n.input(1)
        if n.opset < 7 and n.attrs.get("broadcast", 0) and "axis" in n.attrs:
            rank, other = len(n.shape(0)), n.shape(1)
            axis = n.attrs["axis"] % rank
            trailing = rank - axis - len(other)
            if trailing > 0:
                rhs = n.op(relay.ReshapeOp, rhs, newshape=other + (1,) * trailing)
        return n.op(cls, lhs, rhs)

    return convert


def _variadic(cls: type[relay.TensorOp]) -> Converter:
    """Sum, Max, Min of any number of inputs: a left fold."""

    def convert(n: Node) -> SSAValue:
        values = n.inputs()
        result = values[0]
        for value in values[1:]:
            result = n.op(cls, result, value)
        return result

    return convert


def _mean(n: Node) -> SSAValue:
    total = _variadic(relay.AddOp)(n)
    assert isinstance(total, SSAValue)
    return n.op(relay.DivideOp, total, n.scalar(len(n.inputs()), total))


def _identity(n: Node) -> SSAValue:
    """Identity, and Dropout at inference (its mask output is not produced)."""
    return n.input(0)


def _negative_part(n: Node, x: SSAValue) -> SSAValue:
    """min(x, 0)."""
    return n.op(relay.MinimumOp, x, n.scalar(0.0, x))


def _leaky_relu(n: Node) -> SSAValue:
    """relu(x) + alpha * min(x, 0): right for any alpha."""
    x = n.input(0)
    slope = n.op(
        relay.MultiplyOp, _negative_part(n, x), n.scalar(n.attrs.get("alpha", 0.01), x)
    )
    return n.op(relay.AddOp, n.op(relay.ReluOp, x), slope)


def _prelu(n: Node) -> SSAValue:
    """relu(x) + slope * min(x, 0); before opset 7 a `[C]` slope is per channel."""
    x, slope = n.input(0), n.input(1)
    shape, slope_shape = n.shape(0), n.shape(1)
    if n.opset < 7 and len(slope_shape) == 1 and len(shape) > 2 and slope_shape[0] != 1:
        slope = n.op(
            relay.ReshapeOp, slope, newshape=(slope_shape[0],) + (1,) * (len(shape) - 2)
        )
    scaled = n.op(relay.MultiplyOp, _negative_part(n, x), slope)
    return n.op(relay.AddOp, n.op(relay.ReluOp, x), scaled)


def _elu_part(n: Node, x: SSAValue, alpha: float) -> SSAValue:
    """alpha * (exp(min(x, 0)) - 1): the negative branch, never overflowing."""
    exp = n.op(relay.ExpOp, _negative_part(n, x))
    return n.op(
        relay.MultiplyOp,
        n.op(relay.SubtractOp, exp, n.scalar(1.0, x)),
        n.scalar(alpha, x),
    )


def _elu(n: Node) -> SSAValue:
    x = n.input(0)
    return n.op(
        relay.AddOp, n.op(relay.ReluOp, x), _elu_part(n, x, n.attrs.get("alpha", 1.0))
    )


def _selu(n: Node) -> SSAValue:
    x = n.input(0)
    alpha = n.attrs.get("alpha", 1.67326319217681884765625)
    gamma = n.attrs.get("gamma", 1.05070102214813232421875)
    inner = n.op(relay.AddOp, n.op(relay.ReluOp, x), _elu_part(n, x, alpha))
    return n.op(relay.MultiplyOp, inner, n.scalar(gamma, x))


def _softplus(n: Node) -> SSAValue:
    """log(1 + exp(x)) = relu(x) + log(1 + exp(-|x|)): no overflow."""
    x = n.input(0)
    tail = n.op(relay.ExpOp, n.op(relay.NegativeOp, n.op(relay.AbsOp, x)))
    soft = n.op(relay.LogOp, n.op(relay.AddOp, tail, n.scalar(1.0, x)))
    return n.op(relay.AddOp, n.op(relay.ReluOp, x), soft)


def _softsign(n: Node) -> SSAValue:
    x = n.input(0)
    denominator = n.op(relay.AddOp, n.op(relay.AbsOp, x), n.scalar(1.0, x))
    return n.op(relay.DivideOp, x, denominator)


def _hard_sigmoid_of(n: Node, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    """clip(alpha * x + beta, 0, 1)."""
    scaled = n.op(relay.MultiplyOp, x, n.scalar(alpha, x))
    shifted = n.op(relay.AddOp, scaled, n.scalar(beta, x))
    return n.op(relay.ClipOp, shifted, a_min=0.0, a_max=1.0)


def _hard_sigmoid(n: Node) -> SSAValue:
    alpha, beta = n.attrs.get("alpha", 0.2), n.attrs.get("beta", 0.5)
    return _hard_sigmoid_of(n, n.input(0), alpha, beta)


def _hard_swish(n: Node) -> SSAValue:
    """x * hard_sigmoid(x) with alpha 1/6 and beta 1/2 (MobileNet-v3), one
    op: a product would use x twice, and no convolution could fuse it."""
    return n.op(relay.HardSwishOp, n.input(0))


_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


def _gelu(n: Node) -> SSAValue:
    """x/2 * (1 + erf(x / sqrt 2)), or with `approximate="tanh"`
    x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x³))): elementwise ops that
    fuse into one kernel (with a producing GEMM's stores)."""
    x = n.input(0)
    approximate = n.attrs.get("approximate", b"none")
    approximate = (
        approximate.decode() if isinstance(approximate, bytes) else approximate
    )
    if approximate == "none":
        inner = n.op(
            relay.ErfOp, n.op(relay.MultiplyOp, x, n.scalar(1 / math.sqrt(2), x))
        )
    elif approximate == "tanh":
        cube = n.op(relay.MultiplyOp, n.op(relay.MultiplyOp, x, x), x)
        cubic = n.op(relay.MultiplyOp, cube, n.scalar(0.044715, x))
        argument = n.op(relay.AddOp, x, cubic)
        inner = n.op(
            relay.TanhOp,
            n.op(relay.MultiplyOp, argument, n.scalar(_SQRT_2_OVER_PI, x)),
        )
    else:
        raise n.error(f"approximate '{approximate}' is not supported")
    half = n.op(relay.MultiplyOp, x, n.scalar(0.5, x))
    return n.op(relay.MultiplyOp, half, n.op(relay.AddOp, inner, n.scalar(1.0, x)))


def _sign(n: Node) -> SSAValue:
    """1 above zero, -1 below, else x itself (0, -0 and NaN stay)."""
    x = n.input(0)
    zero = n.scalar(0, x)
    below = n.op(relay.WhereOp, n.op(relay.LessOp, x, zero), n.scalar(-1, x), x)
    return n.op(relay.WhereOp, n.op(relay.GreaterOp, x, zero), n.scalar(1, x), below)


def _is_nan(n: Node) -> SSAValue:
    """x ≠ x, true for NaN only (an unordered comparison): torch's export of
    scaled_dot_product_attention zeroes a fully masked row's NaNs with it."""
    x = n.input(0)
    return n.op(relay.NotEqualOp, x, x)


def _shrink(n: Node) -> SSAValue:
    """x + bias below -lambd, x - bias above lambd, 0 between."""
    x = n.input(0)
    lambd, bias = n.attrs.get("lambd", 0.5), n.attrs.get("bias", 0.0)
    low = n.op(relay.LessOp, x, n.scalar(-lambd, x))
    high = n.op(relay.GreaterOp, x, n.scalar(lambd, x))
    inside = n.op(
        relay.WhereOp,
        high,
        n.op(relay.SubtractOp, x, n.scalar(bias, x)),
        n.scalar(0, x),
    )
    return n.op(relay.WhereOp, low, n.op(relay.AddOp, x, n.scalar(bias, x)), inside)


_SMALL_POWERS = (1, 2, 3)
"""Constant exponents `Pow` multiplies out: `pow` is a library call per
element, and GPT-2's GELU cubes."""


def _pow(n: Node) -> SSAValue:
    """relay.power of the base's element type (ONNX lets the exponent's
    differ); a constant exponent of 1, 2 or 3 as products."""
    if n.is_constant(1) and n.const(1).size == 1:
        exponent = n.const(1).reshape(-1)[0]
        if exponent in _SMALL_POWERS and len(n.shape(1)) <= len(n.shape(0)):
            x = result = n.input(0)
            for _ in range(int(exponent) - 1):
                result = n.op(relay.MultiplyOp, result, x)
            return result
    base, exponent = n.input(0), n.input(1)
    base_type, exponent_type = base.type, exponent.type
    assert isinstance(base_type, TensorType) and isinstance(exponent_type, TensorType)
    if exponent_type.element_type != base_type.element_type:
        exponent = n.op(relay.CastOp, exponent, dtype=base_type.element_type)
    return n.op(relay.PowerOp, base, exponent)


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _clip(n: Node) -> SSAValue:
    """Bounds are attributes before opset 11, optional constant inputs after."""
    if n.opset < 11:
        low, high = n.attrs.get("min", -_FLOAT32_MAX), n.attrs.get("max", _FLOAT32_MAX)
    else:
        low = float(n.const(1)) if n.has_input(1) else -_FLOAT32_MAX
        high = float(n.const(2)) if n.has_input(2) else _FLOAT32_MAX
    return n.op(relay.ClipOp, n.input(0), a_min=float(low), a_max=float(high))


def _softmax_like(op: type[relay.RowNormalizationOp]) -> Converter:
    """Before opset 13 the input is coerced to 2-D at `axis` (default 1) and
    normalised over the whole second part; from 13 over `axis` (default -1)."""

    def convert(n: Node) -> SSAValue:
        x = n.input(0)
        shape = n.shape(0)
        if n.opset >= 13:
            return n.op(op, x, axis=n.attrs.get("axis", -1))
        axis = n.attrs.get("axis", 1) % max(len(shape), 1)
        flat = (
            n.op(relay.FlattenOp, x, axis=axis) if len(shape) != 2 or axis != 1 else x
        )
        result = n.op(op, flat, axis=-1)
        if flat is not x:
            result = n.op(
                relay.ReshapeOp,
                result,
                newshape=tuple(max(d, 0) for d in shape),
            )
        return result

    return convert


def _gemm(n: Node) -> SSAValue:
    """alpha * A' B' + beta * C as relay.nn.dense (whose weight is [N, K]);
    a constant B is transposed at import."""
    a = n.input(0)
    if n.attrs.get("transA", 0):
        a = n.op(relay.TransposeOp, a, axes=(1, 0))
    if n.is_constant(1):
        b = n.const(1)
        weight = n.graph.constant(
            b if n.attrs.get("transB", 0) else b.T.copy(), n.proto.input[1]
        )
    else:
        weight = n.input(1)
        if not n.attrs.get("transB", 0):
            weight = n.op(relay.TransposeOp, weight, axes=(1, 0))
    result = n.op(relay.DenseOp, a, weight)
    alpha, beta = n.attrs.get("alpha", 1.0), n.attrs.get("beta", 1.0)
    if alpha != 1.0:
        result = n.op(relay.MultiplyOp, result, n.scalar(alpha, result))
    if n.has_input(2) and beta != 0.0:
        if n.is_constant(2):
            c = n.graph.constant(
                (n.const(2) * beta).astype(n.const(2).dtype), n.proto.input[2]
            )
        else:
            c = n.input(2)
            if beta != 1.0:
                c = n.op(relay.MultiplyOp, c, n.scalar(beta, c))
        result = n.op(relay.AddOp, result, c)
    return result


def _matmul(n: Node) -> SSAValue:
    """NumPy matmul: [M, K] x constant [K, N] is a dense layer; 1-D operands
    get a unit dimension that is squeezed away afterwards."""
    a_shape, b_shape = n.shape(0), n.shape(1)
    if len(a_shape) == 2 and len(b_shape) == 2 and n.is_constant(1):
        weight = n.graph.constant(n.const(1).T.copy(), n.proto.input[1])
        return n.op(relay.DenseOp, n.input(0), weight)
    a, b = n.input(0), n.input(1)
    squeeze = []
    if len(a_shape) == 1:
        a = n.op(relay.ExpandDimsOp, a, axis=0)
        squeeze.append(-2)
    if len(b_shape) == 1:
        b = n.op(relay.ExpandDimsOp, b, axis=1)
        squeeze.append(-1)
    result = n.op(relay.MatmulOp, a, b)
    return n.op(relay.SqueezeOp, result, axis=tuple(squeeze)) if squeeze else result


def _einsum_subscripts(n: Node, ranks: Sequence[int]) -> tuple[list[str], str]:
    """The subscripts of each operand and of the result, an ellipsis spelled
    out as digits (aligned at the right across operands, as broadcasting
    is); without `->`, the result is the ellipsis, then the subscripts that
    occur once, in alphabetical order (NumPy's rule)."""
    equation = n.attrs["equation"]
    equation = equation.decode() if isinstance(equation, bytes) else equation
    inputs, arrow, output = equation.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ranks):
        raise n.error(
            f"equation '{equation}' names {len(terms)} operands, not {len(ranks)}"
        )
    extra = max((r - len(t) + 3 for t, r in zip(terms, ranks) if "..." in t), default=0)
    digits = "".join(str(i) for i in range(extra))

    def spelled(term: str, rank: int) -> str:
        return term.replace("...", digits[extra - (rank - len(term) + 3) :])

    terms = [spelled(t, r) for t, r in zip(terms, ranks)]
    if arrow:
        output = output.replace("...", digits)
    else:
        letters = "".join(terms)
        output = digits + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1 and c.isalpha())
        )
    for term, rank in zip(terms, ranks):
        if len(term) != rank or len(set(term)) != len(term):
            raise n.error(
                f"subscripts '{term}' do not name the {rank} axes of an operand once "
                "each (diagonals are not supported)"
            )
    return terms, output


def _value_shape(value: SSAValue) -> tuple[int, ...]:
    type_ = value.type
    assert isinstance(type_, TensorType)
    return tuple(type_.get_shape())


def _arranged(n: Node, value: SSAValue, term: str, order: str) -> SSAValue:
    """`value` (subscripts `term`) with its axes in `order`."""
    if term == order:
        return value
    axes = tuple(term.index(c) for c in order)
    return n.op(relay.TransposeOp, value, axes=axes)


def _reshaped(n: Node, value: SSAValue, shape: Sequence[int]) -> SSAValue:
    if tuple(shape) == _value_shape(value):
        return value
    return n.op(relay.ReshapeOp, value, newshape=tuple(shape))


def _summed_out(n: Node, value: SSAValue, term: str, keep: str) -> tuple[SSAValue, str]:
    """`value` summed over the subscripts not in `keep`."""
    axes = tuple(i for i, c in enumerate(term) if c not in keep)
    if not axes:
        return value, term
    summed = n.op(relay.SumOp, value, axis=axes, keepdims=False)
    return summed, "".join(c for c in term if c in keep)


def _contract(
    n: Node,
    a: tuple[SSAValue, str],
    b: tuple[SSAValue, str],
    output: str,
    constant_b: bool,
) -> SSAValue:
    """The product of two operands with subscripts `output`: a batched
    [batch, M, K] x [batch, K, N] matmul of the transposed, flattened
    operands (a dense layer when there is no batch and `b` is a constant),
    reshaped and transposed back."""
    (x, xs), (y, ys) = a, b
    batch = "".join(c for c in output if c in xs and c in ys)
    summed = "".join(c for c in xs if c in ys and c not in output)
    left = "".join(c for c in xs if c not in ys)
    right = "".join(c for c in ys if c not in xs)
    sizes = {**dict(zip(ys, _value_shape(y))), **dict(zip(xs, _value_shape(x)))}
    if any(sizes[c] < 0 for c in summed + left + right):
        raise n.error("Einsum needs static sizes of its summed and free axes")

    def flat(letters: str) -> int:
        return math.prod(sizes[c] for c in letters)

    keep = (0,) * len(batch)
    x = _reshaped(
        n, _arranged(n, x, xs, batch + left + summed), (*keep, flat(left), flat(summed))
    )
    y = _reshaped(
        n,
        _arranged(n, y, ys, batch + summed + right),
        (*keep, flat(summed), flat(right)),
    )
    if not batch and constant_b:
        product = n.op(relay.DenseOp, x, n.op(relay.TransposeOp, y, axes=(1, 0)))
    else:
        product = n.op(relay.MatmulOp, x, y)
    unflat = (*keep, *(sizes[c] for c in left + right))
    return _arranged(n, _reshaped(n, product, unflat), batch + left + right, output)


def _einsum(n: Node) -> SSAValue:
    """NumPy's einsum without diagonals (a subscript twice in one operand):
    subscripts in one operand only are summed first; operands are then
    contracted pairwise, left to right (`_contract`), each product keeping
    the subscripts still needed; one operand is a sum and a transpose."""
    values = [n.input(i) for i in range(len(n.proto.input))]
    terms, output = _einsum_subscripts(n, [len(_value_shape(v)) for v in values])
    operands = []
    for i, (value, term) in enumerate(zip(values, terms)):
        others = "".join(terms[:i] + terms[i + 1 :]) + output
        operands.append(_summed_out(n, value, term, others))
    result = operands[0]
    for i, operand in enumerate(operands[1:], start=1):
        later = "".join(t for _, t in operands[i + 1 :]) + output
        order = "".join(dict.fromkeys(c for c in result[1] + operand[1] if c in later))
        result = (_contract(n, result, operand, order, n.is_constant(i)), order)
    value, term = _summed_out(n, *result, output)
    return _arranged(n, value, term, output)


# -- convolution and pooling -----------------------------------------------------


def _auto_pad(n: Node) -> str:
    """The node's `auto_pad` attribute (`NOTSET` when absent)."""
    auto_pad = n.attrs.get("auto_pad", "NOTSET")
    return auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad


def _window_padding(
    n: Node,
    spatial: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> list[int]:
    """ONNX `pads` ([begins..., ends...]) or what `auto_pad` asks for."""
    rank = len(spatial)
    auto_pad = _auto_pad(n)
    if auto_pad in ("NOTSET", ""):
        return [int(p) for p in n.attrs.get("pads", [0] * (2 * rank))]
    if auto_pad == "VALID":
        return [0] * (2 * rank)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise n.error(f"auto_pad '{auto_pad}' is not supported")
    begins, ends = [], []
    for size, k, s, d in zip(spatial, kernel, strides, dilations):
        if size < 0:
            raise n.error("auto_pad needs static spatial dimensions")
        total = max((math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size, 0)
        small = total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else total - small)
        ends.append(total - begins[-1])
    return begins + ends


@dataclass(frozen=True)
class _Window:
    """Convolution/pooling attributes in relay's form: 2-D (1-D data as
    height 1) or 3-D; `padding` is the starts of every axis, then the ends."""

    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilation: tuple[int, ...]
    padding: tuple[int, ...]


def _window(n: Node, spatial: Sequence[int], kernel: Sequence[int]) -> _Window:
    """ONNX window attributes of 1-D, 2-D or 3-D data, as relay's (1-D data
    is treated as height 1)."""
    strides, dilations = _strides_and_dilations(n, len(spatial))
    pads = _window_padding(n, spatial, kernel, strides, dilations)
    return _relay_window(kernel, strides, dilations, pads)


def _strides_and_dilations(n: Node, rank: int) -> tuple[list[int], list[int]]:
    """The node's `strides` and `dilations` (1 on every axis when absent)."""
    strides = [int(s) for s in n.attrs.get("strides", [1] * rank)]
    return strides, [int(d) for d in n.attrs.get("dilations", [1] * rank)]


def _relay_window(
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pads: Sequence[int],
) -> _Window:
    """ONNX window attributes as relay's: 1-D ones as height 1."""
    if len(kernel) == 1:
        return _Window(
            (1, kernel[0]), (1, strides[0]), (1, dilations[0]), (0, pads[0], 0, pads[1])
        )
    return _Window(tuple(kernel), tuple(strides), tuple(dilations), tuple(pads))


SPATIAL_OPS: dict[int, tuple[type[relay.TensorOp], ...]] = {
    2: (relay.Conv2DOp, relay.MaxPool2DOp, relay.AvgPool2DOp),
    3: (relay.Conv3DOp, relay.MaxPool3DOp, relay.AvgPool3DOp),
}
"""Relay's convolution, max and average pooling per number of spatial axes
(1-D data takes the 2-D ops as height 1)."""


def _spatial_rank(n: Node, ranks: Sequence[int] = (1, 2, 3)) -> int:
    """The number of spatial dimensions, one relay has windows for."""
    rank = len(n.shape(0)) - 2
    if rank not in ranks:
        raise n.error(
            f"{rank}-D spatial data is not supported (relay has "
            f"{', '.join(f'{r}-D' for r in ranks)} windows here)"
        )
    return rank


def _as_2d(n: Node, x: SSAValue, rank: int) -> SSAValue:
    """1-D data [N, C, L] as [N, C, 1, L]."""
    return n.op(relay.ExpandDimsOp, x, axis=2) if rank == 1 else x


def _from_2d(n: Node, x: SSAValue, rank: int) -> SSAValue:
    return n.op(relay.SqueezeOp, x, axis=(2,)) if rank == 1 else x


def _conv(n: Node) -> SSAValue:
    rank = _spatial_rank(n)
    weight_shape = n.shape(1)
    kernel = n.attrs.get("kernel_shape", weight_shape[2:])
    window = _window(n, n.shape(0)[2:], kernel)
    weight = _as_2d(n, n.input(1), rank)
    result = n.op(
        SPATIAL_OPS[max(rank, 2)][0],
        _as_2d(n, n.input(0), rank),
        weight,
        strides=window.strides,
        padding=window.padding,
        dilation=window.dilation,
        groups=n.attrs.get("group", 1),
    )
    if n.has_input(2):
        result = n.op(relay.BiasAddOp, result, n.input(2), axis=1)
    return _from_2d(n, result, rank)


def _conv_transpose(n: Node) -> SSAValue:
    """ConvTranspose (1-D or 2-D) as `relay.nn.conv2d_transpose`.  With
    `output_shape` (or a SAME `auto_pad`, whose output is the input times
    the stride), the padding is what makes that shape, its odd unit at the
    end for SAME_UPPER and at the start otherwise (the ONNX rule)."""
    rank = _spatial_rank(n, (1, 2))
    spatial = n.shape(0)[2:]
    kernel = [int(k) for k in n.attrs.get("kernel_shape", n.shape(1)[2:])]
    strides, dilations = _strides_and_dilations(n, rank)
    extra = [int(p) for p in n.attrs.get("output_padding", [0] * rank)]
    pads = [int(p) for p in n.attrs.get("pads", [0] * 2 * rank)]
    auto_pad = _auto_pad(n)
    shape = n.attrs.get("output_shape")
    if shape is None and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        shape = [size * stride for size, stride in zip(spatial, strides)]
    if shape is not None:
        shape = [int(d) for d in shape][-rank:]
        totals = [
            s * (i - 1) + e + (k - 1) * d + 1 - o
            for s, i, e, k, d, o in zip(
                strides, spatial, extra, kernel, dilations, shape
            )
        ]
        if any(t < 0 for t in totals):
            raise n.error(f"output_shape {shape} is larger than the input makes")
        late = auto_pad == "SAME_UPPER"
        starts = [t // 2 if late else t - t // 2 for t in totals]
        pads = [*starts, *(t - b for t, b in zip(totals, starts))]
    elif auto_pad == "VALID":
        pads = [0] * 2 * rank
    window = _relay_window(kernel, strides, dilations, pads)
    result = n.op(
        relay.Conv2DTransposeOp,
        _as_2d(n, n.input(0), rank),
        _as_2d(n, n.input(1), rank),
        strides=window.strides,
        padding=window.padding,
        dilation=window.dilation,
        output_padding=(0, *extra) if rank == 1 else tuple(extra),
        groups=n.attrs.get("group", 1),
    )
    if n.has_input(2):
        result = n.op(relay.BiasAddOp, result, n.input(2), axis=1)
    return _from_2d(n, result, rank)


def _pool(average: bool) -> Converter:
    """MaxPool / AveragePool (1-D, 2-D or 3-D); the Indices output is not
    produced."""

    def convert(n: Node) -> SSAValue:
        rank = _spatial_rank(n)
        cls = SPATIAL_OPS[max(rank, 2)][2 if average else 1]
        window = _window(n, n.shape(0)[2:], n.attrs["kernel_shape"])
        params: dict[str, Any] = {
            "pool_size": window.kernel,
            "strides": window.strides,
            "padding": window.padding,
            "dilation": window.dilation,
            "ceil_mode": bool(n.attrs.get("ceil_mode", 0)),
        }
        if average:
            params["count_include_pad"] = bool(n.attrs.get("count_include_pad", 0))
        return _from_2d(n, n.op(cls, _as_2d(n, n.input(0), rank), **params), rank)

    return convert


def _global_pool(average: bool) -> Converter:
    def convert(n: Node) -> SSAValue:
        rank = _spatial_rank(n, (1, 2))
        x = _as_2d(n, n.input(0), rank)
        if average:
            pooled = n.op(relay.GlobalAvgPool2DOp, x)
        else:
            type_ = x.type
            assert isinstance(type_, TensorType)
            pooled = n.op(relay.MaxPool2DOp, x, pool_size=tuple(type_.get_shape()[2:]))
        return _from_2d(n, pooled, rank)

    return convert


def _batch_norm(n: Node) -> SSAValue:
    """Inference form; the training outputs (running statistics) are not produced."""
    return n.op(
        relay.BatchNormOp,
        *[n.input(i) for i in range(5)],
        axis=1,
        epsilon=float(n.attrs.get("epsilon", 1e-5)),
    )


def _reduce(cls: type[relay.ReduceOp]) -> Converter:
    """ReduceSum/ReduceMean: axes an attribute, or an input (ReduceSum from
    opset 13, ReduceMean from 18); none reduce everything unless
    `noop_with_empty_axes`."""

    def convert(n: Node) -> SSAValue:
        axes = n.ints("axes", 1)
        if not axes and n.attrs.get("noop_with_empty_axes", 0):
            return n.input(0)
        keepdims = bool(n.attrs.get("keepdims", 1))
        axis = tuple(axes) if axes else None
        return n.op(cls, n.input(0), axis=axis, keepdims=keepdims)

    return convert


def _instance_norm(n: Node) -> SSAValue:
    """(x - mean) / sqrt(var + epsilon) * scale + B, the statistics over the
    spatial dimensions of each sample and channel."""
    x = n.input(0)
    rank = len(n.shape(0))
    spatial = tuple(range(2, rank))
    channels = (n.shape(1)[0],) + (1,) * (rank - 2)
    mean = n.op(relay.MeanOp, x, axis=spatial, keepdims=True)
    centred = n.op(relay.SubtractOp, x, mean)
    squares = n.op(relay.MultiplyOp, centred, centred)
    variance = n.op(relay.MeanOp, squares, axis=spatial, keepdims=True)
    epsilon = n.scalar(n.attrs.get("epsilon", 1e-5), x)
    deviation = n.op(relay.SqrtOp, n.op(relay.AddOp, variance, epsilon))
    scale = n.op(relay.ReshapeOp, n.input(1), newshape=channels)
    shift = n.op(relay.ReshapeOp, n.input(2), newshape=channels)
    normal = n.op(relay.DivideOp, centred, deviation)
    return n.op(relay.AddOp, n.op(relay.MultiplyOp, normal, scale), shift)


def _normalised_operand(
    n: Node, index: int, shape: tuple[int, ...], default: float
) -> SSAValue:
    """LayerNormalization's scale or bias as `relay.nn.layer_norm` takes it,
    of the normalised shape: a constant broadcast to it at import (absent:
    `default`), a run-time one as it is."""
    if n.has_input(index) and not n.is_constant(index):
        return n.input(index)
    if any(d < 0 for d in shape):
        raise n.error("a constant scale or bias needs static normalised axes")
    type_ = n.input(0).type
    assert isinstance(type_, TensorType)
    value = (
        n.const(index)
        if n.has_input(index)
        else np.array(default, element_dtype(type_.element_type))
    )
    try:
        value = np.broadcast_to(value, shape)
    except ValueError as e:
        raise n.error(
            f"input {index} does not broadcast to the normalised axes {shape}"
        ) from e
    name = n.proto.input[index] if n.has_input(index) else "layer_norm_default"
    return n.graph.constant(np.ascontiguousarray(value), name)


def _layer_norm(n: Node) -> SSAValue:
    """`relay.nn.layer_norm` over the axes from `axis` (default -1); the
    training outputs (Mean, InvStdDev) are not produced."""
    if any(n.proto.output[1:]):
        raise n.error("the Mean and InvStdDev outputs are not supported")
    shape = n.shape(0)
    axis = n.attrs.get("axis", -1)
    if not -len(shape) <= axis < len(shape):
        raise n.error(f"axis {axis} is out of range for rank {len(shape)}")
    normalised = shape[axis % len(shape) :]
    return n.op(
        relay.LayerNormOp,
        n.input(0),
        _normalised_operand(n, 1, normalised, 1.0),
        _normalised_operand(n, 2, normalised, 0.0),
        axis=axis,
        epsilon=float(n.attrs.get("epsilon", 1e-5)),
    )


def _lrn(n: Node) -> SSAValue:
    return n.op(
        relay.LRNOp,
        n.input(0),
        size=int(n.attrs["size"]),
        axis=1,
        alpha=float(n.attrs.get("alpha", 1e-4)),
        beta=float(n.attrs.get("beta", 0.75)),
        bias=float(n.attrs.get("bias", 1.0)),
    )


# -- shape manipulation -----------------------------------------------------------


def _reshape(n: Node) -> SSAValue:
    """`0` copies a dimension and `-1` is inferred, as in relay.reshape."""
    shape = n.ints("shape", 1)
    if shape is None:
        raise n.error("the target shape is missing")
    if n.attrs.get("allowzero", 0) and 0 in shape:
        raise n.error("allowzero=1 with a zero in the shape is not supported")
    return n.op(relay.ReshapeOp, n.input(0), newshape=tuple(shape))


def _flatten(n: Node) -> SSAValue:
    return n.op(relay.FlattenOp, n.input(0), axis=n.attrs.get("axis", 1))


def _transpose(n: Node) -> SSAValue:
    perm = n.attrs.get("perm")
    return n.op(
        relay.TransposeOp, n.input(0), axes=None if perm is None else tuple(perm)
    )


def _concat(n: Node) -> SSAValue:
    return n.op(relay.ConcatenateOp, *n.inputs(), axis=n.attrs.get("axis", 1))


def _squeeze(n: Node) -> SSAValue:
    axes = n.ints("axes", 1)
    return n.op(relay.SqueezeOp, n.input(0), axis=None if axes is None else tuple(axes))


def _unsqueeze(n: Node) -> SSAValue:
    """One expand_dims per axis, in increasing order of the output position."""
    axes = n.ints("axes", 1)
    if axes is None:
        raise n.error("axes are missing")
    out_rank = len(n.shape(0)) + len(axes)
    result = n.input(0)
    for axis in sorted(a % out_rank for a in axes):
        result = n.op(relay.ExpandDimsOp, result, axis=axis)
    return result


def _pad(n: Node) -> SSAValue:
    """Pads and value are attributes before opset 11, inputs after (with
    optional `axes` from 18); ONNX lists all begins, then all ends."""
    rank = len(n.shape(0))
    pads = n.ints("pads" if n.opset < 11 else None, 1)
    if pads is None:
        raise n.error("pads are missing")
    if n.opset >= 18 and n.has_input(3):
        axes = [int(a) % rank for a in n.const(3).reshape(-1)]
        full = [0] * (2 * rank)
        for i, axis in enumerate(axes):
            full[axis], full[rank + axis] = pads[i], pads[len(axes) + i]
        pads = full
    if any(p < 0 for p in pads):
        raise n.error("negative pads (cropping) are not supported")
    if n.opset < 11:
        value = float(n.attrs.get("value", 0.0))
    else:
        value = float(n.const(2).reshape(-1)[0]) if n.has_input(2) else 0.0
    mode = n.attrs.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode not in ("constant", "edge", "reflect"):
        raise n.error(f"pad mode '{mode}' is not supported")
    widths = [w for pair in zip(pads[:rank], pads[rank:]) for w in pair]
    return n.op(
        relay.PadOp, n.input(0), pad_width=tuple(widths), pad_value=value, pad_mode=mode
    )


_TO_THE_END = 2**62
"""The end of a slice of a dynamic dimension (relay clamps `end`)."""


def _slice_bounds(
    n: Node,
    x: SSAValue,
    shape: Sequence[int],
    starts: Sequence[int],
    ends: Sequence[int],
    axes: Sequence[int],
    steps: Sequence[int],
) -> SSAValue:
    """relay.strided_slice of ONNX slice parameters: negative indices count
    from the end, bounds are clamped; negative steps are not supported."""
    rank = len(shape)
    begin, strides = [0] * rank, [1] * rank
    end = [_TO_THE_END if d < 0 else d for d in shape]
    for start, stop, axis, step in zip(starts, ends, axes, steps):
        axis %= rank
        dim = shape[axis]
        if step < 1:
            raise n.error("slices with a step below 1 are not supported")
        if dim < 0 and (start < 0 or stop < 0):
            raise n.error(
                "negative slice bounds on a dynamic dimension are not supported"
            )
        limit = dim if dim >= 0 else _TO_THE_END
        begin[axis] = min(max(start + dim if start < 0 else start, 0), limit)
        end[axis] = min(max(stop + dim if stop < 0 else stop, 0), limit)
        strides[axis] = step
    return n.op(
        relay.StridedSliceOp,
        x,
        begin=tuple(begin),
        end=tuple(end),
        strides=tuple(strides),
    )


def _slice(n: Node) -> SSAValue:
    """Starts/ends/axes are attributes before opset 10, inputs (with steps) after."""
    shape = n.shape(0)
    starts, ends = n.ints("starts", 1), n.ints("ends", 2)
    if starts is None or ends is None:
        raise n.error("starts and ends are missing")
    axes = n.ints("axes", 3, range(len(starts)))
    steps = n.ints(None, 4, [1] * len(starts))
    assert axes is not None and steps is not None
    return _slice_bounds(n, n.input(0), shape, starts, ends, axes, steps)


def _split(n: Node) -> list[SSAValue]:
    """Equal parts by default; `split` sizes as attribute (< 13) or input."""
    shape = n.shape(0)
    axis = n.attrs.get("axis", 0) % len(shape)
    sizes = n.ints("split", 1)
    if sizes is None:
        count = len(n.proto.output)
        if shape[axis] < 0:
            raise n.error("splitting a dynamic dimension is not supported")
        part = -(-shape[axis] // count)
        sizes = [min(part, shape[axis] - i * part) for i in range(count)]
    results, start = [], 0
    for size in sizes:
        results.append(
            _slice_bounds(n, n.input(0), shape, [start], [start + size], [axis], [1])
        )
        start += size
    return results


def _gather(n: Node) -> SSAValue:
    """Gather along `axis`.  Constant indices (a scalar or a list, as in
    shape arithmetic): one slice per index, concatenated, which constant
    folding and dynamic dimensions take as they are; a scalar index drops
    the axis.  Run-time indices (embeddings) and constant ones of higher
    rank: `relay.take`."""
    shape = n.shape(0)
    axis = n.attrs.get("axis", 0) % len(shape)
    if not n.is_constant(1) or n.const(1).ndim > 1:
        return n.op(relay.TakeOp, n.input(0), n.input(1), axis=axis)
    indices = n.const(1)
    dim = shape[axis]
    if dim < 0 and (indices < 0).any():
        raise n.error("negative indices into a dynamic dimension are not supported")
    picks = [
        _slice_bounds(
            n, n.input(0), shape, [i], [i + 1 if i != -1 else dim], [axis], [1]
        )
        for i in (int(v) for v in indices.reshape(-1))
    ]
    result = (
        picks[0] if len(picks) == 1 else n.op(relay.ConcatenateOp, *picks, axis=axis)
    )
    return n.op(relay.SqueezeOp, result, axis=(axis,)) if indices.ndim == 0 else result


def _tile(n: Node) -> SSAValue:
    """Each axis repeated by concatenating copies."""
    result = n.input(0)
    for axis, count in enumerate(int(r) for r in n.const(1).reshape(-1)):
        if count != 1:
            result = n.op(relay.ConcatenateOp, *[result] * count, axis=axis)
    return result


def _expand(n: Node) -> SSAValue:
    """Broadcast to `shape` by adding a zero splat of that shape (booleans
    as `i8`).  A shape computed at run time is the one the model declares
    for the result."""
    x = n.input(0)
    if n.is_constant(1):
        shape = tuple(int(d) for d in n.const(1))
    elif (declared := n.graph.declared.get(n.proto.output[0])) is not None:
        shape = declared
    else:
        raise n.error(
            "the target shape must be known at import (a constant, or the "
            "result's shape declared in the model)"
        )
    try:
        target = np.broadcast_shapes(shape, tuple(max(d, 1) for d in n.shape(0)))
    except ValueError as e:
        raise n.error(f"{n.shape(0)} does not broadcast to {shape}") from e
    type_ = x.type
    assert isinstance(type_, TensorType)
    boolean = type_.element_type == i1
    if boolean:
        x = n.op(relay.CastOp, x, dtype=IntegerType(8))
    dtype = np.int8 if boolean else element_dtype(type_.element_type)
    result = n.op(relay.AddOp, x, n.graph.constant(np.zeros(target, dtype), "zeros"))
    return n.op(relay.CastOp, result, dtype=i1) if boolean else result


def _gather_elements(n: Node) -> SSAValue:
    """`data[..., indices[i...], ...]` at each position of `indices` along
    `axis`: a `relay.take` from the flattened data at flat positions --
    computed at import for constant indices, else by index arithmetic on
    them (`indices * stride + offset`, a negative index first wrapped)."""
    shape, index_shape = n.shape(0), n.shape(1)
    if any(d < 0 for d in (*shape, *index_shape)):
        raise n.error("GatherElements needs static shapes")
    axis = n.attrs.get("axis", 0) % len(shape)
    strides = np.array([math.prod(shape[i + 1 :]) for i in range(len(shape))])
    offset = sum(
        (
            g * s
            for i, (g, s) in enumerate(zip(np.indices(index_shape), strides))
            if i != axis
        ),
        np.zeros(index_shape, np.int64),
    )
    flat = n.op(relay.ReshapeOp, n.input(0), newshape=(-1,))
    if n.is_constant(1):
        indices = n.const(1).astype(np.int64)
        indices = np.where(indices < 0, indices + shape[axis], indices)
        positions = n.graph.constant(offset + indices * strides[axis], "positions")
        return n.op(relay.TakeOp, flat, positions, axis=0)
    indices = n.input(1)
    index_type = indices.type
    assert isinstance(index_type, TensorType)
    wrapped = n.op(
        relay.WhereOp,
        n.op(relay.LessOp, indices, n.scalar(0, indices)),
        n.op(relay.AddOp, indices, n.scalar(shape[axis], indices)),
        indices,
    )
    scaled = n.op(relay.MultiplyOp, wrapped, n.scalar(int(strides[axis]), wrapped))
    offsets = offset.astype(element_dtype(index_type.element_type))
    positions = n.op(relay.AddOp, scaled, n.graph.constant(offsets, "offsets"))
    return n.op(relay.TakeOp, flat, positions, axis=0)


def _gather_nd(n: Node) -> SSAValue:
    """`data[b..., indices[b..., i..., :]]`: the last axis of `indices`
    indexes the K axes of the data after its `batch_dims` leading ones
    (which `indices` shares).  A `relay.take` from the data with those
    axes flattened into one (batches included), at positions computed at
    import for constant indices (the dynamo exporter's mask indexing), else
    by index arithmetic on each column of them (negative indices wrapped,
    times the stride; no integer `relay.sum`, which lower-te lacks)."""
    shape, index_shape = n.shape(0), n.shape(1)
    if any(d < 0 for d in (*shape, *index_shape)):
        raise n.error("GatherND needs static shapes")
    batch = n.attrs.get("batch_dims", 0)
    indexed = shape[batch : batch + index_shape[-1]]
    block = math.prod(indexed)
    strides = np.array([math.prod(indexed[i + 1 :]) for i in range(len(indexed))])
    batch_offsets = (np.arange(math.prod(shape[:batch])) * block).reshape(
        shape[:batch] + (1,) * (len(index_shape) - 1 - batch)
    )
    flat = n.op(
        relay.ReshapeOp,
        n.input(0),
        newshape=(math.prod(shape[:batch]) * block, *shape[batch + len(indexed) :]),
    )
    if n.is_constant(1):
        indices = n.const(1).astype(np.int64)
        indices = np.where(indices < 0, indices + np.array(indexed), indices)
        positions = n.graph.constant(indices @ strides + batch_offsets, "positions")
        return n.op(relay.TakeOp, flat, positions, axis=0)
    indices, last = n.input(1), len(index_shape) - 1
    index_type = indices.type
    assert isinstance(index_type, TensorType)
    dtype = element_dtype(index_type.element_type)
    positions = n.graph.constant(batch_offsets.astype(dtype), "offsets")
    for k, (size, stride) in enumerate(zip(indexed, strides)):
        index = n.op(
            relay.SqueezeOp,
            _slice_bounds(n, indices, index_shape, [k], [k + 1], [last], [1]),
            axis=(last,),
        )
        wrapped = n.op(
            relay.WhereOp,
            n.op(relay.LessOp, index, n.scalar(0, index)),
            n.op(relay.AddOp, index, n.scalar(size, index)),
            index,
        )
        scaled = n.op(relay.MultiplyOp, wrapped, n.scalar(int(stride), wrapped))
        positions = n.op(relay.AddOp, positions, scaled)
    return n.op(relay.TakeOp, flat, positions, axis=0)


def _trilu(n: Node) -> SSAValue:
    """The upper (or lower) triangle of the last two axes from diagonal
    `k`, the rest zero: a `relay.where` with a constant mask."""
    shape = n.shape(0)
    rows, columns = shape[-2:]
    if rows < 0 or columns < 0:
        raise n.error("Trilu needs static sizes of the last two axes")
    k = int(n.const(1).reshape(-1)[0]) if n.has_input(1) else 0
    ones = np.ones((rows, columns), dtype=np.bool_)
    mask = np.triu(ones, k) if n.attrs.get("upper", 1) else np.tril(ones, k)
    x = n.input(0)
    return n.op(relay.WhereOp, n.graph.constant(mask, "triangle"), x, n.scalar(0, x))


def _shifted(n: Node, x: SSAValue, axis: int, by: int, reverse: bool) -> SSAValue:
    """`x` moved `by` places along `axis` (towards lower indices with
    `reverse`), zeros where nothing moves in."""
    shape = n.shape(0)
    size, rank = shape[axis], len(shape)
    start, stop = (by, size) if reverse else (0, size - by)
    part = _slice_bounds(n, x, shape, [start], [stop], [axis], [1])
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


def _range(n: Node) -> SSAValue:
    """Folded at import when its inputs are constants (`_range_fold`); its
    length cannot depend on run-time values."""
    raise n.error("start, limit and delta must be constants (the length is the shape)")


def _cast(n: Node) -> SSAValue:
    """`relay.cast` to the element type `to` names (nothing when the input
    has it already)."""
    x = n.input(0)
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(n.attrs["to"]))
    if dtype not in _ELEMENT_TYPES:
        raise n.error(f"a cast to {dtype} is not supported")
    type_ = x.type
    assert isinstance(type_, TensorType)
    if _ELEMENT_TYPES[dtype] == type_.element_type:
        return x
    return n.op(relay.CastOp, x, dtype=_ELEMENT_TYPES[dtype])


CONVERTERS: dict[str, Converter] = {
    "Identity": _identity,
    "Dropout": _identity,
    "Relu": _unary(relay.ReluOp),
    "Sigmoid": _unary(relay.SigmoidOp),
    "Tanh": _unary(relay.TanhOp),
    "Exp": _unary(relay.ExpOp),
    "Log": _unary(relay.LogOp),
    "Sqrt": _unary(relay.SqrtOp),
    "Abs": _unary(relay.AbsOp),
    "Floor": _unary(relay.FloorOp),
    "Ceil": _unary(relay.CeilOp),
    "Round": _unary(relay.RoundOp),
    "Erf": _unary(relay.ErfOp),
    "Neg": _unary(relay.NegativeOp),
    "Add": _binary(relay.AddOp),
    "Sub": _binary(relay.SubtractOp),
    "Mul": _binary(relay.MultiplyOp),
    "Div": _binary(relay.DivideOp),
    "Pow": _pow,
    "Equal": _binary(relay.EqualOp),
    "Less": _binary(relay.LessOp),
    "LessOrEqual": _binary(relay.LessEqualOp),
    "Greater": _binary(relay.GreaterOp),
    "GreaterOrEqual": _binary(relay.GreaterEqualOp),
    "And": _binary(relay.LogicalAndOp),
    "Or": _binary(relay.LogicalOrOp),
    "Not": _unary(relay.LogicalNotOp),
    "IsNaN": _is_nan,
    "Where": lambda n: n.op(relay.WhereOp, n.input(0), n.input(1), n.input(2)),
    "Sum": _variadic(relay.AddOp),
    "Max": _variadic(relay.MaximumOp),
    "Min": _variadic(relay.MinimumOp),
    "Mean": _mean,
    "LeakyRelu": _leaky_relu,
    "PRelu": _prelu,
    "Elu": _elu,
    "Selu": _selu,
    "Softplus": _softplus,
    "Softsign": _softsign,
    "HardSigmoid": _hard_sigmoid,
    "HardSwish": _hard_swish,
    "Gelu": _gelu,
    "Sign": _sign,
    "Shrink": _shrink,
    "Clip": _clip,
    "Softmax": _softmax_like(relay.SoftmaxOp),
    "LogSoftmax": _softmax_like(relay.LogSoftmaxOp),
    "Gemm": _gemm,
    "MatMul": _matmul,
    "Conv": _conv,
    "ConvTranspose": _conv_transpose,
    "MaxPool": _pool(average=False),
    "AveragePool": _pool(average=True),
    "GlobalAveragePool": _global_pool(average=True),
    "GlobalMaxPool": _global_pool(average=False),
    "BatchNormalization": _batch_norm,
    "LRN": _lrn,
    "InstanceNormalization": _instance_norm,
    "ReduceSum": _reduce(relay.SumOp),
    "ReduceMean": _reduce(relay.MeanOp),
    "Reshape": _reshape,
    "Flatten": _flatten,
    "Transpose": _transpose,
    "Concat": _concat,
    "Squeeze": _squeeze,
    "Unsqueeze": _unsqueeze,
    "Pad": _pad,
    "Slice": _slice,
    "Split": _split,
    "Gather": _gather,
    "Tile": _tile,
    "Expand": _expand,
    "GatherElements": _gather_elements,
    "GatherND": _gather_nd,
    "Trilu": _trilu,
    "CumSum": _cumsum,
    "Range": _range,
    "Einsum": _einsum,
    "LayerNormalization": _layer_norm,
    "Cast": _cast,
}
"""ONNX op type → converter (the default domain, opsets 6–21)."""


# ----------------------------------------------------------------------------
# Constant folding at import
# ----------------------------------------------------------------------------


def _attribute_values(node: Any) -> dict[str, Any]:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


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


def _constant_of_shape(
    node: Any, attrs: dict[str, Any], inputs: list[np.ndarray]
) -> np.ndarray:
    value = (
        numpy_helper.to_array(attrs["value"]).reshape(-1)
        if "value" in attrs
        else np.zeros(1, np.float32)
    )
    return np.full(tuple(int(d) for d in inputs[0]), value[0], dtype=value.dtype)


def _shape_slice(shape: Sequence[int], attrs: dict[str, Any]) -> np.ndarray:
    """`Shape`'s value: `start`/`end` count as in Python slices."""
    return np.array(
        shape[attrs.get("start", 0) : attrs.get("end", len(shape))], np.int64
    )


SHAPE_FOLDS: dict[str, Callable[[Sequence[int], dict[str, Any]], np.ndarray]] = {
    "Shape": _shape_slice,
    "Size": lambda shape, attrs: np.array(math.prod(shape), np.int64),
}
"""Ops whose value is a function of their input's shape (and attributes):
constants wherever that shape is static."""


def _range_fold(
    node: Any, attrs: dict[str, Any], inputs: list[np.ndarray]
) -> np.ndarray:
    """`Range`: max(ceil((limit - start) / delta), 0) elements of `start`'s type."""
    start, limit, delta = (np.asarray(v).reshape(()) for v in inputs)
    count = max(math.ceil((limit - start) / delta), 0)
    return (start + np.arange(count) * delta).astype(start.dtype)


def _reduce_fold(
    reduce: Callable[..., np.ndarray],
) -> Callable[[Any, dict[str, Any], list[np.ndarray]], np.ndarray]:
    """ReduceProd/Max/Min of shape arithmetic: axes an attribute or (opset
    18) an input; none reduce everything unless `noop_with_empty_axes`."""

    def fold(node: Any, attrs: dict[str, Any], inputs: list[np.ndarray]) -> np.ndarray:
        axes = attrs.get("axes")
        if axes is None and len(inputs) > 1:
            axes = inputs[1].reshape(-1).tolist()
        if not axes and attrs.get("noop_with_empty_axes", 0):
            return inputs[0]
        axis = tuple(int(a) for a in axes) if axes else None
        return reduce(inputs[0], axis=axis, keepdims=bool(attrs.get("keepdims", 1)))

    return fold


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
    "ReduceProd": _reduce_fold(np.prod),
    "ReduceMax": _reduce_fold(np.max),
    "ReduceMin": _reduce_fold(np.min),
    "Mod": _mod_fold,
}
"""NumPy folds of the ops without a converter that shape arithmetic uses,
and of the bulk of real models' constants (`Constant`, `ConstantOfShape`)."""

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
class _FoldingGraph(_Graph):
    """A scratch graph that a node of constants is converted in: its
    `relay.constant`s hold a placeholder and keep their arrays aside, which
    `_evaluated` gives the relay interpreter."""

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
    graph: _Graph, node: Any, attrs: dict[str, Any], converter: Converter
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


def _fold(node: Any, opset: int, inputs: list[np.ndarray]) -> list[np.ndarray]:
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


def _static_shape(graph: _Graph, node: Any) -> np.ndarray | None:
    """`Shape` or `Size` of a value whose type is static: a constant."""
    if node.op_type not in SHAPE_FOLDS or node.input[0] not in graph.values:
        return None
    type_ = graph.values[node.input[0]].type
    assert isinstance(type_, TensorType)
    shape = list(type_.get_shape())
    if any(d < 0 for d in shape):
        return None
    return SHAPE_FOLDS[node.op_type](shape, _attribute_values(node))


# ----------------------------------------------------------------------------
# The graph
# ----------------------------------------------------------------------------


def _tensor_type(value_info: Any, batch: Batch) -> TensorType[Attribute]:
    """A graph input's type; symbolic dimensions (and the batch dimension,
    with batch="dynamic") are `?`."""
    tensor = value_info.type.tensor_type
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type))
    dims = [
        d.dim_value if d.HasField("dim_value") else relay.DYNAMIC
        for d in tensor.shape.dim
    ]
    if any(d < 0 and d != relay.DYNAMIC for d in dims):
        raise HeteroError(
            f"graph input '{value_info.name}': negative dimension in {dims}"
        )
    if batch == "dynamic" and dims:
        dims[0] = relay.DYNAMIC
    return TensorType(element_type(dtype, f"graph input '{value_info.name}'"), dims)


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


def _convert_node(graph: _Graph, node: Any) -> None:
    attrs = _attribute_values(node)
    inputs = [i for i in node.input if i]
    known = all(i in graph.constants for i in inputs)
    if (static := _static_shape(graph, node)) is not None:
        graph.constants[node.output[0]] = static
        return
    if node.op_type in _NATIVE_FOLDS and known:
        graph.constants[node.output[0]] = _NATIVE_FOLDS[node.op_type](
            node, attrs, [graph.constants[i] for i in inputs]
        )
        return
    converter = CONVERTERS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
    foldable = known and inputs and node.domain in ("", "ai.onnx")
    if foldable and converter is not None:
        outputs = _fold_by_converter(graph, node, attrs, converter)
        graph.constants.update(zip(node.output, outputs))
        return
    if foldable and node.op_type not in _NOT_FOLDED:
        try:
            outputs = _fold(node, graph.opset, [graph.constants[i] for i in inputs])
        except Exception as e:  # the reference evaluator's own complaint
            raise HeteroError(
                f"ONNX node '{node.name}' ({node.op_type}): cannot fold constant inputs: {e}"
            ) from e
        graph.constants.update(zip(node.output, outputs))
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


def _node_label(node: Any) -> str:
    name = node.name or (node.output[0] if node.output else "")
    return f"ONNX node '{name}' ({node.op_type})"


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


def from_onnx(
    model_or_path: Any,
    batch: Batch = None,
    *,
    resource_threshold: int = RESOURCE_THRESHOLD,
) -> ModuleOp:
    """The relay module of an ONNX model (a `ModelProto` or a path).

    `batch="dynamic"` makes the first dimension of every graph input `?`.
    Constants with more than `resource_threshold` elements (splats excepted)
    become `dense_resource`s.
    """
    if batch not in (None, "dynamic"):
        raise HeteroError(f"batch must be None or 'dynamic', got {batch!r}")
    model = _load(model_or_path)
    graph_proto = model.graph
    initializers = {}
    for tensor in graph_proto.initializer:
        with _reading(f"initializer '{tensor.name}'"):
            initializers[tensor.name] = numpy_helper.to_array(tensor)
    params = [v for v in graph_proto.input if v.name not in initializers]
    types = []
    for value_info in params:
        with _reading(f"graph input '{value_info.name}'"):
            types.append(_tensor_type(value_info, batch))
    block = Block(arg_types=types)
    graph = _Graph(
        _default_opset(model),
        block,
        resource_threshold,
        constants=initializers,
        declared=_declared_shapes(graph_proto) if batch is None else {},
    )
    for value_info, arg in zip(params, block.args):
        arg.name_hint = handle_name(value_info.name)
        graph.values[value_info.name] = arg
    for node in graph_proto.node:
        with _reading(_node_label(node)):
            _convert_node(graph, node)
    outputs = []
    for output in graph_proto.output:
        if output.name not in graph.values and output.name not in graph.constants:
            raise HeteroError(
                f"graph output '{output.name}' is not produced by any node"
            )
        outputs.append(graph.value(output.name))
    result = outputs[0] if len(outputs) == 1 else graph.emit(relay.TupleOp(outputs))
    block.add_op(relay.ReturnOp(result))
    main = relay.FuncOp("main", types, result.type, Region(block))
    return ModuleOp([main])
