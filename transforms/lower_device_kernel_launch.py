"""`lower-device-kernel-launch`: calls across targets become launches (docs/design.md §7.5).

Every `tir.call` is judged by where the call runs (the caller's execution
target: the innermost device region or thread-bound loop, else the caller's
target, or its host when it has one) and where the callee runs (its target,
or its host when it has one — such a function is exposed through host code):

* **same target** (equal as strings): unchanged, an internal subroutine call
  the code generator handles (or `inline-private-functions` removes);
* **same device type** (e.g. `llvm` and `llvm -opt_level=2`, or a CPU caller
  and an `ext_dev` callee): `tir.call_extern "callee"(args)`, a call of the
  callee's symbol, which becomes public;
* **host → device**: `tir.launch`, the form GPU code generation consumes:

  ```mlir
  tir.launch @k(%args...) grid(%gx[, %gy[, %gz]]) block(%tx[, %ty[, %tz]])
      [dynamic_shared_memory(%bytes)] : (types...)
  ```

  `grid` holds the extents of the kernel's `blockIdx.x/y/z` loops and
  `block` those of its `threadIdx.x/y/z` loops (the largest constant
  extent when several loops bind an axis; the GPU code generator guards
  shorter ones), up to the highest axis used, missing ones `1`
  (`grid(1)`/`block(1)` when none is bound).  The extents are computed on the
  host from the call's arguments: kernel parameters are replaced by the
  arguments, constants (wherever they stand in the kernel) and pure
  top-level ops on them are cloned.  A `shared.dyn`
  `tir.alloc` (at most one) gives `dynamic_shared_memory`, its size in bytes.
  The launched kernel becomes public (its symbol is the PTX entry) with
  `calling_conv = 2`, `tir.is_global_func = true` and
  `tir.kernel_launch_params` = the bound axes in first-appearance order
  (`"tir.use_dyn_shared_memory"` last when used); a kernel returning the CPU
  error code `0` stops returning it and the call's result becomes `0`.

`vthread` axes are not launch dimensions: they stay loops of the kernel.
Errors (diagnostics): a function without a target, a device calling the
host or another device type, a callee both launched and extern-called,
extents that cannot be computed on the host, an axis bound by several loops
whose extents are not all constant, a launched kernel returning anything
but `0`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import ConstantLike, is_side_effect_free
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from hetero.analysis.execution_targets import (
    execution_target,
    function_execution_target,
)
from hetero.analysis.launch_axes import BLOCK_AXES, GRID_AXES, launch_loops
from hetero.dialects.target import TargetAttr
from hetero.dialects.target.kind import HOST_DEVICE_TYPES, DeviceType
from hetero.dialects.tir import (
    AllocOp,
    CallExternOp,
    CallOp,
    LaunchOp,
    PrimFuncOp,
    ReturnOp,
    called_function,
)
from hetero.utils.diagnostics import HeteroError

DYNAMIC_SHARED_MEMORY = "tir.use_dyn_shared_memory"
KERNEL_LAUNCH_CALLING_CONV = 2
"""TVM's `CallingConv::kDeviceKernelLaunch`."""

EXTERN_CALLABLE = {(DeviceType.cpu, DeviceType.ext_dev)}
"""(caller, callee) device types that call each other by symbol, as TVM PR #14985
allows: a CPU reaches an `ext_dev` library by name."""


@dataclass
class LaunchInfo:
    """What launching a kernel needs: its launch axes and their extents."""

    func: PrimFuncOp
    extents: dict[str, SSAValue] = field(default_factory=dict)
    """Launch axis → extent in the kernel, in first-appearance order."""
    dynamic_shared: AllocOp | None = None

    @property
    def launch_params(self) -> list[str]:
        params = list(self.extents)
        return params + [DYNAMIC_SHARED_MEMORY] if self.dynamic_shared else params


def launch_info(func: PrimFuncOp) -> LaunchInfo:
    info = LaunchInfo(func)
    info.extents = {tag: loop.ub for tag, loop in launch_loops(func).items()}
    for op in func.walk():
        if isinstance(op, AllocOp) and op.scope == "shared.dyn":
            if info.dynamic_shared is not None:
                raise HeteroError(
                    f"@{func.sym_name.data} allocates 'shared.dyn' memory twice; "
                    "a launch passes one dynamic shared memory size",
                    op,
                )
            info.dynamic_shared = op
    _check_error_code(func)
    return info


def _check_error_code(kernel: PrimFuncOp) -> None:
    """A launched kernel returns nothing: only `tir.return 0` may go."""
    if not (outputs := kernel.function_type.outputs.data):
        return
    ret = kernel.body.block.last_op
    assert isinstance(ret, ReturnOp)
    if outputs != (i32,) or const_evaluate_operand(ret.operands[0]) != 0:
        raise HeteroError(
            f"@{kernel.sym_name.data} is launched on a device, so it may only return "
            "the error code 0",
            ret,
        )


class HostExpressions:
    """Clones kernel-side extent computations to the host, at one call site."""

    def __init__(self, call: CallOp, kernel: PrimFuncOp):
        self.call, self.kernel = call, kernel
        self.values: dict[SSAValue, SSAValue] = dict(zip(kernel.args, call.args))
        self.constants: dict[int, SSAValue] = {}

    def emit(self, op: Operation) -> SSAValue:
        Rewriter.insert_op(op, InsertPoint.before(self.call))
        return op.results[0]

    def constant(self, value: int) -> SSAValue:
        if (known := self.constants.get(value)) is None:
            known = self.emit(arith.ConstantOp(IntegerAttr(value, IndexType())))
            self.constants[value] = known
        return known

    def value(self, kernel_value: SSAValue, what: str) -> SSAValue:
        """`kernel_value` computed on the host from the call's arguments."""
        if (known := self.values.get(kernel_value)) is not None:
            return known
        op = kernel_value.owner
        if not isinstance(op, Operation) or not self._movable(op):
            raise HeteroError(
                f"{what} of @{self.kernel.sym_name.data} cannot be computed on the host: "
                "it must be a constant or pure arithmetic on the kernel's parameters",
                self.call,
            )
        operands = {v: self.value(v, what) for v in op.operands}
        result = self.emit(op.clone(value_mapper=operands))
        self.values[kernel_value] = result
        return result

    def _movable(self, op: Operation) -> bool:
        """A constant anywhere in the kernel, or pure arithmetic at its top
        level (deeper, its operands may be loop indices)."""
        if op.has_trait(ConstantLike) and not op.operands and not op.regions:
            return True
        return (
            op.parent_op() is self.kernel and not op.regions and is_side_effect_free(op)
        )

    def sizes(self, info: LaunchInfo, axes: Sequence[str]) -> list[SSAValue]:
        used = [i for i, axis in enumerate(axes) if axis in info.extents]
        count = used[-1] + 1 if used else 1
        return [
            self.value(info.extents[axis], f"the extent of '{axis}'")
            if axis in info.extents
            else self.constant(1)
            for axis in axes[:count]
        ]

    def shared_bytes(self, alloc: AllocOp) -> SSAValue:
        type = alloc.buffer.type
        assert isinstance(type, MemRefType)
        static = prod(d for d in type.get_shape() if d >= 0) * _byte_width(
            type.element_type
        )
        total = self.constant(static)
        for size in alloc.dynamic_sizes:
            dim = self.value(size, "the 'shared.dyn' buffer size")
            total = self.emit(arith.MuliOp(total, dim))
        return total


def _byte_width(type: Attribute) -> int:
    if isinstance(type, IndexType):
        return 8
    return (type.bitwidth + 7) // 8  # type: ignore[attr-defined]


def launch(call: CallOp, info: LaunchInfo) -> None:
    """Replace `call` by a `tir.launch` of `info.func`."""
    host = HostExpressions(call, info.func)
    grid = host.sizes(info, GRID_AXES)
    block = host.sizes(info, BLOCK_AXES)
    shared = host.shared_bytes(info.dynamic_shared) if info.dynamic_shared else None
    op = LaunchOp(call.callee, call.args, grid, block, shared)
    results = [host.emit(arith.ConstantOp(IntegerAttr(0, r.type))) for r in call.res]
    Rewriter.replace_op(call, op, [*results])


def drop_error_code(kernel: PrimFuncOp) -> None:
    """Remove the (checked) `tir.return 0` of a launched kernel."""
    if not kernel.function_type.outputs.data:
        return
    ret = kernel.body.block.last_op
    assert ret is not None
    Rewriter.replace_op(ret, ReturnOp(), [])
    kernel.function_type = FunctionType.from_lists(kernel.function_type.inputs.data, [])


def mark_launched(info: LaunchInfo) -> None:
    kernel = info.func
    drop_error_code(kernel)
    kernel.sym_visibility = None
    kernel.attributes["tir.is_global_func"] = BoolAttr.from_bool(True)
    kernel.attributes["calling_conv"] = IntegerAttr(KERNEL_LAUNCH_CALLING_CONV, i64)
    kernel.attributes["tir.kernel_launch_params"] = ArrayAttr(
        [StringAttr(p) for p in info.launch_params]
    )


def mark_extern(callee: PrimFuncOp) -> None:
    callee.sym_visibility = None
    callee.attributes["tir.is_global_func"] = BoolAttr.from_bool(True)


def call_extern(call: CallOp) -> None:
    if len(call.res) > 1:
        raise HeteroError(
            "an extern call returns at most one value; this call of "
            f"@{call.callee.string_value()} has {len(call.res)}",
            call,
        )
    op = CallExternOp(call.callee.string_value(), call.args, call.res.types)
    Rewriter.replace_op(call, op)


def _targets(call: CallOp, callee: PrimFuncOp) -> tuple[TargetAttr, TargetAttr]:
    caller_target = execution_target(call)
    callee_target = function_execution_target(callee)
    for target, who in (
        (caller_target, "the caller"),
        (callee_target, f"@{callee.sym_name.data}"),
    ):
        if target is None:
            raise HeteroError(
                f"{who} has no target; run bind-target before lower-device-kernel-launch",
                call,
            )
    assert caller_target is not None and callee_target is not None
    return caller_target, callee_target


def classify(call: CallOp, callee: PrimFuncOp) -> str | None:
    """'extern', 'launch' or None (unchanged) for a call (docs/design.md §7.5)."""
    caller, target = _targets(call, callee)
    if str(caller) == str(target):
        return None
    pair = (caller.device_type, target.device_type)
    if pair[0] == pair[1] or pair in EXTERN_CALLABLE:
        return "extern"
    if pair[0] not in HOST_DEVICE_TYPES or pair[1] in HOST_DEVICE_TYPES:
        raise HeteroError(
            f"@{callee.sym_name.data} runs on '{target}' and cannot be called from "
            f"code running on '{caller}': only the host launches device kernels",
            call,
        )
    return "launch"


class LowerDeviceKernelLaunchPass(ModulePass):
    """Turn cross-target calls into kernel launches or extern calls."""

    name = "lower-device-kernel-launch"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        launched: dict[PrimFuncOp, LaunchInfo] = {}
        externs: dict[PrimFuncOp, None] = {}
        for call in [c for c in op.walk() if isinstance(c, CallOp)]:
            callee = called_function(call)
            match classify(call, callee):
                case "launch":
                    if callee not in launched:
                        launched[callee] = launch_info(callee)
                    launch(call, launched[callee])
                case "extern":
                    externs[callee] = None
                    call_extern(call)
        for callee in launched.keys() & externs.keys():
            raise HeteroError(
                f"@{callee.sym_name.data} is both launched and called by symbol; "
                "that is not supported",
                callee,
            )
        for info in launched.values():
            mark_launched(info)
        for callee in externs:
            mark_extern(callee)
