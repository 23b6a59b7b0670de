"""The elementwise tensor operators: arithmetic, comparisons, logic and
activations, element by element with NumPy broadcasting.

Each op is the home of its meaning: besides its type it declares, as class
attributes, its fusion pattern (`PATTERN`, on the family bases), its NumPy
rule (`NUMPY`), which the reference interpreter runs, the scalar body of its
compute template (`SCALAR`), which `lower-te` applies to each element, and
the ONNX operators it imports (`ONNX`).  `@elementwise_op` defines an op and
adds it to `ELEMENTWISE_OPS`, where the ONNX importer finds it: adding an
elementwise op is one class here (docs/adding-an-op.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import Attribute, Operation
from xdsl.irdl import irdl_op_definition, operand_def
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.relay.base import (
    NumpyRule,
    OpPattern,
    TensorOp,
    common_element_type,
)
from hetero.dialects.relay.params import FloatParam
from hetero.dialects.relay.shapes import Shape, broadcast_shapes

_Op = TypeVar("_Op", bound="ElementwiseOp")

ScalarBody = Callable[..., Any]
"""The scalar body of an op's compute template: `(emitter, op, *elements)`
to the result element.  The emitter is te's `Emitter`, duck-typed (`op`
appends an operation and returns its result, `constant`, `fmax`, `fmin`),
so that the dialect needs nothing of te; the elements are the operands'
`SSAValue`s at the output element's (broadcast) index."""


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """Written through tanh: stable for large |x|, no overflow warnings."""
    half = x.dtype.type(0.5)
    return half + half * np.tanh(half * x)


def _silu(x: np.ndarray) -> np.ndarray:
    return x * _sigmoid(x)


def _hard_swish(x: np.ndarray) -> np.ndarray:
    return x * np.clip(x / x.dtype.type(6) + x.dtype.type(0.5), 0, 1)


def _fmax(a: np.ndarray, b: Any) -> np.ndarray:
    """`a > b ? a : b`, TVM's float max (and MLAS's): `b` where either is
    NaN, unlike `np.maximum` — the compiled code's semantics."""
    return np.where(a > b, a, b)


def _fmin(a: np.ndarray, b: Any) -> np.ndarray:
    """`a < b ? a : b` (see `_fmax`)."""
    return np.where(a < b, a, b)


def _divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`a / b`; on integers truncated toward zero (TVM's `truncdiv`), 0
    where `b` is 0 (what the compiled code computes: `_scalar_int_divide`),
    exact for all 64-bit values (no trip through float)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind not in "iu" or b.dtype.kind not in "iu":
        return np.divide(a, b)
    with np.errstate(divide="ignore", over="ignore"):
        floor = np.floor_divide(a, b)
        inexact = (a - floor * b != 0) & ((a < 0) != (b < 0))
        return np.where(b == 0, 0, floor + inexact).astype(np.result_type(a, b))


def _erf(x: np.ndarray) -> np.ndarray:
    """The error function, elementwise (Python's `math.erf`: NumPy has none)."""
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


def _relu(x: np.ndarray) -> np.ndarray:
    return _fmax(x, x.dtype.type(0))


def _clip(x: np.ndarray, a_min: float, a_max: float) -> np.ndarray:
    low = _fmax(x, x.dtype.type(a_min))
    return _fmin(low, x.dtype.type(a_max))


def _emit(cls: type[Operation]) -> ScalarBody:
    """The scalar body that is one operation `cls` of the elements."""
    return lambda e, op, *elements: e.op(cls(*elements))


def _compare(cls: type[arith.CmpfOp | arith.CmpiOp], predicate: str) -> ScalarBody:
    return lambda e, op, a, b: e.op(cls(a, b, predicate))


def _comparison(ordered: str, signed: str) -> dict[str, ScalarBody]:
    """`arith.cmpf` with predicate `ordered` on floats (NumPy's: a NaN
    compares false, except with `!=`), `arith.cmpi` with `signed` on ints."""
    return {
        "float": _compare(arith.CmpfOp, ordered),
        "int": _compare(arith.CmpiOp, signed),
    }


def _scalar_sigmoid(e: Any, op: Operation, x: Any) -> Any:
    """1 / (1 + exp(-x)) for x ≥ 0, exp(x) / (1 + exp(x)) below: the exp of
    -|x| never overflows (no inf / inf), and a large negative x keeps its
    tiny (denormal) result, to a few ulps, rather than 0."""
    exp = e.op(math_dialect.ExpOp(e.fmin(x, e.op(arith.NegfOp(x)))))
    negative = e.op(arith.CmpfOp(x, e.constant(0.0, x.type), "olt"))
    numerator = e.op(arith.SelectOp(negative, exp, e.constant(1.0, x.type)))
    denominator = e.op(arith.AddfOp(exp, e.constant(1.0, x.type)))
    return e.op(arith.DivfOp(numerator, denominator))


def _scalar_silu(e: Any, op: Operation, x: Any) -> Any:
    return e.op(arith.MulfOp(x, _scalar_sigmoid(e, op, x)))


def _scalar_hard_swish(e: Any, op: Operation, x: Any) -> Any:
    sixth, half = e.constant(1 / 6, x.type), e.constant(0.5, x.type)
    gate = e.op(arith.AddfOp(e.op(arith.MulfOp(x, sixth)), half))
    clipped = e.fmin(e.fmax(gate, e.constant(0.0, x.type)), e.constant(1.0, x.type))
    return e.op(arith.MulfOp(x, clipped))


def _scalar_clip(e: Any, op: ClipOp, x: Any) -> Any:
    low = e.fmax(x, e.constant(op.a_min, x.type))
    return e.fmin(low, e.constant(op.a_max, x.type))


def _scalar_int_divide(e: Any, op: Operation, a: Any, b: Any) -> Any:
    """`a / b` truncated toward zero (TVM's `truncdiv`, C's `/`), 0 where
    `b` is 0 and `-a` (wrapping) where `b` is -1: the two cases where x86's
    `idiv` traps, which must not bring the process down."""
    zero, one = e.constant(0, a.type), e.constant(1, a.type)
    minus_one = e.constant(-1, a.type)
    by_zero = e.op(arith.CmpiOp(b, zero, "eq"))
    by_minus_one = e.op(arith.CmpiOp(b, minus_one, "eq"))
    safe = e.op(arith.SelectOp(e.op(arith.OrIOp(by_zero, by_minus_one)), one, b))
    quotient = e.op(arith.DivSIOp(a, safe))
    negated = e.op(arith.SelectOp(by_minus_one, e.op(arith.SubiOp(zero, a)), quotient))
    return e.op(arith.SelectOp(by_zero, zero, negated))


def _scalar_int_negative(e: Any, op: Operation, x: Any) -> Any:
    return e.op(arith.SubiOp(e.constant(0, x.type), x))


class ElementwiseOp(TensorOp):
    """Base of the elementwise operators, which declare their meaning on the
    class: `NUMPY`, the reference interpreter's rule, a function of the
    operand arrays and the op's attribute values (by name); `SCALAR`, its
    compute template's body for each kind of element; `ONNX`, the ONNX
    operators that are this op."""

    NUMPY: ClassVar[NumpyRule]
    """The op's value in NumPy: what the compiled code is compared against."""

    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {}
    """Element kind of the first operand (`float`; `int`, the signless
    integers; `bool`, `i1`) → the scalar body `lower-te` computes an output
    element with.  A kind without a body is not lowered (`exp` of an
    integer): a located error."""

    ONNX: ClassVar[tuple[str, ...]] = ()
    """ONNX operators (default domain) that are this op, the node's inputs
    its operands in order (binary ops with the broadcasting of old opsets):
    the importer converts them so, ahead of its own converters."""


ELEMENTWISE_OPS: list[type[ElementwiseOp]] = []
"""The ops of this family, in the order they are defined (and the `Relay`
dialect lists them); `@elementwise_op` appends to it."""


def elementwise_op(cls: type[_Op]) -> type[_Op]:
    """`irdl_op_definition` of an elementwise op class, which also joins
    `ELEMENTWISE_OPS`: the ONNX importer finds its `ONNX` names there."""
    op = irdl_op_definition(cls)
    ELEMENTWISE_OPS.append(op)
    return op


class ElementwiseBinaryOp(ElementwiseOp):
    """`lhs op rhs` element by element, with NumPy broadcasting."""

    PATTERN: ClassVar[OpPattern] = OpPattern.BROADCAST

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return broadcast_shapes(shapes[0], shapes[1])


class ElementwiseUnaryOp(ElementwiseOp):
    """A function applied to each element; the shape is unchanged."""

    PATTERN: ClassVar[OpPattern] = OpPattern.ELEMWISE

    x = operand_def(TensorType)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return shapes[0]


class ComparisonOp(ElementwiseBinaryOp):
    """`lhs <relation> rhs` element by element, with NumPy broadcasting: an
    `i1` tensor (the operands share one element type)."""

    @classmethod
    def infer_element_type(
        cls,
        tensors: Sequence[TensorType[Attribute]],
        attributes: Mapping[str, Attribute],
    ) -> Attribute:
        common_element_type(tensors)
        return i1


class BooleanOperands:
    """Mixin of the logical operators: `i1` operands, an `i1` result."""

    @classmethod
    def infer_element_type(
        cls,
        tensors: Sequence[TensorType[Attribute]],
        attributes: Mapping[str, Attribute],
    ) -> Attribute:
        for index, t in enumerate(tensors):
            if t.element_type != i1:
                raise VerifyException(
                    f"operand {index} must be of i1, got {t.element_type}"
                )
        return i1


class LogicalBinaryOp(BooleanOperands, ElementwiseBinaryOp):
    """A logical operator on `i1` tensors, with NumPy broadcasting."""


@elementwise_op
class AddOp(ElementwiseBinaryOp):
    """`lhs + rhs`."""

    name = "relay.add"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.add)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {
        "float": _emit(arith.AddfOp),
        "int": _emit(arith.AddiOp),
    }
    ONNX: ClassVar[tuple[str, ...]] = ("Add",)


@elementwise_op
class SubtractOp(ElementwiseBinaryOp):
    """`lhs - rhs`."""

    name = "relay.subtract"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.subtract)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {
        "float": _emit(arith.SubfOp),
        "int": _emit(arith.SubiOp),
    }
    ONNX: ClassVar[tuple[str, ...]] = ("Sub",)


@elementwise_op
class MultiplyOp(ElementwiseBinaryOp):
    """`lhs * rhs`."""

    name = "relay.multiply"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.multiply)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {
        "float": _emit(arith.MulfOp),
        "int": _emit(arith.MuliOp),
    }
    ONNX: ClassVar[tuple[str, ...]] = ("Mul",)


@elementwise_op
class DivideOp(ElementwiseBinaryOp):
    """`lhs / rhs`."""

    name = "relay.divide"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_divide)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {
        "float": _emit(arith.DivfOp),
        "int": _scalar_int_divide,
    }
    ONNX: ClassVar[tuple[str, ...]] = ("Div",)


@elementwise_op
class MaximumOp(ElementwiseBinaryOp):
    """`max(lhs, rhs)`."""

    name = "relay.maximum"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_fmax)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {
        "float": lambda e, op, a, b: e.fmax(a, b),
        "int": _emit(arith.MaxSIOp),
    }


@elementwise_op
class MinimumOp(ElementwiseBinaryOp):
    """`min(lhs, rhs)`."""

    name = "relay.minimum"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_fmin)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {
        "float": lambda e, op, a, b: e.fmin(a, b),
        "int": _emit(arith.MinSIOp),
    }


@elementwise_op
class PowerOp(ElementwiseBinaryOp):
    """`lhs ** rhs`.  ONNX's `Pow` has its own converter
    (`frontends/onnx/elementwise.py`: small constant exponents as products)."""

    name = "relay.power"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.power)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {"float": _emit(math_dialect.PowFOp)}


@elementwise_op
class EqualOp(ComparisonOp):
    """`lhs == rhs`."""

    name = "relay.equal"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.equal)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {
        **_comparison("oeq", "eq"),
        "bool": _compare(arith.CmpiOp, "eq"),
    }
    ONNX: ClassVar[tuple[str, ...]] = ("Equal",)


@elementwise_op
class NotEqualOp(ComparisonOp):
    """`lhs != rhs` (true where either is NaN)."""

    name = "relay.not_equal"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.not_equal)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {
        **_comparison("une", "ne"),
        "bool": _compare(arith.CmpiOp, "ne"),
    }


@elementwise_op
class LessOp(ComparisonOp):
    """`lhs < rhs`."""

    name = "relay.less"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.less)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = _comparison("olt", "slt")
    ONNX: ClassVar[tuple[str, ...]] = ("Less",)


@elementwise_op
class LessEqualOp(ComparisonOp):
    """`lhs <= rhs`."""

    name = "relay.less_equal"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.less_equal)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = _comparison("ole", "sle")
    ONNX: ClassVar[tuple[str, ...]] = ("LessOrEqual",)


@elementwise_op
class GreaterOp(ComparisonOp):
    """`lhs > rhs`."""

    name = "relay.greater"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.greater)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = _comparison("ogt", "sgt")
    ONNX: ClassVar[tuple[str, ...]] = ("Greater",)


@elementwise_op
class GreaterEqualOp(ComparisonOp):
    """`lhs >= rhs`."""

    name = "relay.greater_equal"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.greater_equal)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = _comparison("oge", "sge")
    ONNX: ClassVar[tuple[str, ...]] = ("GreaterOrEqual",)


@elementwise_op
class LogicalAndOp(LogicalBinaryOp):
    """`lhs and rhs`."""

    name = "relay.logical_and"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.logical_and)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {"bool": _emit(arith.AndIOp)}
    ONNX: ClassVar[tuple[str, ...]] = ("And",)


@elementwise_op
class LogicalOrOp(LogicalBinaryOp):
    """`lhs or rhs`."""

    name = "relay.logical_or"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.logical_or)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {"bool": _emit(arith.OrIOp)}
    ONNX: ClassVar[tuple[str, ...]] = ("Or",)


@elementwise_op
class LogicalNotOp(BooleanOperands, ElementwiseUnaryOp):
    """`not x` on an `i1` tensor."""

    name = "relay.logical_not"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.logical_not)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {
        "bool": lambda e, op, x: e.op(arith.XOrIOp(x, e.constant(1, x.type)))
    }
    ONNX: ClassVar[tuple[str, ...]] = ("Not",)


@elementwise_op
class WhereOp(ElementwiseOp):
    """`condition ? x : y` element by element, the three broadcast together
    (NumPy's `where`); `condition` is `i1`, `x` and `y` share a type.  Its
    scalar body is keyed by the condition's kind: a `select` of any type."""

    name = "relay.where"

    PATTERN: ClassVar[OpPattern] = OpPattern.BROADCAST
    NUMPY: ClassVar[NumpyRule] = staticmethod(np.where)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {"bool": _emit(arith.SelectOp)}
    ONNX: ClassVar[tuple[str, ...]] = ("Where",)

    condition = operand_def(TensorType)
    x = operand_def(TensorType)
    y = operand_def(TensorType)

    @classmethod
    def infer_element_type(
        cls,
        tensors: Sequence[TensorType[Attribute]],
        attributes: Mapping[str, Attribute],
    ) -> Attribute:
        if tensors[0].element_type != i1:
            raise VerifyException(
                f"the condition must be of i1, got {tensors[0].element_type}"
            )
        return common_element_type(tensors[1:])

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return broadcast_shapes(broadcast_shapes(shapes[0], shapes[1]), shapes[2])


@elementwise_op
class NegativeOp(ElementwiseUnaryOp):
    """`-x`."""

    name = "relay.negative"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.negative)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {
        "float": _emit(arith.NegfOp),
        "int": _scalar_int_negative,
    }
    ONNX: ClassVar[tuple[str, ...]] = ("Neg",)


@elementwise_op
class ExpOp(ElementwiseUnaryOp):
    """`e ** x`."""

    name = "relay.exp"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.exp)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {"float": _emit(math_dialect.ExpOp)}
    ONNX: ClassVar[tuple[str, ...]] = ("Exp",)


@elementwise_op
class TanhOp(ElementwiseUnaryOp):
    """`tanh(x)`.  Its scalar body is te's (`TARGET_SCALARS` of
    `te/templates/elementwise.py`): it depends on the target, which the
    dialect does not know (`math.tanh` on a CPU, through `exp` elsewhere)."""

    name = "relay.tanh"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.tanh)
    ONNX: ClassVar[tuple[str, ...]] = ("Tanh",)


@elementwise_op
class SigmoidOp(ElementwiseUnaryOp):
    """`1 / (1 + e ** -x)`."""

    name = "relay.sigmoid"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_sigmoid)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {"float": _scalar_sigmoid}
    ONNX: ClassVar[tuple[str, ...]] = ("Sigmoid",)


@elementwise_op
class SiluOp(ElementwiseUnaryOp):
    """`x * sigmoid(x)` (SiLU, swish: EfficientNet's activation), one op so
    that it is one epilogue of the op before it (`simplify-activations`)."""

    name = "relay.silu"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_silu)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {"float": _scalar_silu}


@elementwise_op
class HardSwishOp(ElementwiseUnaryOp):
    """`x * clip(x / 6 + 1 / 2, 0, 1)` (MobileNet-v3's activation, ONNX's
    HardSwish), one op for the same reason as `silu`."""

    name = "relay.hard_swish"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_hard_swish)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {"float": _scalar_hard_swish}
    ONNX: ClassVar[tuple[str, ...]] = ("HardSwish",)


@elementwise_op
class ReluOp(ElementwiseUnaryOp):
    """`max(x, 0)`."""

    name = "relay.relu"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_relu)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {
        "float": lambda e, op, x: e.fmax(x, e.constant(0.0, x.type)),
        "int": lambda e, op, x: e.op(arith.MaxSIOp(x, e.constant(0, x.type))),
    }
    ONNX: ClassVar[tuple[str, ...]] = ("Relu",)


@elementwise_op
class LogOp(ElementwiseUnaryOp):
    """Natural logarithm."""

    name = "relay.log"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.log)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {"float": _emit(math_dialect.LogOp)}
    ONNX: ClassVar[tuple[str, ...]] = ("Log",)


@elementwise_op
class SinOp(ElementwiseUnaryOp):
    """Sine (of radians: rotary position embeddings' angles)."""

    name = "relay.sin"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.sin)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {"float": _emit(math_dialect.SinOp)}
    ONNX: ClassVar[tuple[str, ...]] = ("Sin",)


@elementwise_op
class CosOp(ElementwiseUnaryOp):
    """Cosine (of radians)."""

    name = "relay.cos"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.cos)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {"float": _emit(math_dialect.CosOp)}
    ONNX: ClassVar[tuple[str, ...]] = ("Cos",)


@elementwise_op
class SqrtOp(ElementwiseUnaryOp):
    """Square root."""

    name = "relay.sqrt"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.sqrt)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {"float": _emit(math_dialect.SqrtOp)}
    ONNX: ClassVar[tuple[str, ...]] = ("Sqrt",)


@elementwise_op
class AbsOp(ElementwiseUnaryOp):
    """`|x|`."""

    name = "relay.abs"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.abs)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {
        "float": _emit(math_dialect.AbsFOp),
        "int": lambda e, op, x: e.op(arith.MaxSIOp(x, _scalar_int_negative(e, op, x))),
    }
    ONNX: ClassVar[tuple[str, ...]] = ("Abs",)


@elementwise_op
class FloorOp(ElementwiseUnaryOp):
    """The largest integer not above `x` (a float)."""

    name = "relay.floor"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.floor)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {"float": _emit(math_dialect.FloorOp)}
    ONNX: ClassVar[tuple[str, ...]] = ("Floor",)


@elementwise_op
class CeilOp(ElementwiseUnaryOp):
    """The smallest integer not below `x` (a float)."""

    name = "relay.ceil"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.ceil)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {"float": _emit(math_dialect.CeilOp)}
    ONNX: ClassVar[tuple[str, ...]] = ("Ceil",)


@elementwise_op
class RoundOp(ElementwiseUnaryOp):
    """`x` rounded to the nearest integer, halves to even (NumPy's `round`,
    ONNX's `Round`)."""

    name = "relay.round"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.round)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {
        "float": _emit(math_dialect.RoundEvenOp)
    }
    ONNX: ClassVar[tuple[str, ...]] = ("Round",)


@elementwise_op
class ErfOp(ElementwiseUnaryOp):
    """The error function (GELU's `x * (1 + erf(x / sqrt 2)) / 2`)."""

    name = "relay.erf"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_erf)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {"float": _emit(math_dialect.ErfOp)}
    ONNX: ClassVar[tuple[str, ...]] = ("Erf",)


@elementwise_op
class ClipOp(ElementwiseUnaryOp):
    """`x` clamped to `[a_min, a_max]`.  ONNX's `Clip` has its own converter
    (its bounds are attributes or inputs, by opset)."""

    name = "relay.clip"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_clip)
    SCALAR: ClassVar[Mapping[str, ScalarBody]] = {"float": _scalar_clip}

    a_min = FloatParam()
    a_max = FloatParam()

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        a_min, a_max = cls.a_min.read(attributes), cls.a_max.read(attributes)
        if a_min > a_max:
            raise VerifyException(f"a_min ({a_min}) must not exceed a_max ({a_max})")
        return shapes[0]
