"""`convert-arith-to-llvm`: the `arith` dialect to the `llvm` dialect.

Mirrors MLIR's `mlir/lib/Conversion/ArithToLLVM/ArithToLLVM.cpp`, on scalars
and 1-D vectors: most ops map one to one (the tables below), min/max become
LLVM's `smax`/`maximum`/`maxnum`/... intrinsics, and the ops MLIR first expands
with `arith-expand` (`floordivsi`, `ceildivsi`, `ceildivui`, the `*_extended`
ops) are expanded here.  `index` becomes `iN` (`index-bitwidth`), with
unrealized casts towards unconverted neighbours (see `conversion.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from xdsl.context import Context
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.utils.type import get_element_type_or_self

from hetero.dialects import llvm_ops
from hetero.lowering.conversion import (
    ToLLVMPattern,
    apply_lowerings,
    constant,
    icmp,
    intrinsic,
    llvm_constant,
    lowering,
    lowering_for,
    reject_leftovers,
)

BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.DivSIOp: llvm.SDivOp,
    arith.DivUIOp: llvm.UDivOp,
    arith.RemSIOp: llvm.SRemOp,
    arith.RemUIOp: llvm.URemOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRSIOp: llvm.AShrOp,
    arith.ShRUIOp: llvm.LShrOp,
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
}
"""Binary ops that map one to one."""

MIN_MAX: dict[type[Operation], str] = {
    arith.MaxSIOp: "llvm.smax",
    arith.MinSIOp: "llvm.smin",
    arith.MaxUIOp: "llvm.umax",
    arith.MinUIOp: "llvm.umin",
    arith.MaximumfOp: "llvm.maximum",
    arith.MinimumfOp: "llvm.minimum",
    arith.MaxnumfOp: "llvm.maxnum",
    arith.MinnumfOp: "llvm.minnum",
}
"""Min/max ops and the LLVM intrinsic with their NaN semantics."""

CASTS: dict[type[Operation], type[Operation]] = {
    arith.ExtSIOp: llvm.SExtOp,
    arith.ExtUIOp: llvm.ZExtOp,
    arith.TruncIOp: llvm.TruncOp,
    arith.SIToFPOp: llvm.SIToFPOp,
    arith.UIToFPOp: llvm_ops.UIToFPOp,
    arith.FPToSIOp: llvm_ops.FPToSIOp,
    arith.FPToUIOp: llvm_ops.FPToUIOp,
    arith.ExtFOp: llvm.FPExtOp,
    arith.TruncFOp: llvm.FPTruncOp,
    arith.BitcastOp: llvm.BitcastOp,
}
"""Casts that map one to one."""


def fastmath(op: Operation) -> llvm.FastMathAttr:
    """The `arith.fastmath` flags of `op` as LLVM's."""
    flags = op.properties.get("fastmath")
    return llvm.FastMathAttr(
        flags.data if isinstance(flags, arith.FastMathFlagsAttr) else None
    )


@cache
def overflow_flags(flags: arith.IntegerOverflowAttr) -> IntegerAttr:
    """`llvm`'s `overflowFlags` property for `arith`'s flags (memoised: an
    attribute built per op costs as much as the op's other fields)."""
    overflow = llvm.OverflowAttr([llvm.OverflowFlag(f.value) for f in flags.data])
    return IntegerAttr(overflow.to_int(), 32)


def width(t: Attribute) -> int:
    """The bit width of an integer type or of its vector's elements."""
    element = get_element_type_or_self(t)
    assert isinstance(element, IntegerType)
    return element.width.data


def with_width(t: Attribute, bits: int) -> Attribute:
    """The integer type (or vector of it) shaped like `t`, of width `bits`."""
    if isinstance(t, VectorType):
        return VectorType(IntegerType(bits), t.get_shape())
    return IntegerType(bits)


class ConstantLowering(ToLLVMPattern):
    """Lowers `arith.constant` (vector splats included) to `llvm.mlir.constant`,
    one per attribute and type in a function (`ConstantPool`), looked up
    before the attribute is rebuilt for its LLVM type (`index` 0 and `i64` 0
    are then two constants: a rare mix, and LLVM IR has no constant ops)."""

    @lowering
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter, /):
        t = self.convert(op.result.type, op)
        value = op.value
        constant = self.pool.get(
            (value, t), lambda: llvm_constant(retyped(value, t), t), op, rewriter
        )
        self.replace(op, rewriter, [], [constant])


def retyped(value: Attribute, t: Attribute) -> Attribute:
    """The constant `value` as one of type `t` (`index` becomes `iN`)."""
    if isinstance(value, IntegerAttr) and value.type != t:
        assert isinstance(t, IntegerType)
        return IntegerAttr(value.value.data, t)
    if isinstance(value, DenseIntOrFPElementsAttr) and value.type != t:
        assert isinstance(t, VectorType)
        return DenseIntOrFPElementsAttr.from_list(t, value.get_values())
    return value


class BinaryLowering(ToLLVMPattern):
    """Lowers the binary ops of `BINARY`, keeping overflow and fast-math flags."""

    @lowering_for(*BINARY)
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if (target := BINARY.get(type(op))) is None:
            return
        lhs, rhs = self.operands(op, rewriter)
        properties: dict[str, Attribute] = {}
        if issubclass(target, llvm.AbstractFloatArithOp):
            properties["fastmathFlags"] = fastmath(op)
        elif issubclass(target, llvm.ArithmeticBinOpOverflow) and isinstance(
            flags := op.properties.get("overflowFlags"), arith.IntegerOverflowAttr
        ):
            properties["overflowFlags"] = overflow_flags(flags)
        new = target.create(  # as `llvm_constant`, fast
            operands=[lhs, rhs], result_types=[lhs.type], properties=properties
        )
        self.replace(op, rewriter, [new])


class MinMaxLowering(ToLLVMPattern):
    """Lowers the min/max ops of `MIN_MAX` to LLVM intrinsic calls."""

    @lowering_for(*MIN_MAX)
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if (name := MIN_MAX.get(type(op))) is None:
            return
        t = self.convert(op.results[0].type, op)
        call = llvm.CallIntrinsicOp(
            intrinsic(name, t), self.operands(op, rewriter), [t]
        )
        self.replace(op, rewriter, [call])


class NegfLowering(ToLLVMPattern):
    """Lowers `arith.negf` to `llvm.fneg`."""

    @lowering
    def match_and_rewrite(self, op: arith.NegfOp, rewriter: PatternRewriter, /):
        (operand,) = self.operands(op, rewriter)
        self.replace(op, rewriter, [llvm.FNegOp(operand, fastmath(op))])


def compare_or_select(op: Operation, operands: Sequence[SSAValue]) -> Operation:
    """The `llvm` op for an `arith.cmpi`, `cmpf` or `select` on `operands`,
    scalars or vectors (the vectorizer's lanes: xDSL's `arith` has no vector
    of `i1`).  Both number predicates alike."""
    if isinstance(op, arith.SelectOp):
        return llvm_ops.SelectOp(*operands)
    assert isinstance(op, arith.CmpiOp | arith.CmpfOp)
    lhs, rhs = operands
    if isinstance(op, arith.CmpiOp):
        return icmp(llvm.ICmpPredicateFlag.from_int(op.predicate.value.data), lhs, rhs)
    predicate = llvm.FCmpPredicateFlag.from_int(op.predicate.value.data)
    return llvm_ops.FCmpOp(lhs, rhs, predicate, fastmath(op))


class CompareSelectLowering(ToLLVMPattern):
    """Lowers `arith.cmpi`, `cmpf` and `select` to `llvm.icmp`, `fcmp`, `select`."""

    @lowering
    def match_and_rewrite(
        self,
        op: arith.CmpiOp | arith.CmpfOp | arith.SelectOp,
        rewriter: PatternRewriter,
        /,
    ):
        operands = self.operands(op, rewriter)
        self.replace(op, rewriter, [compare_or_select(op, operands)])


class CastLowering(ToLLVMPattern):
    """Lowers the casts of `CASTS`."""

    @lowering_for(*CASTS)
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if (target := CASTS.get(type(op))) is None:
            return
        (operand,) = self.operands(op, rewriter)
        t = self.convert(op.results[0].type, op)
        self.replace(op, rewriter, [target(operand, t)])  # pyright: ignore[reportCallIssue]


class IndexCastLowering(ToLLVMPattern):
    """Lowers `arith.index_cast` to `llvm.sext`/`llvm.trunc`, or to nothing."""

    @lowering
    def match_and_rewrite(self, op: arith.IndexCastOp, rewriter: PatternRewriter, /):
        (operand,) = self.operands(op, rewriter)
        t = self.convert(op.result.type, op)
        source, target = width(operand.type), width(t)
        if source == target:
            self.replace(op, rewriter, [], [operand])
        else:
            cast = llvm.SExtOp if source < target else llvm.TruncOp
            self.replace(op, rewriter, [cast(operand, t)])


class DivisionExpansion(ToLLVMPattern):
    """Expands `floordivsi`, `ceildivsi`, `ceildivui` into a division and a fix-up."""

    @lowering
    def match_and_rewrite(
        self,
        op: arith.FloorDivSIOp | arith.CeilDivSIOp | arith.CeilDivUIOp,
        rewriter: PatternRewriter,
        /,
    ):
        a, b = self.operands(op, rewriter)
        signed = not isinstance(op, arith.CeilDivUIOp)
        floor = isinstance(op, arith.FloorDivSIOp)
        zero, one = constant(0, a.type), constant(1, a.type)
        quotient = (llvm.SDivOp if signed else llvm.UDivOp)(a, b)
        remainder = (llvm.SRemOp if signed else llvm.URemOp)(a, b)
        inexact = icmp("ne", remainder.res, zero.result)
        ops: list[Operation] = [zero, one, quotient, remainder, inexact]
        adjust: Operation = inexact
        if signed:
            # The quotient rounds toward zero, so it is one off when the division
            # is inexact and the exact quotient is negative (floor: remainder and
            # divisor differ in sign) or positive (ceil: they agree).
            r_negative = icmp("slt", remainder.res, zero.result)
            b_negative = icmp("slt", b, zero.result)
            sign = icmp("ne" if floor else "eq", r_negative.res, b_negative.res)
            adjust = llvm.AndOp(inexact.res, sign.res)
            ops += [r_negative, b_negative, sign, adjust]
        step = llvm_ops.SelectOp(adjust.results[0], one.result, zero.result)
        result = (llvm.SubOp if floor else llvm.AddOp)(quotient.res, step.res)
        self.replace(op, rewriter, [*ops, step, result])


class AddUIExtendedLowering(ToLLVMPattern):
    """Lowers `arith.addui_extended` to an add and an unsigned overflow test."""

    @lowering
    def match_and_rewrite(
        self, op: arith.AddUIExtendedOp, rewriter: PatternRewriter, /
    ):
        a, b = self.operands(op, rewriter)
        total = llvm.AddOp(a, b)
        overflow = icmp("ult", total.res, a)
        self.replace(op, rewriter, [total, overflow], [total.res, overflow.res])


class MulExtendedLowering(ToLLVMPattern):
    """Lowers `arith.mul[su]i_extended` to a multiply at twice the width."""

    @lowering
    def match_and_rewrite(
        self,
        op: arith.MulSIExtendedOp | arith.MulUIExtendedOp,
        rewriter: PatternRewriter,
        /,
    ):
        a, b = self.operands(op, rewriter)
        n = width(a.type)
        wide = with_width(a.type, 2 * n)
        extend = llvm.SExtOp if isinstance(op, arith.MulSIExtendedOp) else llvm.ZExtOp
        wide_a, wide_b = extend(a, wide), extend(b, wide)
        product = llvm.MulOp(wide_a.res, wide_b.res)
        shift = constant(n, wide)
        high_wide = llvm.LShrOp(product.res, shift.result)
        low, high = (
            llvm.TruncOp(product.res, a.type),
            llvm.TruncOp(high_wide.res, a.type),
        )
        ops = [wide_a, wide_b, product, shift, high_wide, low, high]
        self.replace(op, rewriter, ops, [low.res, high.res])


PATTERNS: tuple[type[ToLLVMPattern], ...] = (
    ConstantLowering,
    BinaryLowering,
    MinMaxLowering,
    NegfLowering,
    CompareSelectLowering,
    CastLowering,
    IndexCastLowering,
    DivisionExpansion,
    AddUIExtendedLowering,
    MulExtendedLowering,
)
"""The conversion patterns of this pass, in the order they are tried."""


@dataclass(frozen=True)
class ConvertArithToLLVMPass(ModulePass):
    """Lowers `arith` on scalars and 1-D vectors to the `llvm` dialect."""

    name = "convert-arith-to-llvm"

    index_bitwidth: int = 64

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [p(self.index_bitwidth) for p in PATTERNS]
        apply_lowerings(op, patterns)
        reject_leftovers(op, ["arith"], self.name)
