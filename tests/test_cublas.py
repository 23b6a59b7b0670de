"""The `cublas` external codegen end to end (docs/external-codegens.md, docs/gpu.md).

Without a GPU (CI, this machine) everything up to loading the code is still
checked: programs with `cublas` in their configuration compile to a
`GpuProgram` whose host LLVM IR calls `cublasSgemm_v2` (through the pointer
the runtime fills in) on managed memory, and whose epilogue kernels `ptxas`
assembles.  Where NVIDIA's `nvidia-cublas` wheel is not installed, the tests
that compile through the kind stand in for the library's *presence* only
(nothing of it is called at compile time).  The generated host code is also
run on the CPU against stand-ins with cuBLAS' signatures that compute with
NumPy, column-major as cuBLAS does, which checks the row-major →
column-major argument mapping and the stubs' ABI.  With a GPU and the
library, an MLP runs with and without cuBLAS and equals the reference
interpreter (skipped here, saying why).
"""

from __future__ import annotations

import ctypes
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from cuda import pathfinder
from test_gpu_codegen import assemble
from xdsl.context import Context

import hetero
from hetero.context import parse_module
from hetero.dialects import relay
from hetero.interpreter.relay import element_dtype, run
from hetero.runtime import cublas as cublas_runtime
from hetero.runtime import cuda
from hetero.runtime.cpu import CpuModule
from hetero.targets.codegen import unavailable_reason
from hetero.transforms.annotate_target import AnnotateTargetPass
from hetero.transforms.external_codegen import ExternalCodegenPass, external_modules
from hetero.transforms.merge_compiler_regions import MergeCompilerRegionsPass
from hetero.transforms.merge_composite import MergeCompositePass
from hetero.transforms.outline_compiler_functions import OutlineCompilerFunctionsPass
from hetero.transforms.partition_graph import PartitionGraphPass
from hetero.transforms.plan_devices import PlanDevicesPass
from hetero.utils.diagnostics import HeteroError
from hetero.utils.programs import mlp

NO_GPU = cuda.unavailable_reason()
NO_CUBLAS = cublas_runtime.unavailable_reason()
needs_gpu_and_cublas = pytest.mark.skipif(
    NO_GPU is not None or NO_CUBLAS is not None,
    reason=f"skipped: no GPU: {NO_GPU}" if NO_GPU else f"skipped: {NO_CUBLAS}",
)

CONFIG = (
    '#target.config<[#target.target<"llvm">, #target.target<"cuda">, '
    '#target.target<"cublas">], fallback = cuda>'
)
"""cuda is the default device (rule D), cuBLAS its external codegen."""


@pytest.fixture
def with_cublas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offer the kind where the wheel is missing: compiling needs only its presence."""
    monkeypatch.setattr(cublas_runtime, "unavailable_reason", lambda: None)


MLP = mlp(16, [64, 128, 96, 10], CONFIG)
MLP_WITHOUT_CUBLAS = mlp(
    16, [64, 128, 96, 10], CONFIG.replace(', #target.target<"cublas">', "")
)


def on_gpu(body: str, inputs: list[str], result: str) -> str:
    """A program whose result (and so its ops) is placed on cuda; no configuration."""
    params = ", ".join(f"%{chr(ord('a') + i)}: {t}" for i, t in enumerate(inputs))
    return (
        f"builtin.module {{\n  relay.func @main({params}) -> {result} {{\n    {body}\n"
        f"    %g = relay.on_device %r to #target.vdevice<cuda> : {result}\n"
        f"    relay.return %g : {result}\n  }}\n}}\n"
    )


CASES = {
    "dense": on_gpu(
        "%r = relay.nn.dense %a, %b : (tensor<5x3xf32>, tensor<4x3xf32>) -> tensor<5x4xf32>",
        ["tensor<5x3xf32>", "tensor<4x3xf32>"],
        "tensor<5x4xf32>",
    ),
    "matmul": on_gpu(
        "%r = relay.matmul %a, %b : (tensor<5x3xf32>, tensor<3x7xf32>) -> tensor<5x7xf32>",
        ["tensor<5x3xf32>", "tensor<3x7xf32>"],
        "tensor<5x7xf32>",
    ),
    "batch matmul": on_gpu(
        "%r = relay.matmul %a, %b : (tensor<2x5x3xf32>, tensor<2x3x7xf32>) -> tensor<2x5x7xf32>",
        ["tensor<2x5x3xf32>", "tensor<2x3x7xf32>"],
        "tensor<2x5x7xf32>",
    ),
    "dense f16": on_gpu(
        "%r = relay.nn.dense %a, %b : (tensor<5x3xf16>, tensor<4x3xf16>) -> tensor<5x4xf16>",
        ["tensor<5x3xf16>", "tensor<4x3xf16>"],
        "tensor<5x4xf16>",
    ),
    "batch matmul f16": on_gpu(
        "%r = relay.matmul %a, %b : (tensor<2x5x3xf16>, tensor<2x3x7xf16>) -> tensor<2x5x7xf16>",
        ["tensor<2x5x3xf16>", "tensor<2x3x7xf16>"],
        "tensor<2x5x7xf16>",
    ),
    "dense f64": on_gpu(
        "%r = relay.nn.dense %a, %b : (tensor<5x3xf64>, tensor<4x3xf64>) -> tensor<5x4xf64>",
        ["tensor<5x3xf64>", "tensor<4x3xf64>"],
        "tensor<5x4xf64>",
    ),
    "two gemms in one partition": on_gpu(
        "%m = relay.matmul %a, %b : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>\n"
        "    %r = relay.matmul %m, %c : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>",
        ["tensor<4x6xf32>", "tensor<6x5xf32>", "tensor<5x3xf32>"],
        "tensor<4x3xf32>",
    ),
    "then read on the CPU": f"""builtin.module attributes {{target.config = {CONFIG}}} {{
  relay.func @main(%a: tensor<4x6xf32>, %b: tensor<6x5xf32>) -> tensor<4x5xf32> {{
    %m = relay.matmul %a, %b : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
    %g = relay.on_device %m to #target.vdevice<cuda> : tensor<4x5xf32>
    %c = relay.on_device %g to #target.vdevice<cpu> : tensor<4x5xf32>
    %r = relay.exp %c : tensor<4x5xf32>
    %h = relay.on_device %r to #target.vdevice<cpu> : tensor<4x5xf32>
    relay.return %h : tensor<4x5xf32>
  }}
}}""",
}
"""Partitions of GEMMs only: host code, no kernel.  In the last, the host
copies the GEMM's result to CPU memory and computes with it: it must wait for
the GPU first (`lower-gpu-launch`'s wait)."""

CALLS = {
    "batch matmul": "cublasSgemmStridedBatched",
    "dense f16": "cublasGemmEx",
    "batch matmul f16": "cublasGemmStridedBatchedEx",
    "dense f64": "cublasDgemm_v2",
}
"""The cuBLAS function of each case (default: `cublasSgemm_v2`)."""


def tolerance(text: str) -> float:
    """f16 results are rounded to 11 bits (cuBLAS accumulates in f32)."""
    return 2e-2 if "f16" in text else 1e-5


TARGETS = ["cuda", "llvm", "cublas"]


def random_inputs(text: str, seed: int = 0) -> list[np.ndarray]:
    main = next(op for op in parse_module(text).ops if isinstance(op, relay.FuncOp))
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal(a.type.get_shape()).astype(
            element_dtype(a.type.element_type)
        )  # type: ignore[attr-defined]
        for a in main.args
    ]


def cublas_calls(host_ir: str) -> set[str]:
    """The cuBLAS entry points the optimised host code calls (through the
    pointers `CublasBinding` fills in)."""
    return set(re.findall(r"load ptr, ptr @\"?hetero\.cublas\.(cublas\w+)", host_ir))


def function_ir(host_ir: str, name: str) -> str:
    return re.search(
        rf"^define [^@]*@{name}\(.*?^}}", host_ir, re.MULTILINE | re.DOTALL
    ).group(0)  # type: ignore[union-attr]


# ----------------------------------------------------------------------------
# Compilation, without a GPU
# ----------------------------------------------------------------------------


@pytest.mark.usefixtures("with_cublas")
def test_mlp_compiles_to_cublas_calls_and_epilogue_kernels(tmp_path: Path) -> None:
    compiled = hetero.compile(MLP)
    program = compiled.native
    assert isinstance(program, cuda.GpuProgram)
    host = program.host.llvm_ir()
    assert cublas_calls(host) == {"cublasSgemm_v2"}
    # The handle and the entry points are globals the first call fills in.
    assert cublas_runtime.uses_cublas(program.host)
    # Each layer's bias is a kernel of its partition; relu, softmax are hetero's.
    kernels = sorted(k.name for ptx in program.kernels for k in ptx.kernels)
    assert kernels == sorted(
        [*(f"cublas_main_{i}_kernel" for i in range(3)),
         "fused_relu_tir_kernel", "fused_relu_1_tir_kernel", "fused_relu_2_tir_kernel",
         "fused_nn_softmax_tir_kernel"]
    )  # fmt: skip
    for ptx in program.kernels:
        assemble(ptx, tmp_path)
    # Every buffer the GPU sees is managed memory: main_host's intermediates
    # too, and the GEMMs write their partition's output in place.
    # (Their allocator is passed to the runtime that takes them: hetero.runtime.buffers.)
    assert "@aligned_alloc" not in host
    assert "@hetero_cuda_alloc" in function_ir(host, "main_host")
    assert "@hetero_cuda_alloc" not in function_ir(host, "cublas_main_0")


def test_main_host_intermediates_are_managed_memory_without_cublas_too() -> None:
    """`main_host` passes its intermediates to kernels: they must be managed."""
    host = hetero.compile(MLP_WITHOUT_CUBLAS).native.host.llvm_ir()
    assert "@aligned_alloc" not in host
    assert "@hetero_cuda_alloc" in function_ir(host, "main_host")


@pytest.mark.usefixtures("with_cublas")
def test_mlp_partitions_dense_and_bias_and_leaves_relu_to_hetero() -> None:
    module = parse_module(MLP)
    for stage in (PlanDevicesPass(), MergeCompositePass(), AnnotateTargetPass(),
                  MergeCompilerRegionsPass(), PartitionGraphPass(), OutlineCompilerFunctionsPass(),
                  ExternalCodegenPass()):  # fmt: skip
        stage.apply(Context(), module)
    generated = external_modules(module)["cublas"]
    functions = [
        op
        for op in module.ops
        if isinstance(op, relay.FuncOp) and op.compiler == "cublas"
    ]
    composites = [
        op.composite for f in functions for op in f.walk() if isinstance(op, relay.FnOp)
    ]
    assert composites == ["cublas.dense_bias"] * 3
    assert [op.sym_name.data for op in generated.ops] == [
        f.sym_name.data for f in functions
    ]


@pytest.mark.usefixtures("with_cublas")
@pytest.mark.parametrize("name", CASES)
def test_gemm_partitions_compile_from_a_target_list(name: str) -> None:
    compiled = hetero.compile(CASES[name], targets=TARGETS)
    program = compiled.native
    assert isinstance(program, cuda.GpuProgram)
    assert cublas_calls(program.host.llvm_ir()) == {CALLS.get(name, "cublasSgemm_v2")}
    assert not program.kernels  # GEMMs only: no kernel, host code only


@pytest.mark.usefixtures("with_cublas")
def test_f16_dense_bias_is_gemm_ex_and_an_f16_bias_kernel(tmp_path: Path) -> None:
    text = on_gpu(
        "%d = relay.nn.dense %a, %b : (tensor<5x3xf16>, tensor<4x3xf16>) -> tensor<5x4xf16>\n"
        "    %r = relay.nn.bias_add %d, %c : (tensor<5x4xf16>, tensor<4xf16>) -> tensor<5x4xf16>",
        ["tensor<5x3xf16>", "tensor<4x3xf16>", "tensor<4xf16>"],
        "tensor<5x4xf16>",
    )
    program = hetero.compile(text, targets=TARGETS).native
    assert isinstance(program, cuda.GpuProgram)
    assert cublas_calls(program.host.llvm_ir()) == {"cublasGemmEx"}
    [ptx] = program.kernels
    assert [k.name for k in ptx.kernels] == ["cublas_main_0_kernel"]
    assemble(ptx, tmp_path)


# ----------------------------------------------------------------------------
# The generated host code against host stand-ins for cuBLAS
# ----------------------------------------------------------------------------

_F, _I, _P, _L = ctypes.c_float, ctypes.c_int, ctypes.c_void_p, ctypes.c_longlong
_D = ctypes.c_double


def _gemm_type(scalar: type, ex: bool = False, batched: bool = False) -> type:
    """The ctypes signature of a cuBLAS GEMM (`Ex`: a data type after each
    matrix, compute type and algorithm at the end; batched: strides, count)."""
    alpha = ctypes.POINTER(scalar)
    matrix = [_P, *([_I] if ex else []), _I, *([_L] if batched else [])]
    tail = [*([_I] if batched else []), *([_I, _I] if ex else [])]
    return ctypes.CFUNCTYPE(
        _I, _P, _I, _I, _I, _I, _I, alpha, *matrix, *matrix, alpha, *matrix, *tail
    )


_SYNCHRONIZE = ctypes.CFUNCTYPE(_I)
_ALLOC = ctypes.CFUNCTYPE(
    _I, ctypes.POINTER(ctypes.c_uint64), ctypes.c_uint64, ctypes.c_uint
)
_FREE = ctypes.CFUNCTYPE(_I, ctypes.c_uint64)
_PREFETCH = ctypes.CFUNCTYPE(
    _I,
    ctypes.c_uint64,
    ctypes.c_uint64,
    ctypes.c_uint64,
    ctypes.c_uint,
    ctypes.c_void_p,
)
_PREFETCHED: list[tuple[int, int, int]] = []
"""(address, bytes, location) of each prefetch the host code asked for."""
_ALLOCATED: list[tuple[int, int]] = []
"""(address, bytes) of each managed allocation of the host code."""
FAKE_HANDLE = 0x5EED
CUDA_R_16F, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT = 2, 68, -1
_HOST_MEMORY: dict[int, np.ndarray] = {}
"""What the cuMemAllocManaged stand-in handed out, by address."""


def _alloc(slot, size: int, flags: int) -> int:
    """Memory poisoned with NaNs, as the driver's is not zeroed: a read of
    an element nothing wrote shows."""
    buffer = np.full(size, 0xFF, np.uint8)
    _HOST_MEMORY[buffer.ctypes.data] = buffer
    _ALLOCATED.append((buffer.ctypes.data, size))
    slot[0] = buffer.ctypes.data
    return 0


def _column_major(
    address: int, rows: int, cols: int, ld: int, dtype: type
) -> np.ndarray:
    size = ld * cols * np.dtype(dtype).itemsize
    flat = np.frombuffer((ctypes.c_byte * size).from_address(address), dtype)
    return flat.reshape(cols, ld)[:, :rows].T


_QUEUED: list[Callable[[], None]] = []
"""The stand-in cuBLAS' work, done at the next `cuCtxSynchronize` as a GPU's
would be: host code that reads a result without waiting sees poisoned memory."""


def _synchronize() -> int:
    while _QUEUED:
        _QUEUED.pop(0)()
    return 0


def _gemm(dtype: type):
    """A column-major GEMM on host memory, as cuBLAS computes it: the scalars
    read at the call (they are on the caller's stack), the matrices later."""

    def gemm(handle, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) -> int:
        assert handle == FAKE_HANDLE
        op_a = _column_major(a, *((k, m) if ta else (m, k)), lda, dtype)
        op_b = _column_major(b, *((n, k) if tb else (k, n)), ldb, dtype)
        out = _column_major(c, m, n, ldc, dtype)
        scale, keep = alpha[0], beta[0]

        def work() -> None:
            product = (op_a.T if ta else op_a).astype(np.float64) @ (
                op_b.T if tb else op_b
            )
            # As BLAS: with beta 0, C is not read (it may hold anything, NaNs too).
            out[...] = scale * product + (keep * out if keep else 0)

        _QUEUED.append(work)
        return 0

    return gemm


def _batched(dtype: type):
    gemm, size = _gemm(dtype), np.dtype(dtype).itemsize

    def batched(
        handle, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, count
    ) -> int:
        for i in range(count):
            gemm(
                handle,
                ta,
                tb,
                m,
                n,
                k,
                alpha,
                a + size * i * sa,
                lda,
                b + size * i * sb,
                ldb,
                beta,
                c + size * i * sc,
                ldc,
            )
        return 0

    return batched


_EX_TYPES = (
    CUDA_R_16F,
    CUDA_R_16F,
    CUDA_R_16F,
    CUBLAS_COMPUTE_32F,
    CUBLAS_GEMM_DEFAULT,
)


def _gemm_ex(
    handle,
    ta,
    tb,
    m,
    n,
    k,
    alpha,
    a,
    at,
    lda,
    b,
    bt,
    ldb,
    beta,
    c,
    ct,
    ldc,
    compute,
    algo,
) -> int:
    assert (at, bt, ct, compute, algo) == _EX_TYPES
    return _gemm(np.float16)(
        handle, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc
    )


def _batched_ex(handle, ta, tb, m, n, k, alpha, a, at, lda, sa, b, bt, ldb, sb, beta, c, ct, ldc, sc,
                count, compute, algo) -> int:  # fmt: skip
    assert (at, bt, ct, compute, algo) == _EX_TYPES
    return _batched(np.float16)(handle, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c,
                                ldc, sc, count)  # fmt: skip


STAND_INS = {
    "hetero.cublas.cublasSgemm_v2": _gemm_type(_F)(_gemm(np.float32)),
    "hetero.cublas.cublasSgemmStridedBatched": _gemm_type(_F, batched=True)(
        _batched(np.float32)
    ),
    "hetero.cublas.cublasDgemm_v2": _gemm_type(_D)(_gemm(np.float64)),
    "hetero.cublas.cublasGemmEx": _gemm_type(_F, ex=True)(_gemm_ex),
    "hetero.cublas.cublasGemmStridedBatchedEx": _gemm_type(_F, ex=True, batched=True)(
        _batched_ex
    ),
    "hetero.cuda.cuCtxSynchronize": _SYNCHRONIZE(_synchronize),
    "hetero.cuda.cuMemAllocManaged": _ALLOC(_alloc),
    "hetero.cuda.cuMemFree_v2": _FREE(
        lambda address: 0 if _HOST_MEMORY.pop(address, None) is not None else 1
    ),
    "hetero.cuda.cuMemPrefetchAsync_v2": _PREFETCH(
        lambda address, size, location, flags, stream: (
            _PREFETCHED.append((address, size, location)) or 0
        )
    ),
}


def _stand_in(host: CpuModule) -> None:
    """The host code's driver and cuBLAS pointers set to `STAND_INS`."""
    for global_name, function in STAND_INS.items():
        address = host.global_address(global_name)
        if address:
            ctypes.c_void_p.from_address(address).value = ctypes.cast(
                function, _P
            ).value
    ctypes.c_void_p.from_address(
        host.global_address(cublas_runtime.HANDLE)
    ).value = FAKE_HANDLE


@pytest.mark.usefixtures("with_cublas")
@pytest.mark.parametrize("name", CASES)
def test_host_code_calls_cublas_with_the_column_major_mapping(name: str) -> None:
    """The host function run on the CPU with the driver's allocation and
    cuBLAS stood in for on host memory."""
    text = CASES[name]
    program = hetero.compile(text, targets=TARGETS).native
    assert isinstance(program, cuda.GpuProgram)
    host = program.host
    _stand_in(host)
    status = ctypes.c_int32.from_address(host.global_address(cublas_runtime.STATUS))
    inputs = random_inputs(text)
    expected = run(parse_module(text), *inputs)
    out = np.zeros_like(expected)
    _ALLOCATED.clear()
    _PREFETCHED.clear()
    host.function("main_host")(*inputs, out)
    _synchronize()  # as GpuProgram does after the host function
    assert status.value == 0
    # Each managed allocation is prefetched to the device, whole.
    device = cuda.PREFETCH_TO_DEVICE
    assert _PREFETCHED == [(address, size, device) for address, size in _ALLOCATED]
    assert ctypes.c_int32.from_address(host.global_address(cuda.STATUS)).value == 0
    assert not _HOST_MEMORY  # what was allocated was freed
    np.testing.assert_allclose(
        out, expected, rtol=tolerance(text), atol=tolerance(text)
    )


def _called_on_the_cpu(
    monkeypatch: pytest.MonkeyPatch, program: cuda.GpuProgram
) -> list[tuple[int, ...]]:
    """`program`'s calls run on the CPU: the driver and cuBLAS stood in for,
    host memory for managed memory; the shapes of the managed arrays made."""
    made: list[tuple[int, ...]] = []

    class Managed:
        def __init__(self, array: np.ndarray) -> None:
            made.append(array.shape)
            self.array = array.copy()

        def refill(self, array: np.ndarray) -> None:
            self.array[...] = array

        def copy_out(self, array: np.ndarray) -> None:
            array[...] = self.array

    monkeypatch.setattr(cuda, "ManagedArray", Managed)
    monkeypatch.setattr(
        cuda, "device", lambda: SimpleNamespace(synchronize=_synchronize)
    )
    monkeypatch.setattr(program, "_load", lambda: _stand_in(program.host))
    return made


@pytest.mark.usefixtures("with_cublas")
def test_calls_refill_the_managed_buffers_of_the_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A second call with arrays of the same shapes refills the first call's
    managed buffers, and each call computes its own inputs' result."""
    text = CASES["then read on the CPU"]
    compiled = hetero.compile(text, targets=TARGETS)
    made = _called_on_the_cpu(monkeypatch, compiled.native)
    for _ in range(2):
        inputs = random_inputs(text)
        expected = run(parse_module(text), *inputs)
        np.testing.assert_allclose(compiled(*inputs), expected, rtol=1e-5, atol=1e-5)
    assert made == [(4, 6), (6, 5), (4, 5)]  # a, b and the result: once


@pytest.mark.usefixtures("with_cublas")
def test_a_call_leaves_no_work_pending(monkeypatch: pytest.MonkeyPatch) -> None:
    """The host function of a lone GEMM returns with its work queued; the
    call synchronises, and then nothing is pending for the next call."""
    compiled = hetero.compile(CASES["dense"], targets=TARGETS)
    _called_on_the_cpu(monkeypatch, compiled.native)
    pending = ctypes.c_bool.from_address(
        compiled.native.host.global_address(cuda.PENDING)
    )
    compiled(*random_inputs(CASES["dense"]))
    assert not pending.value and not _QUEUED


# ----------------------------------------------------------------------------
# Availability and diagnostics
# ----------------------------------------------------------------------------


def test_missing_library_means_the_kind_is_not_offered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What pathfinder reports for a missing wheel, whether or not it is installed here."""

    def not_found(name: str) -> None:
        raise pathfinder.DynamicLibNotFoundError(f"Failure finding lib{name}.so")

    monkeypatch.setattr(pathfinder, "load_nvidia_dynamic_lib", not_found)
    monkeypatch.setattr(
        cublas_runtime, "load_cublas", cublas_runtime.load_cublas.__wrapped__
    )
    reason = unavailable_reason("cublas")
    assert reason is not None and "pip install 'hetero[cublas]'" in reason
    assert "nvidia-cublas" in reason
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = hetero.compile(MLP)
    assert [str(w.message) for w in caught] == [
        f"hetero.compile: 'cublas' is not offered: {reason}"
    ]
    # The program still compiles, on hetero's own GPU kernels.
    assert isinstance(compiled.native, cuda.GpuProgram)
    assert cublas_calls(compiled.native.host.llvm_ir()) == set()


CUDA = '#target.vdevice<cuda:0, target = #target.target<"cuda", host = #target.target<"llvm">>>'


@pytest.mark.usefixtures("with_cublas")
@pytest.mark.parametrize(
    ("types", "message"),
    [
        (("tensor<5x3xi32>", "tensor<4x3xi32>", "tensor<5x4xi32>"),
         r"cublas: no GEMM for i32 elements \(f16, f32, f64\)"),
        (("tensor<?x3xf32>", "tensor<4x3xf32>", "tensor<?x4xf32>"),
         r"cublas: parameter #0 has a dynamic shape \(tensor<\?x3xf32>\); the cublas codegen takes static"),
    ],
    ids=["i32", "dynamic"],
)  # fmt: skip
def test_what_cublas_cannot_run_is_a_located_diagnostic(
    types: tuple[str, ...], message: str
) -> None:
    """Hand-annotated partitions (the pattern table offers neither)."""
    a, b, r = types
    text = (
        f"builtin.module attributes {{target.config = {CONFIG}}} {{\n"
        f"  relay.func @cublas_main_0(%a: {a} {{vdevice = {CUDA}}}, %b: {b} {{vdevice = {CUDA}}}) -> {r} "
        'attributes {Compiler = "cublas", global_symbol = "cublas_main_0"} {\n'
        f"    %r = relay.nn.dense %a, %b : ({a}, {b}) -> {r}\n"
        f"    relay.return %r : {r}\n  }}\n}}\n"
    )
    with pytest.raises(HeteroError, match=message) as e:
        ExternalCodegenPass().apply(Context(), parse_module(text))
    assert e.value.op is not None


def test_constants_are_uploaded_once_per_compiled_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A GpuProgram's constants are `ResidentArray`s: one upload, then reused."""
    uploads: list[np.ndarray] = []

    class Managed:
        def __init__(self, array: np.ndarray) -> None:
            uploads.append(array)
            self.array = array.copy()

    text = on_gpu(
        "%w = relay.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>\n"
        "    %r = relay.matmul %a, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>",
        ["tensor<3x2xf32>"],
        "tensor<3x2xf32>",
    )
    compiled = hetero.compile(text, targets=["cuda", "llvm"])
    [constant] = compiled.constants
    assert isinstance(constant, cuda.ResidentArray)
    monkeypatch.setattr(cuda, "ManagedArray", Managed)
    first, second = constant.on_device(), constant.on_device()
    assert first is second and len(uploads) == 1
    # matmul-to-dense made the matmul a dense layer: the weight transposed.
    np.testing.assert_array_equal(first, [[1.0, 3.0], [2.0, 4.0]])


# ----------------------------------------------------------------------------
# On a GPU with cuBLAS
# ----------------------------------------------------------------------------


@needs_gpu_and_cublas
def test_mlp_with_cublas_equals_the_reference() -> None:
    inputs = random_inputs(MLP)
    compiled = hetero.compile(MLP)
    assert cublas_calls(compiled.native.host.llvm_ir()) == {"cublasSgemm_v2"}
    expected = run(parse_module(MLP), *inputs)
    np.testing.assert_allclose(compiled(*inputs), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        compiled(*inputs), expected, rtol=1e-4, atol=1e-5
    )  # handle reused


@needs_gpu_and_cublas
def test_mlp_without_cublas_runs_on_hetero_kernels_with_the_same_result() -> None:
    inputs = random_inputs(MLP)
    compiled = hetero.compile(MLP_WITHOUT_CUBLAS)
    assert cublas_calls(compiled.native.host.llvm_ir()) == set()
    result = compiled(*inputs)
    np.testing.assert_allclose(
        result, run(parse_module(MLP), *inputs), rtol=1e-4, atol=1e-5
    )
    np.testing.assert_allclose(
        result, hetero.compile(MLP)(*inputs), rtol=1e-4, atol=1e-5
    )


@needs_gpu_and_cublas
@pytest.mark.parametrize("name", CASES)
def test_gemm_partitions_run_on_the_gpu(name: str) -> None:
    text = CASES[name]
    inputs = random_inputs(text)
    np.testing.assert_allclose(
        hetero.compile(text, targets=TARGETS)(*inputs),
        run(parse_module(text), *inputs), rtol=max(tolerance(text), 1e-4), atol=tolerance(text),
    )  # fmt: skip
