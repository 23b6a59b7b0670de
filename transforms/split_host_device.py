"""`split-host-device`: outline every target region into a kernel (docs/design.md §7.3).

Each outermost `tir.target_region #T` (made by `annotate-device-regions` or
written by hand, whatever the function's own target) becomes a private
prim_func, and the region is replaced by a call of it:

* **parameters** are the values the region uses but does not define, buffers
  (memrefs, TVM's handles) first, then scalars, each group sorted by name
  (first use breaks ties between unnamed values); constants are cloned into
  the kernel instead, as TVM's immediates are never parameters (and erased
  from the host when nothing else there uses them);
* the kernel's **target** is `T` without its host; attributes
  `tir.noalias = true`, `tir.is_global_func = true`, `tir.is_entry_func =
  false`; it is private (no `global_symbol`);
* its **name** is the host function's name + `_kernel`, made unique in the
  function's symbol table (its module, perhaps a nested one) with `_1`, `_2`, ...; kernels follow their host function in order;
* a kernel for a CPU device type (`cpu`, `ext_dev`, `hexagon`) returns an
  `i32` error code, `0` at its end, and the call site checks it:
  `%rc = tir.call @k(...) -> i32` then `cf.assert (%rc == 0), "Error
  executing compute kernel"`; any other kernel returns nothing and is called
  as a statement.

The host function's own target is not changed; functions without target
regions are unchanged.  Kernels are searched too, so a region nested in a
region becomes a kernel of the kernel and running the pass twice changes
nothing.  `lower-device-kernel-launch` turns the calls into launches.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from xdsl.context import Context
from xdsl.dialects import arith, cf
from xdsl.dialects.builtin import BoolAttr, IntegerAttr, MemRefType, ModuleOp, i32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import ConstantLike

from hetero.dialects.target.kind import DeviceType
from hetero.dialects.tir import (
    CallOp,
    PrimFuncOp,
    ReturnOp,
    TargetRegionOp,
    prim_funcs,
)
from hetero.utils.symbols import fresh_symbol
from hetero.utils.values import free_values

ERROR_CODE_DEVICE_TYPES = (DeviceType.cpu, DeviceType.ext_dev, DeviceType.hexagon)
"""Kernels for these device types return an `i32` error code the caller checks."""

KERNEL_ATTRIBUTES = {
    "tir.noalias": BoolAttr.from_bool(True),
    "tir.is_global_func": BoolAttr.from_bool(True),
    "tir.is_entry_func": BoolAttr.from_bool(False),
}

KERNEL_ERROR_MESSAGE = "Error executing compute kernel"


def _is_constant(value: SSAValue) -> bool:
    owner = value.owner
    return (
        isinstance(owner, Operation)
        and owner.has_trait(ConstantLike)
        and not owner.operands
    )


def kernel_parameters(captured: Iterable[SSAValue]) -> list[SSAValue]:
    """Buffers first, then by name (stable: first use), as TVM orders them."""
    return sorted(
        captured,
        key=lambda v: (not isinstance(v.type, MemRefType), v.name_hint or ""),
    )


def outline(region_op: TargetRegionOp, name: str) -> PrimFuncOp:
    """Replace `region_op` by a call of a new kernel `name`, returned."""
    captured = free_values(region_op.body)
    params = kernel_parameters(v for v in captured if not _is_constant(v))
    target = region_op.target.without_host()
    returns_code = target.device_type in ERROR_CODE_DEVICE_TYPES
    body = region_op.detach_region(region_op.body)
    kernel = PrimFuncOp(
        name,
        ([p.type for p in params], [i32] if returns_code else []),
        Region(Block(arg_types=[p.type for p in params])),
        private=True,
        target=target,
    )
    kernel.attributes |= KERNEL_ATTRIBUTES
    entry = kernel.body.block
    for param, arg in zip(params, entry.args):
        arg.name_hint = param.name_hint
    inner = body.block
    _capture(inner, captured, dict(zip(params, entry.args)))
    moved = list(inner.ops)[:-1]
    for op in moved:
        op.detach()
    if returns_code:
        zero = arith.ConstantOp(IntegerAttr(0, i32))
        entry.add_ops([*moved, zero, ReturnOp(zero)])
    else:  # the constructor ended the empty body with `tir.return`
        entry.insert_ops_before(moved, entry.last_op)  # type: ignore[arg-type]
    _replace_by_call(region_op, kernel, params, returns_code)
    for value in captured:
        if value not in params and not value.uses:  # only the kernel used it
            Rewriter.erase_op(value.owner)  # type: ignore[arg-type]
    return kernel


def _capture(
    block: Block, captured: list[SSAValue], params: dict[SSAValue, SSAValue]
) -> None:
    """Point the region's uses of outside values at kernel parameters or
    at constants cloned at the top of the kernel body."""
    first = block.first_op
    assert first is not None, "the region ends in its terminator"
    for value in captured:
        replacement = params.get(value)
        if replacement is None:
            constant = value.owner.clone()  # type: ignore[union-attr]
            block.insert_op_before(constant, first)
            replacement = constant.results[0]
            replacement.name_hint = value.name_hint
        for use in list(value.uses):
            if _within(use.operation, block):
                use.operation.operands[use.index] = replacement


def _within(op: Operation, block: Block) -> bool:
    current: Operation | None = op
    while current is not None:
        if current.parent_block() is block:
            return True
        current = current.parent_op()
    return False


def _replace_by_call(
    region_op: TargetRegionOp,
    kernel: PrimFuncOp,
    args: list[SSAValue],
    returns_code: bool,
) -> None:
    call = CallOp(kernel.sym_name.data, args, kernel.function_type.outputs.data)
    ops: list[Operation] = [call]
    if returns_code:
        call.res[0].name_hint = "kernel_error_code"
        zero = arith.ConstantOp(IntegerAttr(0, i32))
        ok = arith.CmpiOp(call.res[0], zero, "eq")
        ops += [zero, ok, cf.AssertOp(ok, KERNEL_ERROR_MESSAGE)]
    Rewriter.replace_op(region_op, ops, [])


def outermost_regions(op: Operation) -> Iterator[TargetRegionOp]:
    """The target regions in `op` that are not nested in another one."""
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                if isinstance(child, TargetRegionOp):
                    yield child
                else:
                    yield from outermost_regions(child)


class SplitHostDevicePass(ModulePass):
    """Outline target regions into private kernels called from the host."""

    name = "split-host-device"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        worklist = prim_funcs(op)
        while worklist:
            func = worklist.pop(0)
            after = func
            for region in list(outermost_regions(func)):
                name = fresh_symbol(func, func.sym_name.data + "_kernel")
                kernel = outline(region, name)
                Rewriter.insert_op(kernel, InsertPoint.after(after))
                after = kernel
                worklist.append(kernel)
