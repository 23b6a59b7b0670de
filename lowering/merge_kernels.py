"""`merge-kernels`: kernels equal up to index constants and buffer sizes
become one shared kernel that takes those as arguments.

A CNN's layers of one kind (the 1x1 convolutions of its fire modules or
bottlenecks) get one kernel each from `lower-te`, because their shapes
differ; the schedule is the same, only the loop bounds, the offsets and the
sizes of the buffers are not.  Code generation costs about a millisecond
per `tir` op, so compiling the same code once for all those layers is what
this pass buys (LLVM's `MergeFunctions`, and compilers of dynamic
shapes, for the same reason).

Two public CPU `tir.prim_func`s merge when their bodies are the same op by
op (names, properties, attributes, result and block-argument types), except
that

* an operand that is an `index` `arith.constant` may be another constant,
  unless the use is *structural* (`_structural`), one that
  `convert-tir-to-scf` reads as a constant: a bound or step of an
  `unrolled` loop (the unroll count), the step of a `vectorized` one, its
  bounds too unless it compiles as well with a run-time extent
  (`extent_may_vary`: it does not vectorize, or masks are cheap, AVX-512,
  and it becomes masked vectors), and, inside a `vectorized` loop, an
  operand of a multiplication, division or remainder of a value that
  varies across the lanes (`LANE_CONSTANTS`: lanes a stride apart, the row
  and column of a flattened image index), and the divisor of a division
  or remainder in an `unrolled` loop (`DIVISIONS`: a register tile's rows
  would each pay a `div` instruction).  Anywhere else a value known only
  at run time lowers to the same code, with the arithmetic left to the
  CPU;
* a memref parameter may have other sizes (the same rank, element type,
  layout and memory space), except those `_static_sizes` keeps: the
  sizes after a dimension that a scalar load in an `unrolled` loop
  indexes with the loop's counter (a register tile's row of operands:
  `_unrolled_strides`), and the last of a memref that a `vectorized` loop
  reads or writes in flattened rows (`_flat_access`: one run of lanes
  across rows, if the memref is as wide as the rows);
* so may a buffer of the kernel's own (`BUFFERS`: a workspace that
  `plan-memory` gives the kernel, `tir.alloc` on the heap, and the
  `memref.view`s of it), but for the sizes `_static_sizes` keeps.  A
  buffer on the stack (a `local` register tile, a small one) keeps its
  sizes: sized at run time, it would go to the heap, and out of LLVM's
  registers;
* the `hetero.memory` report of `plan-memory` may differ (the shared
  kernel's is the largest of each).

The first of a group becomes the shared kernel, `@<kind>_shared`: each
constant use that differs between the members becomes an `index`
parameter (uses with the same values in every member share one), and each
memref dimension that differs becomes dynamic: a parameter's `?` is passed
as a size by the memref ABI, a buffer's is a size operand of its
`tir.alloc` or `memref.view` (an `index` parameter as above).  Constants
and sizes the members agree on stay constants, so LLVM still folds them.
Each member keeps its name and signature, which the host function calls,
and its body becomes a call of the shared kernel with its buffers
(`memref.cast` to the dynamic types) and its constants.

Only functions with a body and no results, on CPU targets, are considered:
GPU kernels are launched, not called, and their schedules bind threads.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from hetero.dialects import tir
from hetero.lowering.conversion import nested_ops
from hetero.lowering.convert_tir_to_scf import on_stack
from hetero.lowering.vectorize import extent_may_vary
from hetero.targets.cpu import is_cpu
from hetero.transforms.plan_memory import MEMORY, memory_report, report_attribute
from hetero.utils.symbols import fresh_name, symbol_names

DIVISIONS = (arith.DivSIOp, arith.RemSIOp)
"""Ops whose divisor stays a constant in an `unrolled` loop (a register
tile's rows): LLVM makes a division by a constant a multiplication and
shifts, by a run-time value a `div` instruction of some 20-40 cycles, one
for each unrolled row (docs/performance.md: ResNet-50's strided 3×3
convolutions sharing a kernel across their images' widths)."""

LANE_CONSTANTS = (arith.MuliOp, *DIVISIONS)
"""Ops on values varying across a `vectorized` loop's lanes whose constant
operands `convert-tir-to-scf` reads: a multiplier puts lanes a stride apart,
a divisor splits a flattened image index into row and column."""

BUFFERS = (tir.AllocOp, memref.ViewOp)
"""Ops that make a kernel's own buffers, whose sizes may differ between
merged kernels (see the module docstring)."""

Slot = tuple[Operation, int]
"""An operand position: (op, operand index)."""

Column = tuple[int, ...]
"""A value in each member of a group: what one parameter of the shared kernel passes."""


@dataclass
class Skeleton:
    """A function's body with its index constants and memref sizes taken
    out: `key` is equal for functions that `merge-kernels` merges (if their
    `vectorized` loops' extents agree where they must: `_split_by_extents`);
    `slots` are the constant uses taken out and `values` their constants, in
    the same order; `shapes` are the memref parameters' shapes (None for
    other parameters), `buffers` those of the `BUFFERS` results, in op
    order."""

    key: Hashable
    slots: list[Slot]
    values: list[int]
    shapes: list[tuple[int, ...] | None]
    buffers: list[tuple[int, ...]]


def _index_constants(ops: Sequence[Operation]) -> dict[SSAValue, int]:
    """The values of the `index` constants among `ops`, by result."""
    return {
        op.result: op.value.value.data  # type: ignore[union-attr]
        for op in ops
        if isinstance(op, arith.ConstantOp) and isinstance(op.result.type, IndexType)
    }


def _ops_in(ops: Sequence[Operation], kind: tir.ForKind) -> set[Operation]:
    """The ops nested in the loops of `kind` among `ops`."""
    inside: set[Operation] = set()
    for op in ops:
        if isinstance(op, tir.ForOp) and op.kind.data == kind:
            inside.update(nested_ops(op))
    return inside


def _lane_ops(ops: Sequence[Operation]) -> set[Operation]:
    """The ops in the `vectorized` loops among `ops` that use a value varying
    across the lanes: the loop's counter, or a value computed from it."""
    found: set[Operation] = set()
    for op in ops:
        if isinstance(op, tir.ForOp) and op.kind.data == tir.ForKind.VECTORIZED:
            varying: set[SSAValue] = {op.induction_var}
            for inner in nested_ops(op):
                if any(v in varying for v in inner.operands):
                    found.add(inner)
                    varying.update(inner.results)
    return found


def _structural(
    op: Operation, i: int, lane_ops: set[Operation], unrolled: set[Operation]
) -> bool:
    """Whether operand `i` of `op`, a constant, must stay that constant (see
    the module docstring; a `vectorized` loop's bounds are decided later, by
    `_split_by_extents`); `lane_ops` are the `_lane_ops`, `unrolled` the ops
    in `unrolled` loops."""
    if isinstance(op, tir.ForOp) and op.kind.data == tir.ForKind.UNROLLED:
        return True
    if i == 1 and op in unrolled and isinstance(op, DIVISIONS):
        return True
    if isinstance(op, tir.ForOp) and op.kind.data == tir.ForKind.VECTORIZED:
        return i == 2  # the step
    return op in lane_ops and isinstance(op, LANE_CONSTANTS)


def _is_extent(slot: Slot) -> bool:
    """A bound of a `vectorized` loop."""
    op, i = slot
    return (
        isinstance(op, tir.ForOp) and op.kind.data == tir.ForKind.VECTORIZED and i < 2
    )


def _flat_access(op: Operation) -> bool:
    """A load or store at `[..., a // w, a % w]`: vectorized, one run of
    lanes across the rows of a memref `w` wide (`Vectorizer.flat`)."""
    return (
        isinstance(op, memref.LoadOp | memref.StoreOp)
        and len(op.indices) >= 2
        and all(
            isinstance(i.owner, arith.DivSIOp | arith.RemSIOp) for i in op.indices[-2:]
        )
    )


def _static_sizes(
    ops: Sequence[Operation], vectorized: set[Operation]
) -> set[tuple[SSAValue, int]]:
    """(memref, dimension) pairs whose size must stay constant:
    `_unrolled_strides`, and the last dimension of a memref that a
    `vectorized` loop accesses in flattened rows (`_flat_access`), which
    vectorizes only where the memref is as wide as the rows are."""
    static = _unrolled_strides(ops, vectorized)
    for op in vectorized:
        if _flat_access(op):
            t = op.memref.type  # type: ignore[attr-defined]
            assert isinstance(t, MemRefType)
            static.add((op.memref, len(t.shape) - 1))  # type: ignore[attr-defined]
    return static


def _unrolled_strides(
    ops: Sequence[Operation], vectorized: set[Operation]
) -> set[tuple[SSAValue, int]]:
    """(memref, dimension) pairs whose size must stay constant: those
    after a dimension that a scalar load (not in a `vectorized` loop) in an
    `unrolled` loop indexes with a value of the loop's counter: a register
    tile's row of operands, broadcast to vectors at every step of its
    reduction.  Unrolled, the loads are one base address plus constant
    offsets; with a size known only at run time each needs an address of
    its own (SqueezeNet's 1x1 convolutions with rows of weights: 6-14 %
    slower).  Vector loads at such rows (an epilogue's, once a tile) cost
    nothing measurable."""
    static: set[tuple[SSAValue, int]] = set()
    for op in ops:
        if not (isinstance(op, tir.ForOp) and op.kind.data == tir.ForKind.UNROLLED):
            continue
        varying = {op.induction_var}
        for inner in nested_ops(op):
            if any(v in varying for v in inner.operands):
                varying.update(inner.results)
            if isinstance(inner, memref.LoadOp) and inner not in vectorized:
                dims = [d for d, i in enumerate(inner.indices) if i in varying]
                rank = len(inner.indices)
                static.update(
                    (inner.memref, d) for d in range(min(dims, default=rank) + 1, rank)
                )
    return static


def _parameter_key(t: Attribute) -> Hashable:
    """A parameter's type without its sizes, when a memref."""
    if isinstance(t, MemRefType):
        return (MemRefType, t.element_type, len(t.shape), t.layout, t.memory_space)
    return t


def _buffer_key(op: Operation, static: set[int]) -> Hashable:
    """The type of a `BUFFERS` op's result without the sizes that may
    differ (see the module docstring): a buffer on the stack keeps them
    all, another the `static` ones."""
    t = op.results[0].type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    if isinstance(op, tir.AllocOp) and on_stack(op):
        return t
    return (
        _parameter_key(t),
        tuple(d == DYNAMIC_INDEX for d in shape),
        tuple((d, shape[d]) for d in sorted(static)),
    )


Body = tuple[list[Operation], dict[SSAValue, int]]
"""A function's nested ops and the values of its `index` constants."""


def _body(function: tir.PrimFuncOp) -> Body:
    ops = nested_ops(function)
    return ops, _index_constants(ops)


def skeleton(function: tir.PrimFuncOp, body: Body | None = None) -> Skeleton:
    """`function`'s skeleton (see the module docstring for what may differ);
    `body` is its `_body`, when known."""
    ops, constants = _body(function) if body is None else body
    numbers: dict[SSAValue, int] = {}

    def number(values: Sequence[SSAValue]) -> tuple[int, ...]:
        for v in values:
            numbers[v] = len(numbers)
        return tuple(numbers[v] for v in values)

    args = function.args
    key: list[Hashable] = [
        function.target,
        str({k: a for k, a in function.attributes.items() if k != MEMORY}),
        tuple(_parameter_key(a.type) for a in args),
        number(args),
    ]
    slots: list[Slot] = []
    values: list[int] = []
    buffers: list[tuple[int, ...]] = []
    vectorized = _ops_in(ops, tir.ForKind.VECTORIZED)
    unrolled = _ops_in(ops, tir.ForKind.UNROLLED)
    lane_ops = _lane_ops(ops)
    static: dict[SSAValue, set[int]] = defaultdict(set)
    for value, dim in _static_sizes(ops, vectorized):
        static[value].add(dim)
    for op in ops:
        if op.results and op.results[0] in constants:
            continue  # its value enters the key (or the values) at each use
        operands: list[Hashable] = []
        for i, value in enumerate(op.operands):
            constant = constants.get(value)
            if constant is None:
                operands.append(numbers[value])
            elif _structural(op, i, lane_ops, unrolled):
                operands.append(("constant", constant))
            else:
                operands.append(None)
                slots.append((op, i))
                values.append(constant)
        result_types: tuple[Hashable, ...] = tuple(op.result_types)
        if isinstance(op, BUFFERS):
            result_types = (_buffer_key(op, static[op.results[0]]),)
            buffers.append(op.results[0].type.get_shape())  # type: ignore[union-attr]
        key.append(
            (
                op.name,
                tuple(sorted(op.properties.items())),
                tuple(sorted(op.attributes.items())),
                tuple(operands),
                result_types,
                number(op.results),
                tuple(
                    (tuple(b.arg_types), number(b.args))
                    for region in op.regions
                    for b in region.blocks
                ),
            )
        )
    shapes = [
        a.type.get_shape() if isinstance(a.type, MemRefType) else None for a in args
    ]
    key.append(
        tuple((a.index, d, shapes[a.index][d]) for a in args for d in sorted(static[a]))  # type: ignore[index]
    )
    return Skeleton(tuple(key), slots, values, shapes, buffers)


FORWARDING = (memref.CastOp, arith.ConstantOp, tir.CallOp, tir.ReturnOp)
"""The ops of a kernel that only calls a shared one: merging such kernels
again would only add a call (the pass is idempotent)."""


Member = tuple[tir.PrimFuncOp, Skeleton]


def _split_by_extents(group: Sequence[Member]) -> list[list[Member]]:
    """`group` (equal skeletons) split by the extents of those `vectorized`
    loops that differ between members but may not vary (`extent_may_vary`,
    asked of the first member's loop: the members' are alike).  Asked only
    here, of the loops that differ, as it is a vectorizer's analysis."""
    first = group[0][1]
    fixed = [
        k
        for k, slot in enumerate(first.slots)
        if _is_extent(slot)
        and len({s.values[k] for _, s in group}) > 1
        and not extent_may_vary(slot[0])  # type: ignore[arg-type]
    ]
    split: dict[tuple[int, ...], list[Member]] = defaultdict(list)
    for member in group:
        split[tuple(member[1].values[k] for k in fixed)].append(member)
    return list(split.values())


def _mergeable(op: Operation) -> bool:
    """A public CPU kernel that computes something and returns nothing."""
    return (
        isinstance(op, tir.PrimFuncOp)
        and not op.is_private
        and not op.function_type.outputs.data
        and is_cpu(op.target)
        and not all(isinstance(o, FORWARDING) for o in op.body.block.ops)
    )


def _shared_type(t: Attribute, shapes: Sequence[tuple[int, ...] | None]) -> Attribute:
    """Parameter type `t` with the dimensions the members disagree on dynamic."""
    if not isinstance(t, MemRefType):
        return t
    dims = [
        dim if all(s is not None and s[d] == dim for s in shapes) else DYNAMIC_INDEX
        for d, dim in enumerate(t.get_shape())
    ]
    return MemRefType(t.element_type, dims, t.layout, t.memory_space)


def _stem(name: str) -> str:
    """`fused_nn_conv2d_relu_9_tir` → `fused_nn_conv2d_relu_shared`."""
    return re.sub(r"(_\d+)?(_tir)?$", "", name) + "_shared"


def _merge(
    members: Sequence[tir.PrimFuncOp], skeletons: Sequence[Skeleton], taken: set[str]
) -> None:
    """Make the first of `members` the shared kernel, the rest calls of it."""
    template = members[0]
    # The shared kernel takes the template's body (the ops its skeleton's
    # slots are), the template a block of the same arguments for its call.
    shared = template.clone_without_regions()
    old = template.body.block
    template.body.detach_block(old)
    template.body.add_block(_arguments_of(old))
    shared.body.add_block(old)
    name = fresh_name(_stem(template.sym_name.data), taken)
    taken.add(name)
    shared.sym_name = StringAttr(name)
    block = shared.body.block
    for arg in tuple(block.args):
        t = _shared_type(arg.type, [s.shapes[arg.index] for s in skeletons])
        if t != arg.type:
            Rewriter.replace_value_with_new_type(arg, t)
    parameters: dict[Column, BlockArgument] = {}

    def parameter(column: Column) -> BlockArgument:
        """The parameter passing `column` (one per distinct column)."""
        if column not in parameters:
            parameters[column] = block.insert_arg(IndexType(), len(block.args))
        return parameters[column]

    for (op, i), column in zip(skeletons[0].slots, zip(*(s.values for s in skeletons))):
        if len(set(column)) > 1:
            op.operands[i] = parameter(column)
    ops = nested_ops(shared)  # the same ops after the rewrites: only operands change
    buffers = [op for op in ops if isinstance(op, BUFFERS)]
    for op, shapes in zip(buffers, zip(*(s.buffers for s in skeletons))):
        _resize(op, shapes, parameter)
    for constant in _index_constants(ops):
        if not constant.uses:
            op = constant.owner
            op.parent_block().erase_op(op)  # type: ignore[union-attr,arg-type]
    shared.function_type = FunctionType.from_lists(block.arg_types, [])
    if (report := _largest_report(members)) is not None:
        shared.attributes[MEMORY] = report
    template.parent_block().insert_op_before(shared, template)  # type: ignore[union-attr]
    for index, member in enumerate(members):
        _call_shared(member, shared, [column[index] for column in parameters])


def _resize(
    op: Operation,
    shapes: Sequence[tuple[int, ...]],
    parameter: Callable[[Column], SSAValue],
) -> None:
    """`op`'s buffer (a `BUFFERS` op's) with the sizes its members disagree
    on dynamic, each a size operand: the `parameter` of its sizes."""
    t = op.results[0].type
    assert isinstance(t, MemRefType)
    given = iter(op.dynamic_sizes if isinstance(op, tir.AllocOp) else op.sizes)  # type: ignore[union-attr]
    dims: list[int] = []
    sizes: list[SSAValue] = []
    for d, dim in enumerate(t.get_shape()):
        column = tuple(shape[d] for shape in shapes)
        if dim == DYNAMIC_INDEX:
            sizes.append(next(given))
        elif len(set(column)) > 1:
            dim = DYNAMIC_INDEX
            sizes.append(parameter(column))
        dims.append(dim)
    if dims == list(t.get_shape()):
        return
    if isinstance(op, memref.ViewOp):
        sizes = [op.source, op.byte_shift, *sizes]
    op.operands = sizes
    Rewriter.replace_value_with_new_type(
        op.results[0], MemRefType(t.element_type, dims, t.layout, t.memory_space)
    )


def _largest_report(members: Sequence[tir.PrimFuncOp]) -> DictionaryAttr | None:
    """The members' `hetero.memory` reports, each number the largest of all."""
    largest: dict[str, tuple[int, int]] = {}
    for member in members:
        for device, numbers in memory_report(member).items():
            old = largest.get(device, numbers)
            largest[device] = (max(old[0], numbers[0]), max(old[1], numbers[1]))
    return report_attribute(largest) if largest else None


def _arguments_of(block: Block) -> Block:
    """An empty block with the arguments (types and names) of `block`."""
    new = Block(arg_types=block.arg_types)
    for arg, was in zip(new.args, block.args):
        arg.name_hint = was.name_hint
    return new


def _call_shared(
    member: tir.PrimFuncOp, shared: tir.PrimFuncOp, values: list[int]
) -> None:
    """`member`'s body becomes a call of `shared` with its buffers and `values`."""
    old = member.body.block
    block = _arguments_of(old)
    member.body.detach_block(old)
    member.body.add_block(block)
    member.attributes.clear()
    operands: list[SSAValue] = []
    for arg, t in zip(block.args, shared.function_type.inputs.data):
        if arg.type == t:
            operands.append(arg)
        else:
            assert isinstance(t, MemRefType)
            block.add_op(cast := memref.CastOp.get(arg, t))
            operands.append(cast.dest)
    for value in values:
        block.add_op(
            constant := arith.ConstantOp(IntegerAttr.from_index_int_value(value))
        )
        operands.append(constant.result)
    block.add_ops([tir.CallOp(shared.sym_name.data, operands), tir.ReturnOp()])


@dataclass(frozen=True)
class MergeKernelsPass(ModulePass):
    """Kernels equal up to index constants and memref sizes share one kernel."""

    name = "merge-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Functions of as many ops (but index constants) as another, the
        # only ones whose skeletons can be equal: a third of the work on
        # a network whose kernels mostly differ.
        sized: dict[int, list[tuple[tir.PrimFuncOp, Body]]] = defaultdict(list)
        for function in op.ops:
            if _mergeable(function):
                assert isinstance(function, tir.PrimFuncOp)
                ops, constants = body = _body(function)
                sized[len(ops) - len(constants)].append((function, body))
        groups: dict[Hashable, list[tuple[tir.PrimFuncOp, Skeleton]]] = defaultdict(
            list
        )
        for same in sized.values():
            for function, body in same if len(same) > 1 else ():
                s = skeleton(function, body)
                groups[s.key].append((function, s))
        taken = symbol_names(op)
        for group in groups.values():
            for same in _split_by_extents(group) if len(group) > 1 else ():
                if len(same) > 1:
                    members, skeletons = zip(*same)
                    _merge(members, skeletons, taken)
