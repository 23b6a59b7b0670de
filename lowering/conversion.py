"""What hetero's `convert-*-to-llvm` passes share.

Each pass converts one dialect, as in MLIR, and leaves IR that verifies.  Where
a converted op meets a value whose type LLVM lacks (`index`, or a memref, see
`convert_memref_to_llvm`), the pass bridges the two with
`builtin.unrealized_conversion_cast`, as MLIR's type-converter
materializations do; `reconcile-unrealized-casts` removes the casts once both
sides are converted.  `index` becomes `iN`, N being the `index-bitwidth`
option every pass has (64 by default).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    UnrealizedConversionCastOp,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, ParametrizedAttribute, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolTable

from hetero.utils.diagnostics import HeteroError


def llvm_type(t: Attribute, index_bitwidth: int) -> Attribute:
    """`t` with `index`, also as a vector element, replaced by `iN`."""
    if isinstance(t, IndexType):
        return IntegerType(index_bitwidth)
    if isinstance(t, VectorType) and isinstance(t.element_type, IndexType):
        return VectorType(IntegerType(index_bitwidth), t.get_shape())
    return t


def cast(value: SSAValue, to: Attribute, rewriter: PatternRewriter) -> SSAValue:
    """`value` as type `to`, through an unrealized cast inserted at the rewriter."""
    if value.type == to:
        return value
    owner = value.owner
    if isinstance(owner, UnrealizedConversionCastOp) and owner.inputs.types == (to,):
        return owner.inputs[0]  # a cast back
    op, result = UnrealizedConversionCastOp.cast_one(value, to)
    rewriter.insert(op)
    return result


def retype_block_args(
    block: Block, convert: Callable[[Attribute], Attribute], rewriter: PatternRewriter
) -> None:
    """Give `block`'s arguments their converted types, casting back for their users."""
    for arg in tuple(block.args):
        old = arg.type
        if (new := convert(old)) == old:
            continue
        value = rewriter.replace_value_with_new_type(arg, new)
        back, result = UnrealizedConversionCastOp.cast_one(value, old)
        rewriter.insert(back, InsertPoint.at_start(block))
        rewriter.replace_uses_with_if(
            value, result, lambda use, back=back: use.operation is not back
        )


def constant(value: float, t: Attribute) -> llvm.ConstantOp:
    """`llvm.mlir.constant` of an integer or float type, splatted over vectors."""
    element = t.element_type if isinstance(t, VectorType) else t
    if isinstance(t, VectorType):
        attr: Attribute = DenseIntOrFPElementsAttr.from_list(
            t, [value] * t.element_count()
        )
    elif isinstance(element, IntegerType):
        attr = IntegerAttr(int(value), element)
    else:
        assert isinstance(element, AnyFloat)
        attr = FloatAttr(float(value), element)
    return llvm.ConstantOp(attr, t)


def icmp(predicate: str, lhs: SSAValue, rhs: SSAValue) -> llvm.ICmpOp:
    """`llvm.icmp` with the predicate spelled as in MLIR (`eq`, `slt`, ...)."""
    flag = llvm.ICmpPredicateFlag(predicate)
    return llvm.ICmpOp(lhs, rhs, IntegerAttr(flag.to_int(), i64))


@dataclass
class ToLLVMPattern(RewritePattern):
    """A conversion pattern that knows the width of `index`."""

    index_bitwidth: int = 64

    def convert(self, t: Attribute, op: Operation) -> Attribute:
        """The LLVM type of `t`; a located error if LLVM has none."""
        converted = llvm_type(t, self.index_bitwidth)
        if not llvm.is_compatible_type(converted):
            raise HeteroError(
                f"'{op.name}': type {t} has no LLVM equivalent "
                "(scalars and 1-D vectors only)",
                op,
            )
        return converted

    def operands(self, op: Operation, rewriter: PatternRewriter) -> list[SSAValue]:
        """The operands of `op`, cast to their LLVM types."""
        converted: dict[SSAValue, SSAValue] = {}
        for v in op.operands:
            if v not in converted:
                converted[v] = cast(v, self.convert(v.type, op), rewriter)
        return [converted[v] for v in op.operands]

    def replace(
        self,
        op: Operation,
        rewriter: PatternRewriter,
        new_ops: Sequence[Operation],
        new_results: Sequence[SSAValue] | None = None,
    ) -> None:
        """Replace `op`, casting results back to the types its users still expect."""
        rewriter.insert(list(new_ops))
        results = new_ops[-1].results if new_results is None else new_results
        rewriter.replace(
            op, [], [cast(r, old.type, rewriter) for r, old in zip(results, op.results)]
        )


def intrinsic(name: str, t: Attribute) -> str:
    """`name` mangled for the overload on `t`, as LLVM spells it: `llvm.smax.v8i32`."""
    if isinstance(t, VectorType):
        return f"{name}.v{t.get_shape()[0]}{_mangle(t.element_type)}"
    return f"{name}.{_mangle(t)}"


def _mangle(t: Attribute) -> str:
    if isinstance(t, IntegerType):
        return f"i{t.width.data}"
    return {
        Float16Type: "f16",
        BFloat16Type: "bf16",
        Float32Type: "f32",
        Float64Type: "f64",
    }[type(t)]


def declare_function(
    anchor: Operation,
    name: str,
    function_type: llvm.LLVMFunctionType,
    rewriter: PatternRewriter,
) -> None:
    """Declare the external `llvm.func @name` in `anchor`'s module, unless there."""
    module = anchor.parent_op()
    while not isinstance(module, ModuleOp):
        assert module is not None
        module = module.parent_op()
    if SymbolTable.lookup_symbol(module, name) is None:
        declaration = llvm.FuncOp(
            name, function_type, linkage=llvm.LinkageAttr("external")
        )
        rewriter.insert(declaration, InsertPoint.at_end(module.body.block))


def reject_leftovers(module: ModuleOp, dialect: str, pass_name: str) -> None:
    """A located error at the first `dialect` op that `pass_name` left unconverted."""
    for op in module.walk():
        if op.dialect_name() == dialect:
            raise HeteroError(f"{pass_name}: no lowering for '{op.name}'", op)


@cache
def contains(attr: Attribute, test: Callable[[Attribute], bool]) -> bool:
    """Whether `attr` or an attribute nested in it passes `test` (memoised:
    attributes are immutable, and few distinct ones occur)."""
    if test(attr):
        return True
    if isinstance(attr, ArrayAttr):
        return any(contains(a, test) for a in attr.data)
    if isinstance(attr, DictionaryAttr):
        return any(contains(a, test) for a in attr.data.values())
    return isinstance(attr, ParametrizedAttribute) and any(
        isinstance(p, Attribute) and contains(p, test) for p in attr.parameters
    )


def mentions(op: Operation, test: Callable[[Attribute], bool]) -> bool:
    """Whether a type or attribute of `op` (results, block arguments,
    properties, attributes) contains one passing `test`.  A type-conversion
    pattern checks it first: xDSL's generic recursive conversion costs about
    a millisecond an op even when there is nothing to convert."""
    return any(
        contains(a, test)
        for a in (
            *op.result_types,
            *(arg.type for region in op.regions for b in region.blocks for arg in b.args),
            *op.properties.values(),
            *op.attributes.values(),
        )
    )
