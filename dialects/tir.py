"""The `tir` dialect: hetero's loop level (TVM's TIR, written the MLIR way).

A `tir.prim_func` is a function over buffers (builtin `memref`s) and scalars.
Its body is ordinary structured IR: scalars are `arith`/`math`, buffer
accesses are `memref.load`/`memref.store`, conditionals and loop-carried
values are `scf`.  This dialect adds only what TIR has and upstream lacks:

* `tir.prim_func` / `tir.return` — the function, public (TVM: "has a
  global_symbol", callable from outside) or `private` (an internal
  subroutine), with an optional `target` (`#target.target<...>`);
* `tir.for` — a loop with a *kind*: serial, parallel, vectorized, unrolled,
  or bound to a GPU thread axis (`thread_binding "threadIdx.x"`);
* `tir.alloc` — a buffer allocation; its storage scope (`shared`, `local`,
  ...) is the memory space of the memref type, as TVM keeps it in the
  pointer type, so the scope survives being passed to a subroutine;
* `tir.target_region` — TVMScript's `with T.target(...)`: the body runs on
  that target (outlined into a kernel by `split-host-device`);
* `tir.call`, `tir.launch`, `tir.call_packed`, `tir.call_extern` — calls of
  another prim_func, kernel launches, runtime (packed) functions and
  external C symbols.  Ops that can only run on the host carry the
  `HostOnly` trait, which is what `annotate-device-regions` classifies by.

The syntax is documented in `docs/dialects/tir.md`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ArrayAttr,
    FlatSymbolRefAttrConstr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Dialect,
    Operation,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    CallableOpInterface,
    HasAncestor,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    MemoryAllocEffect,
    OpTrait,
    RecursiveMemoryEffect,
    ReturnLike,
    SingleBlockImplicitTerminator,
    SymbolOpInterface,
    SymbolTable,
    SymbolUserOpInterface,
)
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from hetero.dialects.target import TargetAttr
from hetero.dialects.target.kind import HOST_DEVICE_TYPES
from hetero.utils.symbols import enclosing

# ----------------------------------------------------------------------------
# Tables: loop kinds, thread axes, storage scopes, function attributes
# ----------------------------------------------------------------------------


class ForKind(StrEnum):
    """How the iterations of a `tir.for` are executed (TVM's `ForKind`)."""

    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unrolled"
    THREAD_BINDING = "thread_binding"


@irdl_attr_definition
class ForKindAttr(EnumAttribute[ForKind], SpacedOpaqueSyntaxAttribute):
    """`#tir<for_kind parallel>`; in `tir.for`'s custom syntax just the keyword."""

    name = "tir.for_kind"


FOR_KINDS = {kind: ForKindAttr(kind) for kind in ForKind}
"""Each loop kind's attribute, made once (`lower-te` makes hundreds of loops)."""

INDEX = IndexType()
"""The type of loop bounds and induction variables."""


THREAD_TAGS: tuple[str, ...] = (
    "blockIdx.x",
    "blockIdx.y",
    "blockIdx.z",
    "threadIdx.x",
    "threadIdx.y",
    "threadIdx.z",
    "vthread",
    "vthread.x",
    "vthread.y",
    "vthread.z",
)
"""The GPU thread axes a loop can be bound to (TVM's thread tags)."""

STORAGE_SCOPES: Mapping[str, str] = {
    "global": "device main memory; written as a memref without memory space",
    "shared": "shared by the threads of one GPU block",
    "shared.dyn": "shared memory whose size is given at kernel launch",
    "local": "private to one thread (registers or stack)",
    "warp": "spread over the lanes of one GPU warp",
    "wmma.matrix_a": "tensor-core fragment, left operand",
    "wmma.matrix_b": "tensor-core fragment, right operand",
    "wmma.accumulator": "tensor-core fragment, accumulator",
}
"""Storage scope → what it means.  A memref's memory space is its scope."""

GLOBAL_SCOPE = "global"


def _is_bool(attr: Attribute) -> bool:
    return isinstance(attr, IntegerAttr) and attr.type == IntegerType(1)


def _is_int(attr: Attribute) -> bool:
    return isinstance(attr, IntegerAttr) and not _is_bool(attr)


def _is_string_array(attr: Attribute) -> bool:
    return isinstance(attr, ArrayAttr) and all(isinstance(a, StringAttr) for a in attr)


def _is_unit(attr: Attribute) -> bool:
    return isinstance(attr, UnitAttr)


NO_INLINE = "no_inline"
"""A `tir.prim_func` that its callers call, never inline: the attribute goes
on to its `func.func` and `llvm.func` (MLIR's `no_inline`)."""

FUNCTION_ATTRIBUTES: Mapping[str, tuple[Callable[[Attribute], bool], str]] = {
    "tir.is_host_func": (_is_bool, "a bool"),
    "tir.noalias": (_is_bool, "a bool"),
    "tir.is_global_func": (_is_bool, "a bool"),
    "tir.is_entry_func": (_is_bool, "a bool"),
    "tir.kernel_launch_params": (_is_string_array, "an array of strings"),
    "calling_conv": (_is_int, "an integer"),
    NO_INLINE: (_is_unit, "a unit attribute"),
}
"""Discardable prim_func attributes that later passes read → (check, expected)."""


def storage_scope(memref: MemRefType) -> str:
    """The storage scope of a buffer: its memory space, `global` when none."""
    space = memref.memory_space
    return space.data if isinstance(space, StringAttr) else GLOBAL_SCOPE


def scoped_memref(
    element_type: Attribute, shape: Sequence[int], scope: str = GLOBAL_SCOPE
) -> MemRefType:
    """The memref type of a buffer of `shape` in storage `scope`."""
    space = NoneAttr() if scope == GLOBAL_SCOPE else StringAttr(scope)
    return MemRefType(element_type, shape, memory_space=space)


def _scope_problem(memref: MemRefType) -> str | None:
    space = memref.memory_space
    if isinstance(space, NoneAttr):
        return None
    if not isinstance(space, StringAttr) or space.data not in STORAGE_SCOPES:
        known = ", ".join(f"'{s}'" for s in STORAGE_SCOPES)
        return (
            f"memory space {space} of {memref} is not a storage scope (known: {known})"
        )
    if space.data == GLOBAL_SCOPE:
        return (
            f"{memref}: the 'global' scope is written as a memref without memory space"
        )
    return None


def _is_scalar(type: Attribute) -> bool:
    return isinstance(type, IntegerType | IndexType | AnyFloat)


def _types(types: Sequence[Attribute]) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"


def _ancestors(op: Operation) -> Iterator[Operation]:
    parent = op.parent_op()
    while parent is not None:
        yield parent
        parent = parent.parent_op()


def _device_reason(op: Operation) -> str | None:
    """Why `op` certainly runs on a device rather than the host, or None.

    The innermost enclosing target region, thread-bound loop or function
    decides.  A function target with a host runs its body on that host
    until `split-host-device` outlines the device parts.
    """
    for ancestor in _ancestors(op):
        match ancestor:
            case TargetRegionOp(target=t) if t.device_type not in HOST_DEVICE_TYPES:
                return f"inside a target region for '{t}'"
            case TargetRegionOp():
                return None
            case ForOp(thread_tag=StringAttr(data=tag)):
                return f"inside a loop bound to '{tag}'"
            case PrimFuncOp(target=TargetAttr() as t) if (
                t.host is None and t.device_type not in HOST_DEVICE_TYPES
            ):
                return f"in a function for target '{t}'"
            case PrimFuncOp():
                return None
    return None


class HostOnly(OpTrait):
    """The op can only run on the host (TVM's host-only builtins).

    `annotate-device-regions` keeps statements containing such ops on the
    host; the verifier rejects them where the code is known to run on a device.
    """

    def verify(self, op: Operation) -> None:
        if (reason := _device_reason(op)) is not None:
            raise VerifyException(
                f"'{op.name}' can only run on the host, but it is {reason}"
            )


# ----------------------------------------------------------------------------
# Functions
# ----------------------------------------------------------------------------


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


def _terminate(op: Operation, terminator: type[Operation]) -> None:
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
    """A loop-level function; public unless `private` (spec §7)."""

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
            _terminate(self, ReturnOp)

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
                f"entry block arguments {_types(self.body.block.arg_types)} "
                f"do not match the parameter types {_types(inputs)}"
            )
        for i, type in enumerate(inputs):
            if isinstance(type, MemRefType):
                if (why := _scope_problem(type)) is not None:
                    raise VerifyException(f"parameter #{i}: {why}")
            elif not _is_scalar(type):
                raise VerifyException(
                    f"parameter #{i} has type {type}: prim_func parameters are "
                    "memrefs and scalars (integer, index, float)"
                )
        for i, type in enumerate(outputs):
            if not _is_scalar(type):
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
                f"returns {_types(self.values.types)} but @{func.sym_name.data} "
                f"returns {_types(expected)}"
            )


# ----------------------------------------------------------------------------
# Loops and target regions
# ----------------------------------------------------------------------------


@irdl_op_definition
class ForOp(IRDLOperation):
    """`tir.for %i = %lb to %ub step %s [kind] {...}`: a loop without results.

    TIR loops carry no values: accumulators live in buffers (`tir.alloc`
    with scope `local`); use `scf.for` for loop-carried SSA values.
    """

    name = "tir.for"

    lb = operand_def(IndexType)
    ub = operand_def(IndexType)
    step = operand_def(IndexType)
    kind = prop_def(ForKindAttr)
    thread_tag = opt_prop_def(StringAttr)
    body = region_def("single_block")

    traits = lazy_traits_def(
        lambda: (
            HasAncestor(PrimFuncOp),
            SingleBlockImplicitTerminator(YieldOp),
            RecursiveMemoryEffect(),
        )
    )

    def __init__(
        self,
        lb: SSAValue | Operation,
        ub: SSAValue | Operation,
        step: SSAValue | Operation,
        body: Region | None = None,
        *,
        kind: ForKind = ForKind.SERIAL,
        thread_tag: str | None = None,
    ):
        """A loop; without `body`, an empty one whose block has the induction
        variable.  A `thread_tag` implies kind `thread_binding`."""
        if thread_tag is not None:
            kind = ForKind.THREAD_BINDING
        super().__init__(
            operands=[lb, ub, step],
            regions=[body or Region(Block(arg_types=[INDEX]))],
            properties={
                "kind": FOR_KINDS[kind],
                "thread_tag": None if thread_tag is None else StringAttr(thread_tag),
            },
        )
        _terminate(self, YieldOp)

    @property
    def induction_var(self) -> BlockArgument:
        return self.body.block.args[0]

    @property
    def is_thread_bound(self) -> bool:
        """Bound to a thread axis: its iterations are threads (or vthreads)."""
        return self.thread_tag is not None

    def verify_(self) -> None:
        if self.body.block.arg_types != (IndexType(),):
            raise VerifyException(
                "the body must have exactly one argument, the index induction variable"
            )
        if (step := const_evaluate_operand(self.step)) is not None and step <= 0:
            raise VerifyException(f"the step must be positive, not {step}")
        is_bound = self.kind.data == ForKind.THREAD_BINDING
        if is_bound != (self.thread_tag is not None):
            raise VerifyException(
                "a 'thread_binding' loop needs a thread axis"
                if is_bound
                else "only 'thread_binding' loops name a thread axis, "
                f"not '{self.kind.data}'"
            )
        if self.thread_tag is not None:
            self._verify_thread_binding(self.thread_tag.data)

    def _verify_thread_binding(self, tag: str) -> None:
        if tag not in THREAD_TAGS:
            raise VerifyException(
                f"unknown thread axis '{tag}' (known: {', '.join(THREAD_TAGS)})"
            )
        if const_evaluate_operand(self.lb) != 0:
            raise VerifyException(f"a loop bound to '{tag}' must start at a constant 0")
        if const_evaluate_operand(self.step) != 1:
            raise VerifyException(
                f"a loop bound to '{tag}' must have a constant step 1"
            )
        if any(
            isinstance(a, ForOp) and a.thread_tag == self.thread_tag
            for a in _ancestors(self)
        ):
            raise VerifyException(
                f"a loop bound to '{tag}' is nested in another loop bound to '{tag}'"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.induction_var)
        printer.print_string(" = ")
        printer.print_ssa_value(self.lb)
        printer.print_string(" to ")
        printer.print_ssa_value(self.ub)
        printer.print_string(" step ")
        printer.print_ssa_value(self.step)
        if self.kind.data != ForKind.SERIAL:
            printer.print_string(f" {self.kind.data}")
        if self.thread_tag is not None:
            printer.print_string(" ")
            printer.print_string_literal(self.thread_tag.data)
        printer.print_string(" ")
        printer.print_region(
            self.body, print_entry_block_args=False, print_block_terminators=False
        )
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        indvar = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        bounds = [parser.parse_unresolved_operand()]
        for keyword in ("to", "step"):
            parser.parse_keyword(keyword)
            bounds.append(parser.parse_unresolved_operand())
        lb, ub, step = (parser.resolve_operand(b, IndexType()) for b in bounds)
        kind = parser.parse_optional_str_enum(ForKind) or ForKind.SERIAL
        tag = None
        if kind == ForKind.THREAD_BINDING:
            tag = parser.parse_str_literal('thread axis expected, e.g. "threadIdx.x"')
        body = parser.parse_region((indvar.resolve(IndexType()),))
        loop = cls(lb, ub, step, body, kind=kind, thread_tag=tag)
        loop.attributes |= parser.parse_optional_attr_dict()
        return loop


@irdl_op_definition
class TargetRegionOp(IRDLOperation):
    """`tir.target_region #target.target<"cuda"> {...}`: the body runs there.

    TVMScript's `with T.target(...)` (TVM's `AttrStmt("target")`).  The body
    uses values of the enclosing function freely; `split-host-device`
    outlines it into a kernel whose parameters are those values.
    """

    name = "tir.target_region"

    target = prop_def(TargetAttr)
    body = region_def("single_block")

    traits = lazy_traits_def(
        lambda: (
            HasAncestor(PrimFuncOp),
            SingleBlockImplicitTerminator(YieldOp),
            RecursiveMemoryEffect(),
        )
    )

    def __init__(self, target: TargetAttr, body: Region | None = None):
        super().__init__(
            regions=[body or Region(Block())], properties={"target": target}
        )
        _terminate(self, YieldOp)

    def verify_(self) -> None:
        if self.body.block.args:
            raise VerifyException("the body of a target region takes no arguments")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.target)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_block_terminators=False)

    @classmethod
    def parse(cls, parser: Parser) -> TargetRegionOp:
        pos = parser.pos
        target = parser.parse_attribute()
        if not isinstance(target, TargetAttr):
            parser.raise_error("expected a #target.target", pos, parser.pos)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        region = cls(target, parser.parse_region())
        if attrs is not None:
            region.attributes |= attrs.data
        return region


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a `tir.for` or `tir.target_region` body; implicit in custom syntax."""

    name = "tir.yield"

    traits = traits_def(HasParent(ForOp, TargetRegionOp), IsTerminator())

    assembly_format = "attr-dict"


# ----------------------------------------------------------------------------
# Buffers
# ----------------------------------------------------------------------------


@irdl_op_definition
class AllocOp(IRDLOperation):
    """`%b = tir.alloc(%n) : memref<?x4xf32, "shared">`: a buffer.

    The storage scope is the memref's memory space (none = `global`); the
    buffer lives until the end of the enclosing region.  One size operand per
    dynamic dimension.
    """

    name = "tir.alloc"

    dynamic_sizes = var_operand_def(IndexType)
    buffer = result_def(MemRefType)

    traits = traits_def(HasAncestor(PrimFuncOp), MemoryAllocEffect())

    assembly_format = "(`(` $dynamic_sizes^ `)`)? attr-dict `:` type($buffer)"

    def __init__(
        self, type: MemRefType, dynamic_sizes: Sequence[SSAValue | Operation] = ()
    ):
        super().__init__(operands=[dynamic_sizes], result_types=[type])

    @property
    def scope(self) -> str:
        return storage_scope(self.buffer.type)

    def verify_(self) -> None:
        type = self.buffer.type
        assert isinstance(type, MemRefType)
        if (why := _scope_problem(type)) is not None:
            raise VerifyException(why)
        if not isinstance(type.layout, NoneAttr):
            raise VerifyException(f"{type}: an allocated buffer has the default layout")
        dynamic = sum(1 for d in type.get_shape() if d == DYNAMIC_INDEX)
        if dynamic != len(self.dynamic_sizes):
            raise VerifyException(
                f"{type} has {dynamic} dynamic dimension(s) but "
                f"{len(self.dynamic_sizes)} size operand(s) are given"
            )


# ----------------------------------------------------------------------------
# Calls
# ----------------------------------------------------------------------------


def _callee(op: Operation, callee: SymbolRefAttr) -> PrimFuncOp:
    found = SymbolTable.lookup_symbol(op, callee)
    if found is None:
        raise VerifyException(f"no symbol named @{callee.string_value()}")
    if not isinstance(found, PrimFuncOp):
        raise VerifyException(
            f"@{callee.string_value()} is a '{found.name}', not a 'tir.prim_func'"
        )
    return found


def _check_signature(
    callee: PrimFuncOp, args: Sequence[Attribute], results: Sequence[Attribute]
) -> None:
    name = callee.sym_name.data
    inputs, outputs = (
        callee.function_type.inputs.data,
        callee.function_type.outputs.data,
    )
    if len(args) != len(inputs):
        raise VerifyException(
            f"@{name} takes {len(inputs)} argument(s), {len(args)} given"
        )
    for i, (given, expected) in enumerate(zip(args, inputs)):
        if given != expected:
            raise VerifyException(
                f"argument #{i} has type {given} but @{name} expects {expected}"
            )
    if tuple(results) != outputs:
        raise VerifyException(
            f"@{name} returns {_types(outputs)}, "
            f"but the call has results {_types(results)}"
        )


class _CallSymbolUser(SymbolUserOpInterface):
    def verify(self, op: Operation) -> None:
        assert isinstance(op, CallOp)
        _check_signature(_callee(op, op.callee), op.args.types, op.res.types)


@irdl_op_definition
class CallOp(IRDLOperation):
    """`%r = tir.call @f(%a) : (memref<8xf32>) -> i32`: call of a prim_func.

    With no results it is a statement (TVM's `Evaluate(f(args))`), with
    results an expression.  Caller and callee may have different targets.
    """

    name = "tir.call"

    callee = prop_def(FlatSymbolRefAttrConstr)
    args = var_operand_def()
    res = var_result_def()

    traits = traits_def(HasAncestor(PrimFuncOp), _CallSymbolUser())

    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $res)"

    def __init__(
        self,
        callee: str | SymbolRefAttr,
        args: Sequence[SSAValue | Operation],
        result_types: Sequence[Attribute] = (),
    ):
        if isinstance(callee, str):
            callee = SymbolRefAttr(callee)
        super().__init__(
            operands=[args], result_types=[result_types], properties={"callee": callee}
        )


class _LaunchSymbolUser(SymbolUserOpInterface):
    def verify(self, op: Operation) -> None:
        assert isinstance(op, LaunchOp)
        kernel = _callee(op, op.kernel)
        name = kernel.sym_name.data
        if kernel.function_type.outputs.data:
            raise VerifyException(
                f"a launched kernel returns nothing, but @{name} does"
            )
        _check_signature(kernel, op.args.types, ())
        if kernel.target is not None and kernel.target.device_type in HOST_DEVICE_TYPES:
            raise VerifyException(
                f"@{name} is for the host target '{kernel.target}'; "
                "call it with tir.call"
            )


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """`tir.launch @k(%a) grid(%gx) block(%tx) : (memref<..>)`: launch a kernel.

    Runs `@k` on a grid of 1–3 block extents, each block of 1–3 thread
    extents (index values; missing trailing ones are 1), with optional
    dynamic shared memory in bytes.  The kernel's thread-bound loops are
    its per-thread indices, their extents the launch extents (spec §7.6).
    """

    name = "tir.launch"

    kernel = prop_def(FlatSymbolRefAttrConstr)
    args = var_operand_def()
    grid_size = var_operand_def(IndexType)
    block_size = var_operand_def(IndexType)
    dynamic_shared_memory = opt_operand_def(IndexType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    traits = traits_def(HasAncestor(PrimFuncOp), HostOnly(), _LaunchSymbolUser())

    assembly_format = (
        "$kernel `(` $args `)` `grid` `(` $grid_size `)` `block` `(` $block_size `)`"
        " (`dynamic_shared_memory` `(` $dynamic_shared_memory^ `)`)?"
        " attr-dict `:` `(` type($args) `)`"
    )

    def __init__(
        self,
        kernel: str | SymbolRefAttr,
        args: Sequence[SSAValue | Operation],
        grid_size: Sequence[SSAValue | Operation],
        block_size: Sequence[SSAValue | Operation],
        dynamic_shared_memory: SSAValue | Operation | None = None,
    ):
        if isinstance(kernel, str):
            kernel = SymbolRefAttr(kernel)
        super().__init__(
            operands=[args, grid_size, block_size, dynamic_shared_memory],
            properties={"kernel": kernel},
        )

    def verify_(self) -> None:
        for what, sizes in (("grid", self.grid_size), ("block", self.block_size)):
            if not 1 <= len(sizes) <= 3:
                raise VerifyException(
                    f"a launch has 1 to 3 {what} extents, not {len(sizes)}"
                )


class _NamedCallOp(IRDLOperation):
    """A call of a function known by name: memref/scalar args, ≤ 1 scalar result."""

    callee = prop_def(StringAttr)
    args = var_operand_def()
    res = var_result_def()

    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $res)"

    CALLS: ClassVar[str]
    """How the error messages name these calls."""

    def __init__(
        self,
        callee: str,
        args: Sequence[SSAValue | Operation],
        result_types: Sequence[Attribute] = (),
    ):
        super().__init__(
            operands=[args],
            result_types=[result_types],
            properties={"callee": StringAttr(callee)},
        )

    def verify_(self) -> None:
        for i, type in enumerate(self.args.types):
            if not (isinstance(type, MemRefType) or _is_scalar(type)):
                raise VerifyException(
                    f"argument #{i} has type {type}: {self.CALLS} "
                    "pass memrefs and scalars"
                )
        if len(self.res) > 1 or not all(_is_scalar(t) for t in self.res.types):
            raise VerifyException(
                f"{self.CALLS} return at most one scalar, not {_types(self.res.types)}"
            )


@irdl_op_definition
class CallPackedOp(_NamedCallOp):
    """`%rc = tir.call_packed "name"(%a) : (memref<8xf32>) -> i32`.

    Calls a function registered with the runtime under `name` (TVM's
    `tvm_call_packed`).  Host only.
    """

    name = "tir.call_packed"
    CALLS: ClassVar[str] = "packed calls"

    traits = traits_def(HasAncestor(PrimFuncOp), HostOnly())


@irdl_op_definition
class CallExternOp(_NamedCallOp):
    """`%y = tir.call_extern "expf"(%x) : (f32) -> f32`: an external C symbol.

    TVM's `call_extern`; valid on any target whose code generator can link
    the symbol (host or device).
    """

    name = "tir.call_extern"
    CALLS: ClassVar[str] = "extern calls"

    traits = traits_def(HasAncestor(PrimFuncOp))


# ----------------------------------------------------------------------------
# Queries the TIR passes share
# ----------------------------------------------------------------------------


def function_of(op: Operation) -> PrimFuncOp:
    """The prim_func around `op`."""
    found = enclosing(op, PrimFuncOp)
    assert found is not None, "tir ops live in prim_funcs (verified)"
    return found


def prim_funcs(module: Operation) -> list[PrimFuncOp]:
    """The functions every TIR pass processes: each prim_func of `module` and
    of the modules nested in it (external codegens nest `builtin.module`s)."""
    return [op for op in module.walk() if isinstance(op, PrimFuncOp)]


def called_function(call: CallOp | LaunchOp) -> PrimFuncOp:
    """The prim_func `call` calls or launches, looked up in its own symbol
    table (the verifier checked that it exists)."""
    return _callee(call, call.callee if isinstance(call, CallOp) else call.kernel)


TIR = Dialect(
    "tir",
    [
        PrimFuncOp,
        ReturnOp,
        ForOp,
        TargetRegionOp,
        YieldOp,
        AllocOp,
        CallOp,
        LaunchOp,
        CallPackedOp,
        CallExternOp,
    ],
    [ForKindAttr],
)
