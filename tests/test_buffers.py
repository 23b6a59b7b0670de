"""Heap buffers of compiled code: kept across calls, failed allocations raised as
`MemoryError` (`hetero.runtime.buffers`, `convert-memref-to-llvm`)."""

import ctypes
import resource
import threading

import llvmlite.binding as llvm
import numpy as np
import pytest

import hetero
from hetero.context import parse_module
from hetero.lowering.cpu_codegen import compile_cpu
from hetero.runtime import buffers

GEMM_SUM = """
builtin.module {{
  relay.func @main(%a: tensor<{n}x64xf32>, %b: tensor<64x{n}xf32>) -> tensor<{n}xf32> {{
    %0 = relay.matmul %a, %b : (tensor<{n}x64xf32>, tensor<64x{n}xf32>) -> tensor<{n}x{n}xf32>
    %1 = relay.sum %0 {{axis = array<i64: 1>}} : (tensor<{n}x{n}xf32>) -> tensor<{n}xf32>
    relay.return %1 : tensor<{n}xf32>
  }}
}}
"""
"""An n x n intermediate (the product) from inputs of 64 n floats each."""

ROWS = 2**48
HUGE = f"""
builtin.module {{
  relay.func @main(%a: tensor<1x4xf32>, %b: tensor<4x3xf32>) -> tensor<1x3xf32> {{
    %0 = relay.nn.pad %a {{pad_width = array<i64: 0, {ROWS}, 0, 0>}} : (tensor<1x4xf32>) -> tensor<{ROWS + 1}x4xf32>
    %1 = relay.matmul %0, %b : (tensor<{ROWS + 1}x4xf32>, tensor<4x3xf32>) -> tensor<{ROWS + 1}x3xf32>
    %2 = relay.strided_slice %1 {{begin = array<i64: 0, 0>, end = array<i64: 1, 3>}} : (tensor<{ROWS + 1}x3xf32>) -> tensor<1x3xf32>
    relay.return %2 : tensor<1x3xf32>
  }}
}}
"""
"""Intermediates of petabytes from inputs of a few floats."""

GROWING = """
tir.prim_func @grow(%out: memref<?xf32>, %n: index) target #target.target<"llvm", {num_threads = 2 : i64}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %trips = memref.dim %out, %c0 : memref<?xf32>
  tir.for %i = %c0 to %trips step %c1 parallel {
    %size = arith.muli %i, %n : index
    %tmp = tir.alloc(%size) : memref<?xf32>
    memref.store %one, %out[%i] : memref<?xf32>
  }
}
"""
"""Iteration i of a parallel loop takes a buffer of i * n floats."""


def gemm_sum_inputs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, 64), np.float32)
    b = rng.standard_normal((64, n), np.float32)
    return a, b, (a.astype(np.float64) @ b).sum(axis=1)


def minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def test_repeated_calls_map_no_fresh_memory_for_a_large_intermediate() -> None:
    """A 64 MiB arena is over glibc's largest mmap threshold (32 MiB): freed
    at each call, it was mapped afresh at the next, a page fault per page
    (16384 a call).  Kept in its slot, it costs none."""
    f = hetero.compile(GEMM_SUM.format(n=4096))
    planned = f.memory["cpu:0"][0]
    assert planned >= 64 << 20
    a, b, expected = gemm_sum_inputs(4096, 0)
    np.testing.assert_allclose(f(a, b), expected, rtol=1e-4, atol=1e-2)
    for _ in range(2):
        f(a, b)
    calls, before = 10, minor_faults()
    for _ in range(calls):
        f(a, b)
    pages = planned // resource.getpagesize()
    assert (minor_faults() - before) / calls < pages / 100


def test_threads_calling_one_function_at_once_get_buffers_of_their_own() -> None:
    f = hetero.compile(GEMM_SUM.format(n=1024))  # a 4 MiB arena: kept in slots
    cases = [gemm_sum_inputs(1024, seed) for seed in range(4)]
    wrong: list[int] = []

    def work(k: int) -> None:
        a, b, expected = cases[k]
        for _ in range(15):
            if not np.allclose(f(a, b), expected, rtol=1e-4, atol=1e-2):
                wrong.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(cases))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


def test_an_intermediate_larger_than_memory_raises_memory_error() -> None:
    f = hetero.compile(HUGE)
    planned = f.memory["cpu:0"][0]
    a, b = np.ones((1, 4), np.float32), np.ones((4, 3), np.float32)
    message = f"could not allocate {planned} bytes for the buffer %arena memref<{planned}xi8> in @main_host"
    for _ in range(2):  # the process goes on, and so does the function
        with pytest.raises(MemoryError, match=message):
            f(a, b)
    g = hetero.compile(GEMM_SUM.format(n=128))
    a, b, expected = gemm_sum_inputs(128, 1)
    np.testing.assert_allclose(g(a, b), expected, rtol=1e-4, atol=1e-3)


def test_a_failed_allocation_in_a_parallel_loop_is_raised_by_its_caller() -> None:
    """Tasks run on the pool's workers too: their failure reaches the call."""
    grow = compile_cpu(parse_module(GROWING)).function("grow")
    out = np.zeros(64, np.float32)
    with pytest.raises(MemoryError, match=r"bytes for the buffer %tmp memref<\?xf32>"):
        grow(out, 2**48)
    assert out[0] == 1.0  # iteration 0's buffer is empty: it was taken
    grow(out, 16)
    np.testing.assert_array_equal(out, 1.0)


def test_a_failure_on_a_thread_without_a_record_is_adopted_by_the_loop_thread() -> None:
    """The pool's workers record in the shared record; the thread that ran
    the loop moves it to its own before it lets go of the pool."""
    runtime = buffers.load_runtime()
    assert runtime is not None
    failed = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_char_p)(
        llvm.address_of_symbol("hetero_alloc_failed")
    )
    adopt = ctypes.CFUNCTYPE(None)(llvm.address_of_symbol(buffers.ADOPT))
    record = buffers.thread_record()
    worker = threading.Thread(target=failed, args=(123, b"%w memref<8xf32> in @k"))
    worker.start()
    worker.join()
    buffers.raise_failure(record, "f")  # not this thread's failure (yet)
    adopt()
    with pytest.raises(
        MemoryError, match="@f: could not allocate 123 bytes for the buffer %w"
    ):
        buffers.raise_failure(record, "f")
    buffers.raise_failure(record, "f")  # reported once


def test_a_module_frees_its_kept_buffers_when_released() -> None:
    f = hetero.compile(GEMM_SUM.format(n=1024))
    a, b, _ = gemm_sum_inputs(1024, 2)
    f(a, b)
    slots = f.native.global_address("main_host.buffer.0")
    kept = (ctypes.c_void_p * buffers.SLOTS).from_address(slots)
    assert any(kept)
    f.native.release()
    assert not any(kept)
