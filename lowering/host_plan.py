"""The host plan: a host function's steps as plain data, for the profiler.

`CompiledFunction.profile` replays the host function kernel by kernel from
Python (`hetero.runtime.profiler`), on a `HostPlan` that the compiler makes
here of the `tir` host function.  Only host functions made of what
`lower-aot-main` and `plan-memory` emit for CPU kernels are replayed:
`tir.alloc`s, `memref.view`s, `memref.reinterpret_cast`s, `tir.call`s of
kernels and the return, and for dynamic shapes the index arithmetic on the
inputs' sizes (`INDEX_OPS`); anything else (a loop, an external call, a GPU
launch) is an error naming the op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType
from xdsl.ir import Operation, SSAValue

from hetero.dialects import tir
from hetero.interpreter.relay import element_dtype
from hetero.runtime.profiler import (
    INDEX_OPS,
    Buffer,
    Extent,
    HostPlan,
    Index,
    KernelCall,
    Value,
)
from hetero.utils.diagnostics import HeteroError


def host_plan(host: tir.PrimFuncOp) -> HostPlan:
    """The steps of `host` for `CompiledFunction.profile` to replay: its
    buffers, index values and kernel calls; a `HeteroError` at the first op
    that is not replayed."""
    plan = _Plan({a: Value(i) for i, a in enumerate(host.args)})
    calls: list[KernelCall] = []
    for op in host.body.block.ops:
        if isinstance(op, tir.ReturnOp):
            continue
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            plan.constants[op.result] = op.value.value.data
        elif isinstance(op, tir.CallOp) and not op.res:
            operands = tuple(plan.position(a, op) for a in op.args)
            calls.append(KernelCall(op.callee.string_value(), operands))
        else:
            plan.add(op)
    device = host.target.device_type.name if host.target is not None else "cpu"
    return HostPlan(len(host.args), tuple(plan.steps), tuple(calls), device)


@dataclass
class _Plan:
    """The host values so far: each a position (`Value`), or a constant."""

    values: dict[SSAValue, Value]
    constants: dict[SSAValue, int] = field(default_factory=dict)
    steps: list[Buffer | Index] = field(default_factory=list)

    def add(self, op: Operation) -> None:
        """`op`'s step, its result the next host value."""
        step = self._index(op) if op.name in INDEX_OPS else self._buffer(op)
        self.values[op.results[0]] = Value(len(self.values))
        self.steps.append(step)

    def position(self, value: SSAValue, op: Operation) -> int:
        """Where host value `value`, an operand of `op`, is."""
        if value not in self.values:
            raise _not_replayed(op)
        return self.values[value].position

    def extent(self, value: SSAValue, op: Operation) -> Extent:
        """`value`, an operand of `op`: a constant or a host value."""
        if value in self.constants:
            return self.constants[value]
        return Value(self.position(value, op))

    def _index(self, op: Operation) -> Index:
        return Index(op.name, tuple(self.extent(v, op) for v in op.operands))

    def _buffer(self, op: Operation) -> Buffer:
        """The `Buffer` an alloc or view of the host makes, or an error at `op`."""
        result = op.results[0].type if len(op.results) == 1 else None
        if not isinstance(result, MemRefType) or type(op) not in DYNAMIC_SIZES:
            raise _not_replayed(op)
        sizes = iter(DYNAMIC_SIZES[type(op)](op))
        shape = tuple(
            self.extent(next(sizes), op) if n == DYNAMIC_INDEX else n
            for n in result.get_shape()
        )
        dtype = element_dtype(result.element_type)
        if isinstance(op, memref.ViewOp):
            offset = self.extent(op.byte_shift, op)
            return Buffer(shape, dtype, self.position(op.source, op), offset)
        if isinstance(op, memref.ReinterpretCastOp):
            if op.offsets or any(op.static_offsets.get_values()):
                raise _not_replayed(op)
            return Buffer(shape, dtype, self.position(op.source, op), 0)
        return Buffer(shape, dtype)


DYNAMIC_SIZES: dict[type[Operation], Callable[[Any], Sequence[SSAValue]]] = {
    tir.AllocOp: lambda op: op.dynamic_sizes,
    memref.ViewOp: lambda op: op.sizes,
    memref.ReinterpretCastOp: lambda op: op.sizes,
}
"""The host's buffer ops, and the operands that give a result its `?` sizes in order."""


def _not_replayed(op: Operation) -> HeteroError:
    return HeteroError(
        f"profile: the host function's '{op.name}' is not replayed (buffers, views, "
        "sizes and kernel calls only)",
        op,
    )
