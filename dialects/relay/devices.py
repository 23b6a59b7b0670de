"""The two device operators of heterogeneous compilation: `relay.on_device`
(an annotation saying where a value lives) and `relay.device_copy` (a copy
between devices).  Both are the identity on values.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.relay.base import (
    ValueOp,
    parse_attr_dict,
    print_attr_dict,
    with_vdevice,
)
from hetero.dialects.relay.params import BoolParam
from hetero.dialects.relay.shapes import Value, attr_text
from hetero.dialects.target import VirtualDeviceAttr

ON_DEVICE_FORMS: dict[str, tuple[bool, bool]] = {
    "normal": (True, False),
    "fixed": (True, True),
    "result_only": (False, True),
    "free": (False, False),
}
"""`relay.on_device` form name -> (constrain_body, constrain_result)."""


def _check_identity_type(op: ValueOp, operand: SSAValue) -> None:
    """The device operators do not change the type of their operand."""
    if op.result.type != operand.type:
        raise VerifyException(
            f"result type mismatch: expected {operand.type} (the operand's), "
            f"got {op.result.type}"
        )


def _require_constrained(device: VirtualDeviceAttr | None, problem: str) -> None:
    """A device operator's constraining device must say something: a fully
    unconstrained one would constrain nothing."""
    if device is None or device.is_fully_unconstrained():
        raise VerifyException(problem)


@irdl_op_definition
class OnDeviceOp(ValueOp):
    """Annotation: `body` is on `device`; identity on values.

    The flags select the form: normal (body constrained), fixed (body and
    result), result_only, free (neither; a copy is allowed here, no device).
    """

    name = "relay.on_device"

    body = operand_def()
    device = opt_prop_def(VirtualDeviceAttr)
    constrain_body = BoolParam(True)
    constrain_result = BoolParam(False)

    _SYNTAX: ClassVar[tuple[str, ...]] = (
        "device",
        "constrain_body",
        "constrain_result",
    )

    def __init__(
        self,
        body: Value,
        device: VirtualDeviceAttr | None,
        *,
        constrain_body: bool = True,
        constrain_result: bool = False,
        vdevice: VirtualDeviceAttr | None = None,
    ) -> None:
        """Both flags are always stored, so readers of the IR need no defaults."""
        flags = {"constrain_body": constrain_body, "constrain_result": constrain_result}
        properties = with_vdevice(self.params_to_properties(flags), vdevice)
        if device is not None:
            properties["device"] = device
        super().__init__(
            operands=[body],
            result_types=[SSAValue.get(body).type],
            properties=properties,
        )

    @staticmethod
    def fixed(body: Value, device: VirtualDeviceAttr) -> OnDeviceOp:
        return OnDeviceOp(body, device, constrain_result=True)

    @staticmethod
    def free(body: Value) -> OnDeviceOp:
        return OnDeviceOp(body, None, constrain_body=False)

    @property
    def form(self) -> str:
        """`normal`, `fixed`, `result_only` or `free`."""
        flags = (self.constrain_body, self.constrain_result)
        return next(name for name, f in ON_DEVICE_FORMS.items() if f == flags)

    @property
    def virtual_device(self) -> VirtualDeviceAttr:
        """The device; fully unconstrained for the free form (as in TVM)."""
        return self.device or VirtualDeviceAttr.unconstrained()

    def verify_(self) -> None:
        super().verify_()
        _check_identity_type(self, self.body)
        if self.form != "free":
            _require_constrained(
                self.device,
                f"the {self.form} form of relay.on_device needs a device that is not "
                "fully unconstrained",
            )
        elif self.device is not None:
            raise VerifyException(
                "the free form of relay.on_device (constrain_body = false, "
                f"constrain_result = false) takes no device, got {attr_text(self.device)}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> OnDeviceOp:
        body = parser.parse_unresolved_operand()
        properties: dict[str, Attribute] = {}
        if parser.parse_optional_keyword("free") is not None:
            form = "free"
        else:
            parser.parse_keyword("to", "expected 'to <vdevice>' or 'free'")
            properties["device"] = _parse_vdevice(parser)
            form = (
                parser.parse_optional_keyword_in(("fixed", "result_only")) or "normal"
            )
        extra, attributes = parse_attr_dict(parser, cls, reserved=cls._SYNTAX)
        constrain_body, constrain_result = ON_DEVICE_FORMS[form]
        properties |= cls.params_to_properties(
            {"constrain_body": constrain_body, "constrain_result": constrain_result}
        )
        parser.parse_punctuation(":")
        type = parser.parse_type()
        return cls.create(
            operands=[parser.resolve_operand(body, type)],
            result_types=[type],
            properties=properties | extra,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.body)
        if self.form == "free":
            printer.print_string(" free")
        else:
            printer.print_string(" to ")
            printer.print_attribute(self.virtual_device)
            if self.form != "normal":
                printer.print_string(f" {self.form}")
        print_attr_dict(printer, self, reserved=self._SYNTAX)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


def _parse_vdevice(parser: Parser) -> VirtualDeviceAttr:
    pos = parser.pos
    device = parser.parse_attribute()
    if not isinstance(device, VirtualDeviceAttr):
        parser.raise_error(
            f"expected a #target.vdevice, got {attr_text(device)}", pos, parser.pos
        )
    return device


@irdl_op_definition
class DeviceCopyOp(ValueOp):
    """Copy of `body` from device `src` to device `dst`; identity on values."""

    name = "relay.device_copy"

    body = operand_def()
    src = prop_def(VirtualDeviceAttr)
    dst = prop_def(VirtualDeviceAttr)

    def __init__(
        self,
        body: Value,
        src: VirtualDeviceAttr,
        dst: VirtualDeviceAttr,
        *,
        vdevice: VirtualDeviceAttr | None = None,
    ) -> None:
        super().__init__(
            operands=[body],
            result_types=[SSAValue.get(body).type],
            properties=with_vdevice({"src": src, "dst": dst}, vdevice),
        )

    def verify_(self) -> None:
        super().verify_()
        _check_identity_type(self, self.body)
        _require_constrained(
            self.src, "the source device must not be fully unconstrained"
        )
        _require_constrained(
            self.dst, "the destination device must not be fully unconstrained"
        )

    @classmethod
    def parse(cls, parser: Parser) -> DeviceCopyOp:
        body = parser.parse_unresolved_operand()
        parser.parse_keyword("from")
        src = _parse_vdevice(parser)
        parser.parse_keyword("to")
        dst = _parse_vdevice(parser)
        properties, attributes = parse_attr_dict(parser, cls, reserved=("src", "dst"))
        parser.parse_punctuation(":")
        type = parser.parse_type()
        return cls.create(
            operands=[parser.resolve_operand(body, type)],
            result_types=[type],
            properties=properties | {"src": src, "dst": dst},
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.body)
        printer.print_string(" from ")
        printer.print_attribute(self.src)
        printer.print_string(" to ")
        printer.print_attribute(self.dst)
        print_attr_dict(printer, self, reserved=("src", "dst"))
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


DEVICE_OPS: tuple[type[IRDLOperation], ...] = (
    OnDeviceOp,
    DeviceCopyOp,
)
"""The ops of this family, in the order the `Relay` dialect lists them."""
