"""The GPU path: lower-te's GPU schedules, convert-tir-to-gpu, convert-gpu-to-nvvm,
PTX from llvmlite, and (where a GPU is present) the cuda-python runtime.

Without a GPU every kernel is still compiled to PTX and assembled by `ptxas`
for its `arch`; the scheduled TIR is checked against the relay reference
interpreter with the TIR interpreter: thread-bound loops run serially, which
is exact for schedules without barriers; the tiled matmul also runs with the
threads of a block as concurrent Python threads meeting at each barrier
(`_Lockstep`).  Execution tests skip, saying why, where no GPU is found.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
import threading
from collections.abc import Sequence
from math import prod as math_prod
from pathlib import Path

import numpy as np
import pytest
from test_lower_te import Build, check_lowering, complete_interpreter, kernel_module
from xdsl.context import Context
from xdsl.dialects import gpu, math
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.interpreters.builtin import xtype_for_el_type
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import TypedPtr
from xdsl.ir import Operation
from xdsl.utils.scoped_dict import ScopedDict

import hetero.interpreter.tir as tir_interpreter
from hetero.context import parse_module
from hetero.dialects import relay, tir
from hetero.dialects.target import TargetAttr, VirtualDeviceAttr
from hetero.interpreter.relay import evaluate_function
from hetero.lowering.gpu_codegen import PtxModule, compile_gpu
from hetero.runtime import cuda
from hetero.te.schedules import gpu as gpu_schedules
from hetero.transforms.lower_te import LowerTEPass
from hetero.utils.diagnostics import HeteroError

RNG = np.random.default_rng(0)
PTXAS = shutil.which("ptxas")
NO_GPU = cuda.unavailable_reason()

needs_gpu = pytest.mark.skipif(NO_GPU is not None, reason=f"needs a GPU: {NO_GPU}")

GPU = VirtualDeviceAttr.for_target(TargetAttr("cuda", {"arch": "sm_90"}))


def assemble(ptx: PtxModule, tmp_path: Path) -> None:
    """`ptxas` accepts the PTX for its arch (skipped where ptxas is absent)."""
    if PTXAS is None:
        pytest.skip("ptxas is not installed")
    source = tmp_path / f"{ptx.name}.ptx"
    source.write_text(ptx.ptx)
    result = subprocess.run(
        [PTXAS, f"-arch={ptx.arch}", str(source), "-o", str(tmp_path / "out.cubin")],
        capture_output=True,
        check=False,
        text=True,
    )
    assert result.returncode == 0, result.stderr


@register_impls
class _GpuInterpreterFunctions(InterpreterFunctions):
    """What scheduled GPU TIR uses beyond the TIR interpreter's functions and
    test_lower_te's `MissingArith`."""

    @impl(gpu.BarrierOp)
    def run_barrier(
        self, interpreter: Interpreter, op: gpu.BarrierOp, args: PythonValues
    ) -> PythonValues:
        return ()  # threads run one after the other: every barrier holds

    @impl(math.FmaOp)
    def run_fma(
        self, interpreter: Interpreter, op: math.FmaOp, args: PythonValues
    ) -> PythonValues:
        return (args[0] * args[1] + args[2],)


def lower_and_check(
    shapes: Sequence[Sequence[int]], build: Build, positive: bool = False
) -> tuple[ModuleOp, list[np.ndarray], np.ndarray]:
    """Lower `@k` with the GPU schedule; its TIR must compute what relay says."""
    lowered = check_lowering(shapes, build, positive, GPU, [_GpuInterpreterFunctions()])
    kernel = next(op for op in lowered[0].ops if isinstance(op, tir.PrimFuncOp))
    assert any(
        isinstance(op, tir.ForOp) and op.thread_tag is not None for op in kernel.walk()
    ), "a GPU function gets thread-bound loops"
    return lowered


def ptx_of(module: ModuleOp) -> list[PtxModule]:
    kernels = ModuleOp(
        [op.clone() for op in module.ops if isinstance(op, tir.PrimFuncOp)]
    )
    return compile_gpu(kernels)


OPS: dict[str, tuple[list[list[int]], Build]] = {
    "add-broadcast": ([[3, 1, 5], [4, 1]], lambda p: relay.AddOp(p[0], p[1])),
    "tanh": ([[7, 9]], lambda p: relay.TanhOp(p[0])),
    "sigmoid": ([[300]], lambda p: relay.SigmoidOp(p[0])),
    "exp": ([[2, 3, 4]], lambda p: relay.ExpOp(p[0])),
    "erf": ([[300]], lambda p: relay.ErfOp(p[0])),
    "transpose": ([[2, 3, 4]], lambda p: relay.TransposeOp(p[0], axes=(1, 2, 0))),
    "softmax-axis": ([[2, 5, 3]], lambda p: relay.SoftmaxOp(p[0], axis=1)),
    "max-pool": (
        [[1, 2, 7, 7]],
        lambda p: relay.MaxPool2DOp(
            p[0], pool_size=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1)
        ),
    ),
    "avg-pool": ([[1, 2, 5, 5]], lambda p: relay.AvgPool2DOp(p[0], pool_size=(2, 2))),
    "global-avg-pool": ([[1, 3, 4, 5]], lambda p: relay.GlobalAvgPool2DOp(p[0])),
    "conv2d": (
        [[1, 3, 6, 6], [4, 3, 3, 3]],
        lambda p: relay.Conv2DOp(p[0], p[1], padding=(1, 1, 1, 1)),
    ),
    "conv2d-batched-grouped": (
        [[2, 4, 7, 5], [6, 2, 3, 2]],
        lambda p: relay.Conv2DOp(
            p[0], p[1], strides=(2, 1), dilation=(1, 2), padding=(2, 0, 1, 1), groups=2
        ),
    ),
    "conv2d-transpose": (
        [[1, 4, 3, 3], [4, 2, 3, 3]],
        lambda p: relay.Conv2DTransposeOp(
            p[0], p[1], strides=(2, 2), padding=(1, 1, 0, 0), groups=2
        ),
    ),
    "conv3d": (
        [[1, 2, 4, 4, 4], [3, 2, 2, 2, 2]],
        lambda p: relay.Conv3DOp(p[0], p[1], padding=(1, 0, 1, 0, 1, 0)),
    ),
    "avg-pool3d": (
        [[1, 2, 5, 4, 4]],
        lambda p: relay.AvgPool3DOp(p[0], pool_size=(2, 2, 2), strides=(2, 2, 2)),
    ),
}
"""Ops with flat (one thread per output element) schedules."""


@pytest.mark.parametrize("name", OPS)
def test_flat_schedules_compute_and_assemble(name: str, tmp_path: Path) -> None:
    shapes, build = OPS[name]
    module, _, _ = lower_and_check(shapes, build)
    [ptx] = ptx_of(module)
    [info] = ptx.kernels
    assert ".visible .entry k_tir(" in ptx.ptx
    assert info.grid[1:] == info.block[1:] == (1, 1)  # a flat launch
    assemble(ptx, tmp_path)


def test_flat_schedule_layout() -> None:
    """blockIdx.x × threadIdx.x over the flattened output, the tail guarded."""
    module, _, _ = lower_and_check([[1000]], lambda p: relay.ExpOp(p[0]))
    loops = [op for op in module.walk() if isinstance(op, tir.ForOp) and op.thread_tag]
    assert [op.thread_tag.data for op in loops] == ["blockIdx.x", "threadIdx.x"]  # type: ignore[union-attr]
    [ptx] = ptx_of(module)
    assert ptx.kernels[0].grid == (4, 1, 1) and ptx.kernels[0].block == (256, 1, 1)
    assert "ex2.approx.f32" in ptx.ptx  # exp without libdevice


GEMMS: dict[str, tuple[list[list[int]], Build]] = {
    "dense-odd": ([[5, 7], [6, 7]], lambda p: relay.DenseOp(p[0], p[1])),
    "matmul-odd": ([[9, 4], [4, 3]], lambda p: relay.MatmulOp(p[0], p[1])),
    "matmul-batched": ([[2, 6, 5], [5, 4]], lambda p: relay.MatmulOp(p[0], p[1])),
}


@pytest.mark.parametrize("name", GEMMS)
def test_tiled_gemm_index_math(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With one-thread blocks (4×4 tiles, K steps of 3) the serial interpreter
    runs the tiled schedule exactly: tiling, staging and guards are right."""
    monkeypatch.setattr(gpu_schedules, "SMALL", (4, 4))
    monkeypatch.setattr(gpu_schedules, "STEP", 3)
    lower_and_check(*GEMMS[name])


@register_impls
class _Lockstep(InterpreterFunctions):
    """The threads of a block as Python threads, so that `gpu.barrier` waits
    for all of them and `shared` buffers are one per block, as on a GPU."""

    def __init__(self) -> None:
        self.barrier: threading.Barrier | None = None
        self.shared: dict[Operation, object] = {}
        self.lock = threading.Lock()

    @impl(tir.ForOp)
    def run_for(
        self, interpreter: Interpreter, op: tir.ForOp, args: PythonValues
    ) -> PythonValues:
        lb, ub, step = args
        tag = op.thread_tag.data if op.thread_tag is not None else ""
        if not tag.startswith("threadIdx"):
            for i in range(lb, ub, step):
                interpreter.run_ssacfg_region(op.body, (i,), "tir.for")
            return ()
        outermost = self.barrier is None
        if outermost:  # a new block: all its threads meet at each barrier
            nested = [o for o in op.walk() if isinstance(o, tir.ForOp) and o.thread_tag]
            extents = {o.thread_tag.data: len(range(lb, ub, step)) for o in nested}  # type: ignore[union-attr]
            self.barrier = threading.Barrier(math_prod(extents.values()))
            self.shared = {}
        barrier, errors = self.barrier, []

        def thread(i: int) -> None:
            clone = copy.copy(interpreter)
            clone._ctx = ScopedDict(parent=interpreter._ctx)
            try:
                clone.run_ssacfg_region(op.body, (i,), "thread")
            except BaseException as e:  # noqa: BLE001
                errors.append(e)
                barrier.abort()

        threads = [
            threading.Thread(target=thread, args=(i,)) for i in range(lb, ub, step)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if outermost:
            self.barrier = None
        if errors:
            raise errors[0]
        return ()

    @impl(tir.AllocOp)
    def run_alloc(
        self, interpreter: Interpreter, op: tir.AllocOp, args: PythonValues
    ) -> PythonValues:
        t = op.buffer.type
        assert isinstance(t, MemRefType) and t.has_static_shape()
        xtype = xtype_for_el_type(t.element_type, interpreter.index_bitwidth)
        fresh = lambda: ShapedArray(
            TypedPtr.zeros(math_prod(t.get_shape()), xtype=xtype), list(t.get_shape())
        )
        if op.scope != "shared":
            return (fresh(),)
        with self.lock:
            if op not in self.shared:
                self.shared[op] = fresh()
            return (self.shared[op],)

    @impl(gpu.BarrierOp)
    def run_barrier(
        self, interpreter: Interpreter, op: gpu.BarrierOp, args: PythonValues
    ) -> PythonValues:
        assert self.barrier is not None, "a barrier outside the threads of a block"
        self.barrier.wait()
        return ()


@pytest.mark.parametrize("name", GEMMS)
def test_tiled_gemm_with_many_threads_and_barriers(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """8×8 tiles of 4×4 threads with 2×2 each, K steps of 4, the threads run
    concurrently: staging by all threads, barriers and the thread mapping."""
    monkeypatch.setattr(gpu_schedules, "SMALL", (8, 2))
    monkeypatch.setattr(gpu_schedules, "STEP", 4)
    shapes, build = GEMMS[name]
    module = kernel_module(shapes, build, GPU)
    check_in_lockstep(
        module, [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    )


def check_in_lockstep(module: ModuleOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Lower `@k` of `module` (on the GPU) and run it with each block's
    threads concurrent (`_Lockstep`), against the relay interpreter; the result."""
    expected = evaluate_function(module, "k", inputs)
    LowerTEPass().apply(Context(), module)
    out = np.zeros(expected.shape, np.float32)
    with complete_interpreter(_GpuInterpreterFunctions(), _Lockstep()):
        tir_interpreter.run_prim_func(module, "k_tir", *inputs, out)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    return out


@pytest.mark.parametrize(
    "shape, op",
    [
        ([3, 17], relay.SoftmaxOp),
        ([2, 3, 300], relay.SoftmaxOp),
        ([4, 40], relay.LogSoftmaxOp),
    ],
)
def test_softmax_rows_are_blocks(
    shape: list[int], op: type[relay.SoftmaxOp], tmp_path: Path
) -> None:
    """Softmax along the innermost axis on a GPU: a block per row, maxima
    and sums met in shared memory, run with each block's threads concurrent
    (`_Lockstep`); a row holding NaN is NaN, one holding -inf gives it 0."""
    module = kernel_module([shape], lambda p: op(p[0]), GPU)
    x = RNG.standard_normal(shape).astype(np.float32)
    rows = x.reshape(-1, shape[-1])
    rows[0, 1] = np.nan
    rows[1, 0] = -np.inf
    out = check_in_lockstep(module, [x])
    assert np.isnan(out.reshape(rows.shape)[0]).all()
    [ptx] = ptx_of(module)
    assert "bar.sync" in ptx.ptx
    assemble(ptx, tmp_path)


@pytest.mark.parametrize("name", GEMMS)
def test_tiled_gemm_assembles(name: str, tmp_path: Path) -> None:
    shapes, build = GEMMS[name]
    module = kernel_module(shapes, build, GPU)
    LowerTEPass().apply(Context(), module)
    kernel = next(op for op in module.ops if isinstance(op, tir.PrimFuncOp))
    allocs = [op for op in kernel.walk() if isinstance(op, tir.AllocOp)]
    assert {op.scope for op in allocs} == {"shared", "local"}
    # Double-buffered: two K steps of each operand, one barrier before the
    # K loop (the first step staged) and one in it.
    block, per_thread = gpu_schedules.SMALL
    step, pad = gpu_schedules.STEP, gpu_schedules.PAD
    shared = sorted(
        op.buffer.type.get_shape()[0] for op in allocs if op.scope == "shared"
    )
    b_row = block + pad if name.startswith("dense") else block  # dense: k-major
    assert shared == sorted([2 * step * (block + pad), 2 * step * b_row])
    barriers = [op for op in kernel.walk() if isinstance(op, gpu.BarrierOp)]
    loops = [b.parent_op() for b in barriers]
    assert all(isinstance(loop, tir.ForOp) for loop in loops)
    assert [loop.thread_tag is None for loop in loops] == [False, True]  # type: ignore[union-attr]
    [ptx] = ptx_of(module)
    assert ptx.kernels[0].block == (block // per_thread, block // per_thread, 1)
    assert "bar.sync" in ptx.ptx and ".shared" in ptx.ptx and "fma.rn.f32" in ptx.ptx
    assemble(ptx, tmp_path)


def test_large_matmul_keeps_accumulators_in_registers(tmp_path: Path) -> None:
    """The benchmark's kernel (large tiles): no local memory, the grid covers
    the output, and the register tile reads shared memory 128 bits at a time
    (each thread's rows and columns in runs of 4, the tiles 16-byte aligned
    and addressed in the shared address space)."""
    module = kernel_module(
        [[2048, 64], [64, 1024]], lambda p: relay.MatmulOp(p[0], p[1]), GPU
    )
    LowerTEPass().apply(Context(), module)
    [ptx] = ptx_of(module)
    block, per_thread = gpu_schedules.LARGE
    assert ptx.kernels[0].grid == (1024 // block, 2048 // block, 1)
    assert ptx.kernels[0].block == (block // per_thread, block // per_thread, 1)
    assert "ld.local" not in ptx.ptx and "st.local" not in ptx.ptx
    assert "ld.global.nc" in ptx.ptx  # tir.noalias: the read-only cache
    assert ".shared .align 16" in ptx.ptx
    assert "ld.shared.v4.b32" in ptx.ptx and "ld.shared.b32" not in ptx.ptx
    assemble(ptx, tmp_path)


@pytest.mark.parametrize(
    "shapes, tile",
    [
        ([[4096, 4096], [4096, 4096]], gpu_schedules.LARGE),  # 1024 blocks
        ([[1024, 64], [64, 1024]], gpu_schedules.MEDIUM),  # LARGE: 64 blocks
        ([[8, 512, 64], [8, 64, 512]], gpu_schedules.LARGE),  # 16 a product, 8 products
        ([[256, 64], [64, 256]], gpu_schedules.SMALL),  # MEDIUM: 16 blocks
        ([[4096, 64], [64, 48]], gpu_schedules.SMALL),  # 48 columns: no MEDIUM tile
    ],
)
def test_the_tile_makes_enough_blocks(
    shapes: list[list[int]], tile: tuple[int, int]
) -> None:
    """The largest register tile whose grid still has `MIN_BLOCKS` blocks."""
    module = kernel_module(shapes, lambda p: relay.MatmulOp(p[0], p[1]), GPU)
    LowerTEPass().apply(Context(), module)
    kernel = next(op for op in module.ops if isinstance(op, tir.PrimFuncOp))
    extents = {
        op.thread_tag.data: op.ub.owner.value.value.data  # type: ignore[union-attr]
        for op in kernel.walk()
        if isinstance(op, tir.ForOp) and op.thread_tag is not None
    }
    block, per_thread = tile
    rows, cols = shapes[0][-2], shapes[1][-1]
    assert extents["threadIdx.x"] == extents["threadIdx.y"] == block // per_thread
    assert extents["blockIdx.y"] == -(-rows // block)
    assert extents["blockIdx.x"] == -(-cols // block)


HANDWRITTEN = """
tir.prim_func @k(%a: memref<70xf32>, %n: f32) target #target.target<"cuda", {arch = "ARCH"}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c70 = arith.constant 70 : index
  tir.for %bx = %c0 to %c2 step %c1 thread_binding "blockIdx.x" {
    %tile = tir.alloc : memref<64xf32, "shared">
    tir.for %tx = %c0 to %c64 step %c1 thread_binding "threadIdx.x" {
      %i0 = arith.muli %bx, %c64 : index
      %i = arith.addi %i0, %tx : index
      %in = arith.cmpi slt, %i, %c70 : index
      scf.if %in {
        %v = memref.load %a[%i] : memref<70xf32>
        %l = math.log %v : f32
        %s = arith.mulf %l, %n : f32
        memref.store %s, %tile[%tx] : memref<64xf32, "shared">
      }
      "gpu.barrier"() : () -> ()
      scf.if %in {
        %w = memref.load %tile[%tx] : memref<64xf32, "shared">
        memref.store %w, %a[%i] : memref<70xf32>
      }
    }
  }
}
"""


@pytest.mark.parametrize("arch", ["sm_90", "sm_80", "sm_75"])
def test_handwritten_kernel_for_each_arch(arch: str, tmp_path: Path) -> None:
    [ptx] = compile_gpu(parse_module(HANDWRITTEN.replace("ARCH", arch)))
    assert ptx.arch == arch and f".target {arch}" in ptx.ptx
    assert ".entry k(" in ptx.ptx and ".shared" in ptx.ptx and "bar.sync" in ptx.ptx
    assert "lg2.approx" in ptx.ptx
    assert ptx.kernels[0].grid == (2, 1, 1) and ptx.kernels[0].block == (64, 1, 1)
    assemble(ptx, tmp_path)


def _kernels(count: int) -> str:
    """`count` copies of the handwritten kernel, each its own `gpu.module`."""
    text = HANDWRITTEN.replace("ARCH", "sm_90")
    return "\n".join(text.replace("@k(", f"@k{i}(") for i in range(count))


def test_kernels_compile_in_workers_to_the_same_ptx() -> None:
    """Two processes share the `gpu.module`s out: the PTX is what one
    process makes, in the module's order; the module's own `gpu.module`s
    are left unlowered (the workers lowered their copies)."""
    serial, parallel = parse_module(_kernels(3)), parse_module(_kernels(3))
    assert compile_gpu(parallel, jobs=2) == compile_gpu(serial, jobs=1)
    kinds = [
        {op.name for op in module.walk()} & {"gpu.func", "llvm.func"}
        for module in (serial, parallel)
    ]
    assert kinds == [{"llvm.func"}, {"gpu.func"}]


def test_an_error_in_a_compile_worker_is_located_here() -> None:
    """The worker's error is raised again in this process, at the op of the
    module given (line 16: the first kernel's `math.cbrt`)."""
    text = _kernels(2).replace("math.log", "math.cbrt", 1)
    with pytest.raises(
        HeteroError, match=r"^<string>:16:\d+: .*'math.cbrt' is a C library"
    ):
        compile_gpu(parse_module(text), jobs=2)


def test_unsupported_math_is_a_diagnostic() -> None:
    """Not an LLVM abort: a located error naming the op."""
    text = HANDWRITTEN.replace("ARCH", "sm_90").replace("math.log", "math.cbrt")
    with pytest.raises(HeteroError, match="'math.cbrt' is a C library function"):
        compile_gpu(parse_module(text))


# ----------------------------------------------------------------------------
# Runtime
# ----------------------------------------------------------------------------


@pytest.mark.skipif(NO_GPU is None, reason="a GPU is present")
def test_no_gpu_is_a_clear_error() -> None:
    with pytest.raises(cuda.CudaUnavailable, match="^no CUDA driver/GPU: "):
        cuda.DeviceArray((4,), np.float32)


@needs_gpu
@pytest.mark.parametrize("name", [*OPS, *GEMMS])
def test_runs_on_the_gpu(name: str) -> None:
    shapes, build = {**OPS, **GEMMS}[name]
    module = kernel_module(shapes, build, GPU)
    inputs = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    expected = evaluate_function(module, "k", inputs)
    LowerTEPass().apply(Context(), module)
    [ptx] = ptx_of(module)
    out = np.zeros(expected.shape, np.float32)
    cuda.CudaModule(ptx).call("k_tir", *inputs, out)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


@needs_gpu
def test_device_copies() -> None:
    host = RNG.standard_normal((3, 5)).astype(np.float32)
    a = cuda.DeviceArray.from_numpy(host)
    b = cuda.DeviceArray(host.shape, host.dtype)
    b.copy_from(a)
    np.testing.assert_array_equal(b.to_numpy(), host)
    with pytest.raises(ValueError, match="cannot be copied"):
        b.copy_from(cuda.DeviceArray((5, 3), np.float32))


MATH = """
tir.prim_func @k(%a: memref<64xf32>) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tir.for %tx = %c0 to %c64 step %c1 thread_binding "threadIdx.x" {
    %v = memref.load %a[%tx] : memref<64xf32>
    %r = OP %v : f32
    memref.store %r, %a[%tx] : memref<64xf32>
  }
}
"""


@pytest.mark.parametrize(
    "op, ptx_instruction",
    [
        ("math.exp", "ex2.approx"),
        ("math.log", "lg2.approx"),
        ("math.log2", "lg2.approx"),
        ("math.log10", "lg2.approx"),
        ("math.sin", "sin.approx"),
        ("math.cos", "cos.approx"),
        ("math.tanh", "ex2.approx"),
        ("math.sqrt", "sqrt.rn"),
        ("math.absf", "abs.f32"),
        ("math.floor", "cvt.rmi"),
    ],
)
def test_math_without_libdevice(op: str, ptx_instruction: str, tmp_path: Path) -> None:
    [ptx] = compile_gpu(parse_module(MATH.replace("OP", op)))
    assert ptx_instruction in ptx.ptx
    assemble(ptx, tmp_path)


def test_erf_without_libdevice(tmp_path: Path) -> None:
    """`erf` on f32 (GELU) is `approximate-math`'s polynomial, as on the CPU:
    FMAs and no call of the C library's `erff`, which the GPU lacks."""
    [ptx] = compile_gpu(parse_module(MATH.replace("OP", "math.erf")))
    assert "fma.rn.f32" in ptx.ptx
    assert "call" not in ptx.ptx
    assemble(ptx, tmp_path)


def test_power_without_libdevice(tmp_path: Path) -> None:
    """`relay.power` on the GPU: `ex2` and `lg2` approximations, no call of
    `pow` (which NVPTX cannot lower); ptxas accepts it."""
    module = kernel_module([[4, 8], [8]], lambda p: relay.PowerOp(p[0], p[1]), GPU)
    LowerTEPass().apply(Context(), module)
    [ptx] = ptx_of(module)
    for instruction in (
        "lg2.approx.f32",
        "ex2.approx.f32",
        "copysign.f32",
        "cvt.rzi.f32.f32",
    ):
        assert instruction in ptx.ptx
    assert "pow" not in ptx.ptx
    assemble(ptx, tmp_path)


POW = """builtin.module {
  llvm.func @f(%x: f32, %y: f32) -> f32 {
    %r = llvm.call_intrinsic "llvm.pow.f32"(%x, %y) : (f32, f32) -> f32
    llvm.return %r : f32
  }
}"""


def test_gpu_power_follows_c_on_signs_and_special_values() -> None:
    """The GPU's `pow` sequence run on the CPU, PTX's `lg2.approx` replaced by
    an exact `log2`: NumPy's `power` for negative bases (integer, odd and
    fractional exponents), zeros of both signs, infinities, NaN, `y = 0` and
    `x = 1`."""
    import ctypes

    import llvmlite.binding as llvm
    from xdsl.dialects import llvm as llvm_dialect
    from xdsl.dialects.builtin import StringAttr
    from xdsl.pattern_rewriter import PatternRewriteWalker

    from hetero.lowering.convert_gpu_to_nvvm import MathIntrinsicLowering
    from hetero.lowering.llvmir import to_llvmlite
    from hetero.runtime.cpu import _initialize

    module = parse_module(POW)
    PatternRewriteWalker(MathIntrinsicLowering()).rewrite_module(module)
    calls = [op for op in module.walk() if isinstance(op, llvm_dialect.CallIntrinsicOp)]
    assert "llvm.pow.f32" not in [op.intrin.data for op in calls]
    for op in calls:
        if op.intrin.data == "llvm.nvvm.lg2.approx.f":
            op.intrin = StringAttr("llvm.log2.f32")
    _initialize()
    machine = llvm.Target.from_triple(llvm.get_process_triple()).create_target_machine(
        codemodel="jitdefault", jit=True
    )
    ir = str(to_llvmlite(module, triple=llvm.get_process_triple()))
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(ir), machine)
    engine.finalize_object()
    pow_ = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float, ctypes.c_float)(
        engine.get_function_address("f")
    )
    inf, nan = float("inf"), float("nan")
    xs = [-3.0, -2.0, -1.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.5, inf, nan]
    ys = [-3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 7.0, 1e9, nan]
    got = np.array([[pow_(x, y) for y in ys] for x in xs], np.float32)
    with np.errstate(all="ignore"):
        want = np.power(*np.meshgrid(np.float32(xs), np.float32(ys), indexing="ij"))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    numbers = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))


def test_zero_size_output_launches_no_threads(tmp_path: Path) -> None:
    """An empty output gets the CPU's zero-trip loops, not a zero-sized
    launch (the flat schedule used to divide by the thread count 0)."""
    module = kernel_module([[0, 7]], lambda p: relay.ExpOp(p[0]), GPU)
    LowerTEPass().apply(Context(), module)
    module.verify()
    loops = [op for op in module.walk() if isinstance(op, tir.ForOp)]
    assert loops and not any(op.is_thread_bound for op in loops)
    [ptx] = ptx_of(module)
    assert ptx.kernels[0].grid == ptx.kernels[0].block == (1, 1, 1)
    assemble(ptx, tmp_path)


def test_tiled_gemm_rejects_uneven_staging(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiles the block's threads cannot stage equally would skip elements."""
    monkeypatch.setattr(gpu_schedules, "SMALL", (24, 2))  # 144 threads, 192 elements
    with pytest.raises(AssertionError, match="not staged by 144 threads equally"):
        lower_and_check(*GEMMS["dense-odd"])
