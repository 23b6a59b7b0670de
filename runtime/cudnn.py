"""cuDNN for the `cudnn` external codegen: NVIDIA's wheel, called from JIT-compiled host code.

    unavailable_reason()        # None where the library is installed
    Convolution(...).stub_name() / Convolution.from_stub(name)
    CudnnBinding(host, owner)   # at a GpuProgram's first call: handle, descriptors

The library comes from NVIDIA's PyPI wheel `nvidia-cudnn-cu13` (cuDNN 9,
its `libcudnn.so.9` a front that loads the `cnn`, `ops` and engine libraries
beside it), found by `cuda.pathfinder` as cuBLAS is (`hetero.runtime.cublas`).
Whether the kind is offered depends on the library only: programs using it
compile where there is no GPU, and calling them there raises
`CudaUnavailable`, as for the rest of the GPU path.

The generated code never names a cuDNN symbol.  A layer (a convolution with
its bias and relu, of one shape) is a stub whose name says everything about
it (`Convolution.stub_name`: `hetero_cudnn_f32_x1x3x8x8_w4x3x3x3_p1x1_s1x1_d1x1_g1_bias_relu`)
and whose parameters are the device pointers of x, w, the bias if any, and y.
`stubs_ir` writes, for the stubs a host module declares, their definitions,
a `%hetero.cudnn.layer` of state each and the table `@hetero.cudnn.layers`
of every layer's name and state, beside `cudnn_state.ll` (the handle, the
workspace, the entry points' pointers, the status and `convolve`, which
makes the calls).  At the program's first call `CudnnBinding` reads the
table and, once per layer, makes its descriptors (from the name: `settings`)
and picks its forward algorithm with cuDNN's heuristics
(`cudnnGetConvolutionForwardAlgorithm_v7`), then allocates one workspace, the
largest a layer's algorithm asks for.  A call then costs the cuDNN calls
only: `cudnnConvolutionForward`, `cudnnAddTensor` for the bias,
`cudnnActivationForward` in place for the relu, on the default stream
(ordered with hetero's kernels and cuBLAS' calls), queued as launches are.

f32 convolutions use FMA math (no TF32: results as exact as hetero's
kernels); f16 tensor cores with f32 accumulation; f64 cuDNN's default.
"""

from __future__ import annotations

import ctypes
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import cache
from typing import Any

import numpy as np

from hetero.runtime.native import NativeModule, runtime_ir
from hetero.runtime.nvidia import load_nvidia_library, unavailable
from hetero.utils.diagnostics import HeteroError

INSTALL = (
    "pip install 'hetero[cudnn]' (which installs NVIDIA's nvidia-cudnn-cu13 wheel)"
)

STUB_PREFIX = "hetero_cudnn_"
"""`hetero_cudnn_<layer>` is the stub the generated code calls (`Convolution.stub_name`)."""

HANDLE = "hetero.cudnn.handle"
STATUS = "hetero.cudnn.status"
WORKSPACE = "hetero.cudnn.workspace"
WORKSPACE_SIZE = "hetero.cudnn.workspace_size"
LAYERS = "hetero.cudnn.layers"
COUNT = "hetero.cudnn.count"

FUNCTIONS = ("cudnnConvolutionForward", "cudnnAddTensor", "cudnnActivationForward")
"""The entry points the host code calls, through `@hetero.cudnn.<function>`."""

# cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h (cuDNN 9)
_FLOAT, _DOUBLE, _HALF = 0, 1, 2
_DEFAULT_MATH, _TENSOR_OP_MATH, _FMA_MATH = 0, 1, 3
_NCHW, _CROSS_CORRELATION, _ACTIVATION_RELU, _PROPAGATE_NAN = 0, 1, 1, 1
_ALGORITHMS = 8
"""How many of the heuristics' forward algorithms are asked for."""


@dataclass(frozen=True)
class DataType:
    """How cuDNN computes on one element type: the tensors' `cudnnDataType_t`,
    the convolution's accumulation type and math, the type of alpha/beta."""

    data: int
    compute: int
    math: int
    scalar: str


DTYPES: dict[str, DataType] = {
    "f16": DataType(_HALF, _FLOAT, _TENSOR_OP_MATH, "float"),
    "f32": DataType(_FLOAT, _FLOAT, _FMA_MATH, "float"),
    "f64": DataType(_DOUBLE, _DOUBLE, _DEFAULT_MATH, "double"),
}
"""Element type → cuDNN's types: f16 data accumulates in f32 (pseudo-half)."""


@dataclass(frozen=True)
class Convolution:
    """One layer: conv2d of NCHW data with OIHW weights (groups: the weights
    are `[K, C/G, R, S]`), padding the same on both sides, then the bias on
    the channels and a relu where the layer has them."""

    dtype: str
    x: tuple[int, int, int, int]
    """N, C, H, W."""
    w: tuple[int, int, int, int]
    """K, C/G, R, S."""
    p: tuple[int, int]
    """Padding of H and W (each on both sides)."""
    s: tuple[int, int]
    """Strides."""
    d: tuple[int, int]
    """Dilation."""
    g: int = 1
    """Groups."""
    bias: bool = False
    relu: bool = False

    def output(self) -> tuple[int, int, int, int]:
        """N, K, P, Q, as cuDNN computes them (`cudnnGetConvolution2dForwardOutputDim`)."""
        n, _, *size = self.x
        k, _, *kernel = self.w
        p, q = (
            (i + 2 * pad - (dil * (f - 1) + 1)) // stride + 1
            for i, f, pad, stride, dil in zip(size, kernel, self.p, self.s, self.d)
        )
        return n, k, p, q

    def stub_name(self) -> str:
        """`hetero_cudnn_<dtype>_x..._w..._p..._s..._d..._g<groups>[_bias][_relu]`."""
        parts = [self.dtype]
        for f in fields(self)[1:7]:
            value = getattr(self, f.name)
            dims = value if isinstance(value, tuple) else (value,)
            parts.append(f.name + "x".join(map(str, dims)))
        parts += [flag for flag in ("bias", "relu") if getattr(self, flag)]
        return STUB_PREFIX + "_".join(parts)

    @staticmethod
    def from_stub(name: str) -> Convolution:
        """The layer of the stub `name` (`stub_name`'s inverse)."""
        match = _STUB.fullmatch(name)
        if match is None:
            raise ValueError(f"{name} is not the name of a cuDNN layer's stub")
        dtype, x, w, p, s, d, g, flags = match.groups()

        def dims(text: str) -> tuple[int, ...]:
            return tuple(map(int, text.split("x")))

        return Convolution(
            dtype, dims(x), dims(w), dims(p), dims(s), dims(d), int(g),  # type: ignore[arg-type]
            "_bias" in flags, "_relu" in flags,
        )  # fmt: skip

    def settings(self) -> dict[str, list[tuple[str, tuple[Any, ...]]]]:
        """Each descriptor of the layer (in `%hetero.cudnn.layer`'s order,
        those it has) → the cuDNN calls that set it, after the descriptor."""
        t = DTYPES[self.dtype]
        tensor = "cudnnSetTensor4dDescriptor"
        made = {
            "x": [(tensor, (_NCHW, t.data, *self.x))],
            "w": [("cudnnSetFilter4dDescriptor", (t.data, _NCHW, *self.w))],
            "conv": [
                ("cudnnSetConvolution2dDescriptor",
                 (*self.p, *self.s, *self.d, _CROSS_CORRELATION, t.compute)),
                ("cudnnSetConvolutionGroupCount", (self.g,)),
                ("cudnnSetConvolutionMathType", (t.math,)),
            ],
            "y": [(tensor, (_NCHW, t.data, *self.output()))],
            "bias": [(tensor, (_NCHW, t.data, 1, self.w[0], 1, 1))],
            "act": [("cudnnSetActivationDescriptor", (_ACTIVATION_RELU, _PROPAGATE_NAN, 0.0))],
        }  # fmt: skip
        wanted = {"bias": self.bias, "act": self.relu}
        return {k: v for k, v in made.items() if wanted.get(k, True)}


_STUB = re.compile(
    re.escape(STUB_PREFIX)
    + r"(f16|f32|f64)_x(\d+x\d+x\d+x\d+)_w(\d+x\d+x\d+x\d+)_p(\d+x\d+)_s(\d+x\d+)"
    r"_d(\d+x\d+)_g(\d+)((?:_bias)?(?:_relu)?)"
)

DESCRIPTORS: dict[str, str] = {
    "x": "TensorDescriptor",
    "w": "FilterDescriptor",
    "conv": "ConvolutionDescriptor",
    "y": "TensorDescriptor",
    "bias": "TensorDescriptor",
    "act": "ActivationDescriptor",
}
"""`%hetero.cudnn.layer`'s descriptors in order → their cuDNN type
(`cudnnCreate<type>`, `cudnnDestroy<type>`)."""


def is_stub(name: str) -> bool:
    return name.startswith(STUB_PREFIX)


def _layer_ir(name: str) -> str:
    """The state, the name and the stub of one layer."""
    layer = Convolution.from_stub(name)
    scalar = DTYPES[layer.dtype].scalar
    params = ["x", "w", *(["b"] if layer.bias else []), "y"]
    casts = [f"  %p{v} = inttoptr i64 %{v} to ptr" for v in params]
    bias = "ptr %pb" if layer.bias else "ptr null"
    return "\n".join([
        f'@"{name}.state" = global %hetero.cudnn.layer zeroinitializer',
        f'@"{name}.name" = private constant [{len(name) + 1} x i8] c"{name}\\00"',
        f"define void @{name}({', '.join(f'i64 %{v}' for v in params)}) {{",
        *casts,
        (f'  call void @hetero.cudnn.convolve(ptr @"{name}.state", ptr %px, ptr %pw, '
         f"{bias}, ptr %py, ptr @hetero.cudnn.one.{scalar}, ptr @hetero.cudnn.zero.{scalar})"),
        "  ret void",
        "}",
    ])  # fmt: skip


def stubs_ir(names: Sequence[str]) -> list[str]:
    """LLVM IR defining the cuDNN stubs `names` (none: nothing), their state
    (`cudnn_state.ll`) and the table of layers `CudnnBinding` reads."""
    if not names:
        return []
    entries = ", ".join(
        f'{{ ptr, ptr }} {{ ptr @"{n}.name", ptr @"{n}.state" }}' for n in names
    )
    table = "\n".join([
        f"@{COUNT} = global i64 {len(names)}",
        f"@{LAYERS} = global [{len(names)} x {{ ptr, ptr }}] [{entries}]",
    ])  # fmt: skip
    return [runtime_ir("cudnn_state.ll"), *map(_layer_ir, names), table]


@cache
def load_cudnn() -> str:
    """Load libcudnn from NVIDIA's wheel (once); its path."""
    return load_nvidia_library("cudnn", "cuDNN", INSTALL)


def unavailable_reason() -> str | None:
    """Why cuDNN partitions cannot be compiled here, or None."""
    return unavailable(load_cudnn)


class CudnnError(HeteroError):
    """A cuDNN call of the host code (or of making its state) failed."""


class _AlgorithmPerf(ctypes.Structure):
    """`cudnnConvolutionFwdAlgoPerf_t`."""

    _fields_ = [
        ("algo", ctypes.c_int),
        ("status", ctypes.c_int),
        ("time", ctypes.c_float),
        ("memory", ctypes.c_size_t),
        ("determinism", ctypes.c_int),
        ("mathType", ctypes.c_int),
        ("reserved", ctypes.c_int * 3),
    ]


def choose_algorithm(found: Sequence[Any], math: int) -> Any:
    """The heuristics' first algorithm that runs with the layer's math (f32:
    FMA, never TF32), else their first that runs at all; None if none does."""
    usable = [p for p in found if p.status == 0]
    same = [p for p in usable if p.mathType == math]
    return (same or usable or [None])[0]


class Cudnn:
    """The loaded library: descriptors made, algorithms chosen, the handle."""

    def __init__(self, path: str) -> None:
        self.lib = ctypes.CDLL(path)
        self.lib.cudnnGetErrorString.restype = ctypes.c_char_p
        self.lib.cudnnGetVersion.restype = ctypes.c_size_t

    @property
    def version(self) -> int:
        return self.lib.cudnnGetVersion()

    def check(self, name: str, *args: Any) -> None:
        status = getattr(self.lib, name)(*args)
        if status != 0:
            why = self.lib.cudnnGetErrorString(status).decode()
            raise CudnnError(f"cuDNN's {name} failed: {why} ({status})")

    def entry(self, name: str) -> int:
        """The address of the entry point `name`."""
        return ctypes.cast(getattr(self.lib, name), ctypes.c_void_p).value  # type: ignore[return-value]

    def create_handle(self) -> int:
        """A handle on the current CUDA context (a GPU is needed)."""
        handle = ctypes.c_void_p()
        self.check("cudnnCreate", ctypes.byref(handle))
        return handle.value  # type: ignore[return-value]

    def descriptors(self, layer: Convolution) -> dict[str, int]:
        """`layer`'s descriptors, made and set (host calls: no GPU needed)."""
        made: dict[str, int] = {}
        for name, calls in layer.settings().items():
            desc = ctypes.c_void_p()
            self.check(f"cudnnCreate{DESCRIPTORS[name]}", ctypes.byref(desc))
            made[name] = desc.value  # type: ignore[assignment]
            for function, args in calls:
                self.check(function, desc, *map(_c_argument, args))
        return made

    def destroy(self, made: dict[str, int]) -> None:
        for name, desc in made.items():
            getattr(self.lib, f"cudnnDestroy{DESCRIPTORS[name]}")(ctypes.c_void_p(desc))

    def algorithm(
        self, handle: int, made: dict[str, int], layer: Convolution
    ) -> tuple[int, int]:
        """The forward algorithm for `layer` (cuDNN's heuristics, `choose_algorithm`)
        and the bytes of workspace it needs."""
        found = (_AlgorithmPerf * _ALGORITHMS)()
        count = ctypes.c_int()
        descs = [ctypes.c_void_p(made[k]) for k in ("x", "w", "conv", "y")]
        self.check(
            "cudnnGetConvolutionForwardAlgorithm_v7",
            ctypes.c_void_p(handle), *descs, _ALGORITHMS, ctypes.byref(count), found,
        )  # fmt: skip
        chosen = choose_algorithm(found[: count.value], DTYPES[layer.dtype].math)
        if chosen is None:
            raise CudnnError(f"cuDNN has no forward algorithm for {layer.stub_name()}")
        self.check("cudnnSetConvolutionMathType", descs[2], chosen.mathType)
        size = ctypes.c_size_t()
        self.check(
            "cudnnGetConvolutionForwardWorkspaceSize",
            ctypes.c_void_p(handle), *descs, chosen.algo, ctypes.byref(size),
        )  # fmt: skip
        return chosen.algo, size.value


def _c_argument(value: Any) -> Any:
    """A setting's argument for ctypes: floats are C doubles."""
    return ctypes.c_double(value) if isinstance(value, float) else value


@cache
def library() -> Cudnn:
    return Cudnn(load_cudnn())


class _LayerState(ctypes.Structure):
    """`%hetero.cudnn.layer`."""

    _fields_ = [
        *((name, ctypes.c_void_p) for name in DESCRIPTORS),
        ("algo", ctypes.c_int32),
    ]


def layers(host: NativeModule) -> list[tuple[str, int]]:
    """The host code's layers: each stub's name and the address of its state."""
    count = ctypes.c_int64.from_address(host.global_address(COUNT)).value
    table = (ctypes.c_void_p * (2 * count)).from_address(host.global_address(LAYERS))
    return [
        (ctypes.string_at(table[2 * i]).decode(), table[2 * i + 1])
        for i in range(count)
    ]


class CudnnBinding:
    """cuDNN bound to one program's host code: the entry points in its
    function pointers, a handle (on the CUDA runtime's current context), each
    layer's descriptors and algorithm, and the workspace, made here (the
    program's first call) and destroyed with the program."""

    def __init__(self, host: NativeModule, owner: object):
        from hetero.runtime import cuda

        cuda.device()
        cudnn = library()
        for function in FUNCTIONS:
            _store(host, f"hetero.cudnn.{function}", cudnn.entry(function))
        self.handle = cudnn.create_handle()
        made: list[dict[str, int]] = []
        weakref.finalize(owner, _release, cudnn, self.handle, made)
        _store(host, HANDLE, self.handle)
        workspace = 0
        for name, address in layers(host):
            layer = Convolution.from_stub(name)
            made.append(descs := cudnn.descriptors(layer))
            algo, size = cudnn.algorithm(self.handle, descs, layer)
            state = _LayerState.from_address(address)
            for field in DESCRIPTORS:
                setattr(state, field, descs.get(field))
            state.algo = algo
            workspace = max(workspace, size)
        self.workspace = cuda.DeviceArray((max(workspace, 1),), np.uint8)
        _store(host, WORKSPACE, int(self.workspace.pointer))
        ctypes.c_int64.from_address(
            host.global_address(WORKSPACE_SIZE)
        ).value = workspace
        self._status = ctypes.c_int32.from_address(host.global_address(STATUS))

    def reset(self) -> None:
        self._status.value = 0

    def check(self, name: str) -> None:
        """Raise for the first failed cuDNN call since `reset`."""
        if self._status.value:
            raise CudnnError(
                f"a cuDNN call of @{name} failed with cudnnStatus_t {self._status.value}"
            )


def _store(host: NativeModule, global_name: str, value: int) -> None:
    ctypes.c_void_p.from_address(host.global_address(global_name)).value = value


def _release(cudnn: Cudnn, handle: int, made: list[dict[str, int]]) -> None:
    for descs in made:
        cudnn.destroy(descs)
    cudnn.lib.cudnnDestroy(ctypes.c_void_p(handle))


def uses_cudnn(host: NativeModule) -> bool:
    """Whether the compiled host code calls cuDNN stubs (it has the handle global)."""
    return host.global_address(HANDLE) != 0
