"""Whole programs on the GPU: `hetero.compile` with `cuda` devices.

The host function is JIT-compiled for the CPU and launches the kernels itself
(`cuLaunchKernel` through pointers the runtime fills in), so everything up to
loading the PTX happens, and is checked, without a GPU; running the programs
and comparing with the relay reference interpreter needs one (skipped here,
saying why).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from test_relay_to_native import PROGRAMS

import hetero
from hetero.context import parse_module
from hetero.interpreter.relay import run
from hetero.lowering import gpu_codegen, parallel_compile
from hetero.runtime import cuda

NO_GPU = cuda.unavailable_reason()
needs_gpu = pytest.mark.skipif(NO_GPU is not None, reason=f"needs a GPU: {NO_GPU}")
RNG = np.random.default_rng(1)

CONFIG = '#target.config<[#target.target<"llvm">, #target.target<"cuda">]>'

GPU_PROGRAMS = {
    **PROGRAMS,
    "conv2d, then max_pool2d": (
        "%x: tensor<1x3x9x9xf32>, %w: tensor<4x3x3x3xf32>",
        "tensor<1x4x5x5xf32>",
        (
            "%0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} "
            ": (tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x9x9xf32>\n"
            "    %r = relay.nn.max_pool2d %0 {pool_size = array<i64: 3, 3>, "
            "strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} "
            ": (tensor<1x4x9x9xf32>) -> tensor<1x4x5x5xf32>"
        ),
    ),
    "grouped dilated conv2d, 2 images": (
        "%x: tensor<2x4x9x7xf32>, %w: tensor<6x2x3x2xf32>",
        "tensor<2x6x4x6xf32>",
        (
            "%r = relay.nn.conv2d %x, %w {strides = array<i64: 2, 1>, "
            "dilation = array<i64: 1, 2>, padding = array<i64: 1, 0, 0, 1>, groups = 2 : i64} "
            ": (tensor<2x4x9x7xf32>, tensor<6x2x3x2xf32>) -> tensor<2x6x4x6xf32>"
        ),
    ),
    "strided grouped conv2d_transpose": (
        "%x: tensor<1x4x5x6xf32>, %w: tensor<4x3x3x2xf32>",
        "tensor<1x6x11x11xf32>",
        (
            "%r = relay.nn.conv2d_transpose %x, %w {strides = array<i64: 2, 2>, "
            "padding = array<i64: 1, 0, 0, 1>, output_padding = array<i64: 1, 0>, "
            "groups = 2 : i64} : (tensor<1x4x5x6xf32>, tensor<4x3x3x2xf32>) "
            "-> tensor<1x6x11x11xf32>"
        ),
    ),
}
"""The CPU corpus, and convolutions with groups, dilation, strides and two
images (one thread an output element on the GPU)."""


def on_gpu(params: str, result: str, body: str) -> str:
    """A corpus program whose result (and so, by planning, its ops) is on the GPU."""
    return f"""builtin.module attributes {{target.config = {CONFIG}}} {{
  relay.func @main({params}) -> {result} {{
    {body}
    %h = relay.on_device %r to #target.vdevice<cuda> : {result}
    relay.return %h : {result}
  }}
}}"""


BOTH_WAYS = f"""builtin.module attributes {{target.config = {CONFIG}}} {{
  relay.func @main(%a: tensor<6x33xf32>, %b: tensor<6x33xf32>) -> tensor<6x33xf32> {{
    %0 = relay.exp %a : tensor<6x33xf32>
    %1 = relay.on_device %0 to #target.vdevice<cpu> : tensor<6x33xf32>
    %2 = relay.add %1, %b : tensor<6x33xf32>
    %3 = relay.on_device %2 to #target.vdevice<cuda> : tensor<6x33xf32>
    %4 = relay.multiply %3, %3 : tensor<6x33xf32>
    %5 = relay.on_device %4 to #target.vdevice<cpu> : tensor<6x33xf32>
    relay.return %5 : tensor<6x33xf32>
  }}
}}"""
"""CPU → GPU → CPU: a device_copy each way."""


def inputs_of(text: str) -> list[np.ndarray]:
    module = parse_module(text)
    main = next(
        op
        for op in module.ops
        if getattr(op, "sym_name", None) and op.sym_name.data == "main"
    )
    return [
        RNG.standard_normal(a.type.get_shape()).astype(np.float32)  # type: ignore[attr-defined]
        for a in main.args  # type: ignore[attr-defined]
    ]


def test_both_ways_compiles_to_a_gpu_program(tmp_path: Path) -> None:
    compiled = hetero.compile(BOTH_WAYS)
    program = compiled.native
    assert isinstance(program, cuda.GpuProgram)
    [ptx] = program.kernels
    [kernel] = ptx.kernels
    # The host launches through the driver's cuLaunchKernel (asynchronously:
    # it waits before it touches memory), and its buffers are managed memory.
    host = program.host.llvm_ir()
    assert "@hetero.cuda.cuLaunchKernel" in host and f"@{kernel.name}.function" in host
    assert "@hetero.cuda.cuMemAllocManaged" in host
    assert program.host.global_address(f"{kernel.name}.function") != 0
    if (ptxas := shutil.which("ptxas")) is not None:
        (tmp_path / "k.ptx").write_text(ptx.ptx)
        result = subprocess.run(
            [
                ptxas,
                f"-arch={ptx.arch}",
                str(tmp_path / "k.ptx"),
                "-o",
                str(tmp_path / "k.cubin"),
            ],
            capture_output=True,
            check=False,
            text=True,
        )
        assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name", GPU_PROGRAMS)
def test_corpus_compiles_for_the_gpu(name: str) -> None:
    compiled = hetero.compile(on_gpu(*GPU_PROGRAMS[name]))
    assert isinstance(compiled.native, cuda.GpuProgram)
    assert compiled.native.kernels


def test_kernels_compile_in_workers_beside_the_host_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With workers (chunks of any size here), `compile_cuda` gets the PTX
    that one process makes, while it compiles the host code."""
    text = on_gpu(*GPU_PROGRAMS["conv2d, then max_pool2d"])  # two kernels
    started: list[int] = []

    def start_forked(work: Callable[[int], list[object]], count: int) -> object:
        started.append(count)
        return parallel_compile.start_forked(work, count)

    monkeypatch.setattr(gpu_codegen, "start_forked", start_forked)
    monkeypatch.setattr(parallel_compile, "MIN_CHUNK_OPS", 1)
    monkeypatch.setenv(parallel_compile.JOBS_VARIABLE, "1")
    alone = hetero.compile(text).native.kernels
    monkeypatch.setenv(parallel_compile.JOBS_VARIABLE, "2")
    shared = hetero.compile(text).native.kernels
    assert started == [2] and len(alone) == 2 and shared == alone


@pytest.mark.skipif(NO_GPU is None, reason="a GPU is present")
def test_calling_without_a_gpu_says_so() -> None:
    compiled = hetero.compile(BOTH_WAYS)
    with pytest.raises(cuda.CudaUnavailable, match="^no CUDA driver/GPU: "):
        compiled(*inputs_of(BOTH_WAYS))


@needs_gpu
@pytest.mark.parametrize("name", GPU_PROGRAMS)
def test_corpus_runs_on_the_gpu_like_the_reference(name: str) -> None:
    text = on_gpu(*GPU_PROGRAMS[name])
    inputs = inputs_of(text)
    expected = run(parse_module(text), *inputs)
    np.testing.assert_allclose(
        hetero.compile(text)(*inputs), expected, rtol=1e-4, atol=1e-4
    )


@needs_gpu
def test_a_program_alive_at_exit_leaves_quietly() -> None:
    """GPU memory freed by the interpreter's last collection, after it
    stopped importing (arrays in a reference cycle), prints no ignored
    exception."""
    script = (
        "import gc\n"
        "import numpy as np\n"
        "from hetero.runtime import cuda\n"
        "cycle = [cuda.ManagedArray(np.ones(4, np.float32)), cuda.DeviceArray((4,), np.float32)]\n"
        "cycle.append(cycle)\n"
        "del cycle\n"
        "gc.disable()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr


@needs_gpu
def test_device_copies_both_ways_run() -> None:
    inputs = inputs_of(BOTH_WAYS)
    expected = run(parse_module(BOTH_WAYS), *inputs)
    np.testing.assert_allclose(hetero.compile(BOTH_WAYS)(*inputs), expected, rtol=1e-5)


@needs_gpu
def test_calls_reuse_their_staging_buffers_and_copy_only_results_back() -> None:
    """Later calls refill the staged inputs by the driver's copies (new
    values are seen), the result is copied into `out` whatever it held, and
    the inputs are left as they were."""
    compiled = hetero.compile(BOTH_WAYS)
    for _ in range(3):
        inputs = inputs_of(BOTH_WAYS)
        kept = [a.copy() for a in inputs]
        expected = run(parse_module(BOTH_WAYS), *inputs)
        out = np.full(expected.shape, np.nan, expected.dtype)
        assert compiled(*inputs, out=out) is out
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-6)
        for a, b in zip(inputs, kept):
            np.testing.assert_array_equal(a, b)


@pytest.mark.skipif(NO_GPU is None, reason="a GPU is present")
@pytest.mark.parametrize("bench", ["gpu-matmul", "gpu-onnx", "gpu-models"])
def test_gpu_benches_skip_without_a_gpu(bench: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench", bench],
        cwd=Path(__file__).parent.parent,
        capture_output=True,
        check=False,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    machine, skipped = result.stdout.splitlines()[:2]
    assert machine.startswith("machine: ")
    assert skipped.startswith(f"{bench}: skipped: no GPU")
