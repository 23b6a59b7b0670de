"""`approximate-math`: f32 `exp`, `log`, `erf` and `tanh` as inline polynomials.

LLVM lowers `llvm.exp`/`llvm.log` on a vector to one C library call per lane,
and `erf` is a C library call (`convert-math-to-llvm`): GELU, SiLU and softmax
spent most of their time in those calls.  This pass, run on CPU code before
`convert-to-llvm` (`hetero.lowering.pipeline.lower_to_llvm`), rewrites the f32
ops, on scalars and vectors of any width alike, into `arith` code: range
reduction, a polynomial, reconstruction, as MLIR's
`math-polynomial-approximation` does.  Other element types keep
`convert-math-to-llvm`'s lowering.  GPU kernels get only the `erf` expansion
(`convert-gpu-to-nvvm`: there is no C library there, and PTX's approximate
`ex2` and `lg2` serve the others).

* `exp(x) = 2^n · e^r`, `n = round(x / ln 2)`, `r = x - n ln 2` (Cody and
  Waite's two-part ln 2), `e^r = 1 + r + r² P(r)`.  `2^n` is applied in two
  halves, so that results between 2^-149 and 2^-126 come out as denormals
  with one rounding (not flushed); x is first clamped to [-104, 89], so
  that exp(+inf) = exp(89) = inf and exp(-inf) = exp(-104) = 0.  With
  AVX-512 (`isa="avx512"`, on 16-lane vectors), n is rounded to sixteenths,
  `2^(n - ⌊n⌋)` comes from a 16-entry table in a register (`vpermps`), so
  that |r| ≤ ln 2 / 32 and P is linear, and `vscalefps` applies `2^⌊n⌋`
  (denormals rounded once, overflow to inf): 12 instructions a vector
  against 22.
* `log(x) = k ln 2 + log(1 + t)`, `1 + t` the significand scaled into
  [√½, √2) by integer arithmetic on the bits (denormals scaled by 2^23
  first), `log(1 + t) = t - t²/2 + t³ P(t)`; 0, negatives, +inf and NaN by
  selects.
* `tanh(x) = x + x³ P(x²)` for |x| < 0.625, else `±(1 - 2 / (exp(2|x|) + 1))`,
  |x| clamped to 9.1, from where tanh rounds to ±1.  With AVX-512, a
  polynomial of degree 6 per piece of |x| (14 pieces, halves of binades),
  its coefficients looked up in registers (`vpermps`): 20 instructions a
  vector against 34, and no division.
* `erf(x) = x + x P(x²)` for |x| < 1, else `±(1 - exp(-x²) R(|x| - 1))` with |x|
  clamped to 3.92, from where erf rounds to ±1 in f32.  With AVX-512, as
  tanh: a polynomial of degree 7 per piece (11 pieces), `x + x P(x)` on the
  first: 24 instructions a vector against 44, and no exp.  With AVX2
  (`isa="avx2"`, 8-lane vectors), tanh and erf the same way on whole
  binades (8-entry tables), polynomials of degree 9 and 10.

NaN propagates through every branch (the clamps are `select`s on ordered
comparisons, which leave NaN be).  The polynomials are weighted minimax fits
(Lawson's iteration, float64) of the relative error of the result, their
coefficients rounded to f32; they are evaluated by Horner's rule with the
`contract` flag, which LLVM turns into FMAs where the target has them.
Errors measured over every binade of f32 against float64 (tests/
test_approximate_math.py asserts them; docs/lowering.md has the table).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache

import llvmlite.binding as llvm_binding
from xdsl.context import Context
from xdsl.dialects import arith, llvm, math
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    VectorType,
    f32,
    i16,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
)
from xdsl.utils.type import get_element_type_or_self

from hetero.lowering.conversion import nested_ops
from hetero.runtime.cpu import CpuMachine
from hetero.targets.cpu import _host_features
from hetero.utils.cpus import triple_arch
from hetero.utils.diagnostics import HeteroError

CONTRACT = arith.FastMathFlagsAttr([arith.FastMathFlag.ALLOW_CONTRACT])
"""Lets LLVM fuse each multiply-add of the polynomials into an FMA."""

LN2_HIGH = 0.693359375
"""ln 2 to 9 bits: `n · LN2_HIGH` is exact for the |n| ≤ 150 that occur."""
LN2_LOW = -2.12194440e-4
"""ln 2 - LN2_HIGH."""
ROUNDER = 12582912.0
"""1.5 · 2^23: `y + ROUNDER` rounds y to an integer, found in the low bits."""
ROUNDER_BITS = 0x4B400000
"""ROUNDER's bits: `bits(y + ROUNDER) - ROUNDER_BITS` is that integer."""

EXP_RANGE = (-104.0, 89.0)
"""exp below -104 rounds to 0, above 89 overflows: x is clamped to this."""
EXP_POLY = (
    0.49999994,
    0.16666521,
    0.04166839,
    0.00836871,
    0.0013814613,
)
"""`e^r ≈ 1 + r + r² P(r)` on |r| ≤ ln 2 / 2."""

EXP_TABLE_ROUNDER = 786432.0
"""1.5 · 2^19: `y + EXP_TABLE_ROUNDER` rounds y to a multiple of 1/16, whose
sixteenths are the low 4 bits."""
EXP_TABLE = tuple(2.0 ** (j / 16) for j in range(16))
"""`2^(j/16)`, rounded to f32 in the vector constant: AVX-512's exp."""
EXP_TABLE_POLY = (0.5000162, 0.16666722)
"""`e^r ≈ 1 + r + r² P(r)` on |r| ≤ ln 2 / 32 (AVX-512's exp)."""

SQRT_HALF_BITS = 0x3F3504F3
"""The bits of √½: significands are scaled into [√½, √2)."""
EXPONENT_MASK = -0x800000
"""0xff800000 as i32: the sign and exponent bits."""
LOG_POLY = (
    0.3333333,
    -0.2500082,
    0.20001227,
    -0.16623357,
    0.14201757,
    -0.13160183,
    0.12761578,
    -0.076344974,
)
"""`log(1 + t) ≈ t - t²/2 + t³ P(t)` on [√½ - 1, √2 - 1)."""

TANH_SMALL = 0.625
"""Below this |x|, tanh is the odd polynomial; above, computed from exp."""
TANH_ONE = 9.1
"""From here on tanh(x) rounds to 1 in f32 (above 13 ln 2 / 2): |x| is
clamped to it, so that exp(2|x|) is finite."""
TANH_POLY = (
    -0.3333328,
    0.13331442,
    -0.053739715,
    0.020639088,
    -0.0057049873,
)
"""`tanh(x) ≈ x + x³ P(x²)` on |x| < TANH_SMALL."""


ERF_SMALL = 1.0
"""Below this |x|, erf is the odd polynomial; above, computed from exp."""
ERF_ONE = 3.92
"""From here on erf(x) rounds to 1 in f32 (erfc(3.92) < 2^-25)."""
ERF_POLY = (
    0.12837917,
    -0.37612626,
    0.112835854,
    -0.026853813,
    0.0051883287,
    -0.00080102007,
    7.853883e-05,
)
"""`erf(x) ≈ x + x P(x²)` on |x| < ERF_SMALL (x exact, P small)."""
ERFC_POLY = (
    0.42758355,
    -0.27320758,
    0.15428647,
    -0.07863513,
    0.035608735,
    -0.013133975,
    0.0032829368,
    -0.0003888842,
)
"""`erfc(x) ≈ exp(-x²) R(x - 1)` on [ERF_SMALL, ERF_ONE]."""


@dataclass(frozen=True)
class Pieces:
    """`f(x) ≈ P(x - start)` for x ≥ 0, a polynomial P per piece of x: the
    row `bits(x) >> shift` (at least `first_row`) modulo `len(rows)` of
    `rows`, (start, coefficients of P from the constant up).  The pieces are
    binades or halves of them (shift 23 or 22), below them [0, 2^-3) (the
    first row, where P is odd: `x + x³ ...`, or `x + x P(x)` where `linear`
    says so, when P'(0) is no f32).  The starts and coefficients are looked
    up in registers (`Builder.lookup`), one per vector lane."""

    shift: int
    first_row: int
    """`bits(2^-3) >> shift` - 1: the row of every x below 2^-3."""
    rows: tuple[tuple[float, tuple[float, ...]], ...]
    linear: bool = False


# fmt: off
TANH_HALF_BINADES = Pieces(22, 247, (
    (2.0, (0.9640276, 0.07065032, -0.06810244, 0.042081594, -0.01788319, 0.004977521, -0.00069664326)),
    (3.0, (0.9950548, 0.009863823, -0.009788144, 0.00633634, -0.0028365138, 0.0008020777, -0.00010303719)),
    (4.0, (0.9993293, 0.0013389617, -0.0013219824, 0.0008312251, -0.00034427078, 8.54415e-05, -9.488269e-06)),
    (6.0, (0.9999877, 2.4206121e-05, -2.2269807e-05, 1.1000262e-05, -2.1843653e-06, -2.8234777e-07, 1.3614019e-07)),
    (8.0, (0.99999976, 1.3143652e-06, -9.591298e-06, 3.5708974e-05, -6.217716e-05, 5.0148494e-05, -1.51841505e-05)),
    (0.0, (0.0,) * 7),  # unused
    (0.0, (0.0,) * 7),  # unused
    (0.0, (0.0, 1.0, -3.8979913e-08, -0.3333289, -0.00016402193, 0.1359849, -0.019526409)),
    (0.125, (0.124353, 0.9845397, -0.123080485, -0.26707318, -1.3723167, 21.186852, -114.273285)),
    (0.1875, (0.1853332, 0.96564287, -0.17728518, -0.4061285, 3.7994583, -53.05989, 286.65222)),
    (0.25, (0.24491866, 0.9400167, -0.23040883, -0.250554, 0.038552724, 0.8054956, -2.0572338)),
    (0.375, (0.3583574, 0.8715792, -0.31226012, -0.18128304, 0.21023792, -0.28524908, 0.75312495)),
    (0.5, (0.46211717, 0.78644526, -0.36330992, -0.09636711, 0.18225497, -0.09437658, 0.054554015)),
    (0.75, (0.63514894, 0.59658873, -0.37905777, 0.044159196, 0.08167391, -0.0010596083, -0.07723583)),
    (1.0, (0.7615942, 0.41997176, -0.31979805, 0.10325008, 0.028601322, -0.046587475, 0.017904151)),
    (1.5, (0.90514827, 0.18070482, -0.16352898, 0.08755528, -0.02431931, -0.0024631058, 0.0039474405)),
))
"""tanh on 14 halves of binades up to [8, TANH_ONE], P of degree 6 (AVX-512)."""
ERF_HALF_BINADES = Pieces(22, 247, (
    (2.0, (0.9953223, 0.020665988, -0.041332427, 0.04831989, -0.035190895, 0.015474284, -0.0035369012, 0.00025566542)),
    (3.0, (0.9999779, 0.00014058524, -0.00042920554, 0.0008079238, -0.00095777307, 0.0006452619, -0.00018513332, 0.0)),
    (0.0, (0.0,) * 8),  # unused
    (0.0, (0.0,) * 8),  # unused
    (0.0, (0.0,) * 8),  # unused
    (0.0, (0.0,) * 8),  # unused
    (0.0, (0.0,) * 8),  # unused
    (0.0, (0.0, 0.12837917, 2.2321674e-07, -0.37613952, 0.00025758086, 0.11108906, 0.0, 0.0)),
    (0.125, (0.1403162, 1.1108872, -0.13923338, -0.33242193, -0.7638829, 12.187916, -65.540245, 0.0)),
    (0.1875, (0.20911768, 1.0893967, -0.20408106, -0.3427007, 0.1493315, 0.0, 0.0, 0.0)),
    (0.25, (0.2763264, 1.060015, -0.26505882, -0.30794898, 0.11650983, 0.105307564, 0.0, 0.0)),
    (0.375, (0.4041169, 0.9803552, -0.3677103, -0.23437689, 0.17122504, 0.0, 0.0, 0.0)),
    (0.5, (0.5204999, 0.87878054, -0.43930084, -0.14793146, 0.19385277, -0.029599095, 0.0, 0.0)),
    (0.75, (0.71115565, 0.6429269, -0.4820528, 0.024980316, 0.16055189, -0.07759419, 0.0, 0.0)),
    (1.0, (0.8427008, 0.41510892, -0.4151285, 0.1384008, 0.070075415, -0.074924156, 0.018789435, 0.0)),
    (1.5, (0.96610516, 0.118928656, -0.1783726, 0.13871278, -0.045336112, -0.010608257, 0.0109990435, 0.0)),
), linear=True)
"""erf on 11 halves of binades up to [3, ERF_ONE], P of degree 7 (AVX-512)."""
TANH_BINADES = Pieces(23, 123, (
    (2.0, (0.9640276, 0.07065106, -0.06811621, 0.04216606, -0.018116629, 0.0052890177, -0.0008714049, -9.753952e-07, 3.0453633e-05, -4.195171e-06)),
    (4.0, (0.9993293, 0.001339598, -0.0013294629, 0.00085968367, -0.00039333597, 0.00012850304, -2.9043516e-05, 4.2560323e-06, -3.5863306e-07, 1.2990372e-08)),
    (8.0, (0.99999976, 1.0516177e-06, -4.8139564e-06, 1.1389378e-05, -1.1646242e-05, 4.2140364e-06, 0.0, 0.0, 0.0, 0.0)),
    (0.0, (0.0, 1.0, 3.1190083e-07, -0.33335564, 0.0004725123, 0.12998746, 0.0, 0.0, 0.0, 0.0)),
    (0.125, (0.124353, 0.98453754, -0.12251344, -0.31103793, 0.062564224, 0.1628041, 0.0, 0.0, 0.0, 0.0)),
    (0.25, (0.24491866, 0.940017, -0.23046932, -0.24652417, -0.08330629, 2.7332735, -18.628136, 75.1243, -163.50285, 147.91428)),
    (0.5, (0.46211717, 0.78644496, -0.36327592, -0.09750959, 0.19976048, -0.23506302, 0.6696278, -1.4195454, 1.5723985, -0.7127318)),
    (1.0, (0.7615942, 0.4199709, -0.31975424, 0.10258285, 0.033174735, -0.062804334, 0.048574954, -0.029521497, 0.012930789, -0.0027207767)),
))
"""tanh on 8 binades up to [8, TANH_ONE], P of degree 9 (AVX2)."""
ERF_BINADES = Pieces(23, 123, (
    (2.0, (0.9953223, 0.020665074, -0.041306812, 0.04807911, -0.03408922, 0.012669128, 0.00063614425, -0.0033668245, 0.0017499386, -0.0004224491, 4.1511743e-05)),
    (0.0, (0.0,) * 11),  # unused
    (0.0, (0.0,) * 11),  # unused
    (0.0, (0.0, 0.12837917, 2.2321674e-07, -0.37613952, 0.00025758086, 0.11108906, 0.0, 0.0, 0.0, 0.0, 0.0)),
    (0.125, (0.1403162, 1.110886, -0.1389084, -0.35762382, 0.05881343, 0.13149528, 0.0, 0.0, 0.0, 0.0, 0.0)),
    (0.25, (0.2763264, 1.0600156, -0.26516476, -0.30222794, -0.021477144, 1.8515539, -12.395105, 50.00133, -108.843994, 98.45833, 0.0)),
    (0.5, (0.5204999, 0.8787811, -0.43934202, -0.14705731, 0.18637997, -0.0015136944, -0.04064434, 0.007891216, 0.0, 0.0, 0.0)),
    (1.0, (0.8427008, 0.41510975, -0.41516906, 0.13901594, 0.065773204, -0.058994215, -0.0136294225, 0.035111405, -0.018089972, 0.0034938687, 0.0)),
), linear=True)
"""erf on 6 binades up to [2, ERF_ONE], P of degree 10 (AVX2)."""
# fmt: on

PERMUTES = {16: "llvm.x86.avx512.permvar.sf.512", 8: "llvm.x86.avx2.permps"}
"""The intrinsic that looks up a table of this many f32 in a register, by
the low bits of each lane's index (`vpermps`)."""


@dataclass
class Builder:
    """Emits f32 code on values of `type` (f32 or a vector of it) before the
    matched op; integers are i32 of the same shape."""

    rewriter: PatternRewriter
    type: Attribute
    isa: str | None = None
    """The vector ISA (of `ISAS`) whose instructions the expansions may
    use on `type`; None: `ARITH`, plain `arith` only."""
    constants: dict[tuple[str, Attribute], SSAValue] = field(default_factory=dict)
    """Each constant made once per expansion (all ops go before the matched
    op), by `repr`, which tells -0.0 from 0.0."""

    def emit(self, op: Operation) -> SSAValue:
        return self.rewriter.insert(op).results[0]

    def shaped(self, element: Attribute) -> Attribute:
        if isinstance(self.type, VectorType):
            return VectorType(element, self.type.get_shape())
        return element

    def constant(self, value: float, element: Attribute) -> SSAValue:
        key = (repr(value), element)
        if (made := self.constants.get(key)) is None:
            made = self.constants[key] = self._constant(value, element)
        return made

    def _constant(self, value: float, element: Attribute) -> SSAValue:
        t = self.shaped(element)
        if isinstance(t, VectorType):
            attr: Attribute = DenseIntOrFPElementsAttr.from_list(
                t, [value] * t.element_count()
            )
        elif element == f32:
            attr = FloatAttr(value, f32)
        else:
            attr = IntegerAttr(int(value), element)
        return self.emit(arith.ConstantOp(attr, t))

    def table(self, values: Sequence[float]) -> SSAValue:
        """A vector constant of `values`, one a lane."""
        attr = DenseIntOrFPElementsAttr.from_list(self.type, list(values))
        return self.emit(arith.ConstantOp(attr, self.type))

    def lookup(self, values: Sequence[float], row: SSAValue) -> SSAValue:
        """`values[row % len(values)]` in each lane (`PERMUTES`)."""
        return self.intrinsic(PERMUTES[len(values)], self.table(values), row)

    def intrinsic(self, name: str, *args: SSAValue) -> SSAValue:
        """A call of the LLVM intrinsic `name` (the ISA's), of result `type`."""
        return self.emit(llvm.CallIntrinsicOp(name, args, [self.type]))

    def const(self, value: float) -> SSAValue:
        return self.constant(value, f32)

    def int(self, value: int) -> SSAValue:
        return self.constant(value, i32)

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.AddfOp(a, b, CONTRACT))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.SubfOp(a, b, CONTRACT))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.MulfOp(a, b, CONTRACT))

    def fma(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        """`a · b + c`, fused where the target has FMA (`contract`)."""
        return self.add(self.mul(a, b), c)

    def horner(self, x: SSAValue, coefficients: Sequence[float]) -> SSAValue:
        """`c0 + c1 x + c2 x² + ...`."""
        result = self.const(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            result = self.fma(result, x, self.const(c))
        return result

    def select(
        self, predicate: str, a: SSAValue, b: SSAValue, then: SSAValue, other: SSAValue
    ) -> SSAValue:
        """`a <predicate> b ? then : other`."""
        condition = self.emit(arith.CmpfOp(a, b, predicate))
        return self.emit(arith.SelectOp(condition, then, other))

    def at_most(self, x: SSAValue, high: float) -> SSAValue:
        """`min(x, high)`; NaN stays NaN (an ordered comparison)."""
        return self.select("ogt", x, self.const(high), self.const(high), x)

    def at_least(self, x: SSAValue, low: float) -> SSAValue:
        """`max(x, low)`; NaN stays NaN (an ordered comparison)."""
        return self.select("olt", x, self.const(low), self.const(low), x)

    def bits(self, x: SSAValue) -> SSAValue:
        return self.emit(arith.BitcastOp(x, self.shaped(i32)))

    def float(self, bits: SSAValue) -> SSAValue:
        return self.emit(arith.BitcastOp(bits, self.type))

    def integral(self, n: SSAValue) -> SSAValue:
        """The integer n (|n| < 2^22) as a float: `arith.sitofp` takes no
        vectors in xDSL.  Its bits added to ROUNDER's make ROUNDER + n."""
        rounded = self.float(self.emit(arith.AddiOp(n, self.bits(self.const(ROUNDER)))))
        return self.sub(rounded, self.const(ROUNDER))

    def exponent(self, biased: SSAValue) -> SSAValue:
        """The power of 2 of biased exponent `biased`, in [1, 254]."""
        return self.float(self.emit(arith.ShLIOp(biased, self.int(23))))

    def abs(self, x: SSAValue) -> SSAValue:
        return self.emit(math.AbsFOp(x))

    def copysign(self, magnitude: SSAValue, sign: SSAValue) -> SSAValue:
        return self.emit(math.CopySignOp(magnitude, sign))


def exp(b: Builder, x: SSAValue) -> SSAValue:
    low, high = EXP_RANGE
    return exp_clamped(b, b.at_most(b.at_least(x, low), high))


def exp_clamped(b: Builder, x: SSAValue) -> SSAValue:
    """exp of an x in `EXP_RANGE`, by the ISA's code."""
    return ISAS.get(b.isa, ARITH).exp(b, x)


def exp_arith(b: Builder, x: SSAValue) -> SSAValue:
    rounded = b.fma(x, b.const(1.4426950408889634), b.const(ROUNDER))
    n = b.sub(rounded, b.const(ROUNDER))
    r = b.fma(n, b.const(-LN2_HIGH), x)
    r = b.fma(n, b.const(-LN2_LOW), r)
    p = b.add(b.fma(b.mul(r, r), b.horner(r, EXP_POLY), r), b.const(1.0))
    # 2^n in two factors, each a normal number for n in [-150, 128]: their
    # biased exponents are ⌊(n + 254) / 2⌋ and the rest.
    biased = b.emit(arith.SubiOp(b.bits(rounded), b.int(ROUNDER_BITS - 254)))
    half = b.emit(arith.ShRSIOp(biased, b.int(1)))
    rest = b.emit(arith.SubiOp(biased, half))
    return b.mul(b.mul(p, b.exponent(half)), b.exponent(rest))


def exp_avx512(b: Builder, x: SSAValue) -> SSAValue:
    """`2^(n/16)` from a table in a register (`vpermps`) times a cubic's
    `e^r`, |r| ≤ ln 2 / 32, scaled by `vscalefps`, which rounds results
    below 2^-126 once to denormals and overflows to inf."""
    rounded = b.fma(x, b.const(1.4426950408889634), b.const(EXP_TABLE_ROUNDER))
    n = b.sub(rounded, b.const(EXP_TABLE_ROUNDER))  # a multiple of 1/16
    r = b.fma(n, b.const(-LN2_HIGH), x)
    r = b.fma(n, b.const(-LN2_LOW), r)
    power = b.lookup(EXP_TABLE, b.bits(rounded))
    er = b.fma(b.mul(r, r), b.horner(r, EXP_TABLE_POLY), r)  # e^r - 1
    # vscalefps multiplies by 2^⌊n⌋: the integer part of n.
    mask = b.emit(arith.ConstantOp(IntegerAttr(-1, i16), i16))
    current_rounding = b.emit(arith.ConstantOp(IntegerAttr(4, i32), i32))
    return b.intrinsic(
        "llvm.x86.avx512.mask.scalef.ps.512",
        b.fma(power, er, power),
        n,
        x,
        mask,
        current_rounding,
    )


def log(b: Builder, x: SSAValue) -> SSAValue:
    tiny = b.emit(arith.CmpfOp(x, b.const(2.0**-126), "olt"))
    normal = b.emit(arith.SelectOp(tiny, b.mul(x, b.const(2.0**23)), x))
    bits = b.bits(normal)
    offset = b.emit(arith.SubiOp(bits, b.int(SQRT_HALF_BITS)))
    exponent = b.emit(arith.AndIOp(offset, b.int(EXPONENT_MASK)))
    t = b.sub(b.float(b.emit(arith.SubiOp(bits, exponent))), b.const(1.0))
    k = b.integral(b.emit(arith.ShRSIOp(offset, b.int(23))))
    k = b.sub(k, b.emit(arith.SelectOp(tiny, b.const(23.0), b.const(0.0))))
    t2 = b.mul(t, t)
    low = b.fma(k, b.const(LN2_LOW), b.mul(t2, b.const(-0.5)))
    y = b.fma(b.mul(t2, t), b.horner(t, LOG_POLY), low)
    result = b.fma(k, b.const(LN2_HIGH), b.add(t, y))
    inf = b.const(float("inf"))
    result = b.select("oeq", x, inf, inf, result)
    result = b.select("oeq", x, b.const(0.0), b.const(-float("inf")), result)
    return b.select("ult", x, b.const(0.0), b.const(float("nan")), result)


def tanh(b: Builder, x: SSAValue) -> SSAValue:
    magnitude = b.abs(x)
    clamped = b.at_most(magnitude, TANH_ONE)
    e = exp_clamped(b, b.add(clamped, clamped))
    one = b.const(1.0)
    large = b.sub(one, b.emit(arith.DivfOp(b.const(2.0), b.add(e, one))))
    square = b.mul(magnitude, magnitude)
    small = b.fma(b.mul(square, magnitude), b.horner(square, TANH_POLY), magnitude)
    result = b.select("olt", magnitude, b.const(TANH_SMALL), small, large)
    return b.copysign(result, x)  # odd, and -0 stays -0


def odd_pieces(pieces: Pieces, one: float) -> Expansion:
    """The expansion of an odd function that is `pieces` for x ≥ 0, and
    rounds to 1 in f32 from `one` on: no exp, no division."""

    def expand(b: Builder, x: SSAValue) -> SSAValue:
        magnitude = b.at_most(b.abs(x), one)
        return b.copysign(piecewise(b, magnitude, pieces), x)  # -0 stays -0

    return expand


def piecewise(b: Builder, x: SSAValue, pieces: Pieces) -> SSAValue:
    """`pieces` at an x ≥ 0: Horner's rule on coefficients looked up by row."""
    shifted = b.emit(arith.ShRUIOp(b.bits(x), b.int(pieces.shift)))
    row = b.emit(arith.MaxSIOp(shifted, b.int(pieces.first_row)))
    starts, coefficients = zip(*pieces.rows)
    t = b.sub(x, b.lookup(starts, row))
    constant = b.lookup([c[0] for c in coefficients], row)
    if pieces.linear:
        first = pieces.first_row % len(starts)
        ones = [float(i == first) for i in range(len(starts))]
        constant = b.fma(t, b.lookup(ones, row), constant)
    result = b.lookup([c[-1] for c in coefficients], row)
    for i in reversed(range(1, len(coefficients[0]) - 1)):
        result = b.fma(result, t, b.lookup([c[i] for c in coefficients], row))
    return b.fma(result, t, constant)


def erf(b: Builder, x: SSAValue) -> SSAValue:
    magnitude = b.at_most(b.abs(x), ERF_ONE)
    square = b.mul(magnitude, magnitude)
    gauss = exp_clamped(b, b.emit(arith.NegfOp(square)))
    tail = b.mul(gauss, b.horner(b.sub(magnitude, b.const(ERF_SMALL)), ERFC_POLY))
    large = b.sub(b.const(1.0), tail)
    small = b.fma(magnitude, b.horner(square, ERF_POLY), magnitude)
    result = b.select("olt", magnitude, b.const(ERF_SMALL), small, large)
    return b.copysign(result, x)  # odd, and -0 stays -0


Expansion = Callable[[Builder, SSAValue], SSAValue]
"""Builds an op's expansion at the builder's point, from the op's operand."""

APPROXIMATIONS: dict[type[Operation], Expansion] = {
    math.ExpOp: exp,
    math.LogOp: log,
    math.TanhOp: tanh,
    math.ErfOp: erf,
}
"""The ops this pass expands on f32, and their expansions."""


@dataclass(frozen=True)
class VectorMath:
    """What the expansions build on, in a vector ISA's instructions."""

    lanes: int
    """The f32 vector width it takes: other widths get `ARITH`."""
    exp: Expansion
    """exp of an x in `EXP_RANGE`, which the others build on."""
    expansions: dict[type[Operation], Expansion] = field(default_factory=dict)
    """Expansions of ops of its own, in place of `APPROXIMATIONS`'."""


ARITH = VectorMath(0, exp_arith)
"""Plain `arith` code, for any target."""

ISAS = {
    "avx512": VectorMath(
        16,
        exp_avx512,
        {
            math.TanhOp: odd_pieces(TANH_HALF_BINADES, TANH_ONE),
            math.ErfOp: odd_pieces(ERF_HALF_BINADES, ERF_ONE),
        },
    ),
    "avx2": VectorMath(
        8,
        exp_arith,
        {
            math.TanhOp: odd_pieces(TANH_BINADES, TANH_ONE),
            math.ErfOp: odd_pieces(ERF_BINADES, ERF_ONE),
        },
    ),
}
"""The vector ISAs with code of their own, by `approximate-math`'s `isa`."""


ISA_FEATURES = (("avx512", ("avx512f",)), ("avx2", ("avx2", "fma")))
"""The x86 features each ISA of `ISAS` needs, the best ISA first."""


def math_isa(machine: CpuMachine) -> str | None:
    """The best ISA of `ISAS` that code for `machine` may use: by the
    features its `mattr` enables, else, where `mcpu` is the host's CPU, the
    host's (an `mcpu` of another CPU without `mattr` gets None, as LLVM is
    not asked for its features)."""
    if triple_arch(machine.machine.triple) != "x86_64":
        return None
    features = {}
    if machine.native and machine.mcpu == _host_cpu():
        features = dict(_host_features())
    features.update(_feature(item) for item in machine.mattr.split(",") if item)
    for isa, needs in ISA_FEATURES:
        if all(features.get(feature) for feature in needs):
            return isa
    return None


def _feature(item: str) -> tuple[str, bool]:
    """LLVM's `+name`/`-name` as (name, on)."""
    return item[1:], item.startswith("+")


@cache
def _host_cpu() -> str:
    """The host's CPU name, asked of LLVM once (0.1 ms an asking)."""
    return llvm_binding.get_host_cpu_name()


class ApproximateF32(RewritePattern):
    """Replaces an op of `expansions` (by default `APPROXIMATIONS`) on f32 (or
    a vector of it) by its expansion, using `isa`'s instructions (of
    `ISAS`) on vectors of its width."""

    def __init__(
        self,
        expansions: dict[type[Operation], Expansion] = APPROXIMATIONS,
        isa: str | None = None,
    ) -> None:
        self.expansions = expansions
        self.isa = isa

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        expand = self.expansions.get(type(op))
        if expand is None:
            return
        t = op.results[0].type
        if not isinstance(get_element_type_or_self(t), Float32Type):
            return
        isa = None
        if isinstance(t, VectorType) and self.isa is not None:
            vector_math = ISAS[self.isa]
            if t.get_shape() == (vector_math.lanes,):
                isa = self.isa
                expand = vector_math.expansions.get(type(op), expand)
        rewriter.replace(op, [], [expand(Builder(rewriter, t, isa), op.operands[0])])


@dataclass(frozen=True)
class ApproximateMathPass(ModulePass):
    """Expands f32 `exp`, `log`, `erf`, `tanh` into polynomials (see the
    module docstring), with `isa`'s instructions (`math_isa`) if given."""

    name = "approximate-math"

    isa: str | None = None

    def __post_init__(self) -> None:
        if self.isa is not None and self.isa not in ISAS:
            raise HeteroError(
                f"approximate-math: no ISA '{self.isa}' (known: {', '.join(ISAS)})"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # The ops to expand, found in one sweep: a walker would offer the
        # pattern every op of the module and every op an expansion makes
        # (none of which it expands).
        pattern = ApproximateF32(isa=self.isa)
        for inner in nested_ops(op):
            if type(inner) in pattern.expansions:
                pattern.match_and_rewrite(inner, PatternRewriter(inner))
