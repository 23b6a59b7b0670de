"""`compile_cpu` in several processes (`hetero.lowering.parallel_compile`).

A module compiled in worker processes must compute what NumPy computes and
what the same module compiled in this process computes; its `CpuModule`
must answer as one compiled here does; a worker's diagnostic must come back
as the very error the sequential compile raises.
"""

import gc
import multiprocessing
import os
import time

import numpy as np
import pytest
from test_cpu_runtime import SAXPY
from xdsl.dialects.builtin import IntegerAttr, i1

from hetero.context import parse_module
from hetero.dialects import tir
from hetero.lowering import parallel_compile
from hetero.lowering.cpu_codegen import compile_cpu
from hetero.lowering.llvm_codegen import CpuTarget
from hetero.lowering.parallel_compile import (
    CHECKED_CALL_OPS,
    DYNAMIC_VECTOR_OP_EXTRA,
    FUNCTION_OPS,
    JOBS_VARIABLE,
    PARALLEL_LOOP_OPS,
    VECTOR_OP_EXTRA,
    balance,
    compile_cost,
    restrict,
    run_forked,
    split,
)
from hetero.lowering.pipeline import lower_to_llvm
from hetero.runtime.cpu import CpuModule
from hetero.utils.cpus import available_cpus
from hetero.utils.diagnostics import HeteroError

N = 37

# A private helper that kernels in different chunks call, a parallel loop
# (its launcher is defined in its chunk), a kernel with two results (called
# through a wrapper), and a host function calling kernels of other chunks.
PROGRAM = f"""
tir.prim_func private @relu(%x: f32) -> f32 {{
  %zero = arith.constant 0.0 : f32
  %r = arith.maximumf %x, %zero : f32
  tir.return %r : f32
}}
tir.prim_func @scale(%x: memref<{N}xf32>, %y: memref<{N}xf32>, %f: f32)
    target #target.target<"llvm", {{num_threads = 2 : i64}}> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {N} : index
  tir.for %i = %c0 to %n step %c1 parallel {{
    %v = memref.load %x[%i] : memref<{N}xf32>
    %w = arith.mulf %v, %f : f32
    %r = tir.call @relu(%w) : (f32) -> f32
    memref.store %r, %y[%i] : memref<{N}xf32>
  }}
}}
tir.prim_func @stats(%y: memref<{N}xf32>) -> (f32, i32) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {N} : index
  %total = tir.alloc : memref<1xf32, "local">
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %total[%c0] : memref<1xf32, "local">
  tir.for %i = %c0 to %n step %c1 {{
    %v = memref.load %y[%i] : memref<{N}xf32>
    %sq = arith.mulf %v, %v : f32
    %r = tir.call @relu(%sq) : (f32) -> f32
    %old = memref.load %total[%c0] : memref<1xf32, "local">
    %new = arith.addf %old, %r : f32
    memref.store %new, %total[%c0] : memref<1xf32, "local">
  }}
  %t = memref.load %total[%c0] : memref<1xf32, "local">
  %count = arith.constant {N} : i32
  tir.return %t, %count : f32, i32
}}
tir.prim_func @host(%x: memref<{N}xf32>, %y: memref<{N}xf32>, %f: f32) -> (f32, i32) {{
  tir.call @scale(%x, %y, %f) : (memref<{N}xf32>, memref<{N}xf32>, f32) -> ()
  %t, %k = tir.call @stats(%y) : (memref<{N}xf32>) -> (f32, i32)
  tir.return %t, %k : f32, i32
}}
"""

X = np.random.default_rng(3).standard_normal(N).astype(np.float32)


def run_host(jobs: int):
    """`@host` compiled with `jobs` processes, its results and its output array."""
    module = parse_module(PROGRAM)
    native = compile_cpu(module, jobs=jobs)
    y = np.zeros(N, np.float32)
    return native, module, (native.function("host")(X, y, 1.5), y)


def test_workers_compute_what_numpy_and_one_process_compute():
    _, module, (results, y) = run_host(jobs=3)
    # The workers compiled it: the module here is still `tir`, not lowered.
    assert all(isinstance(f, tir.PrimFuncOp) for f in module.ops)
    expected = np.maximum(X * np.float32(1.5), 0)
    np.testing.assert_allclose(y, expected, rtol=1e-6)
    total, count = results
    assert count == N and total == pytest.approx(float((expected**2).sum()), rel=1e-5)
    _, lowered, (results_1, y_1) = run_host(jobs=1)
    assert not any(isinstance(f, tir.PrimFuncOp) for f in lowered.ops)
    assert results == results_1
    np.testing.assert_array_equal(y, y_1)


def test_a_parallel_compiled_module_answers_as_one():
    native, *_ = run_host(jobs=3)
    one, *_ = run_host(jobs=1)
    y = np.zeros(N, np.float32)
    native.function("scale")(X, y, -2.0)  # each kernel is callable on its own
    np.testing.assert_allclose(y, np.maximum(X * np.float32(-2.0), 0), rtol=1e-6)
    assert native.function("stats")(y) == one.function("stats")(y)
    for name in ("scale", "stats", "host"):
        assert f"{name}:" in native.assembly()
        assert f"@{name}(" in native.llvm_ir()
    assert native.emit_object()[:4] == b"\x7fELF"
    for module in (native, one):
        with pytest.raises(ValueError, match=r"\(callable: @scale, @stats, @host\)"):
            module.function("nope")
        with pytest.raises(ValueError, match="@relu has internal linkage"):
            module.function("relu")


BROKEN = PROGRAM.replace(
    "  %t = memref.load %total[%c0]",
    '  %rc = tir.call_packed "fill"(%y) : (memref<37xf32>) -> i32\n'
    "  %t = memref.load %total[%c0]",
)


def test_a_workers_diagnostic_is_the_error_of_one_process():
    errors = []
    for jobs in (1, 3):
        module = parse_module(BROKEN)
        with pytest.raises(HeteroError) as info:
            compile_cpu(module, jobs=jobs)
        errors.append(info.value)
        # At the op of the module given, raised here: no worker's traceback.
        assert info.value.op is not None
        assert info.value.op.get_toplevel_object() is module
        assert info.value.__cause__ is None and info.value.__context__ is None
    assert "packed call 'fill'" in errors[0].message
    assert str(errors[0]) == str(errors[1])


def test_run_forked_reports_how_each_worker_ended():
    def fails(index: int):
        if index == 1:
            raise HeteroError("bad input")
        return index  # stands for the code of a chunk

    assert run_forked(fails, 2) is None

    def breaks(index: int):
        raise KeyError("a bug")

    with pytest.raises(
        RuntimeError, match="(?s)a compile worker failed.*KeyError: 'a bug'"
    ):
        run_forked(breaks, 2)
    with pytest.raises(RuntimeError, match="exited with code 3 before it answered"):
        run_forked(lambda index: os._exit(3), 1)


def test_run_forked_runs_at_most_at_once_workers_at_a_time():
    """With `at_once`, the first workers start at once, each other one as
    an earlier one answers: none starts before the first answer."""

    def times(index: int):
        start = time.monotonic()
        time.sleep(0.2 if index < 2 else 0.0)
        return [start, time.monotonic()]  # stands for the code of a chunk

    results = run_forked(times, 4, at_once=2)
    assert results is not None
    first_answer = min(end for _, end in results[:2])
    assert all(start >= first_answer for start, _ in results[2:])
    assert max(start for start, _ in results[:2]) < first_answer


def test_restrict_declares_the_other_chunks_functions_it_calls():
    """A chunk keeps its public functions and the private ones; of the other
    public functions, those it calls are declared, the rest dropped."""

    def symbols(chunk: list[str]) -> dict[str, str]:
        module = restrict(parse_module(PROGRAM), chunk)
        return {f.sym_name.data: type(f).__name__ for f in module.ops}

    assert symbols(["host"]) == {
        "relu": "PrimFuncOp",
        "scale": "FuncOp",
        "stats": "FuncOp",
        "host": "PrimFuncOp",
    }
    assert symbols(["scale"]) == {"relu": "PrimFuncOp", "scale": "PrimFuncOp"}


def test_balance_keeps_a_tail_of_the_cheapest_for_whoever_is_free():
    """The cheapest names up to `tail` of the cost go to `TAIL_CHUNKS` chunks
    a job (of `MIN_CHUNK_OPS` each) after the `jobs` first ones; without
    enough of them for two chunks, there is no tail."""
    sizes = {"a": 4000.0, "b": 3500.0, "c": 3000.0, "d": 500.0, "e": 400.0}
    sizes |= {"f": 350.0, "g": 330.0, "h": 320.0}
    chunks = balance(sizes, 2, tail=0.2)
    assert chunks[:2] == [["a"], ["b", "c"]]
    assert sorted(map(sorted, chunks[2:])) == [["d"], ["e"], ["f"], ["g", "h"]]
    assert balance(sizes, 2) == [["a", "d", "e", "f", "g", "h"], ["b", "c"]]
    assert len(balance(sizes, 2, tail=0.03)) == 2  # 320 ops: one tail chunk


def test_split_balances_public_functions_by_cost():
    module = parse_module(PROGRAM)
    costs = {f.sym_name.data: compile_cost(f) for f in module.ops}
    # @scale has fewer ops than @stats, but its parallel loop (outlined,
    # with a task and a launcher) costs more than the difference.
    assert costs == {
        "relu": 4 + FUNCTION_OPS,
        "scale": 11 + PARALLEL_LOOP_OPS + FUNCTION_OPS,
        "stats": 18 + FUNCTION_OPS,
        "host": 4 + FUNCTION_OPS,
    }
    chunks = split(module, 2)
    # @scale (the costliest) alone, the other two together; @relu (private)
    # is in none: every chunk keeps it.
    assert sorted(map(sorted, chunks)) == [["host", "stats"], ["scale"]]
    assert split(module, 9) == [["scale"], ["stats"], ["host"]]
    assert split(module, 1) == [["scale", "stats", "host"]]


def test_calls_of_a_host_function_cost_their_checks():
    """A host function's calls are each followed by a failure check
    (`allocation_checks`): `CHECKED_CALL_OPS` more each; a kernel's are not."""
    module = parse_module(PROGRAM)
    host = module.ops.last
    assert isinstance(host, tir.PrimFuncOp)
    host.attributes["tir.is_entry_func"] = IntegerAttr(1, i1)
    assert compile_cost(host) == 4 + 2 * CHECKED_CALL_OPS + FUNCTION_OPS


VECTOR_LOOPS = """
tir.prim_func @rows(%a: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tir.for %i = %c0 to %c8 step %c1 vectorized {
    %x = memref.load %a[%i] : memref<64xf32>
    memref.store %x, %a[%i] : memref<64xf32>
  }
  tir.for %i = %c0 to %n step %c1 vectorized {
    %x = memref.load %a[%i] : memref<64xf32>
    memref.store %x, %a[%i] : memref<64xf32>
  }
}
"""


def test_ops_in_vectorized_loops_cost_more():
    """Each of the 3 ops in a vectorized loop (load, store, yield) costs
    `VECTOR_OP_EXTRA` more, and `DYNAMIC_VECTOR_OP_EXTRA` more again where
    the loop's extent is known only at run time."""
    (rows,) = parse_module(VECTOR_LOOPS).ops
    assert compile_cost(rows) == pytest.approx(
        FUNCTION_OPS
        + 13
        + 3 * VECTOR_OP_EXTRA
        + 3 * (VECTOR_OP_EXTRA + DYNAMIC_VECTOR_OP_EXTRA)
    )


def test_jobs_by_default(monkeypatch):
    module = parse_module(PROGRAM)
    monkeypatch.setattr(parallel_compile, "MIN_CHUNK_OPS", 1)
    monkeypatch.setenv(JOBS_VARIABLE, "2")
    assert len(split(module)) == 2
    monkeypatch.setenv(JOBS_VARIABLE, "1")
    assert len(split(module)) == 1
    monkeypatch.delenv(JOBS_VARIABLE)
    assert len(split(module)) == min(3, available_cpus())
    monkeypatch.setattr(parallel_compile, "MIN_CHUNK_OPS", 10**9)
    assert len(split(module)) == 1  # too small to be worth a worker
    monkeypatch.setenv(JOBS_VARIABLE, "two")
    with pytest.raises(
        ValueError, match="HETERO_COMPILE_JOBS must be a positive integer"
    ):
        split(module)


def _host_results(jobs: int):
    return run_host(jobs)[2]


def test_a_pool_worker_compiles_in_its_own_process():
    # multiprocessing forbids a daemonic process (a pool's worker) children.
    with multiprocessing.get_context("fork").Pool(1) as pool:
        results, y = pool.apply(_host_results, (3,))
    expected_results, expected_y = _host_results(1)
    assert results == expected_results
    np.testing.assert_array_equal(y, expected_y)


def test_object_code_loads_again_after_a_module_is_freed():
    # Each engine owns a target machine of its own: freeing one module
    # frees neither the target's machines nor another module's.
    target = CpuTarget()
    code = target.compile(lower_to_llvm(parse_module(SAXPY)))
    first, second = (CpuModule.load(target, [code]) for _ in range(2))
    del first
    gc.collect()
    again = target.compile(lower_to_llvm(parse_module(SAXPY)))
    for module in (second, CpuModule.load(target, [again])):
        y = np.ones(5, np.float32)
        module.function("saxpy")(2.0, np.arange(5, dtype=np.float32), y)
        np.testing.assert_array_equal(y, 2 * np.arange(5) + 1)
