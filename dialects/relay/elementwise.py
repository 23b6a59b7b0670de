"""The elementwise tensor operators: arithmetic, comparisons, logic and
activations, element by element with NumPy broadcasting.

Each op is the home of its meaning: besides its type it declares, as class
attributes, its fusion pattern (`PATTERN`, on the family bases) and its
NumPy rule (`NUMPY`), which the reference interpreter runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.relay.base import OpPattern, TensorOp, common_element_type
from hetero.dialects.relay.params import FloatParam
from hetero.dialects.relay.shapes import Shape, broadcast_shapes

NumpyRule = Callable[..., Any]
"""An op's NumPy rule: operand arrays and attribute values (by name) to its value."""


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
    where `b` is 0 (what the compiled code computes: `_int_divide` of
    `te/templates/elementwise.py`), exact for all 64-bit values (no trip
    through float)."""
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


class ElementwiseOp(TensorOp):
    """Base of the elementwise operators, which declare their meaning on the
    class: `NUMPY`, the reference interpreter's rule, a function of the
    operand arrays and the op's attribute values (by name)."""

    NUMPY: ClassVar[NumpyRule]
    """The op's value in NumPy: what the compiled code is compared against."""


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


@irdl_op_definition
class EqualOp(ComparisonOp):
    """`lhs == rhs`."""

    name = "relay.equal"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.equal)


@irdl_op_definition
class NotEqualOp(ComparisonOp):
    """`lhs != rhs` (true where either is NaN)."""

    name = "relay.not_equal"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.not_equal)


@irdl_op_definition
class LessOp(ComparisonOp):
    """`lhs < rhs`."""

    name = "relay.less"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.less)


@irdl_op_definition
class LessEqualOp(ComparisonOp):
    """`lhs <= rhs`."""

    name = "relay.less_equal"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.less_equal)


@irdl_op_definition
class GreaterOp(ComparisonOp):
    """`lhs > rhs`."""

    name = "relay.greater"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.greater)


@irdl_op_definition
class GreaterEqualOp(ComparisonOp):
    """`lhs >= rhs`."""

    name = "relay.greater_equal"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.greater_equal)


@irdl_op_definition
class LogicalAndOp(LogicalBinaryOp):
    """`lhs and rhs`."""

    name = "relay.logical_and"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.logical_and)


@irdl_op_definition
class LogicalOrOp(LogicalBinaryOp):
    """`lhs or rhs`."""

    name = "relay.logical_or"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.logical_or)


@irdl_op_definition
class LogicalNotOp(BooleanOperands, ElementwiseUnaryOp):
    """`not x` on an `i1` tensor."""

    name = "relay.logical_not"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.logical_not)


@irdl_op_definition
class WhereOp(ElementwiseOp):
    """`condition ? x : y` element by element, the three broadcast together
    (NumPy's `where`); `condition` is `i1`, `x` and `y` share a type."""

    name = "relay.where"

    PATTERN: ClassVar[OpPattern] = OpPattern.BROADCAST
    NUMPY: ClassVar[NumpyRule] = staticmethod(np.where)

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


@irdl_op_definition
class AddOp(ElementwiseBinaryOp):
    """`lhs + rhs`."""

    name = "relay.add"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.add)


@irdl_op_definition
class SubtractOp(ElementwiseBinaryOp):
    """`lhs - rhs`."""

    name = "relay.subtract"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.subtract)


@irdl_op_definition
class MultiplyOp(ElementwiseBinaryOp):
    """`lhs * rhs`."""

    name = "relay.multiply"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.multiply)


@irdl_op_definition
class DivideOp(ElementwiseBinaryOp):
    """`lhs / rhs`."""

    name = "relay.divide"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_divide)


@irdl_op_definition
class MaximumOp(ElementwiseBinaryOp):
    """`max(lhs, rhs)`."""

    name = "relay.maximum"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_fmax)


@irdl_op_definition
class MinimumOp(ElementwiseBinaryOp):
    """`min(lhs, rhs)`."""

    name = "relay.minimum"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_fmin)


@irdl_op_definition
class PowerOp(ElementwiseBinaryOp):
    """`lhs ** rhs`."""

    name = "relay.power"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.power)


@irdl_op_definition
class NegativeOp(ElementwiseUnaryOp):
    """`-x`."""

    name = "relay.negative"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.negative)


@irdl_op_definition
class ExpOp(ElementwiseUnaryOp):
    """`e ** x`."""

    name = "relay.exp"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.exp)


@irdl_op_definition
class TanhOp(ElementwiseUnaryOp):
    """`tanh(x)`."""

    name = "relay.tanh"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.tanh)


@irdl_op_definition
class SigmoidOp(ElementwiseUnaryOp):
    """`1 / (1 + e ** -x)`."""

    name = "relay.sigmoid"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_sigmoid)


@irdl_op_definition
class SiluOp(ElementwiseUnaryOp):
    """`x * sigmoid(x)` (SiLU, swish: EfficientNet's activation), one op so
    that it is one epilogue of the op before it (`simplify-activations`)."""

    name = "relay.silu"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_silu)


@irdl_op_definition
class HardSwishOp(ElementwiseUnaryOp):
    """`x * clip(x / 6 + 1 / 2, 0, 1)` (MobileNet-v3's activation, ONNX's
    HardSwish), one op for the same reason as `silu`."""

    name = "relay.hard_swish"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_hard_swish)


@irdl_op_definition
class ReluOp(ElementwiseUnaryOp):
    """`max(x, 0)`."""

    name = "relay.relu"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_relu)


@irdl_op_definition
class LogOp(ElementwiseUnaryOp):
    """Natural logarithm."""

    name = "relay.log"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.log)


@irdl_op_definition
class SqrtOp(ElementwiseUnaryOp):
    """Square root."""

    name = "relay.sqrt"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.sqrt)


@irdl_op_definition
class AbsOp(ElementwiseUnaryOp):
    """`|x|`."""

    name = "relay.abs"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.abs)


@irdl_op_definition
class FloorOp(ElementwiseUnaryOp):
    """The largest integer not above `x` (a float)."""

    name = "relay.floor"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.floor)


@irdl_op_definition
class CeilOp(ElementwiseUnaryOp):
    """The smallest integer not below `x` (a float)."""

    name = "relay.ceil"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.ceil)


@irdl_op_definition
class RoundOp(ElementwiseUnaryOp):
    """`x` rounded to the nearest integer, halves to even (NumPy's `round`,
    ONNX's `Round`)."""

    name = "relay.round"

    NUMPY: ClassVar[NumpyRule] = staticmethod(np.round)


@irdl_op_definition
class ErfOp(ElementwiseUnaryOp):
    """The error function (GELU's `x * (1 + erf(x / sqrt 2)) / 2`)."""

    name = "relay.erf"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_erf)


@irdl_op_definition
class ClipOp(ElementwiseUnaryOp):
    """`x` clamped to `[a_min, a_max]`."""

    name = "relay.clip"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_clip)

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


ELEMENTWISE_OPS: tuple[type[TensorOp], ...] = (
    AddOp,
    SubtractOp,
    MultiplyOp,
    DivideOp,
    MaximumOp,
    MinimumOp,
    PowerOp,
    EqualOp,
    NotEqualOp,
    LessOp,
    LessEqualOp,
    GreaterOp,
    GreaterEqualOp,
    LogicalAndOp,
    LogicalOrOp,
    LogicalNotOp,
    WhereOp,
    NegativeOp,
    ExpOp,
    TanhOp,
    SigmoidOp,
    SiluOp,
    HardSwishOp,
    ReluOp,
    LogOp,
    SqrtOp,
    AbsOp,
    FloorOp,
    CeilOp,
    RoundOp,
    ErfOp,
    ClipOp,
)
"""The ops of this family, in the order the `Relay` dialect lists them."""
