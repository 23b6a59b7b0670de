"""The `cudnn` external codegen end to end (docs/external-codegens.md, docs/gpu.md).

Without a GPU (CI, this machine) everything up to the GPU is still checked:
the layer a stub's name describes and the descriptor settings made from it
(pure Python); where NVIDIA's `nvidia-cudnn-cu13` wheel is installed, those
settings against cuDNN itself (descriptors are host objects: cuDNN computes
each layer's output dimensions and reads its descriptors back without a
GPU); programs with `cudnn` in their configuration compiled to a
`GpuProgram` whose host code calls the layers' stubs; and that host code
run on the CPU with the program's real `CudnnBinding` (real descriptors)
and stand-ins for the driver and for cuDNN's three compute calls, which
read the descriptors back from cuDNN and compute with the reference
interpreter.  With a GPU and the library, every case runs on cuDNN and
equals the reference interpreter (skipped here, saying why).
"""

from __future__ import annotations

import ctypes
import re
import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from cuda import pathfinder
from test_cublas import _QUEUED, STAND_INS, _synchronize, random_inputs
from xdsl.context import Context

import hetero
from hetero.context import parse_module
from hetero.interpreter.relay import run
from hetero.runtime import cuda
from hetero.runtime import cudnn as cudnn_runtime
from hetero.runtime.cudnn import Convolution, CudnnBinding, choose_algorithm
from hetero.targets.codegen import unavailable_reason
from hetero.targets.patterns import pattern_table
from hetero.transforms.external_codegen import ExternalCodegenPass
from hetero.utils.diagnostics import HeteroError

NO_GPU = cuda.unavailable_reason()
NO_CUDNN = cudnn_runtime.unavailable_reason()
needs_cudnn = pytest.mark.skipif(NO_CUDNN is not None, reason=f"skipped: {NO_CUDNN}")
needs_gpu_and_cudnn = pytest.mark.skipif(
    NO_GPU is not None or NO_CUDNN is not None,
    reason=f"skipped: no GPU: {NO_GPU}" if NO_GPU else f"skipped: {NO_CUDNN}",
)

TARGETS = ["cuda", "llvm", "cudnn"]


@pytest.fixture
def with_cudnn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offer the kind where the wheel is missing: compiling needs only its presence."""
    monkeypatch.setattr(cudnn_runtime, "unavailable_reason", lambda: None)


def tensor(shape: tuple[int, ...], dtype: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{dtype}>"


def conv_program(layer: Convolution, chain: int = 1) -> str:
    """`layer` on the GPU as relay (its weights, and bias, parameters of
    `@main`); `chain` > 1: that many of it in a row (same C and K)."""
    t = layer.dtype
    x, w, y = (tensor(s, t) for s in (layer.x, layer.w, layer.output()))
    k = layer.w[0]
    attrs = (
        f"{{padding = array<i64: {layer.p[0]}, {layer.p[1]}, {layer.p[0]}, {layer.p[1]}>, "
        f"strides = array<i64: {layer.s[0]}, {layer.s[1]}>, "
        f"dilation = array<i64: {layer.d[0]}, {layer.d[1]}>, groups = {layer.g} : i64}}"
    )
    params = [
        f"%a: {x}",
        f"%w: {w}",
        *([f"%b: {tensor((k,), t)}"] if layer.bias else []),
    ]
    body, value = [], "%a"
    for i in range(chain):
        body.append(f"%c{i} = relay.nn.conv2d {value}, %w {attrs} : ({x}, {w}) -> {y}")
        value = f"%c{i}"
        if layer.bias:
            body.append(
                f"%e{i} = relay.nn.bias_add {value}, %b : ({y}, {tensor((k,), t)}) -> {y}"
            )
            value = f"%e{i}"
        if layer.relu:
            body.append(f"%r{i} = relay.relu {value} : {y}")
            value = f"%r{i}"
    lines = "\n    ".join(body)
    return (
        f"builtin.module {{\n  relay.func @main({', '.join(params)}) -> {y} {{\n"
        f"    {lines}\n    %g = relay.on_device {value} to #target.vdevice<cuda> : {y}\n"
        f"    relay.return %g : {y}\n  }}\n}}\n"
    )


LAYERS = {
    "conv": Convolution("f32", (1, 3, 8, 8), (4, 3, 3, 3), (0, 0), (1, 1), (1, 1)),
    "bias": Convolution("f32", (1, 3, 8, 8), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), bias=True),
    "bias relu": Convolution("f32", (2, 4, 9, 7), (6, 4, 3, 1), (1, 0), (1, 1), (1, 1), 1, True, True),
    "grouped": Convolution("f32", (1, 4, 8, 8), (6, 2, 3, 3), (1, 1), (1, 1), (1, 1), 2, True, True),
    "depthwise": Convolution("f32", (1, 8, 10, 10), (8, 1, 3, 3), (1, 1), (2, 2), (1, 1), 8, True, True),
    "strided dilated": Convolution("f32", (1, 3, 17, 15), (5, 3, 3, 3), (2, 1), (2, 3), (2, 1)),
    "f64": Convolution("f64", (1, 3, 6, 6), (2, 3, 3, 3), (1, 1), (1, 1), (1, 1), bias=True),
    "f16": Convolution("f16", (1, 8, 6, 6), (8, 8, 3, 3), (1, 1), (1, 1), (1, 1), 1, True, True),
}  # fmt: skip
"""Layers of every kind the pattern table gives cuDNN."""

CASES = {name: conv_program(layer) for name, layer in LAYERS.items()}
CHAIN = Convolution(
    "f32", (1, 4, 8, 8), (4, 2, 3, 3), (1, 1), (1, 1), (1, 1), 2, True, True
)
CASES["two layers"] = conv_program(CHAIN, chain=2)
"""Two layers of one shape in a row: one partition, one stub called twice."""


def tolerance(text: str) -> float:
    return 2e-2 if "f16" in text else 1e-4


def stubs(host_ir: str) -> list[str]:
    """The layers' stubs the host code defines."""
    return re.findall(r"^define void @(hetero_cudnn_\w+)\(", host_ir, re.MULTILINE)


# ----------------------------------------------------------------------------
# The layer and its descriptors, as pure Python
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", LAYERS)
def test_a_stub_name_says_all_of_its_layer(name: str) -> None:
    layer = LAYERS[name]
    assert Convolution.from_stub(layer.stub_name()) == layer
    assert cudnn_runtime.is_stub(layer.stub_name())


def test_stub_name_format() -> None:
    assert LAYERS["depthwise"].stub_name() == (
        "hetero_cudnn_f32_x1x8x10x10_w8x1x3x3_p1x1_s2x2_d1x1_g8_bias_relu"
    )
    with pytest.raises(ValueError, match="not the name of a cuDNN layer's stub"):
        Convolution.from_stub("hetero_cudnn_f32_x1x8_w8x1x3x3")


def test_output_dims_follow_padding_strides_and_dilation() -> None:
    # H: (17 + 2*2 - (2*(3-1)+1)) // 2 + 1 = 9; W: (15 + 2 - 3) // 3 + 1 = 5
    assert LAYERS["strided dilated"].output() == (1, 5, 9, 5)
    assert LAYERS["depthwise"].output() == (1, 8, 5, 5)


def test_descriptor_settings_of_a_grouped_f16_layer() -> None:
    """f16 data accumulates in f32 on tensor cores; the weights are
    `[K, C/G, R, S]` with the group count on the convolution; the bias is
    `[1, K, 1, 1]`, broadcast by cudnnAddTensor."""
    layer = Convolution("f16", (2, 6, 9, 9), (4, 3, 3, 5), (1, 2), (2, 1), (1, 2), 2, True, True)  # fmt: skip
    half, float_, nchw, cross_correlation, tensor_op_math = 2, 0, 0, 1, 1
    assert layer.output() == (2, 4, 5, 5)
    assert layer.settings() == {
        "x": [("cudnnSetTensor4dDescriptor", (nchw, half, 2, 6, 9, 9))],
        "w": [("cudnnSetFilter4dDescriptor", (half, nchw, 4, 3, 3, 5))],
        "conv": [
            ("cudnnSetConvolution2dDescriptor", (1, 2, 2, 1, 1, 2, cross_correlation, float_)),
            ("cudnnSetConvolutionGroupCount", (2,)),
            ("cudnnSetConvolutionMathType", (tensor_op_math,)),
        ],
        "y": [("cudnnSetTensor4dDescriptor", (nchw, half, 2, 4, 5, 5))],
        "bias": [("cudnnSetTensor4dDescriptor", (nchw, half, 1, 4, 1, 1))],
        "act": [("cudnnSetActivationDescriptor", (1, 1, 0.0))],
    }  # fmt: skip


def test_an_f32_layer_forbids_tf32_and_has_only_the_descriptors_it_uses() -> None:
    settings = LAYERS["conv"].settings()
    assert list(settings) == ["x", "w", "conv", "y"]
    fma_math = 3
    assert settings["conv"][2] == ("cudnnSetConvolutionMathType", (fma_math,))
    assert list(LAYERS["bias"].settings()) == ["x", "w", "conv", "y", "bias"]


def test_the_algorithm_is_the_heuristics_first_that_runs_with_the_layers_math() -> None:
    def perf(algo: int, status: int, math: int) -> SimpleNamespace:
        return SimpleNamespace(algo=algo, status=status, mathType=math)

    found = [perf(6, 0, 0), perf(7, 3, 3), perf(1, 0, 3), perf(2, 0, 3)]
    assert choose_algorithm(found, 3).algo == 1  # the TF32 one (math 0) is passed over
    assert (
        choose_algorithm(found[:2], 3).algo == 6
    )  # none with FMA math: the first that runs
    assert choose_algorithm([perf(7, 3, 3)], 3) is None


# ----------------------------------------------------------------------------
# Against the library, without a GPU
# ----------------------------------------------------------------------------


def _read_back(cudnn: Any, made: dict[str, int]) -> dict[str, tuple[Any, ...]]:
    """What cuDNN holds in the descriptors `made` (cudnnGet*Descriptor)."""

    def ints(n: int) -> list[ctypes.c_int]:
        return [ctypes.c_int() for _ in range(n)]

    def call(name: str, desc: int, values: list[Any]) -> tuple[Any, ...]:
        cudnn.check(name, ctypes.c_void_p(desc), *map(ctypes.byref, values))
        return tuple(v.value for v in values)

    read = {
        "x": call("cudnnGetTensor4dDescriptor", made["x"], ints(9)),
        "w": call("cudnnGetFilter4dDescriptor", made["w"], ints(6)),
        "conv": call("cudnnGetConvolution2dDescriptor", made["conv"], ints(8))
        + call("cudnnGetConvolutionGroupCount", made["conv"], ints(1)),
        "y": call("cudnnGetTensor4dDescriptor", made["y"], ints(9)),
    }
    if "bias" in made:
        read["bias"] = call("cudnnGetTensor4dDescriptor", made["bias"], ints(9))
    if "act" in made:
        read["act"] = call(
            "cudnnGetActivationDescriptor", made["act"], [*ints(2), ctypes.c_double()]
        )
    return read


@needs_cudnn
def test_the_library_is_cudnn_9_with_the_entry_points_the_host_code_calls() -> None:
    cudnn = cudnn_runtime.library()
    assert cudnn.version >= 90000
    assert all(cudnn.entry(f) for f in cudnn_runtime.FUNCTIONS)
    assert cudnn.entry("cudnnGetConvolutionForwardAlgorithm_v7")


@needs_cudnn
@pytest.mark.parametrize("name", LAYERS)
def test_cudnn_reads_the_descriptors_as_the_layer_says(name: str) -> None:
    """cuDNN's own output dimensions, and the descriptors read back."""
    layer = LAYERS[name]
    cudnn = cudnn_runtime.library()
    made = cudnn.descriptors(layer)
    try:
        out = [ctypes.c_int() for _ in range(4)]
        cudnn.check(
            "cudnnGetConvolution2dForwardOutputDim",
            *(ctypes.c_void_p(made[k]) for k in ("conv", "x", "w")),
            *map(ctypes.byref, out),
        )
        assert tuple(v.value for v in out) == layer.output()
        read = _read_back(cudnn, made)
    finally:
        cudnn.destroy(made)
    settings = layer.settings()
    dtype = settings["x"][0][1][1]
    assert read["x"] == (dtype, *layer.x, *_strides(layer.x))
    assert read["w"] == (dtype, 0, *layer.w)
    assert read["conv"] == (*settings["conv"][0][1], layer.g)
    assert read["y"] == (dtype, *layer.output(), *_strides(layer.output()))
    if layer.bias:
        assert read["bias"] == (dtype, 1, layer.w[0], 1, 1, layer.w[0], 1, 1, 1)
    if layer.relu:
        assert read["act"] == (1, 1, 0.0)


def _strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(np.prod(shape[i + 1 :])) for i in range(len(shape)))


# ----------------------------------------------------------------------------
# Pattern table and compilation, without a GPU
# ----------------------------------------------------------------------------


def _configured() -> str:
    return (
        'builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, '
        '#target.target<"cuda">, #target.target<"cudnn">]>} {'
    )


def test_the_table_keeps_its_patterns_and_takes_only_what_cudnn_describes() -> None:
    assert [p.name for p in pattern_table("cudnn")] == [
        "conv2d_bias_relu",
        "conv2d_bias",
        "conv2d",
    ]


@pytest.mark.parametrize(
    ("name", "composite"),
    [("bias relu", "cudnn.conv2d_bias_relu"), ("depthwise", "cudnn.conv2d_bias_relu"),
     ("bias", "cudnn.conv2d_bias"), ("strided dilated", "cudnn.conv2d")],
)  # fmt: skip
def test_the_table_takes_grouped_depthwise_and_fused_epilogues(
    name: str, composite: str
) -> None:
    assert _composite_of(CASES[name]) == [composite]


def _composite_of(text: str) -> list[str]:
    """The composites merge-composite makes of `text` on the GPU with cudnn."""
    from hetero.transforms.merge_composite import MergeCompositePass
    from hetero.transforms.plan_devices import PlanDevicesPass

    module = parse_module(text.replace("builtin.module {", _configured(), 1))
    PlanDevicesPass().apply(Context(), module)
    MergeCompositePass().apply(Context(), module)
    return [op.composite for op in module.walk() if getattr(op, "composite", None)]


def test_asymmetric_padding_stays_off_cudnn() -> None:
    text = (
        CASES["conv"]
        .replace("padding = array<i64: 0, 0, 0, 0>", "padding = array<i64: 1, 1, 0, 0>")
        .replace("tensor<1x4x6x6xf32>", "tensor<1x4x7x7xf32>")
    )
    assert _composite_of(text) == []


@pytest.mark.usefixtures("with_cudnn")
@pytest.mark.parametrize("name", CASES)
def test_conv_partitions_compile_to_calls_of_their_layers_stubs(name: str) -> None:
    program = hetero.compile(CASES[name], targets=TARGETS).native
    assert isinstance(program, cuda.GpuProgram)
    assert not program.kernels  # cuDNN only: host code, no kernel
    layer = LAYERS.get(name, CHAIN)
    assert stubs(program.host.llvm_ir()) == [layer.stub_name()]
    assert cudnn_runtime.uses_cudnn(program.host)
    assert cudnn_runtime.layers(program.host)[0][0] == layer.stub_name()


# ----------------------------------------------------------------------------
# The host code, on the CPU, against stand-ins for the GPU's part of cuDNN
# ----------------------------------------------------------------------------

FAKE_HANDLE = 0xC0DE
_P = ctypes.c_void_p
_DTYPES = {0: np.float32, 1: np.float64, 2: np.float16}


def _array(address: int, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = (ctypes.c_byte * size).from_address(address)
    return np.frombuffer(raw, dtype).reshape(shape)


class _StandIn:
    """cuDNN's compute calls on host memory: the descriptors read back from
    cuDNN, the work queued to the next `cuCtxSynchronize`, as a GPU's is."""

    def __init__(self) -> None:
        self.cudnn = cudnn_runtime.library()
        self.calls: list[str] = []

    def _tensor(self, desc: int) -> tuple[tuple[int, ...], Any]:
        d = _read_back_tensor(self.cudnn, desc)
        return d[1:5], _DTYPES[d[0]]

    def _scalar(self, pointer: int, dtype: Any) -> float:
        c = ctypes.c_double if dtype == np.float64 else ctypes.c_float
        return c.from_address(pointer).value

    def forward(self, handle, alpha, x_desc, x, w_desc, w, conv_desc, algo, ws, ws_size,
                beta, y_desc, y) -> int:  # fmt: skip
        assert handle == FAKE_HANDLE and ws and ws_size == 256
        shape, dtype = self._tensor(x_desc)
        assert (self._scalar(alpha, dtype), self._scalar(beta, dtype)) == (1.0, 0.0)
        filt = [ctypes.c_int() for _ in range(6)]
        self.cudnn.check(
            "cudnnGetFilter4dDescriptor", _P(w_desc), *map(ctypes.byref, filt)
        )
        conv = [ctypes.c_int() for _ in range(9)]
        self.cudnn.check(
            "cudnnGetConvolution2dDescriptor",
            _P(conv_desc),
            *map(ctypes.byref, conv[:8]),
        )
        self.cudnn.check(
            "cudnnGetConvolutionGroupCount", _P(conv_desc), ctypes.byref(conv[8])
        )
        ph, pw, sh, sw, dh, dw, _, _, g = (v.value for v in conv)
        layer = Convolution(np.dtype(dtype).name.replace("float", "f"), shape,
                            tuple(v.value for v in filt[2:]), (ph, pw), (sh, sw), (dh, dw), g)  # type: ignore[arg-type]  # fmt: skip
        out_shape, _ = self._tensor(y_desc)
        assert out_shape == layer.output()
        inputs = [_array(x, shape, dtype), _array(w, layer.w, dtype)]
        out = _array(y, out_shape, dtype)
        module = parse_module(conv_program(layer))
        # The inputs are read when the work runs, after the work before it.
        self._queue(lambda: out.__setitem__(..., run(module, *inputs)), "forward")
        return 0

    def add(self, handle, alpha, b_desc, b, beta, y_desc, y) -> int:
        shape, dtype = self._tensor(y_desc)
        bias_shape, _ = self._tensor(b_desc)
        assert (self._scalar(alpha, dtype), self._scalar(beta, dtype)) == (1.0, 1.0)
        out, bias = _array(y, shape, dtype), _array(b, bias_shape, dtype)
        self._queue(lambda: out.__iadd__(bias), "add")
        return 0

    def activation(self, handle, act_desc, alpha, x_desc, x, beta, y_desc, y) -> int:
        assert (x, x_desc) == (y, y_desc)  # in place
        shape, dtype = self._tensor(y_desc)
        out = _array(y, shape, dtype)
        self._queue(lambda: np.maximum(out, 0, out=out), "relu")
        return 0

    def _queue(self, work: Any, name: str) -> None:
        self.calls.append(name)
        _QUEUED.append(work)

    def functions(self) -> dict[str, Any]:
        i, size = ctypes.c_int, ctypes.c_size_t
        return {
            "cudnnConvolutionForward": ctypes.CFUNCTYPE(i, _P, _P, _P, _P, _P, _P, _P, i, _P, size, _P, _P, _P)(self.forward),
            "cudnnAddTensor": ctypes.CFUNCTYPE(i, _P, _P, _P, _P, _P, _P, _P)(self.add),
            "cudnnActivationForward": ctypes.CFUNCTYPE(i, _P, _P, _P, _P, _P, _P, _P, _P)(self.activation),
        }  # fmt: skip


def _read_back_tensor(cudnn: Any, desc: int) -> tuple[int, ...]:
    values = [ctypes.c_int() for _ in range(9)]
    cudnn.check("cudnnGetTensor4dDescriptor", _P(desc), *map(ctypes.byref, values))
    return tuple(v.value for v in values)


class _HostArray:
    """`cuda.DeviceArray` in host memory (the workspace)."""

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        self.array = np.zeros(shape, dtype)
        self.pointer = self.array.ctypes.data


@needs_cudnn
@pytest.mark.parametrize("name", CASES)
def test_host_code_runs_each_layer_on_its_descriptors(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The program's `CudnnBinding` made for real (the table read, each
    layer's descriptors from its name, the state filled in) but for the
    handle, the algorithm and the workspace, which need a GPU; cuDNN's
    compute calls stood in for."""
    text = CASES[name]
    program = hetero.compile(text, targets=TARGETS).native
    host = program.host
    stand_in = _StandIn()
    functions = stand_in.functions()
    monkeypatch.setattr(
        cuda, "device", lambda: SimpleNamespace(synchronize=_synchronize)
    )
    monkeypatch.setattr(cuda, "DeviceArray", _HostArray)
    monkeypatch.setattr(cudnn_runtime.Cudnn, "create_handle", lambda self: FAKE_HANDLE)
    monkeypatch.setattr(
        cudnn_runtime.Cudnn, "algorithm", lambda self, h, d, layer: (1, 256)
    )
    monkeypatch.setattr(
        cudnn_runtime.Cudnn, "entry",
        lambda self, f: ctypes.cast(functions[f], _P).value,
    )  # fmt: skip
    monkeypatch.setattr(cudnn_runtime, "_release", lambda *args: None)
    for global_name, function in STAND_INS.items():
        if global_name.startswith("hetero.cuda.") and host.global_address(global_name):
            ctypes.c_void_p.from_address(
                host.global_address(global_name)
            ).value = ctypes.cast(function, _P).value
    binding = CudnnBinding(host, program)
    layer = Convolution.from_stub(cudnn_runtime.layers(host)[0][0])
    inputs = random_inputs(text)
    expected = run(parse_module(text), *inputs)
    out = np.zeros(expected.shape, expected.dtype)
    binding.reset()
    host.function("main_host")(*inputs, out)
    _synchronize()
    binding.check("main_host")
    per_layer = [
        "forward",
        *(["add"] if layer.bias else []),
        *(["relu"] if layer.relu else []),
    ]
    layers = 2 if name == "two layers" else 1
    assert stand_in.calls == per_layer * layers
    tol = tolerance(text)
    np.testing.assert_allclose(out, expected, rtol=tol, atol=tol)


# ----------------------------------------------------------------------------
# Availability and diagnostics
# ----------------------------------------------------------------------------


def test_missing_library_means_the_kind_is_not_offered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def not_found(name: str) -> None:
        raise pathfinder.DynamicLibNotFoundError(f"Failure finding lib{name}.so")

    monkeypatch.setattr(pathfinder, "load_nvidia_dynamic_lib", not_found)
    monkeypatch.setattr(
        cudnn_runtime, "load_cudnn", cudnn_runtime.load_cudnn.__wrapped__
    )
    reason = unavailable_reason("cudnn")
    assert reason is not None and "pip install 'hetero[cudnn]'" in reason
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = hetero.compile(CASES["bias relu"], targets=TARGETS)
    assert [str(w.message) for w in caught] == [
        f"hetero.compile: 'cudnn' is not offered: {reason}"
    ]
    # The program still compiles, on hetero's own GPU kernels.
    assert isinstance(compiled.native, cuda.GpuProgram)
    assert compiled.native.kernels and not stubs(compiled.native.host.llvm_ir())


CUDA = '#target.vdevice<cuda:0, target = #target.target<"cuda", host = #target.target<"llvm">>>'


@pytest.mark.usefixtures("with_cudnn")
def test_what_cudnn_cannot_run_is_a_located_diagnostic() -> None:
    """A hand-made partition whose padding differs between the sides (the
    pattern table offers none)."""
    x, w, y = "tensor<1x3x8x8xf32>", "tensor<4x3x3x3xf32>", "tensor<1x4x7x7xf32>"
    text = f"""builtin.module attributes {{target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">, #target.target<"cudnn">]>}} {{
  relay.func @cudnn_main_0(%a: {x} {{vdevice = {CUDA}}}, %b: {w} {{vdevice = {CUDA}}}) -> {y} attributes {{Compiler = "cudnn", global_symbol = "cudnn_main_0"}} {{
    %f = relay.fn (%p: {x}, %q: {w}) -> {y} attributes {{Composite = "cudnn.conv2d"}} {{
      %c = relay.nn.conv2d %p, %q {{padding = array<i64: 1, 1, 0, 0>}} : ({x}, {w}) -> {y}
      relay.return %c : {y}
    }}
    %r = relay.call_indirect %f(%a, %b) : ({x}, {w}) -> {y}
    relay.return %r : {y}
  }}
}}"""
    with pytest.raises(
        HeteroError, match=r"cudnn: a conv2d of layouts .* and padding \(1, 1, 0, 0\)"
    ) as e:
        ExternalCodegenPass().apply(Context(), parse_module(text))
    assert e.value.op is not None


# ----------------------------------------------------------------------------
# On a GPU with cuDNN
# ----------------------------------------------------------------------------


@needs_gpu_and_cudnn
@pytest.mark.parametrize("name", CASES)
def test_conv_partitions_run_on_the_gpu(name: str) -> None:
    text = CASES[name]
    inputs = random_inputs(text)
    compiled = hetero.compile(text, targets=TARGETS)
    assert stubs(compiled.native.host.llvm_ir())
    expected = run(parse_module(text), *inputs)
    tol = tolerance(text)
    np.testing.assert_allclose(compiled(*inputs), expected, rtol=tol, atol=tol)
    np.testing.assert_allclose(
        compiled(*inputs), expected, rtol=tol, atol=tol
    )  # state reused
