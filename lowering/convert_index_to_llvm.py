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
vector ops take `index` operands only.  Constants have a pattern of their own:
xDSL's `TypeConversionPattern` keeps an attribute when its conversion is falsy,
and `IntegerAttr(0, i64)` is, so `arith.constant 0 : index` would be
"converted" to itself forever.
"""

from __future__ import annotations

from dataclasses import dataclass

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
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    TypeConversionPattern,
    attr_type_rewrite_pattern,
    op_type_rewrite_pattern,
)

from hetero.lowering.conversion import llvm_type, mentions
from hetero.utils.diagnostics import HeteroError


@dataclass
class IndexConstantLowering(RewritePattern):
    """Rebuilds `arith.constant` of (vectors of) `index` with `iN`."""

    index_bitwidth: int

    @op_type_rewrite_pattern
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
        rewriter.replace(op, arith.ConstantOp(value, t))


@dataclass
class IndexCastLowering(RewritePattern):
    """Lowers `arith.index_cast` to `arith.extsi`/`arith.trunci`, or to nothing."""

    index_bitwidth: int

    @op_type_rewrite_pattern
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


def _is_index(attr: Attribute) -> bool:
    return isinstance(attr, IndexType)


@dataclass
class IndexTypeConversion(TypeConversionPattern):
    """Replaces `index` by `iN` in all types and attributes (ops that mention
    no `index` are skipped before xDSL's costly generic conversion)."""

    index_bitwidth: int = 64
    recursive: bool = True

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if mentions(op, _is_index):
            super().match_and_rewrite(op, rewriter)

    @attr_type_rewrite_pattern
    def convert_type(self, typ: IndexType, /) -> Attribute:
        return IntegerType(self.index_bitwidth)


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
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    IndexConstantLowering(self.index_bitwidth),
                    IndexCastLowering(self.index_bitwidth),
                    IndexTypeConversion(index_bitwidth=self.index_bitwidth),
                ],
                dce_enabled=False,
            )
        ).rewrite_module(op)
