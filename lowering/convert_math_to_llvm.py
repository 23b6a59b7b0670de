"""`convert-math-to-llvm`: the `math` dialect to `llvm.call_intrinsic` and libm calls.

Mirrors MLIR's `mlir/lib/Conversion/MathToLLVM/MathToLLVM.cpp` (ops with an
LLVM intrinsic; `rsqrt` as `1 / sqrt`) and, for the ops LLVM has no intrinsic
for, `mlir/lib/Conversion/MathToLibm/MathToLibm.cpp` (`erf`, `cbrt`, the
inverse hyperbolics: calls of the C library, one per vector lane).

Three ops are expanded instead, to stay accurate where the naive formulas are
not (MLIR lowers `expm1` to `exp(x) - 1` and `log1p` to `log(1 + x)`):

* `expm1(x)` with Kahan's `(u - 1) * x / log(u)`, `u = exp(x)`;
* `log1p(x)` with `log(u) * x / (u - 1)`, `u = 1 + x`;
* `tanh(x) = sign(x) * e / (e + 2)` with `e = expm1(2|x|)`: exact to a few
  ulp near 0, and 1 for large |x| (where `exp` overflows) by a threshold test.

The expansions drop fast-math flags, which would license undoing them.  LLVM
lowers `exp`/`log` on vectors to one C library call per lane.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import llvm, math
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerAttr,
    ModuleOp,
    VectorType,
    i1,
    i64,
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
    declare_function,
    intrinsic,
    lowering,
    lowering_for,
    reject_leftovers,
)
from hetero.lowering.convert_arith_to_llvm import fastmath
from hetero.utils.diagnostics import HeteroError

INTRINSICS: dict[type[Operation], str] = {
    math.AbsFOp: "llvm.fabs",
    math.CeilOp: "llvm.ceil",
    math.FloorOp: "llvm.floor",
    math.RoundOp: "llvm.round",
    math.RoundEvenOp: "llvm.roundeven",
    math.TruncOp: "llvm.trunc",
    math.SqrtOp: "llvm.sqrt",
    math.ExpOp: "llvm.exp",
    math.Exp2Op: "llvm.exp2",
    math.LogOp: "llvm.log",
    math.Log2Op: "llvm.log2",
    math.Log10Op: "llvm.log10",
    math.SinOp: "llvm.sin",
    math.CosOp: "llvm.cos",
    math.TanOp: "llvm.tan",
    math.AsinOp: "llvm.asin",
    math.AcosOp: "llvm.acos",
    math.AtanOp: "llvm.atan",
    math.SinhOp: "llvm.sinh",
    math.CoshOp: "llvm.cosh",
    math.CtPopOp: "llvm.ctpop",
    math.PowFOp: "llvm.pow",
    math.CopySignOp: "llvm.copysign",
    math.Atan2Op: "llvm.atan2",
    math.FmaOp: "llvm.fma",
}
"""Ops that are one overloaded LLVM intrinsic, with the same operands."""

POISON_FLAG_INTRINSICS: dict[type[Operation], str] = {
    math.AbsIOp: "llvm.abs",
    math.CountLeadingZerosOp: "llvm.ctlz",
    math.CountTrailingZerosOp: "llvm.cttz",
}
"""Integer intrinsics with a trailing `i1 immarg` ("poison on INT_MIN / zero"): false."""

LIBM: dict[type[Operation], str] = {
    math.ErfOp: "erf",
    math.CbrtOp: "cbrt",
    math.AsinhOp: "asinh",
    math.AcoshOp: "acosh",
    math.AtanhOp: "atanh",
}
"""Ops computed by the C library function of that name (`f` suffix for f32)."""

TANH_SATURATION: dict[type[Attribute], float] = {
    Float16Type: 4.5,
    BFloat16Type: 4.5,
    Float32Type: 9.0,
    Float64Type: 20.0,
}
"""|x| beyond which tanh(x) rounds to ±1 in the type (below it, exp(2|x|) is finite)."""


@dataclass
class Emitter:
    """Builds float code of one type before the matched op."""

    rewriter: PatternRewriter
    type: Attribute
    flags: llvm.FastMathAttr

    def emit(self, op: Operation) -> SSAValue:
        return self.rewriter.insert(op).results[0]

    def const(self, value: float) -> SSAValue:
        return self.emit(constant(value, self.type))

    def call(self, name: str, *args: SSAValue) -> SSAValue:
        return self.emit(
            llvm.CallIntrinsicOp(intrinsic(name, self.type), args, [self.type])
        )

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(llvm.FAddOp(a, b, self.flags))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(llvm.FSubOp(a, b, self.flags))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(llvm.FMulOp(a, b, self.flags))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(llvm.FDivOp(a, b, self.flags))

    def select_if(
        self, predicate: str, a: SSAValue, b: SSAValue, then: SSAValue, other: SSAValue
    ) -> SSAValue:
        """`a <predicate> b ? then : other`."""
        condition = self.emit(llvm_ops.FCmpOp(a, b, predicate, llvm.FastMathAttr(None)))
        return self.emit(llvm_ops.SelectOp(condition, then, other))

    def expm1(self, x: SSAValue) -> SSAValue:
        u = self.call("llvm.exp", x)
        one = self.const(1.0)
        u_minus_1 = self.sub(u, one)
        kahan = self.div(self.mul(u_minus_1, x), self.call("llvm.log", u))
        # u = 1: x is tiny; u - 1 = -1: x is very negative; u = inf: overflow.
        result = self.select_if("oeq", u, self.const(float("inf")), u, kahan)
        result = self.select_if("oeq", u_minus_1, self.const(-1.0), u_minus_1, result)
        return self.select_if("oeq", u, one, x, result)

    def log1p(self, x: SSAValue) -> SSAValue:
        one = self.const(1.0)
        u = self.add(one, x)
        kahan = self.div(self.mul(self.call("llvm.log", u), x), self.sub(u, one))
        result = self.select_if("oeq", u, self.const(float("inf")), u, kahan)
        return self.select_if("oeq", u, one, x, result)

    def tanh(self, x: SSAValue) -> SSAValue:
        magnitude = self.call("llvm.fabs", x)
        e = self.expm1(self.add(magnitude, magnitude))
        ratio = self.div(e, self.add(e, self.const(2.0)))
        saturation = self.const(
            TANH_SATURATION[type(get_element_type_or_self(self.type))]
        )
        ratio = self.select_if("ogt", magnitude, saturation, self.const(1.0), ratio)
        return self.call("llvm.copysign", ratio, x)


class IntrinsicLowering(ToLLVMPattern):
    """Lowers the ops of `INTRINSICS` and `POISON_FLAG_INTRINSICS` to intrinsic calls."""

    @lowering_for(*INTRINSICS, *POISON_FLAG_INTRINSICS)
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        name = INTRINSICS.get(type(op)) or POISON_FLAG_INTRINSICS.get(type(op))
        if name is None:
            return
        t = self.convert(op.results[0].type, op)
        args = self.operands(op, rewriter)
        if type(op) in POISON_FLAG_INTRINSICS:
            flag = llvm.ConstantOp(IntegerAttr(0, i1), i1)
            rewriter.insert(flag)
            args.append(flag.result)
        self.replace(
            op, rewriter, [llvm.CallIntrinsicOp(intrinsic(name, t), args, [t])]
        )


class RsqrtLowering(ToLLVMPattern):
    """Lowers `math.rsqrt` to `1 / sqrt(x)`."""

    @lowering
    def match_and_rewrite(self, op: math.RsqrtOp, rewriter: PatternRewriter, /):
        (x,) = self.operands(op, rewriter)
        e = Emitter(rewriter, x.type, fastmath(op))
        self.replace(op, rewriter, [], [e.div(e.const(1.0), e.call("llvm.sqrt", x))])


class ExpansionLowering(ToLLVMPattern):
    """Expands `math.expm1`, `math.log1p` and `math.tanh` (see the module docstring)."""

    @lowering
    def match_and_rewrite(
        self,
        op: math.ExpM1Op | math.Log1pOp | math.TanhOp,
        rewriter: PatternRewriter,
        /,
    ):
        (x,) = self.operands(op, rewriter)
        # No fast-math flags: reassociating `(1 + x) - 1` would undo the expansions.
        e = Emitter(rewriter, x.type, llvm.FastMathAttr(None))
        expansions = {math.ExpM1Op: e.expm1, math.Log1pOp: e.log1p, math.TanhOp: e.tanh}
        self.replace(op, rewriter, [], [expansions[type(op)](x)])


class LibmLowering(ToLLVMPattern):
    """Lowers the ops of `LIBM` to C library calls, one per vector lane."""

    @lowering_for(*LIBM)
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if (base := LIBM.get(type(op))) is None:
            return
        (x,) = self.operands(op, rewriter)
        element = get_element_type_or_self(x.type)
        suffix = {Float32Type: "f", Float64Type: ""}.get(type(element))
        if suffix is None:
            raise HeteroError(
                f"'{op.name}' on {element}: the C library has f32 and f64 only", op
            )
        name = base + suffix
        declare_function(op, name, llvm.LLVMFunctionType([element], element), rewriter)
        if not isinstance(x.type, VectorType):
            self.replace(op, rewriter, [llvm.CallOp(name, x, return_type=element)])
            return
        result = rewriter.insert(llvm.UndefOp(x.type)).results[0]
        for lane in range(x.type.get_shape()[0]):
            position = rewriter.insert(
                llvm.ConstantOp(IntegerAttr(lane, i64), i64)
            ).results[0]
            value = rewriter.insert(llvm_ops.ExtractElementOp(x, position)).results[0]
            value = rewriter.insert(
                llvm.CallOp(name, value, return_type=element)
            ).results[0]
            result = rewriter.insert(
                llvm.InsertElementOp(result, value, position)
            ).results[0]
        self.replace(op, rewriter, [], [result])


PATTERNS: tuple[type[ToLLVMPattern], ...] = (
    IntrinsicLowering,
    RsqrtLowering,
    ExpansionLowering,
    LibmLowering,
)
"""The conversion patterns of this pass, in the order they are tried."""


@dataclass(frozen=True)
class ConvertMathToLLVMPass(ModulePass):
    """Lowers `math` on scalars and 1-D vectors to LLVM intrinsics and libm calls."""

    name = "convert-math-to-llvm"

    index_bitwidth: int = 64

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [p(self.index_bitwidth) for p in PATTERNS]
        apply_lowerings(op, patterns)
        reject_leftovers(op, ["math"], self.name)
