"""cuBLAS for the `cublas` external codegen: NVIDIA's wheel, called from JIT-compiled host code.

    unavailable_reason()        # None where the library is installed
    stubs_ir(module)            # LLVM IR of the stubs the host module calls
    CublasBinding(host, owner)  # at a GpuProgram's first call: library, handle

The library comes from NVIDIA's PyPI wheel (`nvidia-cublas` for CUDA 13,
`nvidia-cublas-cu12` for CUDA 12), found by `cuda.pathfinder` (part of
cuda-python, hetero's CUDA dependency).  Whether the kind is offered depends
on the library only: like the rest of the GPU path, programs using it
compile on machines without a GPU, and calling them raises
`CudaUnavailable` there.

The generated code never names a cuBLAS symbol.  A partition calls stubs
(`hetero_cublasSgemm_v2(...)`, `STUB_PREFIX`) that take `alpha`/`beta` by
value and device pointers as integers; the stubs (LLVM IR linked into the
host module) store the scalars on the stack (cuBLAS' default host pointer
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
from typing import TYPE_CHECKING

from xdsl.dialects import llvm as llvm_dialect
from xdsl.dialects.builtin import ModuleOp

from hetero.utils.diagnostics import HeteroError

if TYPE_CHECKING:
    from hetero.runtime.cpu import CpuModule

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


class CublasUnavailable(RuntimeError):
    """No cuBLAS library; the message says what to install."""


@cache
def load_cublas() -> str:
    """Load libcublas from NVIDIA's wheel (once); its path."""
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib

        path = load_nvidia_dynamic_lib("cublas").abs_path
    except Exception as e:  # pathfinder's several not-found errors
        raise CublasUnavailable(f"cuBLAS not found ({e}): {INSTALL}") from e
    assert path is not None
    return path


def unavailable_reason() -> str | None:
    """Why cuBLAS partitions cannot be compiled here, or None."""
    try:
        load_cublas()
    except CublasUnavailable as e:
        return str(e)
    return None


def stub_name(function: str) -> str:
    return STUB_PREFIX + function


def is_stub(name: str) -> bool:
    return name.startswith(STUB_PREFIX + "cublas")


def _stub(function: str) -> str:
    """`@hetero_<function>`: scalars to stack slots, integers to pointers, the
    call through `@hetero.cublas.<function>`, status, work noted as queued."""
    scalar, signature = FUNCTIONS[function]
    kinds = signature.split()
    params, body, args = [], [], ["ptr %handle"]
    for i, kind in enumerate(kinds):
        if kind in ("alpha", "beta"):
            params.append(f"{scalar} %a{i}")
            body += [f"  %s{i} = alloca {scalar}", f"  store {scalar} %a{i}, ptr %s{i}"]
            args.append(f"ptr %s{i}")
        elif kind == "ptr":
            params.append(f"i64 %a{i}")
            body.append(f"  %s{i} = inttoptr i64 %a{i} to ptr")
            args.append(f"ptr %s{i}")
        else:
            params.append(f"{kind} %a{i}")
            args.append(f"{kind} %a{i}")
    return "\n".join([
        f'@"hetero.cublas.{function}" = global ptr null',
        f'define void @{stub_name(function)}({", ".join(params)}) {{',
        *body,
        f"  %handle = load ptr, ptr @{HANDLE}",
        f'  %function = load ptr, ptr @"hetero.cublas.{function}"',
        f"  %rc = call i32 %function({', '.join(args)})",
        "  call void @hetero.cublas.check(i32 %rc)",
        "  call void @hetero.cuda.queued()",
        "  ret void",
        "}",
    ])  # fmt: skip


_STATE_IR = f"""
@{HANDLE} = global ptr null
@{STATUS} = global i32 0

define internal void @hetero.cublas.check(i32 %rc) {{
  %failed = icmp ne i32 %rc, 0
  %old = load i32, ptr @{STATUS}
  %first = icmp eq i32 %old, 0
  %record = and i1 %failed, %first
  %new = select i1 %record, i32 %rc, i32 %old
  store i32 %new, ptr @{STATUS}
  ret void
}}
"""
"""The handle and status globals (LLVM IR, next to `hetero.runtime.cuda`'s shim,
whose `@hetero.cuda.cuCtxSynchronize` and `@hetero.cuda.check` the stubs use)."""


def used_functions(module: ModuleOp) -> list[str]:
    """The cuBLAS functions whose stubs the (`llvm`-dialect) host `module` declares."""
    return [
        op.sym_name.data.removeprefix(STUB_PREFIX)
        for op in module.ops
        if isinstance(op, llvm_dialect.FuncOp) and is_stub(op.sym_name.data)
    ]


def stubs_ir(module: ModuleOp) -> list[str]:
    """LLVM IR defining the stubs `module` calls (none: nothing)."""
    functions = used_functions(module)
    unknown = sorted(set(functions) - set(FUNCTIONS))
    if unknown:
        raise ValueError(f"no cuBLAS stub for {', '.join(unknown)}")
    return [_STATE_IR, *map(_stub, functions)] if functions else []


class CublasError(HeteroError):
    """A cuBLAS call of the host code failed (or the handle could not be made)."""


class CublasBinding:
    """cuBLAS bound to one program's host code: the entry points in its
    function pointers and a handle, created here (the program's first call)
    on the CUDA runtime's current context and destroyed with the program."""

    def __init__(self, host: CpuModule, owner: object):
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


def uses_cublas(host: CpuModule) -> bool:
    """Whether the compiled host code calls cuBLAS stubs (it has the handle global)."""
    return host.global_address(HANDLE) != 0
