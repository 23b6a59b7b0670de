"""Which device a planned relay value is on, read from attributes alone.

This is the role of TVM's `RecoverVirtualDeviceMap` / `LexicalOnDeviceMixin`
(docs/design.md §3.9), without the lexical scoping: after `plan-devices` every value
says where it lives — an op result through the op's `vdevice`, a parameter
through its function's argument attributes — and every consumer says where it
expects its operands.  Later passes (lowering, memory planning, the BYOC
partitioner) ask these two questions instead of re-solving anything.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FunctionType, MemRefType
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue
from xdsl.traits import SymbolTable

from hetero.dialects.relay import (
    CallIndirectOp,
    CallOp,
    DeviceCopyOp,
    FnOp,
    FuncOp,
    FunctionOpBase,
    IfOp,
    ReturnOp,
    ShapeOfOp,
    YieldOp,
)
from hetero.dialects.target import VirtualDeviceAttr
from hetero.dialects.tir import PrimFuncOp
from hetero.dialects.tir.attrs import GLOBAL_SCOPE, storage_scope


def device_of(value: SSAValue) -> VirtualDeviceAttr | None:
    """The device holding `value` (a function value: its result's device)."""
    if isinstance(value, OpResult):
        return getattr(value.op, "vdevice", None)
    assert isinstance(value, BlockArgument)
    owner = value.block.parent_op()
    if isinstance(owner, FunctionOpBase) and value.block is owner.body.block:
        return owner.param_vdevices[value.index]
    return None


def expected_device(op: Operation, index: int) -> VirtualDeviceAttr | None:
    """The device `op` expects its operand `index` on; None where it has no
    single answer (function values, calls of unknown function values)."""
    if isinstance(op.operands[index].type, FunctionType):
        return None
    match op:
        case DeviceCopyOp():
            return op.src
        case CallOp():
            callee = SymbolTable.lookup_symbol(op, op.callee)
            if isinstance(callee, PrimFuncOp):
                return _prim_func_expected(op, callee, index)
            return callee.param_vdevices[index] if isinstance(callee, FuncOp) else None
        case CallIndirectOp():
            callee = op.callee.owner
            return (
                callee.param_vdevices[index - 1] if isinstance(callee, FnOp) else None
            )
        case ReturnOp():
            function = op.parent_op()
            return (
                function.result_vdevice
                if isinstance(function, FunctionOpBase)
                else None
            )
        case ShapeOfOp():
            return None  # a shape is read from wherever the tensor is
        case YieldOp():
            parent = op.parent_op()
            return parent.vdevice if isinstance(parent, IfOp) else None
        case _:
            return getattr(op, "vdevice", None)


def buffer_scope(type: Attribute) -> str:
    """The memory scope a prim_func's buffer constrains its value to: its
    storage scope, none for TIR's `global` (relay's unconstrained scope is
    ordinary device memory, which is what `global` is)."""
    assert isinstance(type, MemRefType), "relay calls pass buffers (verified)"
    scope = storage_scope(type)
    return "" if scope == GLOBAL_SCOPE else scope


def _prim_func_expected(
    call: CallOp, callee: PrimFuncOp, index: int
) -> VirtualDeviceAttr | None:
    """A buffer in the scope of the result's buffers shares the result's
    domain (plan-devices), so its argument is exactly on the call's device;
    one in another scope has its own domain, with no single answer here."""
    scopes = [buffer_scope(t) for t in callee.function_type.inputs.data]
    return call.vdevice if scopes[index] in scopes[len(call.args) :] else None
