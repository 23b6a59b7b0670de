"""`convert-index-to-llvm{index-bitwidth=N}`: the builtin `index` type becomes `iN`.

MLIR's `mlir/lib/Conversion/IndexToLLVM/IndexToLLVM.cpp` lowers the `index`
dialect, which xDSL lacks; what hetero needs is its other half, the `index`
type of `arith`, `scf`, `func` and `cf` code, which MLIR's LLVM type converter
maps to `iN` in every conversion pass.  This pass does it once for the whole
module: every result, block argument and attribute (function types, vector
types, constants) of type `index` becomes `iN`, `arith.index_cast` becomes
`arith.extsi`/`arith.trunci` or disappears, and the unrealized casts that the
other conversions put next to `index` values become no-ops for
`reconcile-unrealized-casts`.

It runs after `convert-memref-to-llvm` and `convert-vector-to-llvm`: memref and
vector ops take `index` operands only.  Constants have a pattern of their own,
which rebuilds their value (a dense vector's elements too) and makes one
constant per value in a function.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from hetero.lowering.conversion import (
    ConstantPool,
    apply_lowerings,
    is_index,
    llvm_type,
    lowering,
    mentions,
    without_index,
)
from hetero.utils.diagnostics import HeteroError


@dataclass
class IndexConstantLowering(RewritePattern):
    """Retypes `arith.constant` of (vectors of) `index` to `iN`, one per
    value in a function (`ConstantPool`): the first of a value is moved to
    the function's entry and retyped in place, the others replaced by it."""

    index_bitwidth: int
    pool: ConstantPool = field(default_factory=ConstantPool, init=False)

    @lowering
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter, /):
        t = llvm_type(op.result.type, self.index_bitwidth)
        if t == op.result.type:
            return
        value = op.value
        if isinstance(value, IntegerAttr):
            assert isinstance(t, IntegerType)
            value = IntegerAttr(value.value.data, t)
        else:
            assert isinstance(value, DenseIntOrFPElementsAttr) and isinstance(
                t, VectorType
            )
            value = DenseIntOrFPElementsAttr.from_list(t, value.get_values())

        def retyped() -> arith.ConstantOp:
            rewriter.replace_value_with_new_type(op.result, t)
            op.properties["value"] = value
            op.detach()
            return op

        constant = self.pool.get((value, t), retyped, op, rewriter)
        if constant.owner is not op:
            rewriter.replace(op, [], [constant])


@dataclass
class IndexCastLowering(RewritePattern):
    """Lowers `arith.index_cast` to `arith.extsi`/`arith.trunci`, or to nothing."""

    index_bitwidth: int

    @lowering
    def match_and_rewrite(self, op: arith.IndexCastOp, rewriter: PatternRewriter, /):
        source = llvm_type(op.input.type, self.index_bitwidth)
        target = llvm_type(op.result.type, self.index_bitwidth)
        assert isinstance(source, IntegerType) and isinstance(target, IntegerType)
        if source.width == target.width:
            rewriter.replace(op, [], [op.input])
        elif source.width.data < target.width.data:
            rewriter.replace(op, arith.ExtSIOp(op.input, target))
        else:
            rewriter.replace(op, arith.TruncIOp(op.input, target))


@dataclass
class IndexTypeConversion(RewritePattern):
    """Replaces `index` by `iN` in the result types, block arguments,
    properties and attributes of any op but `llvm` ones (LLVM has no
    `index`; most ops are `llvm` ones by now).  What xDSL's recursive
    `TypeConversionPattern` does, without rebuilding every attribute of
    every op to compare it with the original."""

    index_bitwidth: int = 64

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if op.name.startswith("llvm.") or not mentions(op, is_index):
            return
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    if (t := self.convert(arg.type)) is not arg.type:
                        rewriter.replace_value_with_new_type(arg, t)
        result_types = [self.convert(t) for t in op.result_types]
        properties = {k: self.convert(a) for k, a in op.properties.items()}
        attributes = {k: self.convert(a) for k, a in op.attributes.items()}
        if all(properties[k] is a for k, a in op.properties.items()) and all(
            attributes[k] is a for k, a in op.attributes.items()
        ):
            for result, t in zip(op.results, result_types):
                if t is not result.type:
                    rewriter.replace_value_with_new_type(result, t)
            return
        new = type(op).create(
            operands=op.operands,
            result_types=result_types,
            properties=properties,
            attributes=attributes,
            successors=op.successors,
            regions=[op.detach_region(r) for r in tuple(op.regions)],
        )
        rewriter.replace(op, new)
        for result, old in zip(new.results, op.results):
            result.name_hint = old.name_hint

    def convert(self, attr: Attribute) -> Attribute:
        return without_index(attr, self.index_bitwidth)


def reject_index_operands(module: ModuleOp) -> None:
    """A located error at a memref/vector op that still takes `index` operands."""
    for op in module.walk():
        if op.dialect_name() in ("memref", "vector") and any(
            isinstance(v.type, IndexType) for v in op.operands
        ):
            raise HeteroError(
                f"'{op.name}' takes index operands: run convert-memref-to-llvm and "
                "convert-vector-to-llvm before convert-index-to-llvm",
                op,
            )


@dataclass(frozen=True)
class ConvertIndexToLLVMPass(ModulePass):
    """Replaces the `index` type by `iN` throughout the module."""

    name = "convert-index-to-llvm"

    index_bitwidth: int = 64

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        reject_index_operands(op)
        apply_lowerings(
            op,
            [
                IndexConstantLowering(self.index_bitwidth),
                IndexCastLowering(self.index_bitwidth),
                IndexTypeConversion(index_bitwidth=self.index_bitwidth),
            ],
        )
