"""`verify-devices`: check that a planned module is consistent.

After `plan-devices` every relay value carries its device and every use of a
value on another device goes through a `relay.device_copy`.  This pass checks
exactly that, from the attributes alone (`hetero.analysis.devices`), so a
pass that rewrites planned IR can be followed by it in tests and pipelines.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from hetero.analysis.devices import device_of, expected_device
from hetero.dialects.relay import FuncOp, FunctionOpBase, OnDeviceOp, ValueOp
from hetero.transforms.plan_devices import is_optimizable, planned_ops
from hetero.utils.diagnostics import HeteroError


def _check_signature(func: FunctionOpBase) -> None:
    if any(d is None for d in func.param_vdevices) or func.result_vdevice is None:
        raise HeteroError(
            "function parameters and result must all have a vdevice", func
        )


def _check_op(op: Operation) -> None:
    if isinstance(op, OnDeviceOp):
        raise HeteroError("relay.on_device is left in a planned module", op)
    if isinstance(op, FunctionOpBase):
        _check_signature(op)
    if isinstance(op, ValueOp) and op.vdevice is None:
        raise HeteroError(f"{op.name} has no vdevice", op)
    for index, operand in enumerate(op.operands):
        have, want = device_of(operand), expected_device(op, index)
        if have is not None and want is not None and have != want:
            raise HeteroError(
                f"operand #{index} is on {have} but {op.name} expects it on {want}: "
                "a relay.device_copy is missing",
                op,
            )


@dataclass(frozen=True)
class VerifyDevicesPass(ModulePass):
    """Every value placed, every cross-device use through a device_copy."""

    name = "verify-devices"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in op.ops:
            if not isinstance(func, FuncOp):
                continue
            _check_signature(func)
            if is_optimizable(func) and not func.is_primitive:
                for inner in planned_ops(func.body.block):
                    _check_op(inner)
