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
  unless the use is *structural*: a bound or step of an `unrolled` or
  `vectorized` loop, or any operand inside a `vectorized` loop.  Those are
  what `convert-tir-to-scf` reads as constants (an unroll count, a vector's
  lanes, the divisor of a flattened image index); anywhere else a value
  known only at run time lowers to the same code, with the arithmetic left
  to the CPU;
* a memref parameter may have other sizes (the same rank, element type,
  layout and memory space), except those after a dimension that a scalar
  load in an `unrolled` loop indexes with the loop's counter (a register
  tile's row of operands: `_unrolled_strides`).

The first of a group becomes the shared kernel, `@<kind>_shared`: each
constant use that differs between the members becomes an `index`
parameter (uses with the same values in every member share one), and each
memref dimension that differs becomes dynamic (`?`, passed as a size by the
memref ABI).  Constants and sizes the members agree on stay constants, so
LLVM still folds them.  Each member keeps its name and signature, which the
host function calls, and its body becomes a call of the shared kernel with
its buffers (`memref.cast` to the dynamic types) and its constants.

Only functions with a body and no results, on CPU targets, are considered:
GPU kernels are launched, not called, and their schedules bind threads.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from hetero.dialects import tir
from hetero.lowering.conversion import nested_ops
from hetero.lowering.convert_tir_to_scf import is_cpu
from hetero.utils.symbols import fresh_name, symbol_names
from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

STRUCTURAL_LOOPS = (tir.ForKind.UNROLLED, tir.ForKind.VECTORIZED)
"""Loop kinds whose bounds and step `convert-tir-to-scf` needs as constants."""

Slot = tuple[Operation, int]
"""An operand position: (op, operand index)."""


@dataclass
class Skeleton:
    """A function's body with its index constants and memref sizes taken
    out: `key` is equal for functions that `merge-kernels` merges; `slots`
    are the constant uses taken out and `values` their constants, in the
    same order; `shapes` are the memref parameters' shapes (None for other
    parameters)."""

    key: Hashable
    slots: list[Slot]
    values: list[int]
    shapes: list[tuple[int, ...] | None]


def _index_constants(ops: Sequence[Operation]) -> dict[SSAValue, int]:
    """The values of the `index` constants among `ops`, by result."""
    return {
        op.result: op.value.value.data  # type: ignore[union-attr]
        for op in ops
        if isinstance(op, arith.ConstantOp) and isinstance(op.result.type, IndexType)
    }


def _vectorized_ops(ops: Sequence[Operation]) -> set[Operation]:
    """The ops nested in the `vectorized` loops among `ops`."""
    inside: set[Operation] = set()
    for op in ops:
        if isinstance(op, tir.ForOp) and op.kind.data == tir.ForKind.VECTORIZED:
            inside.update(nested_ops(op))
    return inside


def _unrolled_strides(
    ops: Sequence[Operation], args: Sequence[SSAValue], vectorized: set[Operation]
) -> set[tuple[int, int]]:
    """(parameter, dimension) pairs whose size must stay constant: those
    after a dimension that a scalar load (not in a `vectorized` loop) in an
    `unrolled` loop indexes with a value of the loop's counter: a register
    tile's row of operands, broadcast to vectors at every step of its
    reduction.  Unrolled, the loads are one base address plus constant
    offsets; with a size known only at run time each needs an address of
    its own (SqueezeNet's 1x1 convolutions with rows of weights: 6-14 %
    slower).  Vector loads at such rows (an epilogue's, once a tile) cost
    nothing measurable."""
    position = {a: i for i, a in enumerate(args)}
    static: set[tuple[int, int]] = set()
    for op in ops:
        if not (isinstance(op, tir.ForOp) and op.kind.data == tir.ForKind.UNROLLED):
            continue
        varying = {op.induction_var}
        for inner in nested_ops(op):
            if any(v in varying for v in inner.operands):
                varying.update(inner.results)
            if (
                isinstance(inner, memref.LoadOp)
                and inner.memref in position
                and inner not in vectorized
            ):
                dims = [d for d, i in enumerate(inner.indices) if i in varying]
                rank = len(inner.indices)
                static.update((position[inner.memref], d) for d in range(min(dims, default=rank) + 1, rank))
    return static


def _parameter_key(t: Attribute) -> Hashable:
    """A parameter's type without its sizes, when a memref."""
    if isinstance(t, MemRefType):
        return (MemRefType, t.element_type, len(t.shape), t.layout, t.memory_space)
    return t


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
        str(function.attributes),
        tuple(_parameter_key(a.type) for a in args),
        number(args),
    ]
    slots: list[Slot] = []
    values: list[int] = []
    vectorized = _vectorized_ops(ops)
    for op in ops:
        if op.results and op.results[0] in constants:
            continue  # its value enters the key (or the values) at each use
        structural = op in vectorized or (
            isinstance(op, tir.ForOp) and op.kind.data in STRUCTURAL_LOOPS
        )
        operands: list[Hashable] = []
        for i, value in enumerate(op.operands):
            constant = constants.get(value)
            if constant is None:
                operands.append(numbers[value])
            elif structural:
                operands.append(("constant", constant))
            else:
                operands.append(None)
                slots.append((op, i))
                values.append(constant)
        key.append(
            (
                op.name,
                tuple(sorted(op.properties.items())),
                tuple(sorted(op.attributes.items())),
                tuple(operands),
                tuple(op.result_types),
                number(op.results),
                tuple(
                    (tuple(b.arg_types), number(b.args))
                    for region in op.regions
                    for b in region.blocks
                ),
            )
        )
    shapes = [a.type.get_shape() if isinstance(a.type, MemRefType) else None for a in args]
    key.append(
        tuple((a, d, shapes[a][d]) for a, d in sorted(_unrolled_strides(ops, args, vectorized)))  # type: ignore[index]
    )
    return Skeleton(tuple(key), slots, values, shapes)


FORWARDING = (memref.CastOp, arith.ConstantOp, tir.CallOp, tir.ReturnOp)
"""The ops of a kernel that only calls a shared one: merging such kernels
again would only add a call (the pass is idempotent)."""


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
    columns = list(zip(*(s.values for s in skeletons)))
    varying: dict[tuple[int, ...], list[int]] = defaultdict(list)
    for slot, column in enumerate(columns):
        if len(set(column)) > 1:
            varying[column].append(slot)
    template = members[0]
    shared = template.clone()
    name = fresh_name(_stem(template.sym_name.data), taken)
    taken.add(name)
    shared.sym_name = StringAttr(name)
    block = shared.body.block
    for arg in tuple(block.args):
        t = _shared_type(arg.type, [s.shapes[arg.index] for s in skeletons])
        if t != arg.type:
            Rewriter.replace_value_with_new_type(arg, t)
    shared_slots = skeleton(shared).slots
    for column, slots in varying.items():
        parameter = block.insert_arg(IndexType(), len(block.args))
        for slot in slots:
            op, i = shared_slots[slot]
            op.operands[i] = parameter
    for constant in _index_constants(nested_ops(shared)):
        if not constant.uses:
            op = constant.owner
            op.parent_block().erase_op(op)  # type: ignore[union-attr,arg-type]
    shared.function_type = FunctionType.from_lists(block.arg_types, [])
    template.parent_block().insert_op_before(shared, template)  # type: ignore[union-attr]
    for member, s in zip(members, skeletons):
        values = [s.values[slots[0]] for slots in varying.values()]
        _call_shared(member, shared, values)


def _call_shared(member: tir.PrimFuncOp, shared: tir.PrimFuncOp, values: list[int]) -> None:
    """`member`'s body becomes a call of `shared` with its buffers and `values`."""
    old = member.body.block
    block = Block(arg_types=old.arg_types)
    for arg, was in zip(block.args, old.args):
        arg.name_hint = was.name_hint
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
        block.add_op(constant := arith.ConstantOp(IntegerAttr.from_index_int_value(value)))
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
        groups: dict[Hashable, list[tuple[tir.PrimFuncOp, Skeleton]]] = defaultdict(list)
        for same in sized.values():
            for function, body in same if len(same) > 1 else ():
                s = skeleton(function, body)
                groups[s.key].append((function, s))
        taken = symbol_names(op)
        for group in groups.values():
            if len(group) > 1:
                members, skeletons = zip(*group)
                _merge(members, skeletons, taken)
