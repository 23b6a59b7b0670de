"""`tir.prim_func` and `tir.return`: the function of the loop level.

A prim_func is public (TVM: "has a global_symbol", callable from outside)
or `private` (an internal subroutine), with an optional `target`
(`#target.target<...>`).  Also here: the queries every TIR pass starts
from (the prim_funcs of a module, the prim_func around an op).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    FunctionType,
    MemRefType,
    StringAttr,
    SymbolNameConstraint,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    opt_prop_def,
    prop_def,
    region_def,
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
    SingleBlockImplicitTerminator,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.target import TargetAttr
from hetero.dialects.tir.attrs import (
    FUNCTION_ATTRIBUTES,
    format_types,
    is_scalar,
    scope_problem,
)
from hetero.utils.symbols import enclosing


class PrimFuncCallableInterface(CallableOpInterface):
    @classmethod
    def get_callable_region(cls, op: Operation) -> Region:
        assert isinstance(op, PrimFuncOp)
        return op.body

    @classmethod
    def get_argument_types(cls, op: Operation) -> tuple[Attribute, ...]:
        assert isinstance(op, PrimFuncOp)
        return op.function_type.inputs.data

    @classmethod
    def get_result_types(cls, op: Operation) -> tuple[Attribute, ...]:
        assert isinstance(op, PrimFuncOp)
        return op.function_type.outputs.data


def terminate(op: Operation, terminator: type[Operation]) -> None:
    """xDSL's `ensure_terminator` (each block of `op` ends with a
    `terminator`), without its `ImplicitBuilder`: that swaps
    `Operation.__post_init__` for the whole process, and two threads
    building loops at once (two `hetero.compile` calls) left a chain of
    wrappers that inserted each later op twice."""
    for region in op.regions:
        if not region.blocks:
            region.add_block(Block())
        for block in region.blocks:
            last = block.last_op
            if last is None or not last.has_trait(
                IsTerminator, value_if_unregistered=False
            ):
                block.add_op(terminator.create())


@irdl_op_definition
class PrimFuncOp(IRDLOperation):
    """A loop-level function; public unless `private` (docs/dialects/tir.md)."""

    name = "tir.prim_func"

    body = region_def("single_block")
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    sym_visibility = opt_prop_def(StringAttr)
    target = opt_prop_def(TargetAttr)

    traits = lazy_traits_def(
        lambda: (
            IsolatedFromAbove(),
            SymbolOpInterface(),
            PrimFuncCallableInterface(),
            SingleBlockImplicitTerminator(ReturnOp),
        )
    )

    def __init__(
        self,
        name: str,
        function_type: FunctionType | tuple[Sequence[Attribute], Sequence[Attribute]],
        body: Region | None = None,
        *,
        private: bool = False,
        target: TargetAttr | None = None,
    ):
        """A function; without `body`, an empty one (ending in `tir.return`
        when it has no results)."""
        if isinstance(function_type, tuple):
            function_type = FunctionType.from_lists(*function_type)
        if body is None:
            body = Region(Block(arg_types=function_type.inputs))
        super().__init__(
            regions=[body],
            properties={
                "sym_name": StringAttr(name),
                "function_type": function_type,
                "sym_visibility": StringAttr("private") if private else None,
                "target": target,
            },
        )
        if not function_type.outputs.data:
            terminate(self, ReturnOp)

    @property
    def is_private(self) -> bool:
        """An internal subroutine (TVM: no `global_symbol`)."""
        return self.sym_visibility is not None

    @property
    def args(self) -> tuple[BlockArgument, ...]:
        return self.body.block.args

    def verify_(self) -> None:
        if self.sym_visibility not in (None, StringAttr("private")):
            raise VerifyException(
                "a prim_func is public (no visibility) or 'private', "
                f"not '{self.sym_visibility.data}'"
            )
        inputs, outputs = (
            self.function_type.inputs.data,
            self.function_type.outputs.data,
        )
        if self.body.block.arg_types != inputs:
            raise VerifyException(
                f"entry block arguments {format_types(self.body.block.arg_types)} "
                f"do not match the parameter types {format_types(inputs)}"
            )
        for i, type in enumerate(inputs):
            if isinstance(type, MemRefType):
                if (why := scope_problem(type)) is not None:
                    raise VerifyException(f"parameter #{i}: {why}")
            elif not is_scalar(type):
                raise VerifyException(
                    f"parameter #{i} has type {type}: prim_func parameters are "
                    "memrefs and scalars (integer, index, float)"
                )
        for i, type in enumerate(outputs):
            if not is_scalar(type):
                raise VerifyException(
                    f"result #{i} has type {type}: a prim_func returns scalars only"
                )
        for key, (check, expected) in FUNCTION_ATTRIBUTES.items():
            if key in self.attributes and not check(self.attributes[key]):
                raise VerifyException(f"attribute '{key}' must be {expected}")

    # -- syntax: tir.prim_func [private] @f(%a: T, ...) [-> R] [target #t]
    #            [attributes {...}] {...}

    def print(self, printer: Printer) -> None:
        if self.is_private:
            printer.print_string(" private")
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        with printer.in_parens():
            printer.print_list(self.args, printer.print_block_argument)
        outputs = self.function_type.outputs.data
        if len(outputs) == 1:
            printer.print_string(" -> ")
            printer.print_attribute(outputs[0])
        elif outputs:
            printer.print_string(" -> (")
            printer.print_list(outputs, printer.print_attribute)
            printer.print_string(")")
        if self.target is not None:
            printer.print_string(" target ")
            printer.print_attribute(self.target)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(
            self.body,
            print_entry_block_args=False,
            print_block_terminators=bool(outputs),
        )

    @classmethod
    def parse(cls, parser: Parser) -> PrimFuncOp:
        private = parser.parse_optional_keyword("private") is not None
        name = parser.parse_symbol_name().data
        args = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_argument
        )
        outputs: Sequence[Attribute] = []
        if parser.parse_optional_punctuation("->") is not None:
            outputs = parser.parse_optional_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_type
            ) or [parser.parse_type()]
        target = None
        if parser.parse_optional_keyword("target") is not None:
            pos = parser.pos
            target = parser.parse_attribute()
            if not isinstance(target, TargetAttr):
                parser.raise_error("expected a #target.target", pos, parser.pos)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region(args)
        func = cls(
            name,
            ([a.type for a in args], outputs),
            body,
            private=private,
            target=target,
        )
        if attrs is not None:
            func.attributes |= attrs.data
        return func


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """`tir.return %v : i32` ends a prim_func; implicit when it returns nothing."""

    name = "tir.return"

    values = var_operand_def()

    traits = traits_def(HasParent(PrimFuncOp), IsTerminator(), ReturnLike())

    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, *values: SSAValue | Operation):
        super().__init__(operands=[values])

    def verify_(self) -> None:
        func = self.parent_op()
        assert isinstance(func, PrimFuncOp)
        expected = func.function_type.outputs.data
        if self.values.types != expected:
            raise VerifyException(
                f"returns {format_types(self.values.types)} but @{func.sym_name.data} "
                f"returns {format_types(expected)}"
            )


def function_of(op: Operation) -> PrimFuncOp:
    """The prim_func around `op`."""
    found = enclosing(op, PrimFuncOp)
    assert found is not None, "tir ops live in prim_funcs (verified)"
    return found


def prim_funcs(module: Operation) -> list[PrimFuncOp]:
    """The functions every TIR pass processes: each prim_func of `module` and
    of the modules nested in it (external codegens nest `builtin.module`s)."""
    return [op for op in module.walk() if isinstance(op, PrimFuncOp)]


FUNCTION_OPS: tuple[type[IRDLOperation], ...] = (PrimFuncOp, ReturnOp)
"""The ops of this family, in the order the `TIR` dialect lists them."""
