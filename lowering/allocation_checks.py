"""A failed heap allocation returns from its function instead of writing through null.

`check_allocations` runs first in `convert-memref-to-llvm` and
`convert-to-llvm`, on functions whose structured control flow is lowered
already (`convert-scf-to-cf`).  After each `memref.alloc` it branches on the
buffer's address: null (the runtime recorded the failure,
`hetero.runtime.buffers`) goes to a block that deallocates the function's
own buffers allocated so far and returns (zeros for the function's
results).  In a host function (`tir.is_entry_func`) the same branch follows
every call, on `hetero_failed()`: a kernel whose allocation failed stops the
host function after it.  A kernel that goes on after a parallel loop whose
task failed computes on buffers it holds, never through null; the failure
is reported all the same.

"Its own buffers allocated so far" are the `memref.alloc`s of the entry
block with a `memref.dealloc` not yet passed: those `convert-tir-to-scf`
makes for the function's top-level `tir.alloc`s (its arena, its workspace),
live until the function returns.  A buffer of an enclosing loop's body is
not given back when an allocation nested in it fails: such buffers are
allocated again at each iteration, and are small.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, cf, func, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    i1,
)
from xdsl.ir import Attribute, Block, Operation

from hetero.lowering.conversion import lookup_symbol
from hetero.runtime.buffers import FAILED
from hetero.utils.diagnostics import HeteroError

ENTRY = "tir.is_entry_func"
"""The host function's attribute (`lower-aot-main`), kept by `convert-tir-to-scf`."""


def check_allocations(module: ModuleOp) -> None:
    """Branch to an early return after each allocation (and host call) that failed."""
    for function in module.ops:
        if isinstance(function, func.FuncOp) and function.body.blocks:
            _check_function(function, module)


def _check_function(function: func.FuncOp, module: ModuleOp) -> None:
    if any(isinstance(t, MemRefType) for t in function.function_type.outputs):
        return  # rejected by convert-memref-to-llvm's signature lowering
    entry = function.body.blocks.first
    assert entry is not None
    checked = _checked(function, entry)
    if any(isinstance(op, func.CallOp) for op, _ in checked):
        _declare_failed(module)
    # From the last op back, so that each split moves only the ops up to the
    # next checked one (forwards, a host function's hundreds of calls each
    # moved the rest of its body); the failure blocks in the ops' order.
    failures = [_branch_on_failure(function, op, live) for op, live in checked[::-1]]
    for failure in reversed(failures):
        function.body.add_block(failure)


def _checked(
    function: func.FuncOp, entry: Block
) -> list[tuple[Operation, list[memref.AllocOp]]]:
    """The ops after which `function` branches on a failure, in order, each
    with the owned buffers live there (`_owned_buffers`: allocated before
    it and not deallocated before it), tracked in one sweep."""
    owned = _owned_buffers(entry)
    owning = set(owned)
    live: dict[memref.AllocOp, None] = {}  # in allocation order
    outside = [a for a in owned if not _freed_in(a, entry)]  # live in other blocks
    checked: list[tuple[Operation, list[memref.AllocOp]]] = []
    host = is_entry(function)
    for op in function.walk():
        if isinstance(op, memref.DeallocOp) and op.parent is entry:
            live.pop(op.memref.owner, None)  # pyright: ignore[reportArgumentType]
        elif not _may_fail(op, function, host):
            continue
        elif op.parent is not entry:
            checked.append((op, outside))
        else:
            checked.append((op, list(live)))
            if op in owning:
                live[op] = None  # pyright: ignore[reportArgumentType]
    return checked


def _may_fail(op: Operation, function: func.FuncOp, host: bool) -> bool:
    """Whether `op` is an allocation, or in a host function a call, that is
    checked (an allocation nested in an op is an error)."""
    if isinstance(op, memref.AllocOp):
        if op.parent_region() is not function.body:
            raise HeteroError(
                f"memref.alloc inside '{op.parent_op().name}': lower structured "  # type: ignore[union-attr]
                "control flow first (convert-scf-to-cf), a failed allocation "
                "returns from the function",
                op,
            )
        return True
    return host and isinstance(op, func.CallOp) and op.callee.string_value() != FAILED


def is_entry(function: Operation) -> bool:
    """Whether `function` is a host function (`ENTRY`), whose calls are checked."""
    flag = function.attributes.get(ENTRY)
    return isinstance(flag, IntegerAttr) and flag.value.data != 0


def _owned_buffers(entry: Block) -> list[memref.AllocOp]:
    """The entry block's allocations that the function deallocates."""
    return [
        op
        for op in entry.ops
        if isinstance(op, memref.AllocOp)
        and any(isinstance(u.operation, memref.DeallocOp) for u in op.memref.uses)
    ]


def _freed_in(buffer: memref.AllocOp, block: Block) -> bool:
    return any(
        isinstance(u.operation, memref.DeallocOp)
        and u.operation.parent_block() is block
        for u in buffer.memref.uses
    )


def _declare_failed(module: ModuleOp) -> None:
    if lookup_symbol(module, FAILED) is None:
        module.body.block.add_op(func.FuncOp.external(FAILED, [], [i1]))


def _failure_test(op: Operation) -> list[Operation]:
    """The ops computing whether `op` failed: a null buffer, or `hetero_failed()`."""
    if isinstance(op, memref.AllocOp):
        address = memref.ExtractAlignedPointerAsIndexOp.get(op.memref)
        null = arith.ConstantOp(IntegerAttr(0, IndexType()))
        return [address, null, arith.CmpiOp(address, null, "eq")]
    return [func.CallOp(FAILED, [], [i1])]


def _branch_on_failure(
    function: func.FuncOp, op: Operation, live: Sequence[memref.AllocOp]
) -> Block:
    """After `op`: on failure, deallocate `live` and return (the block that
    does, for the caller to add to `function`); else go on."""
    block = op.parent_block()
    assert block is not None and op.next_op is not None
    test = _failure_test(op)
    block.insert_ops_after(test, op)
    rest = block.split_before(test[-1].next_op)  # type: ignore[arg-type]
    failure = Block()
    failure.add_ops([memref.DeallocOp.get(b.memref) for b in live])
    zeros = [_zero(t, function) for t in function.function_type.outputs]
    failure.add_ops([*zeros, func.ReturnOp(*zeros)])
    block.add_op(cf.ConditionalBranchOp(test[-1].results[0], failure, [], rest, []))
    return failure


def _zero(t: Attribute, function: func.FuncOp) -> arith.ConstantOp:
    """A zero of the scalar type `t`, returned when an allocation failed."""
    if isinstance(t, IntegerType | IndexType):
        return arith.ConstantOp(IntegerAttr(0, t))
    if isinstance(t, AnyFloat):
        return arith.ConstantOp(FloatAttr(0.0, t))
    raise HeteroError(
        f"@{function.sym_name.data} returns {t} and allocates memory: an allocation "
        "that fails returns zeros, of scalar types only",
        function,
    )
