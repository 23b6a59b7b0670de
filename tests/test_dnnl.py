"""The `dnnl` external codegen (docs/external-codegens.md): partitions run as oneDNN primitives.

* conv2d (strided, padded, dilated, grouped, depthwise) with its bias,
  residual add and relu fused as post-ops, dense, matmul and LRN (odd
  sizes), compiled with
  `targets=["llvm", "dnnl"]`, equal the reference interpreter, each
  composite one `hetero_dnnl_execute` call;
* a primitive is made once per distinct layer and process;
* without the library the kind is not offered: one warning line, and the
  program compiles on `llvm`.
"""

from __future__ import annotations

import functools
import json
import warnings

import numpy as np
import pytest
from byoc_programs import program, random_inputs

import hetero
from hetero.context import parse_module
from hetero.dialects import tir
from hetero.dialects.target.config import module_config
from hetero.driver import lower_to_tir
from hetero.interpreter.relay import run
from hetero.lowering.external.dnnl import available
from hetero.runtime import dnnl as dnnl_runtime
from hetero.transforms.external_codegen import external_modules

needs_dnnl = pytest.mark.skipif(
    available() is not None,
    reason="the dnnl kind needs onednn-cpu-gomp (hetero[dnnl])",
)


def dnnl_calls(text: str) -> int:
    """How many primitives the program's `dnnl` partitions execute."""
    module = parse_module(text)
    module_config(module, ("llvm", "dnnl"), "test")
    lower_to_tir(module)
    generated = external_modules(module).get("dnnl")
    if generated is None:
        return 0
    return sum(
        isinstance(op, tir.CallExternOp) and op.callee.data == dnnl_runtime.EXECUTE
        for op in generated.walk()
    )


def conv(
    x: str,
    w: str,
    out: str,
    attrs: str = "",
    name: str = "y",
    data: str = "%a",
    weight: str = "%b",
) -> str:
    return (
        f"%{name} = relay.nn.conv2d {data}, {weight} {{{attrs}}} : ({x}, {w}) -> {out}"
    )


X, OUT, OUT5 = "tensor<1x8x10x10xf32>", "tensor<1x16x10x10xf32>", "tensor<1x16x5x5xf32>"
PAD = "padding = array<i64: 1, 1, 1, 1>"
BIAS = "tensor<16xf32>"

CASES = {
    "conv2d 3x3 padded": (
        [conv(X, "tensor<16x8x3x3xf32>", OUT, PAD, "r")],
        [X, "tensor<16x8x3x3xf32>"],
        OUT,
        1,
    ),
    "conv2d strided, asymmetric padding, bias, relu": (
        [
            conv(
                X,
                "tensor<16x8x3x3xf32>",
                OUT5,
                "strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 0, 1>",
            ),
            f"%z = relay.nn.bias_add %y, %c : ({OUT5}, {BIAS}) -> {OUT5}",
            f"%r = relay.relu %z : {OUT5}",
        ],
        [X, "tensor<16x8x3x3xf32>", BIAS],
        OUT5,
        1,
    ),
    "conv2d dilated": (
        [
            conv(
                X,
                "tensor<16x8x3x3xf32>",
                "tensor<1x16x6x6xf32>",
                "dilation = array<i64: 2, 2>",
                "r",
            )
        ],
        [X, "tensor<16x8x3x3xf32>"],
        "tensor<1x16x6x6xf32>",
        1,
    ),
    "grouped conv2d + residual + relu": (
        [
            conv(X, "tensor<16x4x3x3xf32>", OUT, PAD + ", groups = 2 : i64"),
            f"%s = relay.add %y, %c : {OUT}",
            f"%r = relay.relu %s : {OUT}",
        ],
        [X, "tensor<16x4x3x3xf32>", OUT],
        OUT,
        1,
    ),
    "depthwise conv2d, bias, residual first": (
        [
            conv(OUT, "tensor<16x1x3x3xf32>", OUT, PAD + ", groups = 16 : i64"),
            f"%z = relay.nn.bias_add %y, %c : ({OUT}, {BIAS}) -> {OUT}",
            f"%r = relay.add %d, %z : {OUT}",
        ],
        [OUT, "tensor<16x1x3x3xf32>", BIAS, OUT],
        OUT,
        1,
    ),
    "two convolutions in one partition": (
        [
            conv(X, "tensor<16x8x3x3xf32>", OUT, PAD),
            conv(OUT, "tensor<16x16x1x1xf32>", OUT, "", "r", "%y", "%c"),
        ],
        [X, "tensor<16x8x3x3xf32>", "tensor<16x16x1x1xf32>"],
        OUT,
        2,
    ),
    "dense + bias + relu": (
        [
            "%y = relay.nn.dense %a, %b : (tensor<7x13xf32>, tensor<5x13xf32>) -> tensor<7x5xf32>",
            "%z = relay.nn.bias_add %y, %c : (tensor<7x5xf32>, tensor<5xf32>) -> tensor<7x5xf32>",
            "%r = relay.relu %z : tensor<7x5xf32>",
        ],
        ["tensor<7x13xf32>", "tensor<5x13xf32>", "tensor<5xf32>"],
        "tensor<7x5xf32>",
        1,
    ),
    "matmul": (
        [
            "%r = relay.matmul %a, %b : (tensor<6x4xf32>, tensor<4x9xf32>) -> tensor<6x9xf32>"
        ],
        ["tensor<6x4xf32>", "tensor<4x9xf32>"],
        "tensor<6x9xf32>",
        1,
    ),
    "batched matmul": (
        [
            "%r = relay.matmul %a, %b : (tensor<3x6x4xf32>, tensor<3x4x9xf32>) -> tensor<3x6x9xf32>"
        ],
        ["tensor<3x6x4xf32>", "tensor<3x4x9xf32>"],
        "tensor<3x6x9xf32>",
        1,
    ),
    "lrn across channels": (
        [
            f"%r = relay.nn.lrn %a {{size = 5, alpha = 1.0e-2, beta = 0.75, bias = 2.0}} : {OUT}"
        ],
        [OUT],
        OUT,
        1,
    ),
    "lrn of an even size: not oneDNN's window": (
        [f"%r = relay.nn.lrn %a {{size = 4, alpha = 1.0e-2}} : {OUT}"],
        [OUT],
        OUT,
        0,
    ),
}
"""Name → (body lines, input types, result type, primitives executed)."""


@needs_dnnl
@pytest.mark.parametrize("name", CASES)
def test_dnnl_partition_equals_the_reference(name: str):
    lines, inputs, result, calls = CASES[name]
    text = program("\n    ".join(lines), inputs, result)
    assert dnnl_calls(text) == calls
    values = random_inputs(text)
    compiled = hetero.compile(text, targets=["llvm", "dnnl"])
    np.testing.assert_allclose(
        compiled(*values), run(parse_module(text), *values), rtol=1e-4, atol=1e-4
    )


@needs_dnnl
def test_a_layer_compiled_again_reuses_its_primitive():
    lines, inputs, result, _ = CASES["grouped conv2d + residual + relu"]
    text = program("\n    ".join(lines), inputs, result)
    library = dnnl_runtime.load_dnnl()
    dnnl_calls(text)
    plans = len(library._plans)
    dnnl_calls(text)
    assert len(library._plans) == plans


def test_without_the_library_the_kind_is_not_offered(monkeypatch: pytest.MonkeyPatch):
    def missing() -> str:
        raise dnnl_runtime.DnnlUnavailable(
            "the 'dnnl' external codegen needs oneDNN: pip install"
        )

    monkeypatch.setattr(dnnl_runtime, "library_path", missing)
    monkeypatch.setattr(
        dnnl_runtime, "load_dnnl", functools.cache(dnnl_runtime.load_dnnl.__wrapped__)
    )
    lines, inputs, result, _ = CASES["dense + bias + relu"]
    text = program("\n    ".join(lines), inputs, result)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = hetero.compile(text, targets=["llvm", "dnnl"])
    messages = [str(w.message) for w in caught]
    assert messages == [
        "hetero.compile: 'dnnl' is not offered: the 'dnnl' external codegen needs oneDNN: pip install"
    ]
    values = random_inputs(text)
    np.testing.assert_allclose(
        compiled(*values), run(parse_module(text), *values), rtol=1e-5, atol=1e-5
    )


def constant(name: str, values: np.ndarray) -> str:
    shape = "x".join(map(str, values.shape))
    data = json.dumps(values.tolist())
    return f"%{name} = relay.constant dense<{data}> : tensor<{shape}xf32>"


@needs_dnnl
def test_constant_weights_are_reordered_once_at_compile_time():
    """The weights reach oneDNN in the blocked layout it chose, reordered
    when the codegen ran (a constant of the plan's), and the result is still
    the reference's; blocked src and dst are reordered per call."""
    rng = np.random.default_rng(1)
    w = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)
    lines = [
        constant("w", w),
        conv(X, "tensor<16x8x3x3xf32>", OUT, PAD, weight="%w"),
        f"%s = relay.add %y, %b : {OUT}",
        f"%r = relay.relu %s : {OUT}",
    ]
    text = program("\n    ".join(lines), [X, OUT], OUT)
    library = dnnl_runtime.load_dnnl()
    reordered = len(library._weights)
    compiled = hetero.compile(text, targets=["llvm", "dnnl"])
    assert len(library._weights) == reordered + 1
    values = random_inputs(text)
    np.testing.assert_allclose(
        compiled(*values), run(parse_module(text), *values), rtol=1e-4, atol=1e-4
    )


RESNET_CONVS = {
    "3x3, residual, relu": ((1, 64, 56, 56), (64, 64, 3, 3), 1, 1, True),
    "1x1 strided": ((1, 256, 56, 56), (512, 256, 1, 1), 2, 0, False),
    "7x7 stem": ((1, 3, 224, 224), (64, 3, 7, 7), 2, 3, False),
}
"""Name → (src, weights, stride, padding, residual) of ResNet-50 layers."""


@needs_dnnl
@pytest.mark.parametrize("name", RESNET_CONVS)
def test_resnet_convolutions_get_jit_kernels(name: str):
    """Not oneDNN's reference code (a residual as a binary post-op on plain
    buffers sent every such layer there, many times slower than a jit
    kernel; docs/performance.md)."""
    src, weights, stride, pad, residual = RESNET_CONVS[name]
    n, _, h, _ = src
    o, _, k, _ = weights
    out = (h + 2 * pad - k) // stride + 1
    dst = dnnl_runtime.Tensor((n, o, out, out))
    post_ops = dnnl_runtime.PostOps((dst, "relu") if residual else ("relu",))
    spec = dnnl_runtime.Convolution(
        dnnl_runtime.Tensor(src), dnnl_runtime.Tensor(weights),
        dnnl_runtime.Tensor((o,)), dst, (stride, stride), (1, 1), (pad,) * 4,
        post_ops, constant_weights=True,
    )  # fmt: skip
    plan = dnnl_runtime.load_dnnl().plan(spec)
    assert plan.impl and not plan.impl.startswith("ref"), plan.impl
    assert "gemm:ref" not in plan.impl
