"""The CUDA runtime: PTX from `hetero.lowering.gpu_codegen` run on a GPU, via cuda-python.

    modules = compile_gpu(module)               # PTX, no GPU needed
    gpu = CudaModule(modules[0])                # loads it (cuModuleLoadData)
    gpu.call("k", x, w, out)                    # NumPy in; `out` is written back

`compile_cuda(module)` is `compile_cpu` for modules with GPU kernels: it
returns a `GpuProgram`, host code JIT-compiled for the CPU that launches the
kernels itself (`cuLaunchKernel` from native code, no Python in the loop).

The CUDA driver is initialised lazily, on first use (`device()`): `cuInit`,
the first device's primary context.  A machine without the NVIDIA driver or
without a GPU gets a `CudaUnavailable` (a `HeteroError`) saying so, never a
traceback from deep inside cuda-python; `unavailable_reason()` asks without
raising (tests skip with it).

* `DeviceArray` — device memory (`cuMemAlloc`) with a shape and dtype:
  `from_numpy`, `to_numpy`, host↔device and device↔device copies
  (`cuMemcpyHtoD`/`DtoH`/`DtoD`; the driver's copies are synchronous with
  respect to the host).
* `CudaModule` — a loaded `PtxModule`; `kernel(name)` launches with the
  launch sizes the compiler recorded (`cuLaunchKernel` on the default
  stream, then `cuCtxSynchronize`) and passes arguments by the kernel ABI of
  `convert-memref-to-llvm`: a memref is its device pointer followed by its
  dynamic sizes, scalars by value.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from xdsl.backend.llvm.convert_type import convert_type
from xdsl.context import Context
from xdsl.dialects import func as func_dialect
from xdsl.dialects import gpu
from xdsl.dialects import llvm as llvm_dialect
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Attribute
from xdsl.traits import SymbolTable

from hetero.dialects import tir
from hetero.lowering.convert_tir_to_gpu import is_gpu
from hetero.lowering.convert_tir_to_scf import ConvertTirToScfPass
from hetero.lowering.cpu_codegen import codegen_options
from hetero.lowering.gpu_codegen import KernelInfo, PtxModule, start_compile_gpu
from hetero.lowering.lower_gpu_launch import (
    LAUNCH_STUB,
    LAUNCH_SUFFIX,
    LAUNCHES,
    LowerGpuLaunchPass,
)
from hetero.lowering.parallel_launchers import define_launchers
from hetero.lowering.pipeline import lower_to_llvm
from hetero.runtime import cublas
from hetero.runtime.cpu import CpuModule
from hetero.transforms.annotate_device_regions import AnnotateDeviceRegionsPass
from hetero.transforms.inline_private_functions import InlinePrivateFunctionsPass
from hetero.transforms.lower_device_kernel_launch import LowerDeviceKernelLaunchPass
from hetero.transforms.split_host_device import SplitHostDevicePass
from hetero.utils.diagnostics import HeteroError


class CudaUnavailable(HeteroError):
    """No CUDA driver or no GPU on this machine."""


class CudaError(HeteroError):
    """A CUDA driver call failed."""


def _driver() -> Any:
    from cuda.bindings import driver  # imported on use: cuda-python is optional

    return driver


def _check(result: tuple[Any, ...], call: str) -> Any:
    """The values a driver call returned after its status; `CudaError` if it failed."""
    status, *values = result
    driver = _driver()
    if status != driver.CUresult.CUDA_SUCCESS:
        _, name = driver.cuGetErrorName(status)
        raise CudaError(f"{call} failed: {name.decode() if name else status}")
    return values[0] if len(values) == 1 else tuple(values)


@dataclass(frozen=True)
class Device:
    """The initialised driver's device and its (primary, current) context."""

    handle: Any
    context: Any
    name: str

    def synchronize(self) -> None:
        _check(_driver().cuCtxSynchronize(), "cuCtxSynchronize")


@cache
def _device() -> Device:
    try:
        driver = _driver()
        _check(driver.cuInit(0), "cuInit")
        count = _check(driver.cuDeviceGetCount(), "cuDeviceGetCount")
    except (ImportError, CudaError, RuntimeError, OSError) as e:
        raise CudaUnavailable(f"no CUDA driver/GPU: {e}") from e
    except Exception as e:  # cuda-python's DynamicLibNotFoundError and kin
        raise CudaUnavailable(f"no CUDA driver/GPU: {type(e).__name__}: {e}") from e
    if count < 1:
        raise CudaUnavailable("no CUDA driver/GPU: the driver reports no device")
    handle = _check(driver.cuDeviceGet(0), "cuDeviceGet")
    context = _check(
        driver.cuDevicePrimaryCtxRetain(handle), "cuDevicePrimaryCtxRetain"
    )
    _check(driver.cuCtxSetCurrent(context), "cuCtxSetCurrent")
    name = _check(driver.cuDeviceGetName(256, handle), "cuDeviceGetName")
    return Device(handle, context, name.split(b"\0")[0].decode())


def device() -> Device:
    """The GPU, initialising the driver on first use; `CudaUnavailable` if none."""
    return _device()


def unavailable_reason() -> str | None:
    """Why no GPU can be used here, or None when one can."""
    try:
        device()
    except CudaUnavailable as e:
        return e.message
    return None


class _Allocation:
    """Driver memory, freed with its owner.  `cuMemFree` is looked up when
    the memory is allocated: `__del__` may run as the interpreter shuts
    down, when importing the driver module again fails."""

    pointer: Any

    def _allocate(self, allocate: str, *args: object) -> None:
        self._free = _driver().cuMemFree
        self.pointer = _check(getattr(_driver(), allocate)(*args), allocate)

    def __del__(self) -> None:
        pointer = getattr(self, "pointer", None)
        if pointer is not None:
            self._free(pointer)


class DeviceArray(_Allocation):
    """An array in GPU memory: a device pointer, a shape and a dtype."""

    def __init__(self, shape: Sequence[int], dtype: np.dtype[Any] | type):
        device()
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape)) * self.dtype.itemsize
        self._allocate("cuMemAlloc", max(self.nbytes, 1))

    @staticmethod
    def from_numpy(array: np.ndarray) -> DeviceArray:
        result = DeviceArray(array.shape, array.dtype)
        result.copy_from_host(array)
        return result

    def copy_from_host(self, array: np.ndarray) -> None:
        """Host → device; `array` must match in shape and dtype."""
        self._check_like(array.shape, array.dtype)
        source = np.ascontiguousarray(array)
        _check(
            _driver().cuMemcpyHtoD(self.pointer, source.ctypes.data, self.nbytes),
            "cuMemcpyHtoD",
        )

    def copy_to_host(self, array: np.ndarray) -> None:
        """Device → host, into a C-contiguous `array` of the same shape and dtype."""
        self._check_like(array.shape, array.dtype)
        if not array.flags.c_contiguous:
            raise ValueError("copy_to_host needs a C-contiguous array")
        _check(
            _driver().cuMemcpyDtoH(array.ctypes.data, self.pointer, self.nbytes),
            "cuMemcpyDtoH",
        )

    def copy_from(self, other: DeviceArray) -> None:
        """Device → device."""
        self._check_like(other.shape, other.dtype)
        _check(
            _driver().cuMemcpyDtoD(self.pointer, other.pointer, self.nbytes),
            "cuMemcpyDtoD",
        )

    def to_numpy(self) -> np.ndarray:
        result = np.empty(self.shape, self.dtype)
        self.copy_to_host(result)
        return result

    def _check_like(self, shape: tuple[int, ...], dtype: np.dtype[Any]) -> None:
        if tuple(shape) != self.shape or np.dtype(dtype) != self.dtype:
            raise ValueError(
                f"device array {self.shape} {self.dtype} cannot be copied "
                f"to or from {tuple(shape)} {np.dtype(dtype)}"
            )


_SCALARS: dict[type[Attribute] | int, np.dtype[Any]] = {
    Float32Type: np.dtype(np.float32),
    Float64Type: np.dtype(np.float64),
    8: np.dtype(np.int8),
    16: np.dtype(np.int16),
    32: np.dtype(np.int32),
    64: np.dtype(np.int64),
}
"""Scalar parameter type → the dtype its value is passed as (`index` is i64)."""


def _scalar_dtype(t: Attribute) -> np.dtype[Any]:
    if isinstance(t, IndexType):
        return _SCALARS[64]
    key = t.width.data if isinstance(t, IntegerType) else type(t)
    if key not in _SCALARS:
        raise HeteroError(f"kernel parameters of type {t} are not supported")
    return _SCALARS[key]


def kernel_arguments(info: KernelInfo, args: Sequence[object]) -> list[np.ndarray]:
    """One one-element array per lowered kernel parameter (what `cuLaunchKernel`
    points at): a memref's device pointer then its dynamic sizes, scalars."""
    inputs = info.signature.inputs.data
    if len(args) != len(inputs):
        raise ValueError(
            f"@{info.name} takes {len(inputs)} argument(s), {len(args)} given"
        )
    values: list[np.ndarray] = []
    for i, (t, arg) in enumerate(zip(inputs, args)):
        if isinstance(t, MemRefType):
            if not isinstance(arg, DeviceArray):
                raise TypeError(f"@{info.name}: argument #{i} must be a DeviceArray")
            shape = t.get_shape()
            if len(shape) != len(arg.shape) or any(
                d != DYNAMIC_INDEX and d != a for d, a in zip(shape, arg.shape)
            ):
                raise ValueError(
                    f"@{info.name}: argument #{i} has shape {arg.shape}, not {t}"
                )
            values.append(np.array([int(arg.pointer)], np.uint64))
            values += [
                np.array([a], np.int64)
                for d, a in zip(shape, arg.shape)
                if d == DYNAMIC_INDEX
            ]
        else:
            values.append(np.array([arg], _scalar_dtype(t)))
    return values


class CudaKernel:
    """A kernel of a loaded module, launched with its recorded sizes."""

    def __init__(self, function: Any, info: KernelInfo):
        self.function = function
        self.info = info

    def __call__(self, *args: object) -> None:
        values = kernel_arguments(self.info, args)
        pointers = np.array([v.ctypes.data for v in values], np.uint64)
        (gx, gy, gz), (bx, by, bz) = self.info.grid, self.info.block
        _check(
            _driver().cuLaunchKernel(
                self.function, gx, gy, gz, bx, by, bz, 0, 0, pointers.ctypes.data, 0
            ),
            f"cuLaunchKernel(@{self.info.name})",
        )
        device().synchronize()


class CudaModule:
    """A `PtxModule` loaded on the GPU (`cuModuleLoadData`)."""

    def __init__(self, ptx: PtxModule):
        device()
        self.ptx = ptx
        image = ctypes.create_string_buffer(ptx.ptx.encode())  # NUL-terminated
        self.handle = _check(
            _driver().cuModuleLoadData(ctypes.addressof(image)), "cuModuleLoadData"
        )
        self._kernels: dict[str, CudaKernel] = {}

    def kernel(self, name: str) -> CudaKernel:
        if name not in self._kernels:
            info = self.ptx.kernel(name)
            function = _check(
                _driver().cuModuleGetFunction(self.handle, name.encode()),
                "cuModuleGetFunction",
            )
            self._kernels[name] = CudaKernel(function, info)
        return self._kernels[name]

    def call(self, name: str, *args: object) -> None:
        """Run kernel `name` on NumPy arrays (copied in, and back out, as the
        CPU runtime shares them) and scalars."""
        device_args = [
            DeviceArray.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args
        ]
        self.kernel(name)(*device_args)
        for host, on_device in zip(args, device_args):
            if isinstance(host, np.ndarray):
                assert isinstance(on_device, DeviceArray)
                on_device.copy_to_host(host)


# ----------------------------------------------------------------------------
# Host programs: JIT-compiled host code launching PTX kernels
# ----------------------------------------------------------------------------

DRIVER_FUNCTIONS = (
    "cuLaunchKernel",
    "cuCtxSynchronize",
    "cuMemAllocManaged",
    "cuMemFree_v2",
    "cuMemPrefetchAsync_v2",
)
"""Driver entry points the JIT-compiled host code calls (through pointers that
`GpuProgram` fills in, so host code compiles on machines without a driver).
A driver without `cuMemPrefetchAsync_v2` (before CUDA 12.2) leaves its
pointer null: the host code then does not prefetch."""

PREFETCH_TO_DEVICE = 1
"""`cuMemPrefetchAsync_v2`'s location `{CU_MEM_LOCATION_TYPE_DEVICE, 0}` (a
struct of two `int`s, passed by value as one 64-bit word: `type | id << 32`)."""

STATUS = "hetero.cuda.status"
"""Global of the host code: the first failing `CUresult` since it was cleared."""

PENDING = "hetero.cuda.pending"
"""Global of the host code: whether GPU work was queued since the last wait."""

MANAGED_ALLOCATION = {"aligned_alloc": "hetero_cuda_alloc", "free": "hetero_cuda_free"}
"""Allocation functions of a launching host function → their managed-memory stubs."""

_SHIM_IR = """
@hetero.cuda.cuLaunchKernel = global ptr null
@hetero.cuda.cuCtxSynchronize = global ptr null
@hetero.cuda.cuMemAllocManaged = global ptr null
@hetero.cuda.cuMemFree_v2 = global ptr null
@hetero.cuda.cuMemPrefetchAsync_v2 = global ptr null
@hetero.cuda.status = global i32 0
@hetero.cuda.pending = global i1 false

define internal void @hetero.cuda.check(i32 %rc) {
  %failed = icmp ne i32 %rc, 0
  %old = load i32, ptr @hetero.cuda.status
  %first = icmp eq i32 %old, 0
  %record = and i1 %failed, %first
  %new = select i1 %record, i32 %rc, i32 %old
  store i32 %new, ptr @hetero.cuda.status
  ret void
}

define internal void @hetero.cuda.queued() {
  store i1 true, ptr @hetero.cuda.pending
  ret void
}

define void @hetero_cuda_wait() {
  %pending = load i1, ptr @hetero.cuda.pending
  br i1 %pending, label %wait, label %done
wait:
  store i1 false, ptr @hetero.cuda.pending
  %synchronize = load ptr, ptr @hetero.cuda.cuCtxSynchronize
  %rc = call i32 %synchronize()
  call void @hetero.cuda.check(i32 %rc)
  br label %done
done:
  ret void
}

define ptr @hetero_cuda_alloc(i64 %alignment, i64 %size) {
entry:
  %slot = alloca i64
  store i64 0, ptr %slot
  %alloc = load ptr, ptr @hetero.cuda.cuMemAllocManaged
  %rc = call i32 %alloc(ptr %slot, i64 %size, i32 1)
  call void @hetero.cuda.check(i32 %rc)
  %address = load i64, ptr %slot
  %prefetch = load ptr, ptr @hetero.cuda.cuMemPrefetchAsync_v2
  %can = icmp ne ptr %prefetch, null
  %allocated = icmp ne i64 %address, 0
  %both = and i1 %can, %allocated
  br i1 %both, label %to_device, label %done
to_device:
  ; Pages made on the GPU in one go, not a fault at a time by the kernels.
  ; A hint: a device that cannot prefetch says so, and nothing changes.
  %ignored = call i32 %prefetch(i64 %address, i64 %size, i64 1, i32 0, ptr null) ; PREFETCH_TO_DEVICE
  br label %done
done:
  %pointer = inttoptr i64 %address to ptr
  ret ptr %pointer
}

define void @hetero_cuda_free(ptr %pointer) {
  %free = load ptr, ptr @hetero.cuda.cuMemFree_v2
  %address = ptrtoint ptr %pointer to i64
  %rc = call i32 %free(i64 %address)
  call void @hetero.cuda.check(i32 %rc)
  ret void
}
"""
"""Driver function pointers, the status, the wait for queued work
(`lower-gpu-launch`'s `WAIT`: it synchronises only where a launch or a
cuBLAS call came since the last), managed allocation (LLVM IR, linked in)."""


def _launch_stub(declaration: llvm_dialect.FuncOp) -> str:
    """The definition of `@k.launch(gx, gy, gz, bx, by, bz, params...)`: the
    parameters stored to stack slots, `cuLaunchKernel` of `@k.function`'s
    handle on the default stream; the stub returns at once, noting that work
    is queued (the host waits where it touches memory next: `WAIT`)."""
    name = declaration.sym_name.data
    kernel = name.removesuffix(LAUNCH_SUFFIX)
    types = [str(convert_type(t)) for t in declaration.function_type.inputs.data]
    sizes, params = types[:6], types[6:]
    args = ", ".join(f"{t} %a{i}" for i, t in enumerate(types))
    lines = [
        f'@"{kernel}.function" = global ptr null',
        f'define void @"{name}"({args}) {{',
        f"  %params = alloca [{len(params)} x ptr]",
    ]
    for i, t in enumerate(params):
        lines += [
            f"  %s{i} = alloca {t}",
            f"  store {t} %a{i + 6}, ptr %s{i}",
            f"  %p{i} = getelementptr [{len(params)} x ptr], ptr %params, i64 0, i64 {i}",
            f"  store ptr %s{i}, ptr %p{i}",
        ]
    lines += [f"  %n{i} = trunc {t} %a{i} to i32" for i, t in enumerate(sizes)]
    dims = ", ".join(f"i32 %n{i}" for i in range(6))
    lines += [
        f'  %function = load ptr, ptr @"{kernel}.function"',
        "  %launch = load ptr, ptr @hetero.cuda.cuLaunchKernel",
        (
            f"  %rc = call i32 %launch(ptr %function, {dims}, i32 0, ptr null, "
            "ptr %params, ptr null)"
        ),
        "  call void @hetero.cuda.check(i32 %rc)",
        "  call void @hetero.cuda.queued()",
        "  ret void",
        "}",
    ]
    return "\n".join(lines)


def launch_stubs(module: ModuleOp) -> str:
    """LLVM IR defining the launch stubs `lower-gpu-launch` declared in the
    (`llvm`-dialect) host `module`, and the driver shim; the allocations of
    launching functions are switched to managed memory here."""
    stubs = [
        op
        for op in module.ops
        if isinstance(op, llvm_dialect.FuncOp) and LAUNCH_STUB in op.attributes
    ]
    for function in module.ops:
        if (
            isinstance(function, llvm_dialect.FuncOp)
            and LAUNCHES in function.attributes
        ):
            _use_managed_memory(module, function)
    return "\n\n".join(
        [_SHIM_IR, *(_launch_stub(op) for op in stubs), *cublas.stubs_ir(module)]
    )


def _use_managed_memory(module: ModuleOp, function: llvm_dialect.FuncOp) -> None:
    """The allocator `function` takes its heap buffers with (`aligned_alloc`
    and `free`, passed to `hetero_buffer_take`) → their managed stubs."""
    for op in function.walk():
        if not isinstance(op, llvm_dialect.AddressOfOp):
            continue
        replacement = MANAGED_ALLOCATION.get(op.global_name.string_value())
        if replacement is None:
            continue
        declaration = SymbolTable.lookup_symbol(module, op.global_name)
        assert isinstance(declaration, llvm_dialect.FuncOp)
        if SymbolTable.lookup_symbol(module, replacement) is None:
            module.body.block.add_op(
                llvm_dialect.FuncOp(
                    replacement,
                    declaration.function_type,
                    linkage=llvm_dialect.LinkageAttr("external"),
                )
            )
        op.global_name = SymbolRefAttr(replacement)


@cache
def _libcuda() -> ctypes.CDLL:
    return ctypes.CDLL("libcuda.so.1")


@cache
def _prefetch() -> Callable[..., int] | None:
    """The driver's `cuMemPrefetchAsync_v2`, typed; None before CUDA 12.2."""
    prefetch = getattr(_libcuda(), "cuMemPrefetchAsync_v2", None)
    if prefetch is not None:
        prefetch.argtypes = [
            ctypes.c_uint64,
            ctypes.c_size_t,
            ctypes.c_uint64,
            ctypes.c_uint,
            ctypes.c_void_p,
        ]
    return prefetch


def _prefetch_to_device(address: int, nbytes: int) -> None:
    """Moves managed memory the host just wrote to the GPU in one transfer,
    ahead of the kernels on the default stream, rather than a page fault at
    a time as they read it (on an H200, ResNet-50's first convolution took
    0.78 ms while it faulted the input image over).  A hint: ignored where
    the driver or the device cannot prefetch."""
    if (prefetch := _prefetch()) is not None:
        prefetch(address, nbytes, PREFETCH_TO_DEVICE, 0, None)


class ManagedArray(_Allocation):
    """A NumPy array in CUDA managed memory: the host and the GPU both see it."""

    def __init__(self, array: np.ndarray):
        device()
        self.nbytes = max(array.nbytes, 1)
        self._allocate("cuMemAllocManaged", self.nbytes, 1)
        raw = (ctypes.c_byte * self.nbytes).from_address(int(self.pointer))
        self.array = np.frombuffer(raw, array.dtype, array.size).reshape(array.shape)
        self.refill(array)

    def refill(self, array: np.ndarray) -> None:
        """Copies `array` (of this shape and type) in and sends it to the GPU."""
        self.array[...] = array
        _prefetch_to_device(int(self.pointer), self.nbytes)


class ResidentArray:
    """A read-only argument (a constant of the program) that stays in managed
    memory: uploaded at its first use, then passed as it is to every call."""

    def __init__(self, array: np.ndarray):
        self.array = array
        self._managed: ManagedArray | None = None

    def on_device(self) -> np.ndarray:
        if self._managed is None:
            self._managed = ManagedArray(self.array)
        return self._managed.array


class GpuProgram:
    """Host code (a `CpuModule`) that launches the kernels of its `PtxModule`s.

    The GPU is touched on the first call only: the PTX is loaded, each
    kernel's handle stored in the host code's `@k.function`, and the driver
    entry points in its function pointers, and cuBLAS is bound when the host
    code calls it (`hetero.runtime.cublas.CublasBinding`: one handle per
    program).  A call copies NumPy arguments into managed memory (a
    `ResidentArray` is uploaded once and reused), runs the host function,
    reports the first failed driver or cuBLAS call (`CudaError`,
    `CublasError`) and copies the arrays back (they are shared, as on the
    CPU).  The managed buffers stay with the program for the next call with
    arrays of the same shapes (`_staged`), and calls take turns (a lock):
    they share those buffers and the host code's status."""

    def __init__(self, host: CpuModule, kernels: Sequence[PtxModule]):
        self.host = host
        self.kernels = tuple(kernels)
        self._modules: list[CudaModule] | None = None
        self._cublas: cublas.CublasBinding | None = None
        self._staging: dict[tuple[str, int], ManagedArray] = {}
        self._lock = threading.Lock()

    def _load(self) -> None:
        if self._modules is not None:
            return
        device()
        library = _libcuda()
        for name in DRIVER_FUNCTIONS:
            function = getattr(library, name, None)
            self._store(
                f"hetero.cuda.{name}", ctypes.cast(function, ctypes.c_void_p).value
            )
        modules = [CudaModule(ptx) for ptx in self.kernels]
        for module in modules:
            for info in module.ptx.kernels:
                self._store(
                    f"{info.name}.function", int(module.kernel(info.name).function)
                )
        if cublas.uses_cublas(self.host):
            self._cublas = cublas.CublasBinding(self.host, self)
        self._modules = modules  # loaded: only now may the host code run

    def _store(self, global_name: str, value: int | None) -> None:
        ctypes.c_void_p.from_address(
            self.host.global_address(global_name)
        ).value = value

    def function(self, name: str) -> Callable[..., None]:
        host_function = self.host.function(name)

        def call(*args: object) -> None:
            with self._lock:
                run(args)

        def run(args: Sequence[object]) -> None:
            self._load()
            status = ctypes.c_int32.from_address(self.host.global_address(STATUS))
            status.value = 0
            if self._cublas is not None:
                self._cublas.reset()
            managed = [
                self._staged(name, i, a) if isinstance(a, np.ndarray) else a
                for i, a in enumerate(args)
            ]
            host_function(*map(_host_argument, managed))
            device().synchronize()
            # Nothing is pending now: the next call's first wait is free.
            ctypes.c_bool.from_address(self.host.global_address(PENDING)).value = False
            if status.value:
                _check((_driver().CUresult(status.value),), f"a driver call of @{name}")
            if self._cublas is not None:
                self._cublas.check(name)
            for arg, copy in zip(args, managed):
                if isinstance(copy, ManagedArray):
                    assert isinstance(arg, np.ndarray)
                    arg[...] = copy.array

        return call

    def _staged(self, name: str, position: int, array: np.ndarray) -> ManagedArray:
        """Argument `position` of `name` in managed memory: the last call's
        buffer refilled where its array had this shape and type (allocating
        and freeing managed memory took 0.2-0.3 ms a call on an H200, a
        tenth of ResNet-50's inference), else a new one."""
        staged = self._staging.get((name, position))
        kind = (array.shape, array.dtype)
        if staged is not None and (staged.array.shape, staged.array.dtype) == kind:
            staged.refill(array)
        else:
            staged = self._staging[name, position] = ManagedArray(array)
        return staged


def _host_argument(arg: object) -> object:
    """What the host function gets for an argument of a `GpuProgram` call."""
    if isinstance(arg, ManagedArray):
        return arg.array
    if isinstance(arg, ResidentArray):
        return arg.on_device()
    return arg


def _calls_cublas(function: tir.PrimFuncOp) -> bool:
    return any(
        isinstance(op, tir.CallExternOp) and cublas.is_stub(op.callee.data)
        for op in function.walk()
    )


def has_gpu_functions(module: ModuleOp) -> bool:
    """Whether `module` has functions for a GPU target, or host functions
    calling cuBLAS on managed buffers (then `compile_cuda`)."""
    return any(
        isinstance(op, tir.PrimFuncOp) and (is_gpu(op.target) or _calls_cublas(op))
        for op in module.ops
    )


def mark_cublas_stubs(module: ModuleOp) -> None:
    """Mark `LAUNCHES` the declarations of the cuBLAS stubs: a call of one
    queues GPU work, as a launch does.  `lower-gpu-launch` then marks their
    callers, whose buffers become managed memory, and waits after them."""
    for op in module.ops:
        if isinstance(op, func_dialect.FuncOp) and cublas.is_stub(op.sym_name.data):
            op.attributes[LAUNCHES] = UnitAttr()


SPLIT_PASSES = (
    InlinePrivateFunctionsPass(),
    AnnotateDeviceRegionsPass(),
    SplitHostDevicePass(),
    LowerDeviceKernelLaunchPass(),
    InlinePrivateFunctionsPass(),
)
"""The TIR target passes after `bind-target` (docs/passes/tir-target-passes.md):
each thread-bound nest of a GPU function with a host becomes a kernel of its
own, launched by what is left of the function; private helpers are inlined
where GPU code calls them, before (thread loops, and helpers whose results
the host part needs) and after the split (calls the new kernels inherit)."""


def compile_cuda(module: ModuleOp, ctx: Context | None = None) -> GpuProgram:
    """`compile_cpu` for modules with GPU kernels: the GPU functions split into
    kernels (`SPLIT_PASSES`; every function needs its target, `bind-target`),
    the kernels to PTX, the host functions (their calls of kernels become
    launches) to a `CpuModule`."""
    ctx = ctx or Context()
    options = codegen_options(module)
    for split in SPLIT_PASSES:
        split.apply(ctx, module)
    # The kernels compile in workers while this process compiles the host
    # code, without the `gpu.module`s (`lower-gpu-launch` would erase them).
    kernels = start_compile_gpu(module, ctx)
    for device in [op for op in module.ops if isinstance(op, gpu.ModuleOp)]:
        module.body.block.detach_op(device)
    ConvertTirToScfPass().apply(ctx, module)
    mark_cublas_stubs(module)
    LowerGpuLaunchPass().apply(ctx, module)
    lower_to_llvm(module, ctx=ctx)
    define_launchers(module)
    link = [launch_stubs(module)]
    return GpuProgram(CpuModule(module, link=link, **options), kernels())
