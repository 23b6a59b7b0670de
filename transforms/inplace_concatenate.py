"""`inplace-concatenate`: the inputs of a concatenation are written in place.

After `lower-aot-main`, a concatenation of intermediates is a kernel that
copies each input into its part of the result (squeezenet's fire modules
have eight; their cost is in docs/performance.md).  Where every part is one
contiguous run of the result — all dimensions before the axis have size 1, as a batch
of one concatenated along the channels — the producers can write there
directly: the result and its inputs become views of one byte buffer, each
input at its part's offset, and the call of the kernel goes.

Rewritten: a top-level `tir.call` of a kernel lowered from a `Primitive`
function that is exactly one `relay.concatenate` of its parameters in order,
whose inputs and result are distinct top-level static `tir.alloc`s of the
same element type.  The byte buffer is allocated where the first of them
was (so it exists before any producer writes), with the result's `vdevice`;
`plan-memory` then places it like any buffer, live from the first write of
a part to the last read of the result.  Anything else stays a copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, i8
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from hetero.dialects import relay, tir
from hetero.transforms.lower_te import LOWERED
from hetero.transforms.plan_memory import VDEVICE, byte_size


def concatenation_kernels(module: ModuleOp) -> set[str]:
    """The kernels lowered from a function that only concatenates its
    parameters, in order, along an axis with nothing but 1s before it."""
    kernels = set()
    for function in module.ops:
        if not isinstance(function, relay.FuncOp) or LOWERED not in function.attributes:
            continue
        ops = list(function.body.block.ops)
        if len(ops) != 2 or not isinstance(ops[0], relay.ConcatenateOp):
            continue
        if tuple(ops[1].operands) != tuple(ops[0].results):
            continue
        concat, result = ops[0], ops[0].results[0].type
        axis = concat.axis % result.get_num_dims()  # type: ignore[attr-defined]
        in_order = tuple(concat.inputs) == tuple(function.args)
        if in_order and all(d == 1 for d in result.get_shape()[:axis]):  # type: ignore[attr-defined]
            kernels.add(function.attributes[LOWERED].string_value())  # type: ignore[attr-defined]
    return kernels


def _buffers(call: tir.CallOp) -> list[tir.AllocOp] | None:
    """The allocations of the call's inputs and (last) result, if all are
    distinct static `tir.alloc`s of one element type in the call's block,
    and nothing touches the result before the call (its bytes will be the
    inputs')."""
    block = call.parent_block()
    allocs = [a.owner for a in call.args]
    if not all(
        isinstance(a, tir.AllocOp) and a.parent_block() is block for a in allocs
    ):
        return None
    if len(set(allocs)) != len(allocs):
        return None
    result = call.args[-1]
    if any(u.operation.is_before_in_block(call) for u in result.uses):
        return None
    types = [a.buffer.type for a in allocs]  # type: ignore[union-attr]
    if not all(isinstance(t, MemRefType) and t.has_static_shape() for t in types):
        return None
    if len({t.element_type for t in types}) != 1:  # type: ignore[union-attr]
        return None
    return allocs  # type: ignore[return-value]


def _bytes(alloc: tir.AllocOp) -> int:
    t = alloc.buffer.type
    assert isinstance(t, MemRefType)
    return byte_size(t)


def write_in_place(call: tir.CallOp, allocs: list[tir.AllocOp]) -> None:
    """Makes the inputs views of the result's bytes and removes the call."""
    *parts, result = allocs
    block = call.parent_block()
    assert block is not None
    first = min(allocs, key=block.get_operation_index)
    raw = tir.AllocOp(MemRefType(i8, [_bytes(result)]))
    if (device := result.attributes.get(VDEVICE)) is not None:
        raw.attributes[VDEVICE] = device
    Rewriter.insert_op(raw, InsertPoint.before(first))
    starts = list(accumulate((_bytes(p) for p in parts), initial=0))[:-1]
    for alloc, offset in zip((*parts, result), (*starts, 0), strict=True):
        at = arith.ConstantOp(IntegerAttr(offset, IndexType()))
        view = memref.ViewOp(raw.buffer, at.result, [], alloc.buffer.type)  # type: ignore[arg-type]
        Rewriter.insert_op([at, view], InsertPoint.before(alloc))
        alloc.buffer.replace_all_uses_with(view.result)
        Rewriter.erase_op(alloc)
    Rewriter.erase_op(call)


def inplace_concatenations(function: tir.PrimFuncOp, kernels: set[str]) -> None:
    calls = [
        op
        for op in function.body.block.ops
        if isinstance(op, tir.CallOp)
        and not op.res
        and op.callee.string_value() in kernels
    ]
    for call in calls:
        if (allocs := _buffers(call)) is not None:
            write_in_place(call, allocs)


@dataclass(frozen=True)
class InplaceConcatenatePass(ModulePass):
    """Concatenated intermediates written in place (see the module docstring)."""

    name = "inplace-concatenate"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = concatenation_kernels(op)
        for function in op.ops:
            if isinstance(function, tir.PrimFuncOp) and function.body.blocks:
                inplace_concatenations(function, kernels)
