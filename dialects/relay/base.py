"""The base classes of relay's value-producing ops and their shared syntax.

`ValueOp` gives every op its optional `vdevice` property and its `Param`
declarations; `TensorOp` adds type inference (the verifier, the parser and
the Python constructors all go through `infer_result_type`) and the
`operands attr-dict : type` syntax of the tensor operators, the fusion
pattern (`OpPattern`) every tensor operator declares, and the NumPy rule
(`NUMPY`) of those whose value the operands and `Param`s make.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import IntEnum
from functools import cache
from types import MappingProxyType
from typing import Any, ClassVar, cast

import numpy as np
from xdsl.dialects.builtin import FunctionType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, VarOperandDef, opt_prop_def, result_def
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.relay.params import NO_ATTRIBUTES, Param
from hetero.dialects.relay.shapes import Shape, Value
from hetero.dialects.target import VirtualDeviceAttr


def parse_attr_dict(
    parser: Parser, op_type: type[IRDLOperation], reserved: Sequence[str] = ()
) -> tuple[dict[str, Attribute], dict[str, Attribute]]:
    """An optional `{...}` split into (properties, discardable attributes).

    The custom syntax prints properties such as `vdevice` inside the
    attribute dictionary; this puts them back where they belong.
    """
    pos = parser.pos
    entries = parser.parse_optional_attr_dict()
    if clash := [name for name in reserved if name in entries]:
        parser.raise_error(
            f"'{clash[0]}' is part of the op's syntax and cannot be given in its "
            "attribute dictionary",
            pos,
            parser.pos,
        )
    names = op_type.get_irdl_definition().properties.keys()
    properties = {k: v for k, v in entries.items() if k in names}
    attributes = {k: v for k, v in entries.items() if k not in names}
    return properties, attributes


def print_attr_dict(
    printer: Printer, op: Operation, reserved: Sequence[str] = ()
) -> None:
    """Properties (except those printed elsewhere) then attributes, as one `{...}`."""
    entries = {k: v for k, v in op.properties.items() if k not in reserved}
    printer.print_op_attributes(entries | op.attributes)


def parse_typed_operands(
    parser: Parser,
    operands: Sequence[UnresolvedOperand],
    signature: FunctionType,
    pos: int,
) -> tuple[list[SSAValue], Attribute]:
    """Resolve call-like operands against `(T1, T2) -> R` (parsed at `pos`); returns them and R."""
    if len(signature.outputs.data) != 1:
        parser.raise_error(
            f"expected exactly one result type, got {signature}", pos, parser.pos
        )
    values = parser.resolve_operands(operands, signature.inputs.data, pos)
    return list(values), signature.outputs.data[0]


def parse_function_type(parser: Parser) -> tuple[FunctionType, int]:
    """A function type and where it starts, for messages about it."""
    pos = parser.pos
    parsed = parser.parse_type()
    if not isinstance(parsed, FunctionType):
        parser.raise_error(f"expected a function type, got {parsed}", pos, parser.pos)
    return parsed, pos


# ----------------------------------------------------------------------------
# Base of value-producing ops
# ----------------------------------------------------------------------------


class ValueOp(IRDLOperation):
    """An op producing one value: the `vdevice` property and `Param` declarations."""

    vdevice = opt_prop_def(VirtualDeviceAttr)
    result = result_def()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Declare the IRDL property behind each `Param` (field `<name>_attr`)."""
        super().__init_subclass__(**kwargs)
        for name, value in list(vars(cls).items()):
            if isinstance(value, Param):
                setattr(cls, f"{name}_attr", opt_prop_def(Attribute, prop_name=name))

    @classmethod
    def params(cls) -> Mapping[str, Param[Any]]:
        """Every `Param` of the op, by name (looked up once a class: each op
        built or verified asks)."""
        return _params_of(cls)

    @classmethod
    def params_to_properties(cls, values: Mapping[str, Any]) -> dict[str, Attribute]:
        """Python values (None: absent) to properties, for the constructors."""
        params = cls.params()
        properties: dict[str, Attribute] = {}
        for name, value in values.items():
            if name not in params:
                known = ", ".join(params) or "none"
                raise TypeError(
                    f"{cls.__name__} has no attribute '{name}' (it has: {known})"
                )
            if value is not None:
                properties[name] = params[name].to_attr(value)
        return properties

    def verify_(self) -> None:
        for param in self.params().values():
            param.read(self.properties)


@cache
def _params_of(op_type: type[ValueOp]) -> Mapping[str, Param[Any]]:
    return MappingProxyType(
        {
            name: value
            for klass in reversed(op_type.mro())
            for name, value in vars(klass).items()
            if isinstance(value, Param)
        }
    )


def with_vdevice(
    properties: dict[str, Attribute], vdevice: VirtualDeviceAttr | None
) -> dict[str, Attribute]:
    if vdevice is not None:
        properties["vdevice"] = vdevice
    return properties


class OpPattern(IntEnum):
    """TVM's operator patterns: how an op's loop nest relates its output to
    its inputs, which decides whether `fuse-ops` may compute it inside
    another op's loops.  Each tensor operator declares its own (`PATTERN`).

    * `ELEMWISE` — output element i reads input element i;
    * `BROADCAST` — like elementwise, but an input may repeat along some axes;
    * `INJECTIVE` — each output element reads one input element (reshape,
      transpose, concatenate, ...);
    * `COMM_REDUCE` — reduces input elements (pools, sum, mean);
    * `OUT_ELEMWISE_FUSABLE` — an anchor whose result can take an elementwise
      epilogue (dense, matmul, conv2d, layer_norm);
    * `OPAQUE` — never fused (softmax, lrn, and every op that is not a
      tensor operator).

    The order is meaningful: a pattern at most `INJECTIVE` may be inlined into
    its consumer's loop body.
    """

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    OPAQUE = 8


NumpyRule = Callable[..., Any]
"""An op's NumPy rule: operand arrays and attribute values (by name) to its value."""


def wide(x: np.ndarray) -> np.ndarray:
    """float16 accumulates in float32 (NumPy has no fast float16 GEMM); the
    interpreter converts the result back to the element type."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


class TensorOp(ValueOp):
    """Base of the tensor operators: inferred result type and shared syntax.

    Syntax: `operands attr-dict : T` when the operands and the result all have
    type T, else `operands attr-dict : (T1, T2) -> R`.
    Subclasses declare operands, `Param`s, `infer_shape` and their fusion
    pattern.
    """

    PATTERN: ClassVar[OpPattern] = OpPattern.OPAQUE
    """How `fuse-ops` may fuse the op (TVM's `TOpPattern`)."""

    NUMPY: ClassVar[NumpyRule | None] = None
    """The op's value in NumPy, a function of the operand arrays and the
    op's `Param` values (by name), which the reference interpreter runs;
    None where the interpreter holds the rule (it needs more than these)."""

    result = result_def(TensorType)

    def __init__(
        self, *operands: Value, vdevice: VirtualDeviceAttr | None = None, **params: Any
    ) -> None:
        """Build the op from operands and Python attribute values; infers the result type.

        E.g. `Conv2DOp(x, w, strides=(2, 2), padding=(1, 1, 1, 1))`; a None
        (or omitted) attribute takes its default.
        """
        values = [SSAValue.get(o) for o in operands]
        properties = with_vdevice(self.params_to_properties(params), vdevice)
        result_type = self.infer_result_type([v.type for v in values], properties)
        super().__init__(
            operands=self.group_operands(values),
            result_types=[result_type],
            properties=properties,
        )

    @classmethod
    def group_operands(
        cls, values: list[SSAValue]
    ) -> Sequence[SSAValue | Sequence[SSAValue]]:
        """Operands as IRDL wants them at construction (one entry per definition)."""
        return values

    @classmethod
    def infer_result_type(
        cls,
        operand_types: Sequence[Attribute],
        attributes: Mapping[str, Attribute] = NO_ATTRIBUTES,
    ) -> TensorType[Attribute]:
        """The result type for these operand types and attributes (properties).

        The entry point of type inference for passes and builders; raises a
        `VerifyException` saying what is wrong when there is no valid result.
        """
        cls._check_operand_count(len(operand_types))
        tensors = _tensor_types(operand_types)
        element_type = cls.infer_element_type(tensors, attributes)
        shapes = [t.get_shape() for t in tensors]
        return TensorType(element_type, cls.infer_shape(shapes, attributes))

    @classmethod
    def infer_element_type(
        cls,
        tensors: Sequence[TensorType[Attribute]],
        attributes: Mapping[str, Attribute],
    ) -> Attribute:
        """The result's element type: by default the one the operands share
        (relay has no implicit casts)."""
        return common_element_type(tensors)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        """The result shape; subclasses read their `Param`s from `attributes`."""
        raise NotImplementedError

    @classmethod
    def _check_operand_count(cls, count: int) -> None:
        defs = cls.get_irdl_definition().operands
        if any(isinstance(d, VarOperandDef) for _, d in defs):
            return
        if count != len(defs):
            raise VerifyException(
                f"{cls.name} takes {len(defs)} operand(s), got {count}"
            )

    def verify_(self) -> None:
        super().verify_()
        expected = self.infer_result_type(self.operand_types, self.properties)
        if self.result.type != expected:
            raise VerifyException(
                f"result type mismatch: expected {expected}, got {self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> TensorOp:
        operands = parser.parse_comma_separated_list(
            Parser.Delimiter.NONE, parser.parse_unresolved_operand
        )
        properties, attributes = parse_attr_dict(parser, cls)
        parser.parse_punctuation(":")
        pos = parser.pos
        declared = parser.parse_type()
        if isinstance(declared, FunctionType):
            values, result = parse_typed_operands(parser, operands, declared, pos)
        else:
            values = parser.resolve_operands(operands, [declared] * len(operands), pos)
            result = declared
        return cls.create(
            operands=values,
            result_types=[result],
            properties=properties,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        print_attr_dict(printer, self)
        printer.print_string(" : ")
        if all(t == self.result.type for t in self.operand_types):
            printer.print_attribute(self.result.type)
        else:
            printer.print_attribute(
                FunctionType.from_lists(self.operand_types, [self.result.type])
            )


def _tensor_types(types: Sequence[Attribute]) -> list[TensorType[Attribute]]:
    """The operand types, checked to be ranked tensors."""
    for index, t in enumerate(types):
        if not isinstance(t, TensorType):
            raise VerifyException(f"operand {index} must be a ranked tensor, got {t}")
    return cast(list[TensorType[Attribute]], list(types))


def common_element_type(tensors: Sequence[TensorType[Attribute]]) -> Attribute:
    """Relay has no implicit casts: the operands share one element type."""
    element_type = tensors[0].element_type
    for index, t in enumerate(tensors[1:], start=1):
        if t.element_type != element_type:
            raise VerifyException(
                f"element type mismatch: operand 0 is {element_type}, "
                f"operand {index} is {t.element_type}"
            )
    return element_type


def pattern_of(op: Operation) -> OpPattern:
    """The fusion pattern of any op: its own for a tensor operator, else `OPAQUE`."""
    return op.PATTERN if isinstance(op, TensorOp) else OpPattern.OPAQUE
