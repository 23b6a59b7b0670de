"""Functions, closures and calls: `relay.func`, `relay.fn`, `relay.return`,
`relay.call` and `relay.call_indirect`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar, cast

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FlatSymbolRefAttrConstr,
    FunctionType,
    MemRefType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
    TupleType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    CallableOpInterface,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    ReturnLike,
    SymbolOpInterface,
    SymbolTable,
    SymbolUserOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.relay.base import (
    ValueOp,
    parse_attr_dict,
    parse_function_type,
    parse_typed_operands,
    print_attr_dict,
    with_vdevice,
)
from hetero.dialects.relay.shapes import DYNAMIC, Value, attr_text
from hetero.dialects.target import VirtualDeviceAttr
from hetero.dialects.tir import PrimFuncOp

UNIT_FUNCTION_ATTRS = ("Primitive", "Inline", "Extern", "SkipOptimization")
"""Function attributes that are flags (`UnitAttr`)."""

STRING_FUNCTION_ATTRS = ("Compiler", "Composite", "global_symbol")
"""Function attributes that hold a string."""

VDEVICE = "vdevice"
"""Name of the device entry in parameter/result attribute dictionaries."""

MAX_SIZES = "max_sizes"
"""Name of a parameter's largest sizes (one per axis, 0 for none): a program
imported to serve any length whose computation holds up to a length only
(a position table's), refused beyond it rather than computed wrongly."""


def _unit_flag(name: str) -> property:
    def get(op: Operation) -> bool:
        return name in op.attributes

    return property(get, doc=f"Whether the function has the `{name}` attribute.")


def _string_attr(name: str) -> property:
    def get(op: Operation) -> str | None:
        attr = op.attributes.get(name)
        return attr.data if isinstance(attr, StringAttr) else None

    return property(get, doc=f"The function's `{name}` attribute, if any.")


def _device_dicts(
    devices: Sequence[VirtualDeviceAttr | None],
    old: ArrayAttr[DictionaryAttr] | None = None,
) -> ArrayAttr[DictionaryAttr] | None:
    """`arg_attrs`/`res_attrs` with these devices, keeping the other entries of `old`."""
    old_dicts = [d.data for d in old.data] if old else [{}] * len(devices)
    return _dicts_or_none(
        [
            {k: v for k, v in entry.items() if k != VDEVICE}
            | ({} if device is None else {VDEVICE: device})
            for entry, device in zip(old_dicts, devices, strict=True)
        ]
    )


def _dicts_or_none(
    dicts: Sequence[dict[str, Attribute]],
) -> ArrayAttr[DictionaryAttr] | None:
    """Absent rather than a list of empty dictionaries, so both spellings print alike."""
    return ArrayAttr(DictionaryAttr(d) for d in dicts) if any(dicts) else None


class FunctionOpBase(IRDLOperation):
    """What `relay.func` and `relay.fn` share: body, signature syntax, attributes."""

    body = region_def()
    arg_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    res_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])

    is_primitive = _unit_flag("Primitive")
    is_inline = _unit_flag("Inline")
    is_extern = _unit_flag("Extern")
    skip_optimization = _unit_flag("SkipOptimization")
    compiler = _string_attr("Compiler")
    composite = _string_attr("Composite")
    global_symbol = _string_attr("global_symbol")

    @property
    def function_type(self) -> FunctionType:
        """The signature; `relay.func` stores it, a `relay.fn`'s is its result type."""
        raise NotImplementedError

    @property
    def result_type(self) -> Attribute:
        return self.function_type.outputs.data[0]

    @property
    def args(self) -> tuple[BlockArgument, ...]:
        """The parameters (entry block arguments)."""
        return self.body.block.args

    # -- parameter and result devices ------------------------------------------

    @property
    def param_vdevices(self) -> tuple[VirtualDeviceAttr | None, ...]:
        """Each parameter's `vdevice` argument attribute, or None."""
        count = len(self.function_type.inputs.data)
        if self.arg_attrs is None:
            return (None,) * count
        return tuple(_vdevice_of(d) for d in self.arg_attrs.data)

    @property
    def result_vdevice(self) -> VirtualDeviceAttr | None:
        return None if self.res_attrs is None else _vdevice_of(self.res_attrs.data[0])

    def set_param_vdevices(self, devices: Sequence[VirtualDeviceAttr | None]) -> None:
        """Set (None: remove) each parameter's device; one entry per parameter."""
        self.arg_attrs = _device_dicts(devices, self.arg_attrs)

    def set_result_vdevice(self, device: VirtualDeviceAttr | None) -> None:
        self.res_attrs = _device_dicts([device], self.res_attrs)

    # -- parameter sizes -----------------------------------------------------------

    def set_max_sizes(self, limits: Mapping[tuple[int, int], int]) -> None:
        """Record the largest size of parameter axes ((parameter, axis) →
        size) in the parameters' `max_sizes` attributes."""
        entries = (
            [dict(d.data) for d in self.arg_attrs.data]
            if self.arg_attrs
            else [{} for _ in self.args]
        )
        for index, arg in enumerate(self.args):
            rank = len(arg.type.get_shape()) if isinstance(arg.type, TensorType) else 0
            axes = [limits.get((index, axis), 0) for axis in range(rank)]
            if any(axes):
                entries[index][MAX_SIZES] = DenseArrayBase.from_list(i64, axes)
        self.arg_attrs = _dicts_or_none(entries)

    @property
    def max_sizes(self) -> dict[tuple[int, int], int]:
        """The parameters' `max_sizes`: (parameter, axis) → largest size."""
        limits = {}
        for index, entry in enumerate(self.arg_attrs.data if self.arg_attrs else ()):
            if isinstance(sizes := entry.data.get(MAX_SIZES), DenseArrayBase):
                for axis, most in enumerate(sizes.get_values()):
                    if most:
                        limits[index, axis] = int(most)
        return limits

    # -- verification ------------------------------------------------------------

    def verify_function(self) -> None:
        """Checks common to `relay.func` and `relay.fn`."""
        signature = self.function_type
        if len(signature.outputs.data) != 1:
            raise VerifyException(
                "a relay function has exactly one result, "
                f"got {len(signature.outputs.data)}"
            )
        if len(self.body.blocks) != 1:
            raise VerifyException(
                f"the body must have exactly one block, got {len(self.body.blocks)}"
            )
        block = self.body.block
        if block.arg_types != signature.inputs.data:
            raise VerifyException(
                f"parameter types ({_types(block.arg_types)}) do not match the function "
                f"type's inputs ({_types(signature.inputs.data)})"
            )
        if not isinstance(block.last_op, ReturnOp):
            raise VerifyException("the body must end with relay.return")
        self._verify_arg_res_attrs()
        self._verify_function_attrs()

    def _verify_arg_res_attrs(self) -> None:
        counts = (("arg_attrs", len(self.function_type.inputs.data)), ("res_attrs", 1))
        for (name, count), dicts in zip(counts, (self.arg_attrs, self.res_attrs)):
            if dicts is None:
                continue
            if len(dicts.data) != count:
                raise VerifyException(
                    f"{name} has {len(dicts.data)} entries, expected {count}"
                )
            for index, entry in enumerate(dicts.data):
                device = entry.data.get(VDEVICE)
                if device is not None and not isinstance(device, VirtualDeviceAttr):
                    raise VerifyException(
                        f"{name}[{index}]: 'vdevice' must be a #target.vdevice, "
                        f"got {attr_text(device)}"
                    )

    def _verify_function_attrs(self) -> None:
        for name, attr in self.attributes.items():
            if name in UNIT_FUNCTION_ATTRS and not isinstance(attr, UnitAttr):
                raise VerifyException(
                    f"function attribute '{name}' must be a unit attribute, "
                    f"got {attr_text(attr)}"
                )
            if name in STRING_FUNCTION_ATTRS and not isinstance(attr, StringAttr):
                raise VerifyException(
                    f"function attribute '{name}' must be a string, "
                    f"got {attr_text(attr)}"
                )

    # -- syntax ------------------------------------------------------------------

    def print_signature_and_body(
        self, printer: Printer, reserved: Sequence[str]
    ) -> None:
        """`(%a: T {attrs}, ...) -> R attributes {...} { body }`."""
        arg_dicts = self.arg_attrs.data if self.arg_attrs else [None] * len(self.args)
        printer.print_string("(")
        printer.print_list(
            zip(self.args, arg_dicts), lambda p: _print_param(printer, *p)
        )
        printer.print_string(") -> ")
        result_dict = self.res_attrs.data[0].data if self.res_attrs else {}
        if result_dict or isinstance(self.result_type, FunctionType):
            printer.print_string("(")
            printer.print_attribute(self.result_type)
            printer.print_op_attributes(result_dict)
            printer.print_string(")")
        else:
            printer.print_attribute(self.result_type)
        entries = {k: v for k, v in self.properties.items() if k not in reserved}
        printer.print_op_attributes(entries | self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(
            self.body, print_entry_block_args=False, print_empty_block=False
        )


def _vdevice_of(entry: DictionaryAttr) -> VirtualDeviceAttr | None:
    device = entry.data.get(VDEVICE)
    return device if isinstance(device, VirtualDeviceAttr) else None


def _types(types: Sequence[Attribute]) -> str:
    return ", ".join(str(t) for t in types)


def _print_param(
    printer: Printer, arg: BlockArgument, attrs: DictionaryAttr | None
) -> None:
    printer.print_block_argument(arg, print_type=False)
    printer.print_string(": ")
    printer.print_attribute(arg.type)
    if attrs is not None:
        printer.print_op_attributes(attrs.data)


class _Signature:
    """A parsed `(%a: T {attrs}, ...) -> (R {attrs}) attributes {...} { body }`."""

    def __init__(self, parser: Parser) -> None:
        params = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN,
            lambda: (parser.parse_argument(), parser.parse_optional_attr_dict()),
        )
        parser.parse_punctuation("->")
        result_dict: dict[str, Attribute] = {}
        if parser.parse_optional_punctuation("(") is not None:
            self.result_type = parser.parse_type()
            result_dict = parser.parse_optional_attr_dict()
            parser.parse_punctuation(")")
        else:
            self.result_type = parser.parse_type()
        self.function_type = FunctionType.from_lists(
            [a.type for a, _ in params], [self.result_type]
        )
        self.arg_attrs = _dicts_or_none([d for _, d in params])
        self.res_attrs = _dicts_or_none([result_dict])
        attrs = parser.parse_optional_attr_dict_with_keyword(_FUNCTION_SYNTAX)
        self.attributes = dict(attrs.data) if attrs else {}
        self.body = parser.parse_region([a for a, _ in params])

    def pop_properties(self, names: Sequence[str]) -> dict[str, Attribute]:
        """Move the properties among `attributes {...}` (e.g. `vdevice`) out of it."""
        return {n: self.attributes.pop(n) for n in names if n in self.attributes}


_FUNCTION_SYNTAX = (
    "sym_name",
    "function_type",
    "sym_visibility",
    "arg_attrs",
    "res_attrs",
)
"""Properties spelled by the function syntax itself, not in `attributes {...}`."""


class _FunctionCallable(CallableOpInterface):
    """Lets generic passes (inlining, call graphs) see relay functions as callables."""

    @classmethod
    def get_callable_region(cls, op: Operation) -> Region:
        return cast(FunctionOpBase, op).body

    @classmethod
    def get_argument_types(cls, op: Operation) -> tuple[Attribute, ...]:
        return cast(FunctionOpBase, op).function_type.inputs.data

    @classmethod
    def get_result_types(cls, op: Operation) -> tuple[Attribute, ...]:
        return cast(FunctionOpBase, op).function_type.outputs.data


@irdl_op_definition
class FuncOp(FunctionOpBase):
    """A global function: a symbol of the module, called by `relay.call`."""

    name = "relay.func"

    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]
    sym_visibility = opt_prop_def(StringAttr)

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface(), _FunctionCallable())

    def __init__(
        self,
        sym_name: str,
        inputs: Sequence[Attribute],
        result: Attribute,
        body: Region | None = None,
        *,
        private: bool = False,
        param_vdevices: Sequence[VirtualDeviceAttr | None] = (),
        result_vdevice: VirtualDeviceAttr | None = None,
        attributes: Mapping[str, Attribute] | None = None,
    ) -> None:
        """A function; without `body`, an entry block with the parameters to fill."""
        properties: dict[str, Attribute | None] = {
            "sym_name": StringAttr(sym_name),
            "function_type": FunctionType.from_lists(inputs, [result]),
            "sym_visibility": StringAttr("private") if private else None,
            "arg_attrs": _device_dicts(param_vdevices),
            "res_attrs": _device_dicts([result_vdevice]),
        }
        super().__init__(
            properties=properties,
            attributes=attributes,
            regions=[body if body is not None else Region(Block(arg_types=inputs))],
        )

    def verify_(self) -> None:
        self.verify_function()

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        visibility = parser.parse_optional_visibility_keyword()
        sym_name = parser.parse_symbol_name()
        sig = _Signature(parser)
        properties: dict[str, Attribute | None] = {
            "sym_name": sym_name,
            "function_type": sig.function_type,
            "sym_visibility": visibility,
            "arg_attrs": sig.arg_attrs,
            "res_attrs": sig.res_attrs,
        }
        return cls.create(
            properties={k: v for k, v in properties.items() if v is not None},
            attributes=sig.attributes,
            regions=[sig.body],
        )

    def print(self, printer: Printer) -> None:
        if self.sym_visibility is not None:
            printer.print_string(f" {self.sym_visibility.data}")
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        self.print_signature_and_body(printer, tuple(self.properties))


@irdl_op_definition
class FnOp(FunctionOpBase, ValueOp):
    """A function literal; its body may use values of the enclosing region (a closure)."""

    name = "relay.fn"

    result = result_def(FunctionType)

    traits = traits_def(_FunctionCallable())

    def __init__(
        self,
        inputs: Sequence[Attribute],
        result: Attribute,
        body: Region | None = None,
        *,
        param_vdevices: Sequence[VirtualDeviceAttr | None] = (),
        result_vdevice: VirtualDeviceAttr | None = None,
        attributes: Mapping[str, Attribute] | None = None,
        vdevice: VirtualDeviceAttr | None = None,
    ) -> None:
        """A closure; without `body`, an entry block with the parameters to fill."""
        properties: dict[str, Attribute | None] = {
            "arg_attrs": _device_dicts(param_vdevices),
            "res_attrs": _device_dicts([result_vdevice]),
            "vdevice": vdevice,
        }
        super().__init__(
            properties=properties,
            attributes=attributes,
            result_types=[FunctionType.from_lists(inputs, [result])],
            regions=[body if body is not None else Region(Block(arg_types=inputs))],
        )

    @property
    def function_type(self) -> FunctionType:
        return cast(FunctionType, self.result.type)

    def verify_(self) -> None:
        self.verify_function()

    @classmethod
    def parse(cls, parser: Parser) -> FnOp:
        sig = _Signature(parser)
        properties = sig.pop_properties(("vdevice",))
        if sig.arg_attrs is not None:
            properties["arg_attrs"] = sig.arg_attrs
        if sig.res_attrs is not None:
            properties["res_attrs"] = sig.res_attrs
        return cls.create(
            properties=properties,
            attributes=sig.attributes,
            result_types=[sig.function_type],
            regions=[sig.body],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        self.print_signature_and_body(printer, ("arg_attrs", "res_attrs"))


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Terminator of `relay.func` and `relay.fn`: the function's result."""

    name = "relay.return"

    value = operand_def()

    traits = traits_def(HasParent(FuncOp, FnOp), IsTerminator(), ReturnLike())

    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: Value) -> None:
        super().__init__(operands=[value])

    def verify_(self) -> None:
        parent = self.parent_op()
        if not isinstance(parent, FunctionOpBase):
            return  # detached; HasParent reports misplaced returns
        expected = parent.function_type.outputs.data
        if len(expected) != 1 or not refines(self.value.type, expected[0]):
            raise VerifyException(
                f"returned type {self.value.type} does not match the function's result "
                f"type {_types(expected)}"
            )


def refines(type: Attribute, declared: Attribute) -> bool:
    """Whether a value of `type` may stand where `declared` is expected: the
    same type, or a refinement of it, as in Relay, where a static size is a
    more precise answer than `?` (a tensor of the same rank, element type
    and encoding, sized where `declared` has a size; tuples elementwise)."""
    if isinstance(type, TensorType) and isinstance(declared, TensorType):
        shape, sizes = type.get_shape(), declared.get_shape()
        return (
            type.element_type == declared.element_type
            and type.encoding == declared.encoding
            and len(shape) == len(sizes)
            and all(size in (DYNAMIC, dim) for dim, size in zip(shape, sizes))
        )
    if isinstance(type, TupleType) and isinstance(declared, TupleType):
        return len(type.types) == len(declared.types) and all(
            refines(t, d) for t, d in zip(type.types, declared.types)
        )
    return type == declared


class _CallSymbolUser(SymbolUserOpInterface):
    """`relay.call` names a `relay.func` of the enclosing symbol table, with its types."""

    def verify(self, op: Operation) -> None:
        call = cast(CallOp, op)
        callee = f"@{call.callee.string_value()}"
        try:
            func = SymbolTable.lookup_symbol(call, call.callee)
        except ValueError:
            raise VerifyException(
                f"call to {callee} is not inside a symbol table"
            ) from None
        if func is None:
            raise VerifyException(f"{callee} could not be found in the symbol table")
        if isinstance(func, PrimFuncOp):
            _check_prim_func_call(callee, func, call.args.types, call.result.type)
            return
        if not isinstance(func, FuncOp):
            raise VerifyException(
                f"{callee} is a {func.name}, not a relay.func or a tir.prim_func"
            )
        _check_call_types(callee, func.function_type, call.args.types, call.result.type)


def tensor_types(type: Attribute) -> list[Attribute]:
    """The tensors of a value's type, a (nested) tuple flattened in order: the
    buffers a kernel reads or writes for it."""
    if isinstance(type, TupleType):
        return [t for element in type.types.data for t in tensor_types(element)]
    return [type]


_Leaf = TypeVar("_Leaf")


def unflatten(type: Attribute, leaves: Iterator[_Leaf]) -> _Leaf | tuple[Any, ...]:
    """The inverse of `tensor_types`: the next of `leaves` for each tensor of
    `type`, nested as its tuples are (a kernel's flat buffers as the value
    they hold, or the leaves' numbers with `itertools.count()`)."""
    if isinstance(type, TupleType):
        return tuple(unflatten(t, leaves) for t in type.types.data)
    return next(leaves)


def _check_prim_func_call(
    callee: str,
    func: PrimFuncOp,
    arg_types: Sequence[Attribute],
    result: Attribute,
) -> None:
    """A call of a `tir.prim_func` (TVM's `call_lowered`) in the
    destination-passing style of hetero's kernels: the prim_func takes one
    buffer per argument, then one per tensor of the result, and returns
    nothing; each buffer is its tensor's shape and element type."""
    if func.function_type.outputs.data:
        raise VerifyException(
            f"{callee} returns {_types(func.function_type.outputs.data)}: a "
            "tir.prim_func called from relay returns nothing and writes its "
            "result into its last parameters"
        )
    params = func.function_type.inputs.data
    outputs = tensor_types(result)
    if len(params) != len(arg_types) + len(outputs):
        raise VerifyException(
            f"{callee} takes {len(params)} buffer(s), but the call passes "
            f"{len(arg_types)} argument(s) and a result of {len(outputs)} tensor(s): "
            "a tir.prim_func called from relay takes a buffer per argument, then "
            "one per tensor of the result"
        )
    roles = [f"argument {i}" for i in range(len(arg_types))]
    roles += [f"result tensor {i}" for i in range(len(outputs))]
    for index, (role, given, param) in enumerate(
        zip(roles, [*arg_types, *outputs], params)
    ):
        if not _buffer_of(given, param):
            raise VerifyException(
                f"{role} of the call to {callee} is {given}, but parameter #{index} "
                f"of {callee} is {param}: expected a memref of the tensor's shape "
                "and element type"
            )


def _buffer_of(type: Attribute, param: Attribute) -> bool:
    """Whether `param` is a buffer holding a static tensor of `type` (in any
    memory scope: plan-devices reads the scope, not the verifier)."""
    return (
        isinstance(type, TensorType)
        and type.has_static_shape()
        and isinstance(param, MemRefType)
        and param.element_type == type.element_type
        and param.get_shape() == type.get_shape()
    )


def _check_call_types(
    callee: str,
    signature: FunctionType,
    arg_types: Sequence[Attribute],
    result: Attribute,
) -> None:
    """A call's argument and result types against the callee's signature."""
    params = signature.inputs.data
    if len(arg_types) != len(params):
        raise VerifyException(
            f"{callee} takes {len(params)} argument(s), but the call passes {len(arg_types)}"
        )
    for index, (given, expected) in enumerate(zip(arg_types, params)):
        if given != expected:
            raise VerifyException(
                f"argument {index} of the call to {callee}: expected {expected}, got {given}"
            )
    if signature.outputs.data != (result,):
        raise VerifyException(
            f"result type of the call to {callee}: expected "
            f"{_types(signature.outputs.data)}, got {result}"
        )


@irdl_op_definition
class CallOp(ValueOp):
    """Call of a global `relay.func` by name, or of a `tir.prim_func` (TVM's
    `call_lowered`): the prim_func takes the arguments' buffers, then the
    result's, and writes the result (docs/dialects/relay.md, "Calls")."""

    name = "relay.call"

    callee = prop_def(FlatSymbolRefAttrConstr)
    args = var_operand_def()

    traits = traits_def(_CallSymbolUser())

    def __init__(
        self,
        callee: FuncOp | str,
        args: Sequence[Value],
        result_type: Attribute | None = None,
        *,
        vdevice: VirtualDeviceAttr | None = None,
    ) -> None:
        """Call `callee`; the result type comes from it when it is a `FuncOp`."""
        if isinstance(callee, FuncOp):
            result_type = callee.result_type
            callee = callee.sym_name.data
        if result_type is None:
            raise TypeError("CallOp needs result_type when the callee is given by name")
        super().__init__(
            operands=[args],
            result_types=[result_type],
            properties=with_vdevice({"callee": SymbolRefAttr(callee)}, vdevice),
        )

    @classmethod
    def parse(cls, parser: Parser) -> CallOp:
        callee = parser.parse_symbol_name()
        args = parser.parse_op_args_list()
        properties, attributes = parse_attr_dict(parser, cls, reserved=("callee",))
        parser.parse_punctuation(":")
        values, result = parse_typed_operands(
            parser, args, *parse_function_type(parser)
        )
        properties["callee"] = SymbolRefAttr(callee)
        return cls.create(
            operands=values,
            result_types=[result],
            properties=properties,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.callee.string_value())
        printer.print_operands(self.args)
        print_attr_dict(printer, self, reserved=("callee",))
        printer.print_string(" : ")
        printer.print_attribute(
            FunctionType.from_lists(self.args.types, [self.result.type])
        )


@irdl_op_definition
class CallIndirectOp(ValueOp):
    """Call of a function value (a `relay.fn`, a parameter, a tuple element...)."""

    name = "relay.call_indirect"

    callee = operand_def(FunctionType)
    args = var_operand_def()

    def __init__(
        self,
        callee: Value,
        args: Sequence[Value],
        *,
        vdevice: VirtualDeviceAttr | None = None,
    ) -> None:
        """The result type is the callee's."""
        signature = SSAValue.get(callee).type
        if not isinstance(signature, FunctionType) or len(signature.outputs.data) != 1:
            raise TypeError(
                f"the callee must have a single-result function type, got {signature}"
            )
        super().__init__(
            operands=[callee, args],
            result_types=[signature.outputs.data[0]],
            properties=with_vdevice({}, vdevice),
        )

    def verify_(self) -> None:
        super().verify_()
        _check_call_types(
            "the callee",
            cast(FunctionType, self.callee.type),
            self.args.types,
            self.result.type,
        )

    @classmethod
    def parse(cls, parser: Parser) -> CallIndirectOp:
        callee = parser.parse_unresolved_operand()
        args = parser.parse_op_args_list()
        properties, attributes = parse_attr_dict(parser, cls)
        parser.parse_punctuation(":")
        signature, pos = parse_function_type(parser)
        values, result = parse_typed_operands(parser, args, signature, pos)
        return cls.create(
            operands=[parser.resolve_operand(callee, signature), *values],
            result_types=[result],
            properties=properties,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.callee)
        printer.print_operands(self.args)
        print_attr_dict(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.callee.type)


FUNCTION_OPS: tuple[type[IRDLOperation], ...] = (
    FuncOp,
    FnOp,
    ReturnOp,
    CallOp,
    CallIndirectOp,
)
"""The ops of this family, in the order the `Relay` dialect lists them."""
