"""CPU `tir` end to end: convert-tir-to-scf → lower-to-llvm → native code.

Each program runs natively (`compile_cpu`) and in the TIR interpreter
(`run_prim_func`), and both are compared with NumPy.  Sizes are odd on
purpose, so vectorized loops have a scalar remainder.
"""

import math
import re

import isas
import llvmlite.binding as llvm
import numpy as np
import pytest

from hetero.context import parse_module
from hetero.interpreter.tir import run_prim_func
from hetero.lowering.cpu_codegen import compile_cpu
from hetero.utils.diagnostics import HeteroError

RNG = np.random.default_rng(5)
EXTERN = {"expf": math.exp}


def both(text: str, name: str, *args, functions=EXTERN):
    """Run @name natively and interpreted on copies of `args`; return both arg lists."""
    native = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    interpreted = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    result = compile_cpu(parse_module(text)).function(name)(*native)
    expected = run_prim_func(
        parse_module(text), name, *interpreted, functions=functions
    )
    assert (result,) == expected or (result is None and expected == ())
    return native, interpreted


def check(arrays, expected, rtol=1e-5):
    for got in arrays:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-6)


VADD = """
tir.prim_func @vadd(%a: memref<{n}xf32>, %b: memref<{n}xf32>, %c: memref<{n}xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {n} : index
  tir.for %i = %c0 to %n step %c1 vectorized {{
    %x = memref.load %a[%i] : memref<{n}xf32>
    %y = memref.load %b[%i] : memref<{n}xf32>
    %z = arith.addf %x, %y : f32
    memref.store %z, %c[%i] : memref<{n}xf32>
  }}
}}
"""


@pytest.mark.parametrize("n", [1, 8, 19, 64])
def test_vector_add(n):
    a, b = (RNG.standard_normal(n).astype(np.float32) for _ in "ab")
    native, interpreted = both(VADD.format(n=n), "vadd", a, b, np.zeros(n, np.float32))
    check([native[2], interpreted[2]], a + b)


ACTIVATIONS = """
tir.prim_func @act(%x: memref<?xf32>, %e: memref<?xf32>, %t: memref<?xf32>, %s: f32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tir.for %i = %c0 to %n step %c1 vectorized {
    %v = memref.load %x[%i] : memref<?xf32>
    %w = arith.mulf %v, %s : f32
    %ev = math.exp %w : f32
    %tv = TANH %w : f32
    memref.store %ev, %e[%i] : memref<?xf32>
    memref.store %tv, %t[%i] : memref<?xf32>
  }
  tir.for %i = %c0 to %n step %c1 {
    %v = memref.load %e[%i] : memref<?xf32>
    %l = tir.call_extern "expf"(%v) : (f32) -> f32
    %d = arith.mulf %l, %v : f32
    memref.store %d, %e[%i] : memref<?xf32>
  }
}
"""


@pytest.mark.parametrize("n", [0, 5, 37])
def test_exp_tanh_dynamic_sizes(n):
    x = RNG.uniform(-2, 2, n).astype(np.float32)
    zeros = np.zeros(n, np.float32)
    ex = np.exp(np.float32(1.5) * x)
    # The interpreter has no math.tanh: compared with it, the program has exp there.
    native, interpreted = both(
        ACTIVATIONS.replace("TANH", "math.exp"), "act", x, zeros, zeros, 1.5, n
    )
    check([native[1], interpreted[1]], np.exp(ex) * ex)
    check([native[2], interpreted[2]], ex)
    native = [x, zeros.copy(), zeros.copy(), 1.5, n]
    compile_cpu(parse_module(ACTIVATIONS.replace("TANH", "math.tanh"))).function("act")(
        *native
    )
    check([native[2]], np.tanh(np.float32(1.5) * x))


MATMUL = """
tir.prim_func @matmul(%a: memref<?x7xf32>, %b: memref<7x21xf32>, %c: memref<?x21xf32>, %m: index)
    target #target.target<"llvm", {num_threads = 2 : i64}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = arith.constant 7 : index
  %n = arith.constant 21 : index
  %zero = arith.constant 0.0 : f32
  tir.for %i = %c0 to %m step %c1 parallel {
    %acc = tir.alloc : memref<21xf32, "local">
    tir.for %j = %c0 to %n step %c1 vectorized {
      memref.store %zero, %acc[%j] : memref<21xf32, "local">
    }
    tir.for %p = %c0 to %k step %c1 {
      %aip = memref.load %a[%i, %p] : memref<?x7xf32>
      tir.for %j = %c0 to %n step %c1 vectorized {
        %bpj = memref.load %b[%p, %j] : memref<7x21xf32>
        %old = memref.load %acc[%j] : memref<21xf32, "local">
        %prod = arith.mulf %aip, %bpj : f32
        %new = arith.addf %old, %prod : f32
        memref.store %new, %acc[%j] : memref<21xf32, "local">
      }
    }
    tir.for %j = %c0 to %n step %c1 vectorized {
      %v = memref.load %acc[%j] : memref<21xf32, "local">
      memref.store %v, %c[%i, %j] : memref<?x21xf32>
    }
  }
}
"""


def test_parallel_vectorized_matmul():
    a = RNG.standard_normal((13, 7)).astype(np.float32)
    b = RNG.standard_normal((7, 21)).astype(np.float32)
    native, interpreted = both(
        MATMUL, "matmul", a, b, np.zeros((13, 21), np.float32), 13
    )
    check([native[2], interpreted[2]], a @ b, rtol=1e-4)


REDUCE = """
tir.prim_func @total(%x: memref<?xf64>, %n: index, %out: memref<1xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %acc = tir.alloc : memref<1xf64, "local">
  %zero = arith.constant 0.0 : f64
  memref.store %zero, %acc[%c0] : memref<1xf64, "local">
  tir.for %i = %c0 to %n step %c1 vectorized {
    %v = memref.load %x[%i] : memref<?xf64>
    %s = memref.load %acc[%c0] : memref<1xf64, "local">
    %t = arith.addf %s, %v : f64
    memref.store %t, %acc[%c0] : memref<1xf64, "local">
  }
  %r = memref.load %acc[%c0] : memref<1xf64, "local">
  memref.store %r, %out[%c0] : memref<1xf64>
}
"""


@pytest.mark.parametrize("n", [0, 1, 100])
def test_reduction_falls_back_to_a_scalar_loop(n):
    x = RNG.standard_normal(n)
    native, interpreted = both(REDUCE, "total", x, n, np.zeros(1))
    check([native[2], interpreted[2]], [x.sum()], rtol=1e-12)


SUBROUTINE = """
tir.prim_func private @clamp(%x: f32, %lo: f32, %hi: f32) -> f32 {
  %a = arith.maximumf %x, %lo : f32
  %b = arith.minimumf %a, %hi : f32
  tir.return %b : f32
}
tir.prim_func private @scale(%buf: memref<?xf32>, %n: index, %f: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %lo = arith.constant -1.0 : f32
  %hi = arith.constant 1.0 : f32
  tir.for %i = %c0 to %n step %c1 {
    %v = memref.load %buf[%i] : memref<?xf32>
    %w = arith.mulf %v, %f : f32
    %y = tir.call @clamp(%w, %lo, %hi) : (f32, f32, f32) -> f32
    memref.store %y, %buf[%i] : memref<?xf32>
  }
}
tir.prim_func @main(%x: memref<?xf32>, %y: memref<?xf32>, %n: index, %f: f32) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %tmp = tir.alloc(%n) : memref<?xf32>
  tir.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf32>
    memref.store %v, %tmp[%i] : memref<?xf32>
  }
  tir.call @scale(%tmp, %n, %f) : (memref<?xf32>, index, f32) -> ()
  tir.for %i = %c0 to %n step %c1 {
    %v = memref.load %tmp[%i] : memref<?xf32>
    memref.store %v, %y[%i] : memref<?xf32>
  }
  tir.for %u = %c0 to %c4 step %c1 unrolled {
    %v = memref.load %y[%u] : memref<?xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %y[%u] : memref<?xf32>
  }
  %rc = arith.constant 0 : i32
  tir.return %rc : i32
}
"""


def test_private_subroutines_and_heap_buffers():
    x = RNG.standard_normal(23).astype(np.float32)
    native, interpreted = both(
        SUBROUTINE, "main", x, np.zeros(23, np.float32), 23, 0.75
    )
    expected = np.clip(x * np.float32(0.75), -1, 1)
    expected[:4] *= 2
    check([native[1], interpreted[1]], expected)
    module = compile_cpu(parse_module(SUBROUTINE))
    with pytest.raises(ValueError, match="private"):
        module.function("scale")


def _targeted(text: str, options: str) -> str:
    """`text`'s first function with a target of these `llvm` `options`."""
    targeted = text.replace(
        ") {\n", f') target #target.target<"llvm", {{{options}}}> {{\n', 1
    )
    assert targeted != text
    return targeted


@pytest.mark.parametrize("isa, register", [("avx512", "zmm"), ("avx2", "ymm")])
def test_vectorized_loop_uses_vector_registers(isa: str, register: str):
    # At O0 LLVM does not vectorize: vector registers come from convert-tir-to-scf.
    text = _targeted(VADD.format(n=64), f"opt_level = 0 : i64, {isas.options(isa)}")
    assembly = compile_cpu(parse_module(text)).assembly()
    assert f"%{register}" in assembly


EVERY_OTHER = """
tir.prim_func @halve(%a: memref<64xf32>, %b: memref<32xf32>, %s: f32) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = arith.constant {n} : index
  tir.for %i = %c0 to %n step %c1 vectorized {{
    %j = arith.muli %i, %c2 : index
    %x = memref.load %a[%j] : memref<64xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %b[%i] : memref<32xf32>
  }}
}}
"""


def check_copied(text: str, name: str, *args, copied: slice, taken: slice, scale=1.0):
    """@name(a, b, *args) on a random `a` and a sentinel `b` writes exactly
    `b[copied] = scale * a[taken]`: the elements past the loop keep their
    sentinel, natively and interpreted."""
    a = RNG.standard_normal(64).astype(np.float32)
    sentinel = np.full(32, 7.0, np.float32)
    native, interpreted = both(text, name, a, sentinel, *args)
    expected = sentinel.copy()
    expected[copied] = a[taken] * np.float32(scale)
    for got in (native[1], interpreted[1]):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("n", [3, 13, 16, 19, 29])
def test_vector_remainder_touches_only_its_lanes(n):
    """A remainder that is no power of two (a masked vector with AVX-512, a
    narrower one else) writes exactly its elements; the stride-2 loads take
    every other element."""
    text = EVERY_OTHER.format(n=n)
    check_copied(
        text, "halve", 0.5, copied=slice(n), taken=slice(0, 2 * n, 2), scale=0.5
    )


EVERY_OTHER_DYNAMIC = EVERY_OTHER.replace(
    "%s: f32) {{", "%s: f32, %n: index) {{"
).replace("  %n = arith.constant {n} : index\n", "")


@pytest.mark.parametrize("n", [0, 3, 13, 16, 19, 29, 32])
def test_dynamic_extent_touches_only_its_lanes(n):
    """A run-time extent: vectors masked at run time to the lanes before the
    end (AVX-512), or whole vectors and a scalar loop."""
    assert "%n: index" in EVERY_OTHER_DYNAMIC
    text = EVERY_OTHER_DYNAMIC.format()
    check_copied(
        text, "halve", 0.5, n, copied=slice(n), taken=slice(0, 2 * n, 2), scale=0.5
    )


PADDED_COLUMNS = """
tir.prim_func @columns(%a: memref<64xf32>, %b: memref<32xf32>, %k: index, %n: index) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  tir.for %x = %c1 to %n step %c1 vectorized {
    %t = arith.muli %x, %c2 : index
    %i = arith.subi %t, %c1 : index
    %v = memref.load %a[%i] : memref<64xf32>
    %j = arith.subi %x, %k : index
    memref.store %v, %b[%j] : memref<32xf32>
  }
}
"""


@pytest.mark.parametrize("n", [1, 2, 14, 17, 32])
def test_indices_minus_an_offset(n):
    """`b[x - 1] = a[2x - 1]` for x in [1, n): indices minus a uniform
    offset (a strided convolution's padded columns) vectorize."""
    check_copied(
        PADDED_COLUMNS,
        "columns",
        1,
        n,
        copied=slice(n - 1),
        taken=slice(1, 2 * n - 1, 2),
    )


def test_masked_remainder_on_avx512():
    """With AVX-512 a 13-lane remainder is one masked 16-lane access, and so
    is a remainder of run-time extent."""
    for text in (EVERY_OTHER.format(n=29), EVERY_OTHER_DYNAMIC.format()):
        assembly = compile_cpu(
            parse_module(_targeted(text, isas.options("avx512")))
        ).assembly()
        assert re.search(r"vmovups\s+%zmm\d+, .*\{%k\d\}", assembly)


THREAD_IDS = """
tir.prim_func @who(%ids: memref<?xi64>) target #target.target<"llvm", {{num_threads = {threads} : i64}}> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %ids, %c0 : memref<?xi64>
  tir.for %i = %c0 to %n step %c1 parallel {{
    %me = tir.call_extern "pthread_self"() : () -> i64
    memref.store %me, %ids[%i] : memref<?xi64>
  }}
}}
"""


@pytest.mark.parametrize(
    "threads, n, distinct", [(2, 16, 2), (2, 1, 1), (1, 9, 1), (3, 7, 3)]
)
def test_parallel_loop_splits_work_over_threads(threads, n, distinct):
    ids = np.zeros(n, np.int64)
    compile_cpu(parse_module(THREAD_IDS.format(threads=threads))).function("who")(ids)
    # The threads take chunks from a shared counter: every iteration ran, on
    # at most `distinct` threads (a thread that starts late may find none left).
    assert np.all(ids != 0)
    assert 1 <= len(set(ids.tolist())) <= distinct


def test_gpu_functions_are_rejected():
    text = """
tir.prim_func @k(%a: memref<32xf32>) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tir.for %t = %c0 to %c32 step %c1 thread_binding "threadIdx.x" {
  }
}"""
    with pytest.raises(HeteroError, match="non-CPU target"):
        compile_cpu(parse_module(text))


def test_functions_that_disagree_on_codegen_options_are_rejected():
    """One module is compiled with one `mcpu`: two functions that ask for
    different ones are an error naming the second."""
    text = """
tir.prim_func @a(%x: memref<4xf32>) target #target.target<"llvm", {mcpu = "x86-64"}> {
}
tir.prim_func @b(%x: memref<4xf32>) target #target.target<"llvm", {mcpu = "znver4"}> {
}"""
    with pytest.raises(
        HeteroError, match=r"@b wants mcpu = 'znver4', another function 'x86-64'"
    ):
        compile_cpu(parse_module(text))


CALLED = """
tir.prim_func @kernel(%a: memref<64xf32>) ATTRS {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  tir.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = arith.addf %x, %one : f32
    memref.store %y, %a[%i] : memref<64xf32>
  }
}
tir.prim_func @host(%a: memref<64xf32>) {
  tir.call @kernel(%a) : (memref<64xf32>) -> ()
  tir.call @kernel(%a) : (memref<64xf32>) -> ()
}
"""


@pytest.mark.parametrize("no_inline", [True, False])
def test_a_no_inline_kernel_stays_a_call(no_inline):
    """`no_inline` on a `tir.prim_func` (what `lower-aot-main` puts on the
    kernels the host calls) reaches LLVM: the optimised host still calls the
    kernel, where without it LLVM copies the kernel's loop into the host."""
    from xdsl.context import Context

    from hetero.lowering.convert_tir_to_scf import ConvertTirToScfPass
    from hetero.lowering.llvm_codegen import CpuTarget
    from hetero.lowering.pipeline import lower_to_llvm

    text = CALLED.replace("ATTRS", "attributes {no_inline}" if no_inline else "")
    module = parse_module(text)
    ConvertTirToScfPass().apply(Context(), module)
    code = CpuTarget().compile(lower_to_llvm(module))
    optimised = str(llvm.parse_bitcode(code.bitcode))
    host = optimised[optimised.index("define void @host(") :]
    assert ("call void @kernel(" in host) == no_inline
    a = np.zeros(64, np.float32)
    compile_cpu(parse_module(text)).function("host")(a)
    np.testing.assert_array_equal(a, 2)
