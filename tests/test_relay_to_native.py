"""Relay → fuse-ops → lower-te → convert-tir-to-scf → LLVM → native code.

Each program is planned and fused into one kernel, lowered, JIT-compiled and
run on random data; the kernel's output must equal the relay reference
interpreter's (the AOT host function that will call kernels is later work, so
the kernel is called directly in destination-passing style).
"""

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType

from hetero.context import parse_module
from hetero.dialects import tir
from hetero.dialects.relay import FuncOp
from hetero.interpreter.relay import element_dtype, run
from hetero.lowering.cpu_codegen import compile_cpu
from hetero.transforms.fuse_ops import FuseOpsPass
from hetero.transforms.lower_te import LowerTEPass
from hetero.transforms.plan_devices import PlanDevicesPass

CONFIG = '#target.config<[#target.target<"llvm">]>'

PROGRAMS = {
    "conv2d+bias+relu": (
        "%x: tensor<1x3x9x9xf32>, %w: tensor<5x3x3x3xf32>, %b: tensor<5xf32>",
        "tensor<1x5x5x5xf32>",
        """%0 = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x9x9xf32>, tensor<5x3x3x3xf32>) -> tensor<1x5x5x5xf32>
    %1 = relay.nn.bias_add %0, %b : (tensor<1x5x5x5xf32>, tensor<5xf32>) -> tensor<1x5x5x5xf32>
    %r = relay.relu %1 : tensor<1x5x5x5xf32>""",
    ),
    "dense+bias+relu": (
        "%x: tensor<3x17xf32>, %w: tensor<7x17xf32>, %b: tensor<7xf32>",
        "tensor<3x7xf32>",
        """%0 = relay.nn.dense %x, %w : (tensor<3x17xf32>, tensor<7x17xf32>) -> tensor<3x7xf32>
    %1 = relay.nn.bias_add %0, %b : (tensor<3x7xf32>, tensor<7xf32>) -> tensor<3x7xf32>
    %r = relay.relu %1 : tensor<3x7xf32>""",
    ),
    "batched matmul": (
        "%a: tensor<2x3x5xf32>, %b: tensor<2x5x4xf32>",
        "tensor<2x3x4xf32>",
        "%r = relay.matmul %a, %b : (tensor<2x3x5xf32>, tensor<2x5x4xf32>) -> tensor<2x3x4xf32>",
    ),
    "max_pool2d": (
        "%x: tensor<1x2x7x7xf32>",
        "tensor<1x2x4x4xf32>",
        "%r = relay.nn.max_pool2d %x {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x4x4xf32>",
    ),
    "avg_pool2d": (
        "%x: tensor<1x2x6x6xf32>",
        "tensor<1x2x3x3xf32>",
        "%r = relay.nn.avg_pool2d %x {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>",
    ),
    "softmax": (
        "%x: tensor<4x10xf32>",
        "tensor<4x10xf32>",
        "%r = relay.nn.softmax %x : tensor<4x10xf32>",
    ),
    "broadcast arithmetic": (
        "%a: tensor<2x1x3xf32>, %b: tensor<4x1xf32>",
        "tensor<2x4x3xf32>",
        """%0 = relay.multiply %a, %b : (tensor<2x1x3xf32>, tensor<4x1xf32>) -> tensor<2x4x3xf32>
    %1 = relay.exp %0 : tensor<2x4x3xf32>
    %r = relay.tanh %1 : tensor<2x4x3xf32>""",
    ),
    "transpose+reshape": (
        "%x: tensor<2x3x4xf32>",
        "tensor<4x6xf32>",
        """%0 = relay.transpose %x {axes = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
    %r = relay.reshape %0 {newshape = array<i64: 4, -1>} : (tensor<4x2x3xf32>) -> tensor<4x6xf32>""",
    ),
}


def _module(params: str, result: str, body: str):
    return parse_module(
        f"builtin.module attributes {{target.config = {CONFIG}}} {{\n"
        f"  relay.func @main({params}) -> {result} {{\n    {body}\n"
        f"    relay.return %r : {result}\n  }}\n}}\n"
    )


@pytest.mark.parametrize("name", PROGRAMS)
def test_fused_kernel_runs_natively_like_the_reference(name: str):
    module = _module(*PROGRAMS[name])
    main = next(op for op in module.ops if isinstance(op, FuncOp))
    rng = np.random.default_rng(0)
    inputs = [
        rng.standard_normal(t.get_shape()).astype(np.float32)
        for t in main.function_type.inputs.data
    ]
    expected = run(module, *inputs)
    for p in (PlanDevicesPass(), FuseOpsPass(), LowerTEPass()):
        p.apply(Context(), module)
    kernels = [op for op in module.ops if isinstance(op, tir.PrimFuncOp)]
    assert len(kernels) == 1, "the program fuses into one kernel"
    native = compile_cpu(ModuleOp([kernels[0].clone()]))
    result_type = main.function_type.outputs.data[0]
    assert isinstance(result_type, TensorType)
    out = np.zeros(result_type.get_shape(), element_dtype(result_type.element_type))
    native.function(kernels[0].sym_name.data)(*inputs, out)
    np.testing.assert_allclose(out, expected, rtol=2e-5, atol=2e-5)
