"""The TIR interpreter: small programs run on NumPy buffers, checked against NumPy."""

import math

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import arith, builtin, memref, scf
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import IndexType, ModuleOp, i32
from xdsl.ir import Block, Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import InterpretationError

from hetero.dialects.target import Target, TargetAttr
from hetero.dialects.tir import TIR, AllocOp, ForKind, ForOp, PrimFuncOp, scoped_memref
from hetero.interpreter.tir import run_prim_func

RNG = np.random.default_rng(0)


def parse(text: str) -> ModuleOp:
    ctx = Context()
    for dialect in (
        builtin.Builtin,
        arith.Arith,
        xmath.Math,
        memref.MemRef,
        scf.Scf,
        Target,
        TIR,
    ):
        ctx.load_dialect(dialect)
    return Parser(ctx, text).parse_module()


def test_vector_add_with_a_parallel_loop():
    module = parse("""
    tir.prim_func @vadd(%a: memref<16xf32>, %b: memref<16xf32>, %c: memref<16xf32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      tir.for %i = %c0 to %c16 step %c1 parallel {
        %x = memref.load %a[%i] : memref<16xf32>
        %y = memref.load %b[%i] : memref<16xf32>
        %z = arith.addf %x, %y : f32
        memref.store %z, %c[%i] : memref<16xf32>
      }
    }
    """)
    a, b = RNG.standard_normal((2, 16), dtype=np.float32)
    c = np.zeros(16, np.float32)
    assert run_prim_func(module, "vadd", a, b, c) == ()
    np.testing.assert_array_equal(c, a + b)


MATMUL = """
tir.prim_func @matmul(%a: memref<4x5xf32>, %b: memref<5x3xf32>, %c: memref<4x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  tir.for %i = %c0 to %c4 step %c1 {
    tir.for %j = %c0 to %c3 step %c1 vectorized {
      %acc = tir.alloc : memref<1xf32, "local">
      memref.store %zero, %acc[%c0] : memref<1xf32, "local">
      tir.for %k = %c0 to %c5 step %c1 unrolled {
        %x = memref.load %a[%i, %k] : memref<4x5xf32>
        %y = memref.load %b[%k, %j] : memref<5x3xf32>
        %p = arith.mulf %x, %y : f32
        %s = memref.load %acc[%c0] : memref<1xf32, "local">
        %t = arith.addf %s, %p : f32
        memref.store %t, %acc[%c0] : memref<1xf32, "local">
      }
      %r = memref.load %acc[%c0] : memref<1xf32, "local">
      memref.store %r, %c[%i, %j] : memref<4x3xf32>
    }
  }
}
"""


def test_matmul_with_a_local_accumulator():
    a = RNG.standard_normal((4, 5), dtype=np.float32)
    b = RNG.standard_normal((5, 3), dtype=np.float32)
    c = np.full((4, 3), np.nan, np.float32)
    run_prim_func(parse(MATMUL), "matmul", a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5)


def test_calls_of_private_subroutines_in_statement_and_expression_position():
    module = parse("""
    tir.prim_func private @square(%x: f32) -> f32 {
      %y = arith.mulf %x, %x : f32
      tir.return %y : f32
    }
    tir.prim_func private @scale(%buf: memref<6xf32>, %f: f32) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c6 = arith.constant 6 : index
      tir.for %i = %c0 to %c6 step %c1 {
        %x = memref.load %buf[%i] : memref<6xf32>
        %y = arith.mulf %x, %f : f32
        memref.store %y, %buf[%i] : memref<6xf32>
      }
    }
    tir.prim_func @main(%buf: memref<6xf32>, %f: f32) -> f32 {
      %f2 = tir.call @square(%f) : (f32) -> f32
      tir.call @scale(%buf, %f2) : (memref<6xf32>, f32) -> ()
      tir.return %f2 : f32
    }
    """)
    buf = np.arange(6, dtype=np.float32)
    expected = buf * np.float32(9.0)
    assert run_prim_func(module, "main", buf, 3) == (9.0,)
    np.testing.assert_array_equal(buf, expected)


def test_a_target_region_runs_its_body_and_a_cpu_kernel_returns_its_error_code():
    module = parse("""
    tir.prim_func private @kernel(%a: memref<8xi32>, %n: i32) -> i32 target #target.target<"llvm"> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      tir.for %i = %c0 to %c8 step %c1 parallel {
        %x = memref.load %a[%i] : memref<8xi32>
        %y = arith.addi %x, %n : i32
        memref.store %y, %a[%i] : memref<8xi32>
      }
      %ok = arith.constant 0 : i32
      tir.return %ok : i32
    }
    tir.prim_func @main(%a: memref<8xi32>, %n: i32) -> i32 target #target.target<"cuda", host = #target.target<"llvm">> {
      tir.target_region #target.target<"cuda"> {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %c8 = arith.constant 8 : index
        tir.for %i = %c0 to %c8 step %c1 thread_binding "threadIdx.x" {
          %x = memref.load %a[%i] : memref<8xi32>
          %y = arith.muli %x, %x : i32
          memref.store %y, %a[%i] : memref<8xi32>
        }
      }
      %rc = tir.call @kernel(%a, %n) : (memref<8xi32>, i32) -> i32
      tir.return %rc : i32
    }
    """)
    a = RNG.integers(-50, 50, 8, dtype=np.int32)
    expected = a * a + 7
    assert run_prim_func(module, "main", a, np.int32(7)) == (0,)
    np.testing.assert_array_equal(a, expected)


THREADED = """
tir.prim_func private @relu_kernel(%x: memref<128xf32>, %y: memref<128xf32>) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  tir.for %bx = %c0 to %c4 step %c1 thread_binding "blockIdx.x" {
    tir.for %tx = %c0 to %c32 step %c1 thread_binding "threadIdx.x" {
      %base = arith.muli %bx, %c32 : index
      %i = arith.addi %base, %tx : index
      %v = memref.load %x[%i] : memref<128xf32>
      %pos = arith.cmpf ogt, %v, %zero : f32
      %r = scf.if %pos -> (f32) {
        scf.yield %v : f32
      } else {
        scf.yield %zero : f32
      }
      memref.store %r, %y[%i] : memref<128xf32>
    }
  }
}
tir.prim_func @main(%x: memref<128xf32>, %y: memref<128xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  tir.launch @relu_kernel(%x, %y) grid(%c4) block(%c32) : (memref<128xf32>, memref<128xf32>)
}
"""


@pytest.mark.parametrize("entry", ["relu_kernel", "main"])
def test_a_thread_bound_loop_nest_directly_and_through_a_launch(entry: str):
    x = RNG.standard_normal(128, dtype=np.float32)
    y = np.full(128, np.nan, np.float32)
    run_prim_func(parse(THREADED), entry, x, y)
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_shared_buffers_with_dynamic_size_and_scalar_results():
    module = parse("""
    tir.prim_func @reverse_sum(%a: memref<?xf64>, %out: memref<?xf64>, %n: index) -> f64 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %last = arith.subi %n, %c1 : index
      %tmp = tir.alloc(%n) : memref<?xf64, "shared">
      tir.for %i = %c0 to %n step %c1 {
        %v = memref.load %a[%i] : memref<?xf64>
        %j = arith.subi %last, %i : index
        memref.store %v, %tmp[%j] : memref<?xf64, "shared">
      }
      %zero = arith.constant 0.0 : f64
      %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
        %v = memref.load %tmp[%i] : memref<?xf64, "shared">
        memref.store %v, %out[%i] : memref<?xf64>
        %next = arith.addf %acc, %v : f64
        scf.yield %next : f64
      }
      tir.return %sum : f64
    }
    """)
    a = RNG.standard_normal(11)
    out = np.zeros(11)
    (total,) = run_prim_func(module, "reverse_sum", a, out, 11)
    np.testing.assert_array_equal(out, a[::-1])
    assert total == pytest.approx(a.sum())


def test_packed_and_extern_calls_run_the_given_python_functions():
    module = parse("""
    tir.prim_func @main(%a: memref<2x3xf32>, %x: f32) -> (f32, i32) {
      %e = tir.call_extern "expf"(%x) : (f32) -> f32
      %rc = tir.call_packed "fill"(%a, %e) : (memref<2x3xf32>, f32) -> i32
      tir.call_packed "log"(%rc) : (i32) -> ()
      tir.return %e, %rc : f32, i32
    }
    """)
    seen: list[int] = []

    def fill(buf: np.ndarray, value: float) -> int:
        buf[...] = value
        return 42

    functions = {"expf": math.exp, "fill": fill, "log": seen.append}
    a = np.zeros((2, 3), np.float32)
    e, rc = run_prim_func(module, "main", a, 0.5, functions=functions)
    assert (e, rc, seen) == (pytest.approx(math.exp(0.5)), 42, [42])
    np.testing.assert_allclose(a, np.full((2, 3), math.exp(0.5), np.float32))


def before_terminator(block: Block, ops: list[Operation]) -> None:
    """Constructors end bodies with their (implicit) terminator; add ops before it."""
    assert block.last_op is not None
    block.insert_ops_before(ops, block.last_op)


def test_functions_built_with_the_python_api_run():
    """`for i in parallel(n): out[i] = i`, built with the op constructors."""
    func = PrimFuncOp("iota", ([scoped_memref(i32, [5]), IndexType()], []))
    out, n = func.args
    c0 = arith.ConstantOp.from_int_and_width(0, IndexType())
    c1 = arith.ConstantOp.from_int_and_width(1, IndexType())
    loop = ForOp(c0, n, c1, kind=ForKind.PARALLEL)
    cast = arith.IndexCastOp(loop.induction_var, i32)
    before_terminator(
        loop.body.block, [cast, memref.StoreOp.get(cast, out, [loop.induction_var])]
    )
    before_terminator(func.body.block, [c0, c1, loop])
    module = ModuleOp([func])
    buf = np.full(5, -1, np.int32)
    run_prim_func(module, "iota", buf, 4)
    np.testing.assert_array_equal(buf, [0, 1, 2, 3, -1])
    assert AllocOp(scoped_memref(i32, [2], "local")).scope == "local"
    assert (
        TargetAttr("llvm")
        == PrimFuncOp("f", ([], []), target=TargetAttr("llvm")).target
    )


def test_bad_arguments_are_reported_before_running():
    module = parse(MATMUL)
    a, b, c = (
        np.zeros((4, 5), np.float32),
        np.zeros((5, 3), np.float32),
        np.zeros((4, 3)),
    )
    with pytest.raises(
        TypeError, match=r"argument #2 of @matmul: expected a float32 array"
    ):
        run_prim_func(module, "matmul", a, b, c)
    with pytest.raises(TypeError, match="@matmul takes 3 argument"):
        run_prim_func(module, "matmul", a, b)
    with pytest.raises(ValueError, match="must be C-contiguous"):
        run_prim_func(
            module, "matmul", a, np.zeros((3, 5), np.float32).T, c.astype(np.float32)
        )
    with pytest.raises(ValueError, match="no tir.prim_func named @nope"):
        run_prim_func(module, "nope")


def test_a_missing_python_function_is_an_interpretation_error():
    module = parse("""
    tir.prim_func @main(%x: f32) -> f32 {
      %e = tir.call_extern "expf"(%x) : (f32) -> f32
      tir.return %e : f32
    }
    """)
    with pytest.raises(
        InterpretationError, match='tir.call_extern "expf": no Python implementation'
    ):
        run_prim_func(module, "main", 1.0)
