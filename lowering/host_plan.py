"""The host plan: a host function's steps as plain data, for the profiler.

`CompiledFunction.profile` replays the host function kernel by kernel from
Python (`hetero.runtime.profiler`), on a `HostPlan` that the compiler makes
here of the `tir` host function.  Only host functions made of what
`lower-aot-main` and `plan-memory` emit for CPU kernels are replayed: static
`tir.alloc`s, `memref.view`s at constant offsets, static `memref.reinterpret_cast`s,
`tir.call`s of kernels and
the return; anything else (a loop, an external call, a GPU launch) is an
error naming the op.
"""

from __future__ import annotations

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from hetero.dialects import tir
from hetero.interpreter.relay import element_dtype
from hetero.runtime.profiler import Buffer, HostPlan, KernelCall
from hetero.utils.diagnostics import HeteroError


def host_plan(host: tir.PrimFuncOp) -> HostPlan:
    """The steps of `host` for `CompiledFunction.profile` to replay: its
    buffers and kernel calls; a `HeteroError` at the first op that is not
    replayed."""
    values: dict[SSAValue, int] = {a: i for i, a in enumerate(host.args)}
    buffers: list[Buffer] = []
    calls: list[KernelCall] = []
    for op in host.body.block.ops:
        if isinstance(op, arith.ConstantOp | tir.ReturnOp):
            continue
        if isinstance(op, tir.CallOp) and not op.res:
            operands = tuple(values[a] for a in op.args)
            calls.append(KernelCall(op.callee.string_value(), operands))
            continue
        buffer = _buffer(op, values)
        values[op.results[0]] = len(host.args) + len(buffers)
        buffers.append(buffer)
    device = host.target.device_type.name if host.target is not None else "cpu"
    return HostPlan(len(host.args), tuple(buffers), tuple(calls), device)


def _buffer(op: Operation, values: dict[SSAValue, int]) -> Buffer:
    """The `Buffer` an alloc or view of the host makes, or an error at `op`."""
    type = op.results[0].type if len(op.results) == 1 else None
    static = isinstance(type, MemRefType) and type.has_static_shape()
    if static and isinstance(op, tir.AllocOp):
        return Buffer(tuple(type.get_shape()), element_dtype(type.element_type))
    if static and isinstance(op, memref.ViewOp) and not op.sizes:
        offset = const_evaluate_operand(op.byte_shift)
        if isinstance(offset, int) and op.source in values:
            return Buffer(
                tuple(type.get_shape()),
                element_dtype(type.element_type),
                values[op.source],
                offset,
            )
    if static and isinstance(op, memref.ReinterpretCastOp) and op.source in values:
        return Buffer(
            tuple(type.get_shape()),
            element_dtype(type.element_type),
            values[op.source],
            0,
        )
    raise HeteroError(
        f"profile: the host function's '{op.name}' is not replayed (static buffers, "
        "views and kernel calls only)",
        op,
    )
