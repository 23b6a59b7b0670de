"""Which device a planned relay value is on, read from attributes alone.

This is the role of TVM's `RecoverVirtualDeviceMap` / `LexicalOnDeviceMixin`
(docs/design.md §3.9), without the lexical scoping: after `plan-devices` every value
says where it lives — an op result through the op's `vdevice`, a parameter
through its function's argument attributes — and every consumer says where it
expects its operands.  Later passes (lowering, memory planning, the BYOC
partitioner) ask these two questions instead of re-solving anything.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FunctionType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue
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
