"""End to end on the CPU: func/scf/arith/math/memref/vector text → lower_to_llvm → CpuModule.

Every result is compared with NumPy (or Python) computing the same thing
independently; sizes are odd on purpose (tails, single elements, empties).
"""

import math
import re
from dataclasses import replace

import isas
import llvmlite.binding as llvm
import numpy as np
import pytest

from hetero.context import parse_module
from hetero.lowering.llvm_codegen import compile_llvm
from hetero.lowering.pipeline import lower_to_llvm
from hetero.runtime.cpu import CpuModule, ObjectCode, codegen_flags
from hetero.utils.diagnostics import HeteroError

RNG = np.random.default_rng(20261122)


def compile_cpu(text: str, **options) -> CpuModule:
    return compile_llvm(lower_to_llvm(parse_module(text)), **options)


SAXPY = """
func.func @saxpy(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %xi = memref.load %x[%i] : memref<?xf32>
    %yi = memref.load %y[%i] : memref<?xf32>
    %axi = arith.mulf %a, %xi : f32
    %r = arith.addf %axi, %yi : f32
    memref.store %r, %y[%i] : memref<?xf32>
  }
  return
}
"""


@pytest.fixture(scope="module")
def saxpy():
    return compile_cpu(SAXPY).function("saxpy")


@pytest.mark.parametrize("n", [0, 1, 7, 33, 1000])
def test_saxpy_dynamic_sizes(saxpy, n):
    x = RNG.standard_normal(n).astype(np.float32)
    y = RNG.standard_normal(n).astype(np.float32)
    expected = np.float32(2.5) * x + y
    assert saxpy(2.5, x, y) is None
    np.testing.assert_allclose(y, expected, rtol=1e-6)


MATMUL = """
func.func @matmul(%a: memref<{m}x{k}xf32>, %b: memref<{k}x{n}xf32>, %c: memref<{m}x{n}xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<{m}x{k}xf32>
  %k = memref.dim %a, %c1 : memref<{m}x{k}xf32>
  %n = memref.dim %b, %c1 : memref<{k}x{n}xf32>
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %m step %c1 {{
    scf.for %j = %c0 to %n step %c1 {{
      %sum = scf.for %p = %c0 to %k step %c1 iter_args(%acc = %zero) -> (f32) {{
        %x = memref.load %a[%i, %p] : memref<{m}x{k}xf32>
        %y = memref.load %b[%p, %j] : memref<{k}x{n}xf32>
        %xy = arith.mulf %x, %y : f32
        %acc2 = arith.addf %acc, %xy : f32
        scf.yield %acc2 : f32
      }}
      memref.store %sum, %c[%i, %j] : memref<{m}x{n}xf32>
    }}
  }}
  return
}}
"""


def test_matmul_static_shapes():
    matmul = compile_cpu(MATMUL.format(m=5, k=7, n=3)).function("matmul")
    a = RNG.standard_normal((5, 7)).astype(np.float32)
    b = RNG.standard_normal((7, 3)).astype(np.float32)
    c = np.full((5, 3), np.nan, dtype=np.float32)
    matmul(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def dynamic_matmul():
    return compile_cpu(MATMUL.format(m="?", k="?", n="?")).function("matmul")


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (3, 5, 2), (17, 9, 13), (4, 0, 3)])
def test_matmul_dynamic_shapes(dynamic_matmul, m, k, n):
    matmul = dynamic_matmul
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, dtype=np.float32)
    matmul(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_partly_dynamic_shape_checks_the_static_dimension():
    kernel = compile_cpu("""
func.func @row_sums(%a: memref<?x4xf64>, %out: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %a, %c0 : memref<?x4xf64>
  %zero = arith.constant 0.0 : f64
  scf.for %i = %c0 to %n step %c1 {
    %s = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f64) {
      %x = memref.load %a[%i, %j] : memref<?x4xf64>
      %acc2 = arith.addf %acc, %x : f64
      scf.yield %acc2 : f64
    }
    memref.store %s, %out[%i] : memref<?xf64>
  }
  return
}
""").function("row_sums")
    a = RNG.standard_normal((11, 4))
    out = np.zeros(11)
    kernel(a, out)
    np.testing.assert_allclose(out, a.sum(axis=1), rtol=1e-12)
    with pytest.raises(ValueError, match=r"size 4 in dimension 1, got shape \(11, 5\)"):
        kernel(np.zeros((11, 5)), out)


def test_reduction_returns_a_scalar():
    module = compile_cpu("""
func.func @total(%x: memref<?xf64>) -> (f64, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %zero = arith.constant 0.0 : f64
  %low = arith.constant -1.0e300 : f64
  %s, %m = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %mx = %low) -> (f64, f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %acc2 = arith.addf %acc, %v : f64
    %mx2 = arith.maximumf %mx, %v : f64
    scf.yield %acc2, %mx2 : f64, f64
  }
  return %s, %m : f64, f64
}
""")
    x = RNG.standard_normal(101)
    total, largest = module.function("total")(x)
    assert total == pytest.approx(float(np.sum(x)), rel=1e-12)
    assert largest == float(np.max(x))


UNARY = """
func.func @apply(%x: memref<?x{t}>, %y: memref<?x{t}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x{t}>
  scf.for %i = %c0 to %n step %c1 {{
    %v = memref.load %x[%i] : memref<?x{t}>
    %r = math.{op} %v : {t}
    memref.store %r, %y[%i] : memref<?x{t}>
  }}
  return
}}
"""

SPECIAL = [
    0.0,
    -0.0,
    1e-30,
    -1e-8,
    3e-4,
    0.3,
    -0.7,
    1.0,
    5.0,
    -8.9,
    9.5,
    20.0,
    -44.0,
    50.0,
    1e4,
    -1e30,
]


@pytest.mark.parametrize(
    "op,reference,dtype,rtol",
    [
        ("exp", np.exp, np.float32, 2e-6),
        ("tanh", np.tanh, np.float32, 2e-6),
        ("tanh", np.tanh, np.float64, 1e-14),
        ("expm1", np.expm1, np.float64, 1e-14),
        ("log1p", np.log1p, np.float64, 1e-14),
        ("erf", np.vectorize(math.erf), np.float64, 1e-15),
    ],
)
def test_math_against_numpy(op, reference, dtype, rtol):
    t = {np.float32: "f32", np.float64: "f64"}[dtype]
    apply = compile_cpu(UNARY.format(op=op, t=t)).function("apply")
    values = SPECIAL if op != "log1p" else [abs(v) for v in SPECIAL] + [-0.5, -1e-9]
    if op == "exp":
        values = [v for v in values if abs(v) < 80]
    x = np.array(values + list(RNG.uniform(-6, 6, 37)), dtype=dtype)
    y = np.empty_like(x)
    apply(x, y)
    with np.errstate(all="ignore"):
        expected = reference(x).astype(dtype)
    np.testing.assert_allclose(y, expected, rtol=rtol, atol=0)
    assert np.array_equal(np.signbit(y), np.signbit(expected))  # tanh(-0) is -0


def test_tanh_of_nan_and_infinities():
    apply = compile_cpu(UNARY.format(op="tanh", t="f32")).function("apply")
    x = np.array([np.nan, np.inf, -np.inf], dtype=np.float32)
    y = np.empty_like(x)
    apply(x, y)
    assert np.isnan(y[0]) and y[1] == 1.0 and y[2] == -1.0


def test_integer_ops():
    module = compile_cpu("""
func.func @ints(%a: i32, %b: i32) -> (i32, i32, i32, i32, i32, i32, i32, i32) {
  %fd = arith.floordivsi %a, %b : i32
  %cd = arith.ceildivsi %a, %b : i32
  %q = arith.divsi %a, %b : i32
  %r = arith.remsi %a, %b : i32
  %mx = arith.maxsi %a, %b : i32
  %mn = arith.minui %a, %b : i32
  %sh = arith.shrsi %a, %b : i32
  %x = arith.xori %a, %b : i32
  return %fd, %cd, %q, %r, %mx, %mn, %sh, %x : i32, i32, i32, i32, i32, i32, i32, i32
}
func.func @wide(%a: i64, %n: index) -> (i64, index, i1) {
  %c3 = arith.constant 3 : index
  %m = arith.muli %n, %c3 : index
  %mi = arith.index_cast %m : index to i64
  %s = arith.addi %a, %mi : i64
  %lt = arith.cmpi slt, %a, %mi : i64
  %i32 = arith.trunci %s : i64 to i32
  %back = arith.extsi %i32 : i32 to i64
  return %back, %m, %lt : i64, index, i1
}
""")
    ints = module.function("ints")
    for a, b in [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (-6, 3), (0, 5), (1, 3)]:
        fd, cd, q, r, mx, mn, sh, x = ints(a, b)
        assert fd == a // b
        assert cd == -((-a) // b)
        assert q == int(a / b) and r == a - q * b
        assert mx == max(a, b)
        assert mn == min(a % 2**32, b % 2**32) - (
            2**32 if min(a % 2**32, b % 2**32) >= 2**31 else 0
        )
        assert sh == a >> (b % 32)
        assert x == a ^ b
    assert module.function("wide")(10, 4) == (22, 12, True)
    assert module.function("wide")(2**31 + 5, 0) == (-(2**31) + 5, 0, False)


def test_calls_between_functions_and_several_results():
    module = compile_cpu("""
func.func private @dot(%x: memref<?xf32>, %y: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %a = memref.load %x[%i] : memref<?xf32>
    %b = memref.load %y[%i] : memref<?xf32>
    %ab = arith.mulf %a, %b : f32
    %acc2 = arith.addf %acc, %ab : f32
    scf.yield %acc2 : f32
  }
  return %s : f32
}
func.func @norms(%x: memref<?xf32>, %y: memref<?xf32>) -> (f32, f32, i32) {
  %xx = func.call @dot(%x, %x) : (memref<?xf32>, memref<?xf32>) -> f32
  %xy = func.call @dot(%x, %y) : (memref<?xf32>, memref<?xf32>) -> f32
  %nx = math.sqrt %xx : f32
  %sign = arith.constant -1 : i32
  return %nx, %xy, %sign : f32, f32, i32
}
""")
    x = RNG.standard_normal(29).astype(np.float32)
    y = RNG.standard_normal(29).astype(np.float32)
    nx, xy, sign = module.function("norms")(x, y)
    assert nx == pytest.approx(float(np.linalg.norm(x)), rel=1e-5)
    assert xy == pytest.approx(float(np.dot(x, y)), rel=1e-4, abs=1e-5)
    assert sign == -1
    with pytest.raises(ValueError, match="@dot has internal linkage"):
        module.function("dot")


def test_alloc_and_dealloc_of_a_temporary():
    reverse_cumsum = compile_cpu("""
func.func @reverse_cumsum(%x: memref<?xf64>, %y: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  %tmp = memref.alloc(%n) : memref<?xf64>
  %zero = arith.constant 0.0 : f64
  %last = arith.subi %n, %c1 : index
  %total = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %acc2 = arith.addf %acc, %v : f64
    memref.store %acc2, %tmp[%i] : memref<?xf64>
    scf.yield %acc2 : f64
  }
  scf.for %i = %c0 to %n step %c1 {
    %j = arith.subi %last, %i : index
    %v = memref.load %tmp[%j] : memref<?xf64>
    memref.store %v, %y[%i] : memref<?xf64>
  }
  memref.dealloc %tmp : memref<?xf64>
  return
}
""").function("reverse_cumsum")
    for n in (1, 13, 1000):
        x = RNG.standard_normal(n)
        y = np.zeros(n)
        reverse_cumsum(x, y)
        np.testing.assert_allclose(y, np.cumsum(x)[::-1], rtol=1e-12)


VECTOR_SAXPY = """
func.func @saxpy(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>) -> f32 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %w = arith.constant {w} : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %rest = arith.remui %n, %w : index
  %body = arith.subi %n, %rest : index
  %va = vector.broadcast %a : f32 to vector<{w}xf32>
  %zero = arith.constant dense<0.0> : vector<{w}xf32>
  %vsum = scf.for %i = %c0 to %body step %w iter_args(%acc = %zero) -> (vector<{w}xf32>) {{
    %vx = vector.load %x[%i] : memref<?xf32>, vector<{w}xf32>
    %vy = vector.load %y[%i] : memref<?xf32>, vector<{w}xf32>
    %r = vector.fma %va, %vx, %vy : vector<{w}xf32>
    vector.store %r, %y[%i] : memref<?xf32>, vector<{w}xf32>
    %acc2 = arith.addf %acc, %r : vector<{w}xf32>
    scf.yield %acc2 : vector<{w}xf32>
  }}
  %head = vector.reduction <add>, %vsum : vector<{w}xf32> into f32
  %sum = scf.for %i = %body to %n step %c1 iter_args(%acc = %head) -> (f32) {{
    %xi = memref.load %x[%i] : memref<?xf32>
    %yi = memref.load %y[%i] : memref<?xf32>
    %r = math.fma %a, %xi, %yi : f32
    memref.store %r, %y[%i] : memref<?xf32>
    %acc2 = arith.addf %acc, %r : f32
    scf.yield %acc2 : f32
  }}
  return %sum : f32
}}
"""


@pytest.fixture(scope="module")
def vector8_saxpy():
    return compile_cpu(VECTOR_SAXPY.format(w=8)).function("saxpy")


@pytest.mark.parametrize("n", [0, 5, 8, 67])
def test_vector8_loop_with_scalar_tail(vector8_saxpy, n):
    saxpy = vector8_saxpy
    x = RNG.standard_normal(n).astype(np.float32)
    y = RNG.standard_normal(n).astype(np.float32)
    expected = (np.float64(-1.5) * x + y).astype(np.float32)
    total = saxpy(-1.5, x, y)
    np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)
    assert total == pytest.approx(float(expected.sum()), rel=1e-4, abs=1e-4)


@pytest.mark.parametrize("isa, register", [("avx512", "zmm"), ("avx2", "ymm")])
def test_vector16_fma_loop_uses_the_isas_registers(isa: str, register: str):
    """16-lane vectors in one zmm register with AVX-512, two ymm with AVX2;
    the code runs where the host can run it."""
    module = compile_cpu(VECTOR_SAXPY.format(w=16), **isas.ISAS[isa])
    assert f"%{register}" in module.assembly()
    if not isas.runs_here(isa):
        return
    x = np.arange(35, dtype=np.float32)
    y = np.ones(35, dtype=np.float32)
    module.function("saxpy")(2.0, x, y)
    np.testing.assert_array_equal(y, 2 * np.arange(35, dtype=np.float32) + 1)


def test_mcpu_and_mattr_override_the_host():
    module = compile_cpu(
        VECTOR_SAXPY.format(w=16),
        mcpu="x86-64",
        mattr="-avx,-avx2,-avx512f",
        opt_level=2,
    )
    assembly = module.assembly()
    assert "zmm" not in assembly and "ymm" not in assembly and "xmm" in assembly
    x = np.arange(20, dtype=np.float32)
    y = np.zeros(20, dtype=np.float32)
    assert module.function("saxpy")(3.0, x, y) == pytest.approx(3.0 * 190)


def test_text_and_object_outputs():
    module = compile_cpu(SAXPY)
    assert "define void @saxpy(float" in module.llvm_ir()
    assert "saxpy:" in module.assembly()
    assert module.emit_object()[:4] == b"\x7fELF"


def test_wrong_arguments_are_rejected_before_the_call(saxpy):
    x = np.zeros(4, dtype=np.float32)
    cases = [
        ((2.0, x), "takes 3 arguments, got 2"),
        (
            (2.0, x.astype(np.float64), x),
            "argument #1 .* must have dtype float32, got float64",
        ),
        ((2.0, x.reshape(2, 2), x), r"must have rank 1, got shape \(2, 2\)"),
        ((2.0, np.zeros(8, dtype=np.float32)[::2], x), "must be C-contiguous"),
        ((2.0, [0.0] * 4, x), "must be a NumPy array, got list"),
        (("two", x, x), r"argument #0 \(f32\) must be a number, got str"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message):
            saxpy(*args)


def test_integer_arguments_are_range_checked():
    identity = compile_cpu("""
func.func @id8(%a: i8) -> i8 {
  return %a : i8
}
""").function("id8")
    assert identity(-128) == -128 and identity(255) == -1
    with pytest.raises(ValueError, match="256 does not fit in 8 bits"):
        identity(256)
    with pytest.raises(ValueError, match="must be an integer, got float"):
        identity(1.5)


def test_unknown_and_non_llvm_input_are_clear_errors():
    module = compile_cpu(SAXPY)
    with pytest.raises(
        ValueError, match=r"no function @nope in the module \(callable: @saxpy\)"
    ):
        module.function("nope")
    with pytest.raises(HeteroError, match="CpuModule takes llvm-dialect modules"):
        compile_llvm(parse_module(SAXPY))


def test_a_function_python_cannot_pass_compiles_and_says_why_when_called():
    """A function's `Abi` is derived when it is compiled: one whose types
    Python cannot pass compiles all the same, and asking for it says why,
    also after its `FunctionInfo` went through the compile cache's parts."""
    module = compile_cpu("""
func.func @half(%x: f16) -> f16 {
  return %x : f16
}
func.func @same(%x: f32) -> f32 {
  return %x : f32
}
""")
    with pytest.raises(ValueError, match="@half: values of type f16 cannot be passed"):
        module.function("half")
    assert module.function("same")(2.0) == 2.0
    (code,) = module.objects
    assert code.functions["half"].abi is None
    assert ObjectCode.of_parts(code.parts()) == replace(code, timings={})


def test_casts_between_integers_and_floats():
    casts = compile_cpu("""
func.func @casts(%f: f64, %i: i32) -> (i32, i64, f32, f64, i16, i64, f64, i32) {
  %a = arith.fptosi %f : f64 to i32
  %b = arith.fptoui %f : f64 to i64
  %c = arith.sitofp %i : i32 to f32
  %d = arith.uitofp %i : i32 to f64
  %e = arith.trunci %i : i32 to i16
  %g = arith.extui %i : i32 to i64
  %h = arith.extf %c : f32 to f64
  %k = arith.bitcast %c : f32 to i32
  return %a, %b, %c, %d, %e, %g, %h, %k : i32, i64, f32, f64, i16, i64, f64, i32
}
""").function("casts")
    a, b, c, d, e, g, h, k = casts(7.9, -3)
    assert (a, b) == (7, 7)
    assert c == -3.0 and d == 2.0**32 - 3 and h == -3.0
    assert (e, g) == (-3, 2**32 - 3)
    assert k == int(np.float32(-3.0).view(np.int32))


def test_translation_keeps_what_xdsl_drops():
    from hetero.lowering.llvmir import to_llvmlite

    module = parse_module("""
llvm.func internal fastcc @g(%x: f32) -> i1 attributes {no_inline} {
  %c = llvm.fcmp "_true" %x, %x : f32
  llvm.return %c : i1
}
llvm.func internal @h(%x: f32) -> f32 attributes {always_inline} {
  llvm.return %x : f32
}
llvm.func @f(%x: f32) -> i1 {
  %y = llvm.call fastcc @g(%x) : (f32) -> i1
  llvm.return %y : i1
}
""")
    text = str(to_llvmlite(module, triple=llvm.get_process_triple()))
    assert 'define internal fastcc i1 @"g"(float %".1") noinline' in text
    assert 'define internal float @"h"(float %".1") alwaysinline' in text
    assert "fcmp true float" in text
    assert compile_llvm(module).function("f")(1.0) is True


STRIDED_GATHER = """
func.func @gather(%x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %n = memref.dim %y, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %j = arith.muli %i, %c3 : index
    %v = memref.load %x[%j] : memref<?xf32>
    memref.store %v, %y[%i] : memref<?xf32>
  }
  return
}
"""

GATHER_IR = """
define void @gather(ptr %x, ptr %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %j = mul i64 %i, 3
  %px = getelementptr float, ptr %x, i64 %j
  %py = getelementptr float, ptr %y, i64 %i
  %v = load float, ptr %px
  store float %v, ptr %py
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}
"""

POINTER_BUMP = re.compile(r"addq\s+\$12, %r")
"""Loop strength reduction's mark on the gather: x's address in a register of
its own, bumped by 3 floats an iteration (without it: `lea (%i,%i,2)`)."""


def test_code_generation_without_loop_strength_reduction():
    """`CODEGEN_FLAGS`: hetero's machine code keeps `x + 3*i` addressing."""
    module = compile_cpu(STRIDED_GATHER, opt_level=1)  # a scalar loop
    assembly = module.assembly()
    assert re.search(r"lea\w*\s+\((%\w+),\1,2\)", assembly)
    assert not POINTER_BUMP.search(assembly)
    x = np.arange(30, dtype=np.float32)
    y = np.zeros(10, dtype=np.float32)
    module.function("gather")(x, y)
    np.testing.assert_array_equal(y, x[::3])


def test_codegen_flags_leave_llvm_defaults_for_other_users():
    """The options are process-global: after hetero's code generation (and
    outside `codegen_flags`) plain llvmlite code gets LLVM's own pipeline."""
    compile_cpu(STRIDED_GATHER, opt_level=1).assembly()
    machine = llvm.Target.from_default_triple().create_target_machine(opt=3)
    assert POINTER_BUMP.search(machine.emit_assembly(llvm.parse_assembly(GATHER_IR)))
    with codegen_flags():
        inside = machine.emit_assembly(llvm.parse_assembly(GATHER_IR))
    assert not POINTER_BUMP.search(inside)
