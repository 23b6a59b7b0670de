"""Tuples and conditionals: `relay.tuple`, `relay.get_item`, `relay.if` and
its terminator `relay.yield`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import IntegerAttr, TensorType, TupleType, i1, i64
from xdsl.ir import Attribute, Block, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, ReturnLike
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.relay.base import (
    ValueOp,
    parse_attr_dict,
    print_attr_dict,
    with_vdevice,
)
from hetero.dialects.relay.params import IntParam
from hetero.dialects.relay.shapes import Value
from hetero.dialects.target import VirtualDeviceAttr


def _tuple_type(types: Sequence[Attribute]) -> TupleType:
    return TupleType(cast(tuple[TypeAttribute, ...], tuple(types)))


@irdl_op_definition
class TupleOp(ValueOp):
    """A tuple of values; its type is `tuple<T1, T2, ...>` of theirs."""

    name = "relay.tuple"

    elements = var_operand_def()
    result = result_def(TupleType)

    def __init__(
        self, elements: Sequence[Value], *, vdevice: VirtualDeviceAttr | None = None
    ) -> None:
        values = [SSAValue.get(e) for e in elements]
        super().__init__(
            operands=[values],
            result_types=[_tuple_type([v.type for v in values])],
            properties=with_vdevice({}, vdevice),
        )

    def verify_(self) -> None:
        super().verify_()
        expected = _tuple_type(self.elements.types)
        if self.result.type != expected:
            raise VerifyException(
                f"result type mismatch: expected {expected}, got {self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> TupleOp:
        elements = parser.parse_op_args_list()
        properties, attributes = parse_attr_dict(parser, cls)
        parser.parse_punctuation(":")
        pos = parser.pos
        result = parser.parse_type()
        if not isinstance(result, TupleType):
            parser.raise_error(f"expected a tuple type, got {result}", pos, parser.pos)
        values = parser.resolve_operands(elements, result.types.data, pos)
        return cls.create(
            operands=values,
            result_types=[result],
            properties=properties,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_operands(self.elements)
        print_attr_dict(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class GetItemOp(ValueOp):
    """Projection `%t[index]` of a tuple."""

    name = "relay.get_item"

    value = operand_def(TupleType)
    index = IntParam(minimum=0)

    def __init__(
        self, value: Value, index: int, *, vdevice: VirtualDeviceAttr | None = None
    ) -> None:
        """The result type is the element's."""
        properties = with_vdevice(self.params_to_properties({"index": index}), vdevice)
        element = self.element_type(SSAValue.get(value).type, index)
        super().__init__(
            operands=[value], result_types=[element], properties=properties
        )

    @staticmethod
    def element_type(tuple_type: Attribute, index: int) -> Attribute:
        """Type of element `index` of `tuple_type`; raises if there is none."""
        if not isinstance(tuple_type, TupleType):
            raise VerifyException(f"relay.get_item needs a tuple, got {tuple_type}")
        if not 0 <= index < len(tuple_type.types.data):
            raise VerifyException(
                f"index {index} is out of range for {tuple_type} "
                f"({len(tuple_type.types.data)} elements)"
            )
        return tuple_type.types.data[index]

    def verify_(self) -> None:
        super().verify_()
        expected = self.element_type(self.value.type, self.index)
        if self.result.type != expected:
            raise VerifyException(
                f"result type mismatch: expected {expected} (element {self.index}), "
                f"got {self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> GetItemOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        index = parser.parse_integer(allow_boolean=False)
        parser.parse_punctuation("]")
        properties, attributes = parse_attr_dict(parser, cls, reserved=("index",))
        parser.parse_punctuation(":")
        tuple_type = parser.parse_type()
        parser.parse_punctuation("->")
        result = parser.parse_type()
        properties["index"] = IntegerAttr(index, i64)
        return cls.create(
            operands=[parser.resolve_operand(value, tuple_type)],
            result_types=[result],
            properties=properties,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(f"[{self.index}]")
        print_attr_dict(printer, self, reserved=("index",))
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class IfOp(ValueOp):
    """`if cond then A else B`; each branch ends with `relay.yield` of the result."""

    name = "relay.if"

    cond = operand_def(TensorType)
    true_branch = region_def()
    false_branch = region_def()

    def __init__(
        self,
        cond: Value,
        result_type: Attribute,
        true_branch: Region | None = None,
        false_branch: Region | None = None,
        *,
        vdevice: VirtualDeviceAttr | None = None,
    ) -> None:
        """Missing branches start as empty blocks to fill."""
        super().__init__(
            operands=[cond],
            result_types=[result_type],
            properties=with_vdevice({}, vdevice),
            regions=[_region_or_empty(true_branch), _region_or_empty(false_branch)],
        )

    def verify_(self) -> None:
        super().verify_()
        cond = cast(TensorType[Attribute], self.cond.type)
        if cond.get_shape() or cond.element_type != i1:
            raise VerifyException(f"the condition must be a tensor<i1>, got {cond}")
        for what, region in (("then", self.true_branch), ("else", self.false_branch)):
            if len(region.blocks) != 1 or region.block.args:
                raise VerifyException(
                    f"the {what} branch must be one block without arguments"
                )
            if not isinstance(region.block.last_op, YieldOp):
                raise VerifyException(f"the {what} branch must end with relay.yield")

    @classmethod
    def parse(cls, parser: Parser) -> IfOp:
        cond = parser.parse_unresolved_operand()
        properties, attributes = parse_attr_dict(parser, cls)
        parser.parse_punctuation(":")
        cond_type = parser.parse_type()
        parser.parse_punctuation("->")
        result = parser.parse_type()
        true_branch = parser.parse_region()
        parser.parse_keyword("else")
        false_branch = parser.parse_region()
        return cls.create(
            operands=[parser.resolve_operand(cond, cond_type)],
            result_types=[result],
            properties=properties,
            attributes=attributes,
            regions=[true_branch, false_branch],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.cond)
        print_attr_dict(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.cond.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)
        printer.print_string(" ")
        printer.print_region(self.true_branch)
        printer.print_string(" else ")
        printer.print_region(self.false_branch)


def _region_or_empty(region: Region | None) -> Region:
    return Region(Block()) if region is None else region


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminator of a `relay.if` branch: the branch's value."""

    name = "relay.yield"

    value = operand_def()

    traits = traits_def(HasParent(IfOp), IsTerminator(), ReturnLike())

    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: Value) -> None:
        super().__init__(operands=[value])

    def verify_(self) -> None:
        parent = self.parent_op()
        if isinstance(parent, IfOp) and parent.result.type != self.value.type:
            raise VerifyException(
                f"yielded type {self.value.type} does not match the relay.if result "
                f"type {parent.result.type}"
            )


CONTROL_OPS: tuple[type[IRDLOperation], ...] = (
    TupleOp,
    GetItemOp,
    IfOp,
    YieldOp,
)
"""The ops of this family, in the order the `Relay` dialect lists them."""
