"""cuBLAS for the `cublas` external codegen: NVIDIA's wheel, called from JIT-compiled host code.

    unavailable_reason()        # None where the library is installed
    CublasBinding(host, owner)  # at a GpuProgram's first call: library, handle

The library comes from NVIDIA's PyPI wheel (`nvidia-cublas` for CUDA 13,
`nvidia-cublas-cu12` for CUDA 12), found by `cuda.pathfinder` (part of
cuda-python, hetero's CUDA dependency).  Whether the kind is offered depends
on the library only: like the rest of the GPU path, programs using it
compile on machines without a GPU, and calling them raises
`CudaUnavailable` there.

The generated code never names a cuBLAS symbol.  A partition calls stubs
(`hetero_cublasSgemm_v2(...)`, `STUB_PREFIX`) that take `alpha`/`beta` by
value and device pointers as integers; the stubs (LLVM IR that
`hetero.lowering.cuda_codegen` writes from `FUNCTIONS` and links into the
host module, beside `cublas_state.ll`) store the scalars on the stack (cuBLAS' default host pointer
mode), call the entry point through a global function pointer with the
program's handle `@hetero.cublas.handle`, record the first failing status in
`@hetero.cublas.status` and note that GPU work is queued, as kernel launches
do (the host waits before it touches memory next: `lower-gpu-launch`).  The
pointers and the handle are filled in at the program's first call
(`CublasBinding`), as `GpuProgram` does for the driver: the host code
compiles, and is checked, where neither the library nor a GPU is present,
and each program creates its handle once.
"""

from __future__ import annotations

import ctypes
import weakref
from functools import cache

from hetero.runtime.native import NativeModule, runtime_ir
from hetero.runtime.nvidia import load_nvidia_library, unavailable
from hetero.utils.diagnostics import HeteroError

INSTALL = "pip install 'hetero[cublas]' (which installs NVIDIA's nvidia-cublas wheel)"

STUB_PREFIX = "hetero_"
"""`hetero_<cuBLAS function>` is the stub the generated code calls."""

HANDLE = "hetero.cublas.handle"
STATUS = "hetero.cublas.status"

GEMM = "i32 i32 i32 i32 i32 alpha ptr i32 ptr i32 beta ptr i32"
BATCHED = "i32 i32 i32 i32 i32 alpha ptr i32 i64 ptr i32 i64 beta ptr i32 i64 i32"
GEMM_EX = "i32 i32 i32 i32 i32 alpha ptr i32 i32 ptr i32 i32 beta ptr i32 i32 i32 i32"
BATCHED_EX = "i32 i32 i32 i32 i32 alpha ptr i32 i32 i64 ptr i32 i32 i64 beta ptr i32 i32 i64 i32 i32 i32"

FUNCTIONS: dict[str, tuple[str, str]] = {
    "cublasSgemm_v2": ("float", GEMM),
    "cublasSgemmStridedBatched": ("float", BATCHED),
    "cublasDgemm_v2": ("double", GEMM),
    "cublasDgemmStridedBatched": ("double", BATCHED),
    "cublasGemmEx": ("float", GEMM_EX),  # f16 data, f32 compute: f32 scalars
    "cublasGemmStridedBatchedEx": ("float", BATCHED_EX),
}
"""The cuBLAS entry points the stubs call → the LLVM type of their scalars and
their parameters after the handle: `alpha`/`beta` are scalars passed by
pointer, `ptr` device pointers, the rest integers (enums are `i32`)."""


@cache
def load_cublas() -> str:
    """Load libcublas from NVIDIA's wheel (once); its path."""
    return load_nvidia_library("cublas", "cuBLAS", INSTALL)


def unavailable_reason() -> str | None:
    """Why cuBLAS partitions cannot be compiled here, or None."""
    return unavailable(load_cublas)


def stub_name(function: str) -> str:
    return STUB_PREFIX + function


def is_stub(name: str) -> bool:
    return name.startswith(STUB_PREFIX + "cublas")


def state_ir() -> str:
    """LLVM IR of the stubs' handle and status globals (`cublas_state.ll`),
    linked in beside `hetero.runtime.cuda.shim_ir`, whose
    `@hetero.cuda.queued` the stubs call."""
    return runtime_ir("cublas_state.ll")


class CublasError(HeteroError):
    """A cuBLAS call of the host code failed (or the handle could not be made)."""


class CublasBinding:
    """cuBLAS bound to one program's host code: the entry points in its
    function pointers and a handle, created here (the program's first call)
    on the CUDA runtime's current context and destroyed with the program."""

    def __init__(self, host: NativeModule, owner: object):
        from hetero.runtime import cuda

        cuda.device()
        library = ctypes.CDLL(load_cublas())
        for function in FUNCTIONS:
            if (address := host.global_address(f"hetero.cublas.{function}")) != 0:
                entry = ctypes.cast(getattr(library, function), ctypes.c_void_p).value
                ctypes.c_void_p.from_address(address).value = entry
        created = ctypes.c_void_p()
        status = library.cublasCreate_v2(ctypes.byref(created))
        if status != 0 or created.value is None:
            raise CublasError(f"cublasCreate_v2 failed with status {status}")
        self.handle: int = created.value
        ctypes.c_void_p.from_address(host.global_address(HANDLE)).value = self.handle
        self._status = ctypes.c_int32.from_address(host.global_address(STATUS))
        weakref.finalize(owner, library.cublasDestroy_v2, ctypes.c_void_p(self.handle))

    def reset(self) -> None:
        self._status.value = 0

    def check(self, name: str) -> None:
        """Raise for the first failed cuBLAS call since `reset`."""
        if self._status.value:
            raise CublasError(
                f"a cuBLAS call of @{name} failed with cublasStatus_t {self._status.value}"
            )


def uses_cublas(host: NativeModule) -> bool:
    """Whether the compiled host code calls cuBLAS stubs (it has the handle global)."""
    return host.global_address(HANDLE) != 0
