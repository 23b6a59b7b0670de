"""Calls: `tir.call`, `tir.launch`, `tir.call_packed`, `tir.call_extern`.

Calls of another prim_func, kernel launches, runtime (packed) functions
and external C symbols.  Ops that can only run on the host carry the
`HostOnly` trait, which is what `annotate-device-regions` classifies by;
it is defined here with the calls that carry it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    FlatSymbolRefAttrConstr,
    IndexType,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    opt_operand_def,
    prop_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasAncestor, OpTrait, SymbolTable, SymbolUserOpInterface
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.target import TargetAttr
from hetero.dialects.target.kind import HOST_DEVICE_TYPES
from hetero.dialects.tir.attrs import format_types, is_scalar
from hetero.dialects.tir.functions import PrimFuncOp
from hetero.dialects.tir.loops import ForOp, TargetRegionOp
from hetero.utils.symbols import ancestors


def _device_reason(op: Operation) -> str | None:
    """Why `op` certainly runs on a device rather than the host, or None.

    The innermost enclosing target region, thread-bound loop or function
    decides.  A function target with a host runs its body on that host
    until `split-host-device` outlines the device parts.
    """
    for ancestor in ancestors(op):
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
            f"@{name} returns {format_types(outputs)}, "
            f"but the call has results {format_types(results)}"
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
    its per-thread indices, their extents the launch extents.
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
            if not (isinstance(type, MemRefType) or is_scalar(type)):
                raise VerifyException(
                    f"argument #{i} has type {type}: {self.CALLS} "
                    "pass memrefs and scalars"
                )
        if len(self.res) > 1 or not all(is_scalar(t) for t in self.res.types):
            raise VerifyException(
                f"{self.CALLS} return at most one scalar, not {format_types(self.res.types)}"
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


def called_function(call: CallOp | LaunchOp) -> PrimFuncOp:
    """The prim_func `call` calls or launches, looked up in its own symbol
    table (the verifier checked that it exists)."""
    return _callee(call, call.callee if isinstance(call, CallOp) else call.kernel)


CALL_OPS: tuple[type[IRDLOperation], ...] = (
    CallOp,
    LaunchOp,
    CallPackedOp,
    CallExternOp,
)
"""The ops of this family, in the order the `TIR` dialect lists them."""
