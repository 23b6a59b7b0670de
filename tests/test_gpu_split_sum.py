"""GPU sums split over lanes (`gpu_schedules.split_sum`): the conv2d
schedule (`te/schedules/gpu_conv.py`) and the dot products of GEMMs of
few rows.  Outputs are split where they are too few, the sum is a register,
the epilogue is fused.

Checked against the relay interpreter with the TIR interpreter, the threads
of a block running concurrently where they meet at a barrier (test_gpu_codegen's
lockstep interpreter), and, where a GPU is present, run on it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from test_gpu_codegen import GPU, NO_GPU, _GpuInterpreterFunctions, _Lockstep, assemble
from test_lower_te import complete_interpreter
from xdsl.context import Context
from xdsl.dialects import gpu
from xdsl.dialects.builtin import ModuleOp, TensorType, UnitAttr, f32
from xdsl.ir import Operation, SSAValue

import hetero
import hetero.interpreter.tir as tir_interpreter
from hetero.context import parse_module
from hetero.dialects import relay, tir
from hetero.interpreter.relay import evaluate_function, run
from hetero.runtime import cuda
from hetero.te.schedules import gpu as gpu_schedules
from hetero.transforms.lower_te import LowerTEPass

RNG = np.random.default_rng(7)

Ops = Callable[[Sequence[SSAValue]], list[Operation]]


@pytest.mark.parametrize(
    ("outputs", "channels", "expected"),
    [
        (14 * 14 * 256, 256, 4),  # ResNet-50's late 3x3 convolutions
        (7 * 7 * 512, 512, 8),
        (7 * 7 * 2048, 512, 2),  # and the 1x1 ones after them
        (56 * 56 * 64, 64, 1),  # enough outputs already
        (112 * 112 * 64, 3, 1),  # the first: three channels
        (7 * 7 * 512, 1, 1),  # depthwise
        (100, 24, 2),  # 24 channels: 12 a lane, not 6
        (100, 4096, 32),  # at most MAX_LANES
        (1000, 2048, 32),  # a classifier's dense layer at batch 1
    ],
)
def test_lanes(outputs: int, channels: int, expected: int) -> None:
    assert gpu_schedules.lanes(outputs, channels) == expected


def _small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 16 threads, up to 4 lanes of one term or more."""
    monkeypatch.setattr(gpu_schedules, "THREADS", 16)
    monkeypatch.setattr(gpu_schedules, "MIN_TERMS", 1)
    monkeypatch.setattr(gpu_schedules, "MAX_LANES", 4)


def _module(shapes: Sequence[Sequence[int]], ops: Ops) -> ModuleOp:
    """A Primitive function `@k` on the GPU computing the last of `ops(params)`."""
    types = [TensorType(f32, s) for s in shapes]
    probe = ops(relay.FuncOp("probe", types, types[0]).args)[-1]
    func = relay.FuncOp(
        "k",
        types,
        probe.results[0].type,
        param_vdevices=[GPU] * len(types),
        result_vdevice=GPU,
        attributes={"Primitive": UnitAttr()},
    )
    body = ops(func.args)
    func.body.block.add_ops([*body, relay.ReturnOp(body[-1])])
    return ModuleOp([func])


def _conv(**params: object) -> Ops:
    return lambda p: [relay.Conv2DOp(p[0], p[1], **params)]


def _conv_bias_relu(p: Sequence[SSAValue]) -> list[Operation]:
    conv = relay.Conv2DOp(p[0], p[1], padding=(1, 1, 1, 1))
    bias = relay.BiasAddOp(conv, p[2])
    return [conv, bias, relay.ReluOp(bias)]


CASES: dict[str, tuple[list[list[int]], Ops]] = {
    "padded": ([[1, 8, 5, 5], [4, 8, 3, 3]], _conv(padding=(1, 1, 1, 1))),
    "batched-grouped-strided-dilated": (
        [[2, 8, 7, 6], [6, 4, 3, 2]],
        _conv(strides=(2, 1), dilation=(1, 2), padding=(2, 0, 1, 1), groups=2),
    ),
    "bias-relu": ([[1, 8, 4, 4], [3, 8, 3, 3], [3]], _conv_bias_relu),
    "1x1": ([[1, 16, 3, 3], [5, 16, 1, 1]], _conv()),
    "grouped, 4 channels a thread": (
        [[1, 4, 5, 5], [8, 2, 3, 3]],
        _conv(padding=(1, 0, 1, 0), groups=2),
    ),
    "winograd-domain weight": (
        [[1, 4, 6, 6], [16, 1, 4, 4]],
        _conv(padding=(1, 1, 1, 1), kernel_layout="winograd2_OI4o", channels=4),
    ),
    "6 channels, 4 lanes": ([[1, 6, 4, 4], [2, 6, 3, 3]], _conv(padding=(1, 1, 1, 1))),
    "dense, one row": ([[1, 37], [7, 37]], lambda p: [relay.DenseOp(p[0], p[1])]),
    "dense, few rows": ([[4, 37], [7, 37]], lambda p: [relay.DenseOp(p[0], p[1])]),
    "matmul, one row": ([[1, 37], [37, 9]], lambda p: [relay.MatmulOp(p[0], p[1])]),
    "batched matmul": (
        [[3, 2, 37], [3, 37, 5]],
        lambda p: [relay.MatmulOp(p[0], p[1])],
    ),
}
"""Convolutions, and GEMMs of `DOT_ROWS` rows or fewer (dense: lane-fastest)."""


def _lower(
    shapes: list[list[int]], ops: Ops
) -> tuple[ModuleOp, list[np.ndarray], np.ndarray]:
    module = _module(shapes, ops)
    inputs = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    expected = evaluate_function(module, "k", inputs)
    LowerTEPass().apply(Context(), module)
    module.verify()
    return module, inputs, expected


def _run(
    module: ModuleOp,
    inputs: list[np.ndarray],
    shape: tuple[int, ...],
    *functions: object,
) -> np.ndarray:
    out = np.zeros(shape, np.float32)
    with complete_interpreter(_GpuInterpreterFunctions(), *functions):
        tir_interpreter.run_prim_func(module, "k_tir", *inputs, out)
    return out


@pytest.mark.parametrize("name", CASES)
def test_split_outputs_sum_their_lanes(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blocks of 16 threads, as many lanes as the channels allow (each lane
    one channel or more): the lanes' partial sums meet in shared memory at a
    barrier, and the threads run concurrently, as on a GPU."""
    _small_blocks(monkeypatch)
    module, inputs, expected = _lower(*CASES[name])
    ops = list(module.walk())
    assert any(isinstance(op, gpu.BarrierOp) for op in ops), "the outputs are split"
    assert any(isinstance(op, tir.AllocOp) and op.scope == "shared" for op in ops)
    out = _run(module, inputs, expected.shape, _Lockstep())
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", CASES)
def test_one_thread_an_output(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outputs enough to fill the GPU: no split, no barrier, no shared memory."""
    monkeypatch.setattr(gpu_schedules, "MIN_THREADS", 1)
    module, inputs, expected = _lower(*CASES[name])
    assert not any(isinstance(op, gpu.BarrierOp) for op in module.walk())
    out = _run(module, inputs, expected.shape)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("weight", "groups", "expected"),
    [
        ([64, 16, 3, 3], 1, 4),
        ([6, 2, 3, 3], 1, 2),
        ([6, 2, 3, 3], 2, 1),
        ([32, 1, 3, 3], 32, 1),
    ],
)
def test_channels_a_thread(weight: list[int], groups: int, expected: int) -> None:
    """Four output channels of one group a thread, or the most that divide them."""
    module = _module([[1, weight[1] * groups, 6, 6], weight], _conv(groups=groups))
    LowerTEPass().apply(Context(), module)
    prim = next(op for op in module.ops if isinstance(op, tir.PrimFuncOp))
    [acc] = [
        op for op in prim.walk() if isinstance(op, tir.AllocOp) and op.scope == "local"
    ]
    assert acc.buffer.type.get_shape() == (expected,)


@pytest.mark.parametrize(
    "shapes",
    [[[0, 2, 5], [0, 5, 3]], [[0, 8, 5], [0, 5, 3]], [[2, 3, 5], [2, 5, 0]]],
    ids=["no batch, dot", "no batch, tiled", "no columns"],
)
def test_an_empty_product_launches_nothing(shapes: list[list[int]]) -> None:
    """No threads read operands of no elements (they once did: the batch of
    0 had no `blockIdx.z` to stop them)."""
    module, inputs, expected = _lower(shapes, lambda p: [relay.MatmulOp(p[0], p[1])])
    assert not any(isinstance(op, tir.ForOp) and op.thread_tag for op in module.walk())
    assert _run(module, inputs, expected.shape).shape == expected.shape


def test_the_sum_stays_in_a_register_and_the_epilogue_is_fused() -> None:
    """One loop nest, launched once: the output is stored once per element,
    after the sum, with bias and ReLU applied (no second pass over it)."""
    module, _, _ = _lower(*CASES["bias-relu"])
    prim = next(op for op in module.ops if isinstance(op, tir.PrimFuncOp))
    out = prim.body.block.args[-1]
    stores = [
        op for op in prim.walk() if op.name == "memref.store" and op.operands[1] is out
    ]
    assert len(stores) == 1
    loops = [
        op.thread_tag.data
        for op in prim.walk()
        if isinstance(op, tir.ForOp) and op.thread_tag
    ]
    assert loops == ["blockIdx.x", "threadIdx.x"]


RESNET_LATE = """builtin.module attributes {target.config = #target.config<[#target.target<"cuda">]>} {
  relay.func @main(%x: tensor<1x256x14x14xf32>, %w: tensor<256x256x3x3xf32>, %b: tensor<256xf32>) -> tensor<1x256x14x14xf32> {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x256x14x14xf32>, tensor<256x256x3x3xf32>) -> tensor<1x256x14x14xf32>
    %1 = relay.nn.bias_add %0, %b : (tensor<1x256x14x14xf32>, tensor<256xf32>) -> tensor<1x256x14x14xf32>
    %2 = relay.relu %1 : tensor<1x256x14x14xf32>
    relay.return %2 : tensor<1x256x14x14xf32>
  }
}"""
"""A 3×3 convolution of ResNet-50's fourth stage, with its bias and ReLU."""


def test_a_late_resnet_convolution_is_one_split_kernel(tmp_path: Path) -> None:
    compiled = hetero.compile(RESNET_LATE)
    program = compiled.native
    assert isinstance(program, cuda.GpuProgram)
    [ptx] = program.kernels
    [kernel] = ptx.kernels
    # Four channels a thread, 16 lanes each: 12 544 × 16 threads.
    assert gpu_schedules.lanes(256 * 14 * 14 // 4, 256) == 16
    assert kernel.block == (gpu_schedules.THREADS, 1, 1)
    assert kernel.grid == (256 * 14 * 14 // 4 * 16 // gpu_schedules.THREADS, 1, 1)
    assert "bar.sync" in ptx.ptx and ".shared" in ptx.ptx
    assert ".local" not in ptx.ptx  # the sum is in a register
    assemble(ptx, tmp_path)
    if NO_GPU is None:
        inputs = [
            RNG.standard_normal(s).astype(np.float32)
            for s in ([1, 256, 14, 14], [256, 256, 3, 3], [256])
        ]
        expected = run(parse_module(RESNET_LATE), *inputs)
        np.testing.assert_allclose(compiled(*inputs), expected, rtol=1e-4, atol=1e-4)


CLASSIFIER = """builtin.module attributes {target.config = #target.config<[#target.target<"cuda">]>} {
  relay.func @main(%x: tensor<1x2048xf32>, %w: tensor<1000x2048xf32>, %b: tensor<1000xf32>) -> tensor<1x1000xf32> {
    %0 = relay.nn.dense %x, %w : (tensor<1x2048xf32>, tensor<1000x2048xf32>) -> tensor<1x1000xf32>
    %1 = relay.nn.bias_add %0, %b {axis = 1 : i64} : (tensor<1x1000xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
    relay.return %1 : tensor<1x1000xf32>
  }
}"""
"""ResNet-50's classifier at batch 1: one row."""


def test_a_classifier_at_batch_one_is_dot_products(tmp_path: Path) -> None:
    """32 lanes an output (8 outputs a block), not a 32×32 tile of one row."""
    compiled = hetero.compile(CLASSIFIER)
    [ptx] = compiled.native.kernels
    [kernel] = ptx.kernels
    assert kernel.block == (256, 1, 1) and kernel.grid == (1000 // 8, 1, 1)
    assert "bar.sync" in ptx.ptx and ".local" not in ptx.ptx
    assemble(ptx, tmp_path)
    if NO_GPU is None:
        inputs = [
            RNG.standard_normal(s).astype(np.float32)
            for s in ([1, 2048], [1000, 2048], [1000])
        ]
        expected = run(parse_module(CLASSIFIER), *inputs)
        np.testing.assert_allclose(compiled(*inputs), expected, rtol=1e-4, atol=1e-4)
