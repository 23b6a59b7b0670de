"""The CUDA runtime: PTX from `hetero.lowering.gpu_codegen` run on a GPU, via cuda-python.

    modules = compile_gpu(module)               # PTX, no GPU needed
    gpu = CudaModule(modules[0])                # loads it (cuModuleLoadData)
    gpu.call("k", x, w, out)                    # NumPy in; `out` is written back

A `GpuProgram` (what `hetero.lowering.cuda_codegen.compile_cuda` makes) is
host code JIT-compiled for the CPU that launches the kernels itself
(`cuLaunchKernel` from native code, no Python in the loop).

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
from typing import Any, NamedTuple

import numpy as np

from hetero.runtime import cublas, cudnn
from hetero.runtime.native import NativeModule, runtime_ir
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


DYNAMIC = -1
"""A kernel parameter's dimension whose size is passed at the launch."""


class KernelParam(NamedTuple):
    """A kernel parameter, as `cuLaunchKernel` passes it: a memref (`shape`)
    as its device pointer then the sizes of its `DYNAMIC` dimensions, a
    scalar by value as `dtype`."""

    type: str
    """As written (`memref<4x?xf32>`, `f32`), for messages."""
    shape: tuple[int, ...] | None = None
    """A memref's shape; None for a scalar."""
    dtype: str | None = None
    """A scalar's NumPy dtype; None for one that cannot be passed."""


@dataclass(frozen=True)
class KernelInfo:
    """What launching a kernel needs: its parameters and launch sizes."""

    name: str
    params: tuple[KernelParam, ...]
    """The parameters before lowering (memrefs and scalars), as `hetero.signature`."""
    grid: tuple[int, int, int]
    block: tuple[int, int, int]


@dataclass(frozen=True)
class PtxModule:
    """The PTX of one `gpu.module` and its kernels."""

    name: str
    arch: str
    ptx: str
    kernels: tuple[KernelInfo, ...]

    def kernel(self, name: str) -> KernelInfo:
        for info in self.kernels:
            if info.name == name:
                return info
        raise KeyError(f"no kernel @{name} in the GPU module @{self.name}")


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


def _to_device(pointer: Any, array: np.ndarray) -> None:
    """`array`'s bytes into the device (or managed) memory at `pointer`."""
    if array.nbytes:
        source = np.ascontiguousarray(array)
        _check(
            _driver().cuMemcpyHtoD(pointer, source.ctypes.data, array.nbytes),
            "cuMemcpyHtoD",
        )


def _to_host(array: np.ndarray, pointer: Any) -> None:
    """The device (or managed) memory at `pointer` into the C-contiguous `array`."""
    if array.nbytes:
        _check(
            _driver().cuMemcpyDtoH(array.ctypes.data, pointer, array.nbytes),
            "cuMemcpyDtoH",
        )


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
        _to_device(self.pointer, array)

    def copy_to_host(self, array: np.ndarray) -> None:
        """Device → host, into a C-contiguous `array` of the same shape and dtype."""
        self._check_like(array.shape, array.dtype)
        if not array.flags.c_contiguous:
            raise ValueError("copy_to_host needs a C-contiguous array")
        _to_host(array, self.pointer)

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


def kernel_arguments(info: KernelInfo, args: Sequence[object]) -> list[np.ndarray]:
    """One one-element array per lowered kernel parameter (what `cuLaunchKernel`
    points at): a memref's device pointer then its dynamic sizes, scalars."""
    params = info.params
    if len(args) != len(params):
        raise ValueError(
            f"@{info.name} takes {len(params)} argument(s), {len(args)} given"
        )
    values: list[np.ndarray] = []
    for i, (param, arg) in enumerate(zip(params, args)):
        if (shape := param.shape) is not None:
            if not isinstance(arg, DeviceArray):
                raise TypeError(f"@{info.name}: argument #{i} must be a DeviceArray")
            if len(shape) != len(arg.shape) or any(
                d != DYNAMIC and d != a for d, a in zip(shape, arg.shape)
            ):
                raise ValueError(
                    f"@{info.name}: argument #{i} has shape {arg.shape}, not {param.type}"
                )
            values.append(np.array([int(arg.pointer)], np.uint64))
            values += [
                np.array([a], np.int64)
                for d, a in zip(shape, arg.shape)
                if d == DYNAMIC
            ]
        elif param.dtype is None:
            raise HeteroError(
                f"kernel parameters of type {param.type} are not supported"
            )
        else:
            values.append(np.array([arg], param.dtype))
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


def shim_ir() -> str:
    """The driver shim that GPU host code links in (`cuda_shim.ll`): the
    driver's entry points as pointers (`DRIVER_FUNCTIONS`), the `STATUS`,
    the wait for queued work and managed allocation (`MANAGED_ALLOCATION`)."""
    return runtime_ir("cuda_shim.ll")


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
    a time as they read it (a first convolution waits while it faults its
    input image over).  A hint: ignored where
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
        self.array[...] = array
        _prefetch_to_device(int(self.pointer), self.nbytes)

    def refill(self, array: np.ndarray) -> None:
        """Copies `array` (of this shape and type) in by the driver's copy
        engine: written through the host view, each page the last call left
        on the GPU would fault back to the host first, one at a time."""
        _to_device(self.pointer, array)

    def copy_out(self, array: np.ndarray) -> None:
        """Into `array` (of this shape and type), by the copy engine rather
        than page faults (GPT-2's 25.7 MB of logits took about 10 ms read
        through the host view on an H200, most of its call)."""
        if not array.flags.c_contiguous:
            array[...] = self.array
        else:
            _to_host(array, self.pointer)


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


LIBRARIES = (
    (cublas.uses_cublas, cublas.CublasBinding),
    (cudnn.uses_cudnn, cudnn.CudnnBinding),
)
"""The GPU libraries host code may call: whether it does, and the binding
(entry points, handle, state) made at a program's first call."""


class GpuProgram:
    """Host code (a `CpuModule`) that launches the kernels of its `PtxModule`s.

    The GPU is touched on the first call only: the PTX is loaded, each
    kernel's handle stored in the host code's `@k.function`, and the driver
    entry points in its function pointers, and each library the host code
    calls is bound (`LIBRARIES`: one handle per program).  A call copies
    NumPy arguments into managed memory (a `ResidentArray` is uploaded once
    and reused), runs the host function, reports the first failed driver or
    library call (`CudaError`, `CublasError`, `CudnnError`) and copies the arrays back (they are shared, as on the
    CPU).  The managed buffers stay with the program for the next call with
    arrays of the same shapes (`_staged`), and calls take turns (a lock):
    they share those buffers and the host code's status."""

    def __init__(self, host: NativeModule, kernels: Sequence[PtxModule]):
        self.host = host
        self.kernels = tuple(kernels)
        self._modules: list[CudaModule] | None = None
        self._libraries: list[cublas.CublasBinding | cudnn.CudnnBinding] = []
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
        self._libraries = [
            bind(self.host, self) for uses, bind in LIBRARIES if uses(self.host)
        ]
        self._modules = modules  # loaded: only now may the host code run

    def _store(self, global_name: str, value: int | None) -> None:
        ctypes.c_void_p.from_address(
            self.host.global_address(global_name)
        ).value = value

    def function(self, name: str, results: int | None = None) -> Callable[..., None]:
        """Host function `name` on NumPy arrays.  `results`: the last
        `results` arguments are the call's results, which its kernels write
        whole, so they are not copied in and only they are copied back; None:
        every array both ways (shared, as on the CPU)."""
        host_function = self.host.function(name)

        def call(*args: object) -> None:
            with self._lock:
                run(args)

        def is_result(position: int, count: int) -> bool:
            return results is not None and position >= count - results

        def run(args: Sequence[object]) -> None:
            self._load()
            status = ctypes.c_int32.from_address(self.host.global_address(STATUS))
            status.value = 0
            for library in self._libraries:
                library.reset()
            managed = [
                self._staged(name, i, a, fill=not is_result(i, len(args)))
                if isinstance(a, np.ndarray)
                else a
                for i, a in enumerate(args)
            ]
            # The copies in may return before their DMA lands (a pageable
            # source): the GPU's work queues after them, CPU code does not.
            device().synchronize()
            host_function(*map(_host_argument, managed))
            device().synchronize()
            # Nothing is pending now: the next call's first wait is free.
            ctypes.c_bool.from_address(self.host.global_address(PENDING)).value = False
            if status.value:
                _check((_driver().CUresult(status.value),), f"a driver call of @{name}")
            for library in self._libraries:
                library.check(name)
            for i, (arg, copy) in enumerate(zip(args, managed)):
                copied_back = results is None or is_result(i, len(args))
                if isinstance(copy, ManagedArray) and copied_back:
                    assert isinstance(arg, np.ndarray)
                    copy.copy_out(arg)

        return call

    def _staged(
        self, name: str, position: int, array: np.ndarray, fill: bool = True
    ) -> ManagedArray:
        """Argument `position` of `name` in managed memory: the last call's
        buffer, refilled unless not `fill` (a result's), where its array had
        this shape and type (allocating and freeing managed memory at each
        call took a sizeable share of a network's inference), else a new one."""
        staged = self._staging.get((name, position))
        kind = (array.shape, array.dtype)
        if staged is not None and (staged.array.shape, staged.array.dtype) == kind:
            if fill:
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
