"""`specialize-shapes`: give a function's dynamic dimensions concrete sizes.

    hetero-opt model.mlir -p 'specialize-shapes{entry=main shapes=8x3x224x224}'

A function whose parameters have `?` dimensions (an ONNX model with a
dynamic batch, say) is rewritten for one set of input shapes: each parameter
gets the given shape, and every value computed from the parameters gets the
type its operator infers from its operands' new types — the same inference the
ops' builders use, so a shape that does not fit (a reshape that no longer
divides, mismatched broadcast) is a located error, never a wrong program.

`hetero.compile` uses this by default for programs with dynamic input
shapes: each call with new input shapes specializes and compiles once, then
reuses the compiled function (see `hetero.driver.ShapeSpecializedFunction`).
It is the specialize-then-compile strategy of JIT compilers: every kernel is
compiled for static shapes and gets their full schedule.  TVM's way, one
compile with host shape functions, is `hetero.compile(..., dynamic="once")`
(docs/dynamic-shapes.md).

`shapes` lists one shape per parameter, separated by commas, dimensions by
`x` (`4x3,3`; a scalar is the empty string).  A given size must match a
static dimension; the rank must match.  Only the entry function's own body
is re-typed: calls of other functions, and closures or `relay.if`s whose
operands or captured values change type, are an error (the inference does not
look into callees or nested regions).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, TupleType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import VerifyException

from hetero.dialects import relay
from hetero.utils.diagnostics import HeteroError

PASS = "specialize-shapes"

Shape = tuple[int, ...]


def parse_shapes(text: str) -> list[Shape]:
    """`4x3,3` → [(4, 3), (3,)]."""
    try:
        return [
            tuple(int(d) for d in s.split("x")) if s else () for s in text.split(",")
        ]
    except ValueError as e:
        raise HeteroError(
            f"{PASS}: malformed shapes '{text}' (expected e.g. 4x3,3)"
        ) from e


def _fitted(
    type: Attribute, shape: Shape, what: str, op: Operation
) -> TensorType[Attribute]:
    """`type` with `shape`, if the shape fits its rank and static dimensions."""
    if not isinstance(type, TensorType):
        raise HeteroError(f"{PASS}: {what} has type {type}, not a tensor", op)
    dims = type.get_shape()
    if len(dims) != len(shape) or any(d >= 0 and d != s for d, s in zip(dims, shape)):
        raise HeteroError(
            f"{PASS}: {what} of type {type} cannot have shape {list(shape)}", op
        )
    return TensorType(type.element_type, shape)


def _same_as_operand(op: Operation) -> Attribute:
    return op.operands[0].type


def _get_item(op: Operation) -> Attribute:
    tuple_type = op.operands[0].type
    assert isinstance(tuple_type, TupleType) and isinstance(op, relay.GetItemOp)
    return tuple_type.types.data[op.index]


RETYPE: dict[type[Operation], Callable[[Operation], Attribute]] = {
    relay.OnDeviceOp: _same_as_operand,
    relay.DeviceCopyOp: _same_as_operand,
    relay.TupleOp: lambda op: TupleType(tuple(v.type for v in op.operands)),
    relay.GetItemOp: _get_item,
}
"""Non-tensor-operator ops whose result type follows from their operands'."""


def _inferred(op: Operation) -> Attribute:
    if isinstance(op, relay.TensorOp):
        return type(op).infer_result_type(op.operand_types, op.properties)
    if (rule := RETYPE.get(type(op))) is not None:
        return rule(op)
    raise HeteroError(
        f"{PASS}: cannot re-type '{op.name}' for the new shapes "
        "(only the entry function's tensor operators, tuples and placement ops)",
        op,
    )


def specialize(function: relay.FuncOp, shapes: Sequence[Shape]) -> None:
    """Re-type `function` (in place) for parameters of `shapes`."""
    inputs = function.function_type.inputs.data
    if len(shapes) != len(inputs):
        raise HeteroError(
            f"{PASS}: @{function.sym_name.data} has {len(inputs)} parameter(s), "
            f"{len(shapes)} shape(s) given",
            function,
        )
    changed: set[SSAValue] = set()
    for i, (arg, shape) in enumerate(zip(function.args, shapes)):
        new = _fitted(arg.type, shape, f"parameter #{i}", function)
        if new != arg.type:
            changed.add(Rewriter.replace_value_with_new_type(arg, new))
    for op in function.body.block.ops:
        if _captures(op, changed):
            raise HeteroError(
                f"{PASS}: cannot re-type the body of '{op.name}' for the new shapes "
                "(nested regions are not looked into)",
                op,
            )
        if isinstance(op, relay.ReturnOp) or not any(v in changed for v in op.operands):
            continue
        try:
            new = _inferred(op)
        except VerifyException as e:
            raise HeteroError(f"{PASS}: {e}", op) from e
        if new != op.results[0].type:
            changed.add(Rewriter.replace_value_with_new_type(op.results[0], new))
    terminator = function.body.block.last_op
    assert terminator is not None
    function.properties["function_type"] = FunctionType.from_lists(
        [a.type for a in function.args], [terminator.operands[0].type]
    )


def _captures(op: Operation, changed: set[SSAValue]) -> bool:
    """Whether an op nested in `op`'s regions uses a re-typed value."""
    return any(
        v in changed
        for region in op.regions
        for inner in region.walk()
        for v in inner.operands
    )


@dataclass(frozen=True)
class SpecializeShapesPass(ModulePass):
    """Gives `@entry`'s parameters the given shapes and re-infers its types."""

    name = "specialize-shapes"

    entry: str = "main"
    shapes: tuple[str | int, ...] = ()
    """One shape per parameter (the pipeline syntax splits the list at commas)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        function = SymbolTable.lookup_symbol(op, self.entry)
        if not isinstance(function, relay.FuncOp):
            raise HeteroError(f"{PASS}: no relay.func @{self.entry} in the module", op)
        specialize(function, parse_shapes(",".join(str(s) for s in self.shapes)))
