"""How Collage's measuring estimator times a GPU candidate (`cudnn`, `cublas`,
hetero's own kernels) against a CPU one (hetero.collage_measure._sample,
docs/passes/collage.md), with stand-ins for the GPU: no GPU is needed.

A GPU candidate's call ends in a wait for the device, which a blocking or
yielding synchronization spends asleep: its CPU time is not its latency, so
a GPU candidate is timed by the wall clock between two synchronizations of
the device, a CPU candidate by the lesser of wall and CPU time as before.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from hetero import collage_measure as measuring
from hetero import driver
from hetero.runtime import cuda

SLEEP = 0.02
"""What a stand-in GPU takes per call: wall time the host spends waiting."""


class _StandInGpu:
    """Calls queue work on the 'GPU' at once; a synchronization sleeps until
    the queued work is done, as a blocking `cuCtxSynchronize` does."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.queued = 0

    def call(self) -> None:
        self.events.append("call")
        self.queued += 1

    def synchronize(self) -> None:
        self.events.append("wait")
        time.sleep(SLEEP * self.queued)
        self.queued = 0


def test_a_cpu_candidate_is_timed_by_the_lesser_of_wall_and_cpu_time() -> None:
    """A call that sleeps (another process holding the CPU, as far as this
    one can tell) costs its CPU time, nearly nothing."""
    assert measuring._sample(lambda: time.sleep(SLEEP), 2) < SLEEP / 4


def test_a_gpu_candidate_is_timed_by_the_wall_clock_between_synchronizations() -> None:
    gpu = _StandInGpu()
    call = measuring._Call(gpu.call, gpu.synchronize)
    seconds = measuring._sample(call, 3)
    # The host slept through the GPU's work: CPU time would read ~0.
    assert seconds >= SLEEP * 0.9
    assert gpu.events == ["wait", "call", "call", "call", "wait"]


def _gpu_program() -> cuda.GpuProgram:
    """A `GpuProgram` that is never loaded (no GPU is touched)."""
    return cuda.GpuProgram.__new__(cuda.GpuProgram)


def test_the_wait_is_the_devices_synchronization_for_gpu_programs_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gpu = _StandInGpu()
    monkeypatch.setattr(cuda, "device", lambda: gpu)
    wait = measuring._device_wait(SimpleNamespace(native=_gpu_program()))
    assert wait is not None
    wait()
    assert gpu.events == ["wait"]
    assert measuring._device_wait(SimpleNamespace(native=object())) is None
    assert measuring._device_wait("not compiled") is None


class _Compiled:
    """A compiled function of no inputs, on `native`."""

    inputs = ()

    def __init__(self, native: object) -> None:
        self.native = native

    def __call__(self) -> None:
        pass


def test_a_gpu_candidate_is_charged_a_gpu_programs_call_overhead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The overhead subtracted is that of an empty program on the
    candidate's kind of device (on a GPU: a kernel, staging, two waits)."""
    asked: list[bool] = []
    compiled = _Compiled(_gpu_program())
    monkeypatch.setattr(driver, "compile", lambda module: compiled)
    monkeypatch.setattr(measuring, "_median_call", lambda call, runs: 1.0)
    monkeypatch.setattr(
        measuring, "_call_overhead", lambda gpu: asked.append(gpu) or 0.25
    )
    assert measuring.measure("a candidate", 3) == 0.75  # type: ignore[arg-type]
    compiled.native = object()
    measuring.measure("a candidate", 3)  # type: ignore[arg-type]
    assert asked == [True, False]


def test_the_gpu_overhead_program_compiles_to_a_gpu_program_without_a_gpu() -> None:
    """What `_call_overhead(True)` times (it runs only where there is a GPU)."""
    assert isinstance(
        driver.compile(measuring.empty_program(True)).native, cuda.GpuProgram
    )


def test_the_cost_databases_device_names_the_gpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two hosts of one CPU with different GPUs keep apart in a shared cost
    database: the device of a key names the GPU where there is one, and only
    the CPU where there is none."""
    names = {}
    for gpu in (None, "NVIDIA H100", "NVIDIA H200"):
        measuring.device_name.cache_clear()
        reason = "no GPU" if gpu is None else None
        monkeypatch.setattr(cuda, "unavailable_reason", lambda r=reason: r)
        monkeypatch.setattr(cuda, "device", lambda g=gpu: SimpleNamespace(name=g))
        names[gpu] = measuring.device_name()
    measuring.device_name.cache_clear()
    assert len(set(names.values())) == 3
    assert names["NVIDIA H200"].endswith(" + NVIDIA H200")
    assert names["NVIDIA H100"].startswith(names[None])


CONV = """builtin.module {
  relay.func @main(%x: tensor<1x4x8x8xf32>) -> tensor<1x6x8x8xf32> {
    %w = relay.constant dense<0.5> : tensor<6x4x3x3xf32>
    %y = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32>
    %r = relay.relu %y : tensor<1x6x8x8xf32>
    relay.return %r : tensor<1x6x8x8xf32>
  }
}"""


def test_the_bench_compiles_the_gpus_plans_without_a_gpu() -> None:
    """`python -m bench collage --gpu`'s plans: hetero's kernels (`cuda`, the
    host code on `llvm`) and a kind beside them compile where no GPU is (a
    device session then only runs them), into programs the bench tells
    apart by their code."""
    pytest.importorskip("cuda.bindings")
    from bench.collage import GPU, compiled_with, same_programs
    from hetero.context import parse_module
    from hetero.runtime.cudnn import unavailable_reason

    if (why := unavailable_reason()) is not None:
        pytest.skip(why)
    module = parse_module(CONV)
    plans = {
        "cuda": compiled_with(module, (), device=GPU),
        "+cudnn": compiled_with(module, ("cudnn",), device=GPU),
    }
    assert all(isinstance(p.native, cuda.GpuProgram) for p in plans.values())

    def kernels(plan: object) -> list[str]:
        return [k.name for k in plan.native.kernels]  # type: ignore[attr-defined]

    assert any("conv2d" in k for k in kernels(plans["cuda"]))
    assert not any("conv2d" in k for k in kernels(plans["+cudnn"]))  # cuDNN's
    assert same_programs(plans) == {"cuda": "cuda", "+cudnn": "+cudnn"}


def test_the_bench_says_why_it_has_no_gpu(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench import collage

    monkeypatch.setattr(cuda, "unavailable_reason", lambda: "no GPU here")
    collage.main(["--gpu"])
    assert (
        capsys.readouterr()
        .out.strip()
        .endswith("collage: skipped: no GPU (no GPU here)")
    )


def test_collage_places_a_convolution_on_cudnn_by_its_costs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Collage over the GPU's kinds, with injected costs that make cuDNN's
    convolution the cheaper: the plan the bench's `--gpu` run compiles puts
    it there, and the program compiles without a GPU."""
    pytest.importorskip("cuda.bindings")
    from test_collage import FixedCosts

    from bench.collage import GPU, compiled_with
    from hetero.context import parse_module
    from hetero.runtime.cudnn import unavailable_reason
    from hetero.targets import costs

    if (why := unavailable_reason()) is not None:
        pytest.skip(why)
    favourite = {"relay.nn.conv2d": "cudnn"}
    monkeypatch.setattr(costs, "_DEFAULT", [])
    costs.register_estimator(lambda **options: FixedCosts(favourite))
    plan = compiled_with(parse_module(CONV), ("cudnn",), collage=True, device=GPU)
    assert isinstance(plan.native, cuda.GpuProgram)
    assert not any("conv2d" in k.name for k in plan.native.kernels)
