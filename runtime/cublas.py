"""cuBLAS for the `cublas` external codegen: NVIDIA's wheel, loaded into the process.

    unavailable_reason()      # None where a GPU and the library are present
    handle()                  # the process's cublasHandle_t (created once)

The library comes from NVIDIA's PyPI wheel (`nvidia-cublas` for CUDA 13,
`nvidia-cublas-cu12` for CUDA 12), found by `cuda.pathfinder` (part of
cuda-python, hetero's CUDA dependency) and loaded with llvmlite's
`load_library_permanently`, so that the generated host code's calls of
`cublasSgemm_v2` resolve in the JIT like any process symbol.  The handle is
created on the CUDA runtime's current context (`hetero.runtime.cuda`); the
generated code takes its value as a constant.
"""

from __future__ import annotations

import ctypes
from functools import cache

import llvmlite.binding as llvm

INSTALL = "pip install 'hetero[cublas]' (which installs NVIDIA's nvidia-cublas wheel)"


class CublasUnavailable(RuntimeError):
    """No GPU or no cuBLAS library; the message says what is missing."""


@cache
def load_cublas() -> str:
    """Load libcublas from NVIDIA's wheel (once); its path."""
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib

        path = load_nvidia_dynamic_lib("cublas").abs_path
    except Exception as e:  # pathfinder's several not-found errors
        raise CublasUnavailable(f"cuBLAS not found ({e}): {INSTALL}") from e
    assert path is not None
    llvm.load_library_permanently(path)
    return path


def unavailable_reason() -> str | None:
    """Why cuBLAS partitions cannot run here, or None."""
    from hetero.runtime import cuda

    if (why := cuda.unavailable_reason()) is not None:
        return f"cuBLAS needs a CUDA GPU: {why}"
    try:
        load_cublas()
    except CublasUnavailable as e:
        return str(e)
    return None


@cache
def handle() -> int:
    """The process's cuBLAS handle, created on the CUDA runtime's context."""
    from hetero.runtime import cuda

    cuda.device()
    created = ctypes.c_void_p()
    status = ctypes.CDLL(load_cublas()).cublasCreate_v2(ctypes.byref(created))
    if status != 0 or created.value is None:
        raise CublasUnavailable(f"cublasCreate_v2 failed with status {status}")
    return created.value
