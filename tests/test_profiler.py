"""`CompiledFunction.profile` (`runtime/profiler.py`): the host function
replayed kernel by kernel on the real buffers (the planned arena and its
views), each kernel call timed — checked against the reference interpreter,
the host's own calls, and on host functions it cannot replay."""

from __future__ import annotations

import json

import numpy as np
import pytest
from xdsl.traits import SymbolTable

import hetero
from hetero.context import parse_module
from hetero.dialects import tir
from hetero.driver import lower_to_tir
from hetero.interpreter.relay import run
from hetero.lowering.host_plan import host_plan
from hetero.runtime import native, profiler
from hetero.runtime.profiler import (
    HostPlan,
    KernelSummary,
    KernelTime,
    chrome_trace,
    summarize,
)
from hetero.utils.diagnostics import HeteroError

# conv → pool → conv → dense: four kernels whose intermediates share the
# arena (plan-memory puts the second conv's output where the first one's was).
NETWORK = """
builtin.module attributes {target.config = #target.config<[#target.target<"llvm", {num_threads = 2}>]>} {
  relay.func @main(%x: tensor<1x3x12x12xf32>, %w: tensor<8x3x3x3xf32>, %v: tensor<8x8x1x1xf32>,
                   %d: tensor<5x72xf32>) -> tensor<1x5xf32> {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x12x12xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x12x12xf32>
    %1 = relay.relu %0 : tensor<1x8x12x12xf32>
    %2 = relay.nn.max_pool2d %1 {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x12x12xf32>) -> tensor<1x8x6x6xf32>
    %3 = relay.nn.conv2d %2, %v : (tensor<1x8x6x6xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x6x6xf32>
    %4 = relay.nn.max_pool2d %3 {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x6x6xf32>) -> tensor<1x8x3x3xf32>
    %5 = relay.reshape %4 {newshape = array<i64: 1, 72>} : (tensor<1x8x3x3xf32>) -> tensor<1x72xf32>
    %r = relay.nn.dense %5, %d : (tensor<1x72xf32>, tensor<5x72xf32>) -> tensor<1x5xf32>
    relay.return %r : tensor<1x5xf32>
  }
}
"""


def _inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    shapes = [(1, 3, 12, 12), (8, 3, 3, 3), (8, 8, 1, 1), (5, 72)]
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _host_calls() -> list[str]:
    module = parse_module(NETWORK)
    lower_to_tir(module)
    host = SymbolTable.lookup_symbol(module, "main_host")
    assert isinstance(host, tir.PrimFuncOp)
    return [
        op.callee.string_value() for op in host.walk() if isinstance(op, tir.CallOp)
    ]


def test_profile_replays_the_call_kernel_by_kernel() -> None:
    inputs = _inputs()
    compiled = hetero.compile(NETWORK)
    profile = compiled.profile(*inputs)
    expected = run(parse_module(NETWORK), *inputs)
    np.testing.assert_allclose(profile.outputs, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(profile.outputs, compiled(*inputs))
    assert [c.kernel for c in profile.calls] == _host_calls()
    assert len(profile.calls) >= 4


def test_profile_runs_reuse_the_arena() -> None:
    """Each replay runs in the buffers of the one before (mapped memory, as
    the host's calls get from the C library), aligned as the host's, and
    still computes the call: with other inputs, what the host function
    gives.  Buffers filled with a pattern between two runs are written by
    the second one."""
    compiled = hetero.compile(NETWORK)
    compiled.profile(*_inputs())
    plan = compiled.plan
    assert isinstance(plan, HostPlan) and plan.allocated
    for buffer in plan.allocated.values():
        assert buffer.ctypes.data % 64 == 0
        buffer.view(np.uint8).fill(0xFF)
    other = [2.0 * a + 1.0 for a in _inputs()]
    profile = compiled.profile(*other)
    assert all((b.view(np.uint8) != 0xFF).any() for b in plan.allocated.values())
    np.testing.assert_array_equal(profile.outputs, compiled(*other))


def test_profile_times_kernels_not_the_conversion_of_their_arguments(
    monkeypatch,
) -> None:
    """Every kernel call's arrays are checked and converted (`bind`) before
    the first one is timed: the conversion costs Python microseconds per
    call that the host function's own calls do not, and they made small
    kernels look costly.  Events in order: all conversions, then clocks."""
    compiled = hetero.compile(NETWORK)
    events: list[str] = []
    convert = native._MemRef.convert

    def recorded(self, value):
        events.append("convert")
        return convert(self, value)

    clock = profiler.time.perf_counter
    monkeypatch.setattr(native._MemRef, "convert", recorded)
    monkeypatch.setattr(
        profiler.time, "perf_counter", lambda: events.append("clock") or clock()
    )
    profile = compiled.profile(*_inputs())
    monkeypatch.undo()
    first = events.index("clock")
    assert "convert" in events[:first] and "convert" not in events[first:]
    assert events[first:].count("clock") == 2 * len(profile.calls)
    np.testing.assert_array_equal(profile.outputs, compiled(*_inputs()))


def test_a_bound_call_is_checked_when_bound_and_runs_each_time_it_is_called() -> None:
    """`NativeFunction.bind` checks and converts the arrays at once; the
    call reads them each time it is made."""
    t = "tensor<1x16xf32>"
    compiled = hetero.compile(
        f"relay.func @main(%x: {t}) -> {t} {{ %y = relay.negative %x : ({t}) -> {t} "
        f"relay.return %y : {t} }}"
    )
    host = compiled.native.function(compiled.symbol)
    x, y = np.arange(16, dtype=np.float32).reshape(1, 16), np.empty((1, 16), np.float32)
    with pytest.raises(native.ArgumentError, match="must have dtype float32"):
        host.bind(x.astype(np.float64), y)
    call = host.bind(x, y)
    call()
    np.testing.assert_array_equal(y, -x)
    x += 5
    call()
    np.testing.assert_array_equal(y, -x)


def test_profile_checks_its_inputs() -> None:
    compiled = hetero.compile(NETWORK)
    with pytest.raises(ValueError, match="takes 4 input"):
        compiled.profile(*_inputs()[:2])


def test_a_host_with_a_loop_is_not_replayed() -> None:
    host = parse_module(
        """
        builtin.module {
          tir.prim_func @k(%a: memref<4xf32>) { }
          tir.prim_func @main_host(%a: memref<4xf32>) {
            %c0 = arith.constant 0 : index
            %c1 = arith.constant 1 : index
            %c2 = arith.constant 2 : index
            tir.for %i = %c0 to %c2 step %c1 {
              tir.call @k(%a) : (memref<4xf32>) -> ()
            }
          }
        }
        """
    ).ops.last
    assert isinstance(host, tir.PrimFuncOp)
    with pytest.raises(HeteroError, match="'tir.for' is not replayed"):
        host_plan(host)


def test_summary_per_kernel_takes_the_median_of_each_call() -> None:
    """Each call's median over the runs, summed per kernel, costliest first."""
    runs = [
        [KernelTime("a", 1.0), KernelTime("b", 5.0), KernelTime("a", 2.0)],
        [KernelTime("a", 3.0), KernelTime("b", 4.0), KernelTime("a", 2.0)],
        [KernelTime("a", 2.0), KernelTime("b", 9.0), KernelTime("a", 9.0)],
    ]
    assert summarize(runs) == [KernelSummary("b", 1, 5.0), KernelSummary("a", 2, 4.0)]


def test_chrome_trace_has_one_slice_per_call_on_its_device_track() -> None:
    calls = [
        KernelTime("conv", 0.002, 10.0, "cpu"),
        KernelTime("gemm", 0.001, 10.003, "cuda"),
        KernelTime("conv", 0.002, 10.004, "cpu"),
    ]
    events = chrome_trace(calls)["traceEvents"]
    tracks = {e["args"]["name"]: e["tid"] for e in events if e["name"] == "thread_name"}
    assert set(tracks) == {"cpu", "cuda"} and len(set(tracks.values())) == 2
    slices = [e for e in events if e["ph"] == "X"]
    assert [(e["name"], e["tid"]) for e in slices] == [
        ("conv", tracks["cpu"]),
        ("gemm", tracks["cuda"]),
        ("conv", tracks["cpu"]),
    ]
    assert [e["ts"] for e in slices] == pytest.approx([0.0, 3000.0, 4000.0])
    assert [e["dur"] for e in slices] == pytest.approx([2000.0, 1000.0, 2000.0])
    assert [e["args"] for e in slices][1] == {"device": "cuda", "call": 1}
    assert all(e["pid"] == 0 for e in events)


def test_a_profiled_run_saves_its_trace(tmp_path) -> None:
    profile = hetero.compile(NETWORK).profile(*_inputs())
    profile.save_trace(tmp_path / "run.json")
    document = json.loads((tmp_path / "run.json").read_text())
    slices = [e for e in document["traceEvents"] if e["ph"] == "X"]
    assert [e["name"] for e in slices] == [c.kernel for c in profile.calls]
    assert all(e["args"]["device"] == "cpu" and e["dur"] > 0 for e in slices)
    ends = [e["ts"] + e["dur"] for e in slices]
    assert all(end <= next_["ts"] for end, next_ in zip(ends, slices[1:]))  # in order


# dense → sigmoid → dense over rows known at each call, returned as
# `[batch, 3, 4]`: buffers sized by the input's rows (a product of them
# after the reshape), kernels over them, the last one writing the output
# through a view of the rows' sizes (`memref.reinterpret_cast`).
DYNAMIC_ROWS = """
builtin.module attributes {target.config = #target.config<[#target.target<"llvm", {num_threads = 2}>]>} {
  relay.func @main(%x: tensor<?x3x8xf32>, %w: tensor<16x8xf32>, %v: tensor<4x16xf32>) -> tensor<?x3x4xf32> {
    %0 = relay.reshape %x {newshape = array<i64: -1, 8>} : (tensor<?x3x8xf32>) -> tensor<?x8xf32>
    %1 = relay.nn.dense %0, %w : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
    %2 = relay.sigmoid %1 : tensor<?x16xf32>
    %3 = relay.nn.dense %2, %v : (tensor<?x16xf32>, tensor<4x16xf32>) -> tensor<?x4xf32>
    %4 = relay.reshape_like %3, %x {keep = 1} : (tensor<?x4xf32>, tensor<?x3x8xf32>) -> tensor<?x3x4xf32>
    relay.return %4 : tensor<?x3x4xf32>
  }
}
"""


def test_a_function_compiled_once_is_profiled_at_each_call_s_sizes() -> None:
    """The host's sizes (`memref.dim` of the input, index arithmetic on
    them) are computed at each replay from the inputs, as the host does, and
    its buffers made at those sizes: the replay computes the call at both
    sizes, each buffer remade when its size changes."""
    compiled = hetero.compile(DYNAMIC_ROWS, dynamic="once")
    plan = compiled.compiled.plan
    assert isinstance(plan, HostPlan)
    assert any(isinstance(s, profiler.Index) for s in plan.steps)
    views = [s for s in plan.steps if isinstance(s, profiler.Buffer) and s.source == 3]
    assert [len(v.shape) for v in views] == [2]  # the output, viewed as rows
    rng = np.random.default_rng(0)
    w, v = rng.standard_normal((16, 8), "f4"), rng.standard_normal((4, 16), "f4")
    for batch in (5, 2):
        x = rng.standard_normal((batch, 3, 8), "f4")
        profile = compiled.profile(x, w, v)
        assert profile.outputs.shape == (batch, 3, 4)
        np.testing.assert_array_equal(profile.outputs, compiled(x, w, v))
        expected = run(parse_module(DYNAMIC_ROWS), x, w, v)
        np.testing.assert_allclose(profile.outputs, expected, rtol=1e-5, atol=1e-5)
        assert len(profile.calls) >= 2
