"""`partition-graph`: each compiler region becomes a `Compiler` function.

The ops of one region (same `relay.compiler_region` in one block, or a single
annotated op when regions were not merged) move into a function literal called
in place — TVM's PartitionGraph, read for SSA:

    %f = relay.fn (%0: T0, ...) -> R attributes {Compiler = "cublas", Primitive,
                                                 global_symbol = "cublas_main_0"} {
      <the composite literals the region calls, then the region's ops>
      relay.return %r : R
    }
    %r = relay.call_indirect %f(%a, ...) : (T0, ...) -> R

* Parameters are the values the region uses from outside it (in order of
  first use); a composite literal the region calls is copied into the body,
  so the function is closed (docs/design.md §4.4).
* A region whose values are used after it returns them all as a tuple,
  projected with `relay.get_item` after the call.
* The call sits where the region's last op was; ops between the region's ops
  that use its results move after the call (they never feed the region: that
  would be a cycle, which is a diagnostic).
* The literal, its parameters and result, and the call are on the region's
  device; every op of a region must be on one device, and its kind must be a
  configured external codegen for that device (docs/design.md §4.1).
* `global_symbol` is `<kind>_<function>_<n>`, the first `n` not yet used
  by a global function or a `global_symbol` of the module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, TupleType, UnitAttr
from xdsl.ir import Block, Operation, SSAValue, TypeAttribute
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from hetero.dialects.relay import (
    CallIndirectOp,
    FnOp,
    FuncOp,
    FunctionOpBase,
    GetItemOp,
    ReturnOp,
    TupleOp,
)
from hetero.dialects.target import VirtualDeviceAttr
from hetero.dialects.target.config import module_config
from hetero.transforms.annotate_target import annotation
from hetero.transforms.byoc import (
    COMPILER_ATTR,
    REGION_ATTR,
    ExternalTargets,
    bind_parameters,
    composite_callee,
    enclosing_function,
    program_blocks,
)
from hetero.transforms.merge_compiler_regions import op_inputs
from hetero.utils.diagnostics import HeteroError
from hetero.utils.symbols import fresh_name


@dataclass
class _Region:
    kind: str
    device: VirtualDeviceAttr | None
    ops: list[Operation]


def _region_number(op: Operation) -> int | None:
    attr = op.attributes.get(REGION_ATTR)
    if attr is None:
        return None
    if not isinstance(attr, IntegerAttr):
        raise HeteroError(f"'{REGION_ATTR}' must be an integer", op)
    return attr.value.data


def collect_regions(block: Block, externals: ExternalTargets) -> list[_Region]:
    """The regions of `block` in order of their first op, each checked."""
    regions: dict[object, _Region] = {}
    for op in block.ops:
        kind = annotation(op)
        if kind is None:
            continue
        externals.check(kind, op)
        number = _region_number(op)
        key: object = op if number is None else number
        device: VirtualDeviceAttr | None = getattr(op, "vdevice", None)
        region = regions.setdefault(key, _Region(kind, device, []))
        if (region.kind, region.device) != (kind, device):
            raise HeteroError(
                f"compiler region {number} mixes ops for {_for(region.kind, region.device)} "
                f"({region.ops[0].name}) and for {_for(kind, device)}",
                op,
            )
        region.ops.append(op)
    return list(regions.values())


def _for(kind: str, device: VirtualDeviceAttr | None) -> str:
    return f"'{kind}'" + ("" if device is None else f" on {device}")


class _Namer:
    """Fresh `<kind>_<function>_<n>` names, unused in the module."""

    def __init__(self, module: ModuleOp) -> None:
        self.taken = {
            name
            for op in module.walk()
            if isinstance(op, FunctionOpBase)
            for name in (
                op.global_symbol,
                op.sym_name.data if isinstance(op, FuncOp) else None,
            )
            if name is not None
        }

    def fresh(self, kind: str, function: str) -> str:
        name = fresh_name(f"{kind}_{function}", self.taken, bare=False)
        self.taken.add(name)
        return name


def _member(op: Operation, members: set[Operation], block: Block) -> bool:
    """`op`, or the op of `block` that holds it, is a member."""
    while op.parent is not block:
        parent = op.parent_op()
        if parent is None:
            return False
        op = parent
    return op in members


def _defined_inside(value: SSAValue, members: set[Operation], block: Block) -> bool:
    owner = value.owner
    op = owner if isinstance(owner, Operation) else owner.parent_op()
    return op is not None and _member(op, members, block)


def _span(block: Block, ops: list[Operation]) -> list[Operation]:
    """The ops of `block` from the region's first op to its last, as they are now.

    `ops` is in the order the region was collected; partitioning an earlier
    region may since have moved some of them later, in which case the scan
    from the collected first op misses one and restarts from the block's start.
    """
    members = set(ops)
    for start in (ops[0], block.first_op):
        span: list[Operation] = []
        found = 0
        op = start
        while op is not None:
            found += op in members
            if found:
                span.append(op)
            if found == len(members):
                return span
            op = op.next_op
    raise AssertionError("a region's ops are in its block")


def _dependents_to_move(
    span: list[Operation], members: set[Operation], number: object
) -> list[Operation]:
    """Non-members of the span that use the region's results.

    They must follow the call; one that a later member uses closes a cycle.
    """
    produced = {r for op in members for r in op.results}
    moved: list[Operation] = []
    moved_values: dict[SSAValue, Operation] = {}
    for op in span:
        inputs = op_inputs(op)
        if op in members:
            if bad := next(
                (moved_values[v] for v in inputs if v in moved_values), None
            ):
                raise HeteroError(
                    f"compiler region {number} is not convex: {op.name} uses a value of "
                    f"{bad.name} that itself depends on the region",
                    op,
                )
        elif any(v in produced or v in moved_values for v in inputs):
            moved.append(op)
            moved_values.update((r, op) for r in op.results)
    return moved


def partition(region: _Region, block: Block, name: str) -> None:
    """Move the region's ops into a `Compiler` literal called in place."""
    span = _span(block, region.ops)
    members = set(region.ops)
    ops = [op for op in span if op in members]
    later = _dependents_to_move(span, members, _region_number(ops[0]))
    callees = list(
        dict.fromkeys(
            c
            for op in ops
            if (c := composite_callee(op)) is not None and c not in members
        )
    )
    inputs = list(
        dict.fromkeys(
            v
            for op in ops
            for v in op_inputs(op)
            if not _defined_inside(v, members, block) and v.owner not in callees
        )
    )
    outputs: list[SSAValue] = [
        r
        for op in ops
        for r in op.results
        if any(not _member(u.operation, members, block) for u in r.uses)
    ] or [ops[-1].results[0]]
    fn = _compiler_literal(region, name, inputs, outputs)
    call = CallIndirectOp(fn.result, inputs, vdevice=region.device)
    items = (
        [GetItemOp(call.result, i, vdevice=region.device) for i in range(len(outputs))]
        if len(outputs) > 1
        else []
    )
    fn.location = call.location = ops[-1].location
    for op in later:
        op.detach()
    Rewriter.insert_op([fn, call, *items, *later], InsertPoint.after(ops[-1]))
    _fill_body(fn, ops, callees, inputs, outputs, region.device)
    for output, result in zip(outputs, [i.result for i in items] or [call.result]):
        result.name_hint = output.name_hint
        output.replace_uses_with_if(
            result, lambda use: not fn.is_ancestor(use.operation)
        )


def _compiler_literal(
    region: _Region, name: str, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]
) -> FnOp:
    """An empty `Compiler` literal from `inputs` to `outputs` (a tuple if several)."""
    types = [o.type for o in outputs]
    device = region.device
    return FnOp(
        [v.type for v in inputs],
        types[0]
        if len(types) == 1
        else TupleType(cast(tuple[TypeAttribute, ...], tuple(types))),
        param_vdevices=[device] * len(inputs) if device else (),
        result_vdevice=device,
        attributes={
            "Compiler": StringAttr(region.kind),
            "Primitive": UnitAttr(),
            "global_symbol": StringAttr(name),
        },
        vdevice=device,
    )


def _fill_body(
    fn: FnOp,
    ops: list[Operation],
    callees: list[FnOp],
    inputs: Sequence[SSAValue],
    outputs: Sequence[SSAValue],
    device: VirtualDeviceAttr | None,
) -> None:
    """The region's ops (annotations dropped) after copies of the composite
    literals they call; the outputs returned."""
    body = fn.body.block
    copies = [callee.clone() for callee in callees]
    body.add_ops(copies)
    for op in ops:
        op.detach()
        op.attributes.pop(COMPILER_ATTR, None)
        op.attributes.pop(REGION_ATTR, None)
        body.add_op(op)
    for callee, copy in zip(callees, copies):
        callee.result.replace_uses_with_if(
            copy.result, lambda use: fn.is_ancestor(use.operation)
        )
        if not callee.result.uses:
            Rewriter.erase_op(callee)
    bind_parameters(fn, inputs)
    if len(outputs) == 1:
        body.add_op(ReturnOp(outputs[0]))
    else:
        packed = TupleOp(outputs, vdevice=device)
        body.add_ops([packed, ReturnOp(packed.result)])


@dataclass(frozen=True)
class PartitionGraphPass(ModulePass):
    """Turn every compiler region into a `Compiler` function literal called in place.

    `targets` only fills a missing `target.config`.
    """

    name = "partition-graph"
    targets: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = module_config(op, self.targets, self.name)
        externals = ExternalTargets(config, op, [])
        namer = _Namer(op)
        work = [
            (block, collect_regions(block, externals)) for block in program_blocks(op)
        ]
        for block, regions in work:
            for region in regions:
                function = enclosing_function(region.ops[0]).sym_name.data
                partition(region, block, namer.fresh(region.kind, function))
