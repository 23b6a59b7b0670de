"""The elementwise tensor operators: arithmetic, comparisons, logic and
activations, element by element with NumPy broadcasting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.relay.base import OpPattern, TensorOp, common_element_type
from hetero.dialects.relay.params import FloatParam
from hetero.dialects.relay.shapes import Shape, broadcast_shapes


class ElementwiseBinaryOp(TensorOp):
    """`lhs op rhs` element by element, with NumPy broadcasting."""

    PATTERN: ClassVar[OpPattern] = OpPattern.BROADCAST

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return broadcast_shapes(shapes[0], shapes[1])


class ElementwiseUnaryOp(TensorOp):
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


@irdl_op_definition
class NotEqualOp(ComparisonOp):
    """`lhs != rhs` (true where either is NaN)."""

    name = "relay.not_equal"


@irdl_op_definition
class LessOp(ComparisonOp):
    """`lhs < rhs`."""

    name = "relay.less"


@irdl_op_definition
class LessEqualOp(ComparisonOp):
    """`lhs <= rhs`."""

    name = "relay.less_equal"


@irdl_op_definition
class GreaterOp(ComparisonOp):
    """`lhs > rhs`."""

    name = "relay.greater"


@irdl_op_definition
class GreaterEqualOp(ComparisonOp):
    """`lhs >= rhs`."""

    name = "relay.greater_equal"


@irdl_op_definition
class LogicalAndOp(LogicalBinaryOp):
    """`lhs and rhs`."""

    name = "relay.logical_and"


@irdl_op_definition
class LogicalOrOp(LogicalBinaryOp):
    """`lhs or rhs`."""

    name = "relay.logical_or"


@irdl_op_definition
class LogicalNotOp(BooleanOperands, ElementwiseUnaryOp):
    """`not x` on an `i1` tensor."""

    name = "relay.logical_not"


@irdl_op_definition
class WhereOp(TensorOp):
    """`condition ? x : y` element by element, the three broadcast together
    (NumPy's `where`); `condition` is `i1`, `x` and `y` share a type."""

    name = "relay.where"

    PATTERN: ClassVar[OpPattern] = OpPattern.BROADCAST

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


@irdl_op_definition
class SubtractOp(ElementwiseBinaryOp):
    """`lhs - rhs`."""

    name = "relay.subtract"


@irdl_op_definition
class MultiplyOp(ElementwiseBinaryOp):
    """`lhs * rhs`."""

    name = "relay.multiply"


@irdl_op_definition
class DivideOp(ElementwiseBinaryOp):
    """`lhs / rhs`."""

    name = "relay.divide"


@irdl_op_definition
class MaximumOp(ElementwiseBinaryOp):
    """`max(lhs, rhs)`."""

    name = "relay.maximum"


@irdl_op_definition
class MinimumOp(ElementwiseBinaryOp):
    """`min(lhs, rhs)`."""

    name = "relay.minimum"


@irdl_op_definition
class PowerOp(ElementwiseBinaryOp):
    """`lhs ** rhs`."""

    name = "relay.power"


@irdl_op_definition
class NegativeOp(ElementwiseUnaryOp):
    """`-x`."""

    name = "relay.negative"


@irdl_op_definition
class ExpOp(ElementwiseUnaryOp):
    """`e ** x`."""

    name = "relay.exp"


@irdl_op_definition
class TanhOp(ElementwiseUnaryOp):
    """`tanh(x)`."""

    name = "relay.tanh"


@irdl_op_definition
class SigmoidOp(ElementwiseUnaryOp):
    """`1 / (1 + e ** -x)`."""

    name = "relay.sigmoid"


@irdl_op_definition
class SiluOp(ElementwiseUnaryOp):
    """`x * sigmoid(x)` (SiLU, swish: EfficientNet's activation), one op so
    that it is one epilogue of the op before it (`simplify-activations`)."""

    name = "relay.silu"


@irdl_op_definition
class HardSwishOp(ElementwiseUnaryOp):
    """`x * clip(x / 6 + 1 / 2, 0, 1)` (MobileNet-v3's activation, ONNX's
    HardSwish), one op for the same reason as `silu`."""

    name = "relay.hard_swish"


@irdl_op_definition
class ReluOp(ElementwiseUnaryOp):
    """`max(x, 0)`."""

    name = "relay.relu"


@irdl_op_definition
class LogOp(ElementwiseUnaryOp):
    """Natural logarithm."""

    name = "relay.log"


@irdl_op_definition
class SqrtOp(ElementwiseUnaryOp):
    """Square root."""

    name = "relay.sqrt"


@irdl_op_definition
class AbsOp(ElementwiseUnaryOp):
    """`|x|`."""

    name = "relay.abs"


@irdl_op_definition
class FloorOp(ElementwiseUnaryOp):
    """The largest integer not above `x` (a float)."""

    name = "relay.floor"


@irdl_op_definition
class CeilOp(ElementwiseUnaryOp):
    """The smallest integer not below `x` (a float)."""

    name = "relay.ceil"


@irdl_op_definition
class RoundOp(ElementwiseUnaryOp):
    """`x` rounded to the nearest integer, halves to even (NumPy's `round`,
    ONNX's `Round`)."""

    name = "relay.round"


@irdl_op_definition
class ErfOp(ElementwiseUnaryOp):
    """The error function (GELU's `x * (1 + erf(x / sqrt 2)) / 2`)."""

    name = "relay.erf"


@irdl_op_definition
class ClipOp(ElementwiseUnaryOp):
    """`x` clamped to `[a_min, a_max]`."""

    name = "relay.clip"

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
