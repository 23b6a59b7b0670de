"""`plan-memory`: one storage arena per device for a function's intermediates,
with buffers whose lifetimes do not overlap sharing bytes.

After `lower-aot-main`, every intermediate of the host function is its own
top-level `tir.alloc`, tagged with the `vdevice` it lives on.  Like TVM's
graph/AOT memory planners (`StorageRewrite`, the USMP greedy-by-size
algorithm), this pass

1. computes each buffer's live interval over the function's top-level ops (a
   use nested in a loop counts at the loop);
2. groups buffers by device (device type, id and memory scope: `cpu:0` and
   `cpu:1` are distinct storage) and memory space;
3. places each group's buffers in one arena, largest first, each at the lowest
   64-byte-aligned offset that no time-overlapping buffer occupies;
4. replaces each `tir.alloc` by a `memref.view` of its arena at its offset;
   the arena is one `tir.alloc : memref<Nxi8>` at the function's start.

The function records, in the `hetero.memory` attribute, the planned bytes per
device and the bytes that the unplanned allocations would take:
`{"cpu:0" = [planned, requested]}`.  Buffers the pass cannot prove alias-free
(dynamic sizes, a use whose result is itself a memref, such as a view) are
left as they are and not counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FixedBitwidthType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    i8,
    i64,
)
from xdsl.ir import Attribute, Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from hetero.dialects import tir
from hetero.dialects.target import VirtualDeviceAttr
from hetero.targets.cpu import ALIGNMENT

VDEVICE = "vdevice"
"""`tir.alloc` attribute: the virtual device a buffer lives on."""

MEMORY = "hetero.memory"
"""Function attribute: per device, `[planned bytes, requested bytes]`."""


@dataclass
class Buffer:
    """A top-level allocation, its size and live interval (top-level op indices)."""

    alloc: tir.AllocOp
    size: int
    first: int
    last: int
    offset: int = 0

    def overlaps_in_time(self, other: Buffer) -> bool:
        return self.first <= other.last and other.first <= self.last


def _round_up(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


def byte_size(t: MemRefType) -> int:
    """The bytes of a static memref of fixed-width elements."""
    return prod(t.get_shape()) * t.element_type.size  # type: ignore[attr-defined]


def _top_level(op: Operation, block: Block) -> Operation:
    while op.parent_block() is not block:
        op = op.parent_op()  # type: ignore[assignment]
    return op


def _views(alloc: tir.AllocOp) -> list[memref.ViewOp] | None:
    """The `memref.view`s at constant offsets that are the only uses of
    `alloc` (`inplace-concatenate`'s byte buffers), if it has only those."""
    views = [u.operation for u in alloc.buffer.uses]
    if views and all(
        isinstance(v, memref.ViewOp)
        and not v.sizes
        and isinstance(const_evaluate_operand(v.byte_shift), int)
        for v in views
    ):
        return views  # type: ignore[return-value]
    return None


def _uses(alloc: tir.AllocOp) -> list[Operation]:
    """The ops that read or write `alloc`: through its views, if it is only viewed."""
    views = _views(alloc)
    values = [v.result for v in views] if views else [alloc.buffer]
    return [u.operation for value in values for u in value.uses]


def _plannable(alloc: tir.AllocOp) -> bool:
    """Static, and used only by ops that do not create aliases of it (or
    only viewed, and its views used so)."""
    t = alloc.buffer.type
    assert isinstance(t, MemRefType)
    return (
        t.has_static_shape()
        and isinstance(t.element_type, FixedBitwidthType)
        and not any(
            isinstance(r.type, MemRefType) for use in _uses(alloc) for r in use.results
        )
    )


def live_buffers(block: Block) -> list[Buffer]:
    """The plannable top-level allocations of `block` with their live intervals."""
    position = {op: i for i, op in enumerate(block.ops)}
    buffers = []
    for op in block.ops:
        if isinstance(op, tir.AllocOp) and _plannable(op):
            users = [position[_top_level(u, block)] for u in _uses(op)]
            t = op.buffer.type
            assert isinstance(t, MemRefType)
            # Contents before the first use are undefined: live from there on.
            start = min(users, default=position[op])
            buffers.append(
                Buffer(op, _round_up(byte_size(t)), start, max(users, default=start))
            )
    return buffers


def assign_offsets(buffers: list[Buffer]) -> int:
    """Greedy by size: each buffer at the lowest free offset among the placed
    buffers live at the same time.  Returns the arena's size."""
    placed: list[Buffer] = []
    for buffer in sorted(buffers, key=lambda b: (-b.size, b.first)):
        offset = 0
        for other in sorted(
            (p for p in placed if p.overlaps_in_time(buffer)), key=lambda p: p.offset
        ):
            if offset + buffer.size <= other.offset:
                break
            offset = max(offset, other.offset + other.size)
        buffer.offset = offset
        placed.append(buffer)
    return max((b.offset + b.size for b in placed), default=0)


def device_name(device: Attribute | None) -> str:
    """`cpu:0`, `cuda:1/shared`, or `global` for an untagged buffer."""
    if not isinstance(device, VirtualDeviceAttr) or device.device_type is None:
        return "global"
    name = device.device_type.name
    if device.device_id >= 0:
        name += f":{device.device_id}"
    return name + (f"/{device.memory_scope}" if device.memory_scope else "")


def _group_key(buffer: Buffer) -> tuple[str, Attribute]:
    t = buffer.alloc.buffer.type
    assert isinstance(t, MemRefType)
    return device_name(buffer.alloc.attributes.get(VDEVICE)), t.memory_space


def _rewrite_group(buffers: list[Buffer], size: int) -> tir.AllocOp:
    """The arena (not inserted yet); each allocation becomes a view of it."""
    space = buffers[0].alloc.buffer.type.memory_space  # type: ignore[attr-defined]
    arena = tir.AllocOp(MemRefType(i8, [size], memory_space=space))
    arena.buffer.name_hint = "arena"  # a failed allocation's message names it
    if (device := buffers[0].alloc.attributes.get(VDEVICE)) is not None:
        arena.attributes[VDEVICE] = device
    for buffer in buffers:
        for view in _views(buffer.alloc) or []:
            _rebase(view, arena, buffer.offset)
        if not buffer.alloc.buffer.uses:
            Rewriter.erase_op(buffer.alloc)
            continue
        offset = arith.ConstantOp(IntegerAttr(buffer.offset, IndexType()))
        Rewriter.insert_op(offset, InsertPoint.before(buffer.alloc))
        view = memref.ViewOp(arena, offset, [], buffer.alloc.buffer.type)  # type: ignore[arg-type]
        Rewriter.replace_op(buffer.alloc, view)
    return arena


def _rebase(view: memref.ViewOp, arena: tir.AllocOp, offset: int) -> None:
    """`view` of a planned byte buffer at `offset` as a view of the arena."""
    shift = const_evaluate_operand(view.byte_shift)
    assert isinstance(shift, int)
    at = arith.ConstantOp(IntegerAttr(offset + shift, IndexType()))
    Rewriter.insert_op(at, InsertPoint.before(view))
    rebased = memref.ViewOp(arena, at, [], view.result.type)  # type: ignore[arg-type]
    old = view.byte_shift.owner
    Rewriter.replace_op(view, rebased)
    if isinstance(old, arith.ConstantOp) and not old.result.uses:
        Rewriter.erase_op(old)


def report_attribute(report: dict[str, tuple[int, int]]) -> DictionaryAttr:
    """The `hetero.memory` attribute of `report`: per device, `[planned, requested]`."""
    return DictionaryAttr(
        {
            device: ArrayAttr([IntegerAttr(p, i64), IntegerAttr(r, i64)])
            for device, (p, r) in report.items()
        }
    )


def memory_report(function: Operation) -> dict[str, tuple[int, int]]:
    """`function`'s `hetero.memory` report by device ({} without one)."""
    report = function.attributes.get(MEMORY)
    if not isinstance(report, DictionaryAttr):
        return {}
    return {
        device: tuple(v.value.data for v in sizes.data)  # type: ignore[misc]
        for device, sizes in report.data.items()
    }


def plan_function(function: tir.PrimFuncOp) -> dict[str, tuple[int, int]]:
    """Plan `function`'s top-level buffers; per device, (planned, requested) bytes."""
    block = function.body.block
    groups: dict[tuple[str, Attribute], list[Buffer]] = {}
    for buffer in live_buffers(block):
        groups.setdefault(_group_key(buffer), []).append(buffer)
    report: dict[str, tuple[int, int]] = {}
    arenas = []
    for (device, _), buffers in groups.items():
        size = assign_offsets(buffers)
        arenas.append(_rewrite_group(buffers, size))
        planned, requested = report.get(device, (0, 0))
        report[device] = (planned + size, requested + sum(b.size for b in buffers))
    Rewriter.insert_op(arenas, InsertPoint.at_start(block))
    return report


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Per-device arenas with liveness-based reuse for top-level buffers."""

    name = "plan-memory"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if not isinstance(function, tir.PrimFuncOp) or not function.body.blocks:
                continue
            if MEMORY in function.attributes:
                continue  # planned already: its arenas are only viewed too
            report = plan_function(function)
            if report:
                function.attributes[MEMORY] = report_attribute(report)
