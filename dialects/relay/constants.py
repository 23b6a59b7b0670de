"""Constants and host-side shape values: `relay.constant` and `relay.shape_of`."""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FunctionType,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.relay.base import (
    ValueOp,
    parse_attr_dict,
    parse_typed_operands,
    print_attr_dict,
    with_vdevice,
)
from hetero.dialects.relay.shapes import Value
from hetero.dialects.target import VirtualDeviceAttr


@irdl_op_definition
class ConstantOp(ValueOp):
    """A tensor constant; the value's type is the result type.

    The value is a `dense<...>` literal or, for large weights, a
    `dense_resource<name>` whose bytes live in the file's
    `{-# dialect_resources #-}` section (`hetero.utils.dense_resources`)."""

    name = "relay.constant"

    value = prop_def(DenseIntOrFPElementsAttr | DenseResourceAttr)
    result = result_def(TensorType)

    def __init__(
        self,
        value: DenseIntOrFPElementsAttr | DenseResourceAttr,
        *,
        vdevice: VirtualDeviceAttr | None = None,
    ) -> None:
        super().__init__(
            result_types=[value.type],
            properties=with_vdevice({"value": value}, vdevice),
        )

    def verify_(self) -> None:
        super().verify_()
        if self.value.type != self.result.type:
            raise VerifyException(
                f"result type mismatch: expected {self.value.type} (the value's), "
                f"got {self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        properties, attributes = parse_attr_dict(parser, cls, reserved=("value",))
        pos = parser.pos
        value = parser.parse_attribute()
        if not isinstance(
            value, DenseIntOrFPElementsAttr | DenseResourceAttr
        ) or not isinstance(value.type, TensorType):
            parser.raise_error(
                f"expected a dense tensor attribute (dense<...> : tensor<...>), got {value}",
                pos,
                parser.pos,
            )
        return cls.create(
            result_types=[value.type],
            properties=properties | {"value": value},
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        print_attr_dict(printer, self, reserved=("value",))
        printer.print_string(" ")
        printer.print_attribute(self.value)


@irdl_op_definition
class ShapeOfOp(ValueOp):
    """The shape of a tensor as a `tensor<rank x i64>`: host data.

    Its operand may live anywhere; the result always lives on the host device,
    where shape computations run (`plan-devices` binds it there).
    """

    name = "relay.shape_of"

    x = operand_def(TensorType)
    result = result_def(TensorType)

    def __init__(self, x: Value, *, vdevice: VirtualDeviceAttr | None = None) -> None:
        rank = len(cast(TensorType[Attribute], SSAValue.get(x).type).get_shape())
        super().__init__(
            operands=[x],
            result_types=[TensorType(i64, [rank])],
            properties=with_vdevice({}, vdevice),
        )

    def verify_(self) -> None:
        super().verify_()
        rank = len(cast(TensorType[Attribute], self.x.type).get_shape())
        expected = TensorType(i64, [rank])
        if self.result.type != expected:
            raise VerifyException(
                f"result type mismatch: expected {expected}, got {self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> ShapeOfOp:
        x = parser.parse_unresolved_operand()
        properties, attributes = parse_attr_dict(parser, cls)
        parser.parse_punctuation(":")
        pos = parser.pos
        signature = parser.parse_type()
        if not isinstance(signature, FunctionType):
            parser.raise_error(
                "expected (operand type) -> result type", pos, parser.pos
            )
        values, result = parse_typed_operands(parser, [x], signature, pos)
        return cls.create(
            operands=values,
            result_types=[result],
            properties=properties,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.x)
        print_attr_dict(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(
            FunctionType.from_lists([self.x.type], [self.result.type])
        )


CONSTANT_OPS: tuple[type[IRDLOperation], ...] = (
    ConstantOp,
    ShapeOfOp,
)
"""The ops of this family, in the order the `Relay` dialect lists them."""
