"""lower-te against the relay interpreter: every tensor op, lowered and run on
the TIR interpreter, computes what the relay reference computes; fuse-ops
groups a conv network as TVM does and keeps its values."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp, TensorType, UnitAttr, f32
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation, SSAValue

import hetero
import hetero.interpreter.tir as tir_interpreter
from hetero.context import parse_module
from hetero.dialects import relay
from hetero.dialects.memref_ops import PrefetchOp
from hetero.dialects.target import TargetAttr, VirtualDeviceAttr
from hetero.dialects.tir import ForKind, ForOp, PrimFuncOp
from hetero.interpreter.relay import evaluate_function, run
from hetero.te.templates import reshape_groups
from hetero.transforms.fuse_ops import FuseOpsPass
from hetero.transforms.lower_te import LowerTEPass
from hetero.transforms.plan_devices import PlanDevicesPass

CPU = VirtualDeviceAttr.for_target(TargetAttr("llvm"))
RNG = np.random.default_rng(0)


@register_impls
class MissingArith(InterpreterFunctions):
    """`arith.divf`/`arith.negf`, which lowered kernels use and the TIR
    interpreter does not implement yet (xDSL has no interpreter for them)."""

    @impl(arith.DivfOp)
    def run_divf(
        self, interpreter: Interpreter, op: arith.DivfOp, args: PythonValues
    ) -> PythonValues:
        return (args[0] / args[1],)

    @impl(arith.NegfOp)
    def run_negf(
        self, interpreter: Interpreter, op: arith.NegfOp, args: PythonValues
    ) -> PythonValues:
        return (-args[0],)


@contextmanager
def complete_interpreter(*extra: InterpreterFunctions) -> Iterator[None]:
    """The TIR interpreter with `MissingArith`, then each of `extra` (a test's
    stand-ins, which may replace what comes before them: test_gpu_codegen)."""
    original = tir_interpreter.make_interpreter

    def make(module: ModuleOp, functions=None) -> Interpreter:  # type: ignore[no-untyped-def]
        interpreter = original(module, functions)
        interpreter.register_implementations(MissingArith())
        for implementations in extra:
            interpreter.register_implementations(implementations, override=True)
        return interpreter

    with mock.patch.object(tir_interpreter, "make_interpreter", make):
        yield


Build = Callable[[Sequence[SSAValue]], Operation]


def kernel_module(
    shapes: Sequence[Sequence[int]], build: Build, device: VirtualDeviceAttr = CPU
) -> ModuleOp:
    """A module with one Primitive function `@k` computing `build(params)` on `device`
    (test_gpu_codegen's kernels too)."""
    types = [TensorType(f32, s) for s in shapes]
    result = build(relay.FuncOp("probe", types, types[0]).args).results[0].type
    func = relay.FuncOp(
        "k",
        types,
        result,
        param_vdevices=[device] * len(types),
        result_vdevice=device,
        attributes={"Primitive": UnitAttr()},
    )
    op = build(func.args)
    func.body.block.add_ops([op, relay.ReturnOp(op)])
    return ModuleOp([func])


def check_lowering(
    shapes: Sequence[Sequence[int]],
    build: Build,
    positive: bool = False,
    device: VirtualDeviceAttr = CPU,
    functions: Sequence[InterpreterFunctions] = (),
) -> tuple[ModuleOp, list[np.ndarray], np.ndarray]:
    """Lower `@k` on `device` and compare the TIR interpreter (with `functions`
    too, see `complete_interpreter`) with the relay interpreter."""
    module = kernel_module(shapes, build, device)
    inputs = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    if positive:
        inputs = [np.abs(x) + np.float32(0.5) for x in inputs]
    expected = evaluate_function(module, "k", inputs)
    LowerTEPass().apply(Context(), module)
    module.verify()
    out = np.zeros(expected.shape, np.float32)
    with complete_interpreter(*functions):
        tir_interpreter.run_prim_func(module, "k_tir", *inputs, out)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    return module, inputs, expected


dims = st.integers(1, 4)


@pytest.mark.parametrize(
    "cls",
    [
        relay.AddOp,
        relay.SubtractOp,
        relay.MultiplyOp,
        relay.DivideOp,
        relay.MaximumOp,
        relay.MinimumOp,
    ],
)
@settings(max_examples=4, deadline=None)
@given(a=st.lists(dims, min_size=1, max_size=3), data=st.data())
def test_binary_broadcasting(
    cls: type[relay.TensorOp], a: list[int], data: st.DataObject
) -> None:
    b = [data.draw(st.sampled_from([d, 1])) for d in a][
        data.draw(st.integers(0, len(a) - 1)) :
    ]
    check_lowering([a, b], lambda p: cls(p[0], p[1]), positive=cls is relay.DivideOp)


@pytest.mark.parametrize(
    "build",
    [
        lambda p: relay.NegativeOp(p[0]),
        lambda p: relay.ExpOp(p[0]),
        lambda p: relay.TanhOp(p[0]),
        lambda p: relay.SigmoidOp(p[0]),
        lambda p: relay.ReluOp(p[0]),
        lambda p: relay.ClipOp(p[0], a_min=-0.5, a_max=0.25),
    ],
    ids=["negative", "exp", "tanh", "sigmoid", "relu", "clip"],
)
def test_unary(build: Build) -> None:
    check_lowering([[3, 5]], build)


@settings(max_examples=5, deadline=None)
@given(m=dims, k=st.integers(1, 5), n=dims)
def test_dense(m: int, k: int, n: int) -> None:
    check_lowering([[m, k], [n, k]], lambda p: relay.DenseOp(p[0], p[1]))


@pytest.mark.parametrize(
    "a, b",
    [
        ([2, 3], [3, 5]),
        ([2, 3, 4], [4, 2]),
        ([1, 2, 3], [3, 3, 1]),
        ([2, 1, 2, 3], [3, 3, 2]),
    ],
)
def test_matmul(a: list[int], b: list[int]) -> None:
    check_lowering([a, b], lambda p: relay.MatmulOp(p[0], p[1]))


@pytest.mark.parametrize(
    "x, w, params",
    [
        ([1, 2, 5, 5], [3, 2, 3, 3], {}),
        ([1, 2, 5, 5], [2, 2, 3, 3], {"strides": (2, 2), "padding": (1, 1, 1, 1)}),
        ([1, 2, 5, 4], [2, 2, 2, 2], {"dilation": (2, 1), "padding": (0, 1, 1, 0)}),
        ([1, 4, 4, 4], [2, 2, 3, 3], {"groups": 2, "padding": (1, 1, 1, 1)}),
    ],
)
def test_conv2d(x: list[int], w: list[int], params: dict) -> None:
    check_lowering([x, w], lambda p: relay.Conv2DOp(p[0], p[1], **params))


def test_conv2d_channel_lanes_with_weight_prefetch() -> None:
    """OIHW64o weights: the channel-lane schedule, whose reduction also
    prefetches the next channel tile's weights (a 5x5 image: few pixel
    tiles), runs in the TIR interpreter (a prefetch is a no-op there) and
    computes what the relay interpreter does."""
    params = {"padding": (1, 1, 1, 1), "kernel_layout": "OIHW64o", "channels": 128}
    module, _, _ = check_lowering(
        [[1, 3, 5, 5], [2, 3, 3, 3, 64]], lambda p: relay.Conv2DOp(p[0], p[1], **params)
    )
    assert any(isinstance(op, PrefetchOp) for op in module.walk())


def test_bias_add_and_batch_norm() -> None:
    check_lowering([[2, 3, 2], [3]], lambda p: relay.BiasAddOp(p[0], p[1]))
    check_lowering([[2, 3], [2]], lambda p: relay.BiasAddOp(p[0], p[1], axis=0))
    check_lowering(
        [[1, 3, 2, 2], [3], [3], [3], [3]],
        lambda p: relay.BatchNormOp(*p),
        positive=True,
    )


@pytest.mark.parametrize("cls", [relay.MaxPool2DOp, relay.AvgPool2DOp])
@pytest.mark.parametrize(
    "params",
    [
        {"pool_size": (2, 2)},
        {"pool_size": (3, 3), "strides": (2, 2), "padding": (1, 1, 1, 1)},
        {"pool_size": (2, 2), "strides": (2, 2), "ceil_mode": True},
        {"pool_size": (2, 2), "dilation": (2, 1), "padding": (1, 0, 0, 1)},
    ],
)
def test_pool2d(cls: type[relay.TensorOp], params: dict) -> None:
    check_lowering([[1, 2, 5, 5]], lambda p: cls(p[0], **params))


def test_avg_pool_count_include_pad() -> None:
    params = {
        "pool_size": (3, 3),
        "strides": (2, 2),
        "padding": (1, 1, 1, 1),
        "ceil_mode": True,
    }
    check_lowering(
        [[1, 1, 6, 6]],
        lambda p: relay.AvgPool2DOp(p[0], count_include_pad=True, **params),
    )


def test_global_avg_pool_and_softmax() -> None:
    check_lowering([[1, 3, 3, 4]], lambda p: relay.GlobalAvgPool2DOp(p[0]))
    check_lowering([[2, 5]], lambda p: relay.SoftmaxOp(p[0]))
    check_lowering([[2, 3, 2]], lambda p: relay.SoftmaxOp(p[0], axis=1))


@pytest.mark.parametrize(
    "shape, build",
    [
        ([2, 3, 2], lambda p: relay.ReshapeOp(p[0], newshape=(3, -1))),
        ([2, 3, 2], lambda p: relay.ReshapeOp(p[0], newshape=(0, 6))),
        ([2, 3, 4], lambda p: relay.TransposeOp(p[0])),
        ([2, 3, 4], lambda p: relay.TransposeOp(p[0], axes=(1, 2, 0))),
        ([2, 3, 2], lambda p: relay.FlattenOp(p[0])),
        ([2, 3, 2], lambda p: relay.FlattenOp(p[0], axis=-1)),
        ([1, 3, 1, 2], lambda p: relay.SqueezeOp(p[0])),
        ([1, 3, 1, 2], lambda p: relay.SqueezeOp(p[0], axis=(2,))),
        ([3, 2], lambda p: relay.ExpandDimsOp(p[0], axis=1, num_newaxis=2)),
        ([3, 2], lambda p: relay.ExpandDimsOp(p[0], axis=-1)),
    ],
)
def test_injective(shape: list[int], build: Build) -> None:
    check_lowering([shape], build)


@pytest.mark.parametrize(
    "source, target, groups",
    [
        (
            [1, 240, 28, 28],
            [1, 3, 80, 28, 28],
            [([0], [0]), ([1], [1, 2]), ([2], [3]), ([3], [4])],
        ),
        (
            [1, 3, 80, 28, 28],
            [1, 240, 28, 28],
            [([0], [0]), ([1, 2], [1]), ([3], [2]), ([4], [3])],
        ),
        ([1, 1000, 1, 1], [1, 1000], [([0], [0]), ([1], [1]), ([2], []), ([3], [])]),
        ([1, 1000], [1, 1000, 1, 1], [([0], [0]), ([1], [1]), ([], [2]), ([], [3])]),
        ([2, 3, 4], [4, 3, 2], [([0, 1, 2], [0, 1, 2])]),
        ([2, 6, 5], [4, 3, 5], [([0, 1], [0, 1]), ([2], [2])]),
        ([2, 1, 3], [6], [([0, 1, 2], [0])]),
    ],
)
def test_reshape_groups(source: list[int], target: list[int], groups: list) -> None:
    """A reshape maps groups of dimensions of equal size onto each other, a
    dimension kept as it is (an image's rows and columns) to itself."""
    assert reshape_groups(source, target) == groups


def test_channel_shuffle_reads_whole_rows() -> None:
    """ShuffleNet's channel shuffle (reshape, transpose, reshape): each output
    channel is an input channel's image, copied a vector at a time (the rows
    and columns keep their indices through both reshapes: was a division and
    a remainder per element, most of ShuffleNet's time), as the reference
    interpreter computes it."""
    x, split, swapped = (
        "tensor<1x12x6x8xf32>",
        "tensor<1x3x4x6x8xf32>",
        "tensor<1x4x3x6x8xf32>",
    )
    text = f"""builtin.module attributes {{target.config = #target.config<[#target.target<"llvm">]>}} {{
  relay.func @main(%x: {x}) -> {x} {{
    %0 = relay.reshape %x {{newshape = array<i64: 1, 3, 4, 6, 8>}} : ({x}) -> {split}
    %1 = relay.transpose %0 {{axes = array<i64: 0, 2, 1, 3, 4>}} : ({split}) -> {swapped}
    %2 = relay.reshape %1 {{newshape = array<i64: 1, 12, 6, 8>}} : ({swapped}) -> {x}
    relay.return %2 : {x}
  }}
}}"""
    data = RNG.standard_normal((1, 12, 6, 8)).astype(np.float32)
    compiled = hetero.compile(text)
    expected = data.reshape(1, 3, 4, 6, 8).transpose(0, 2, 1, 3, 4).reshape(1, 12, 6, 8)
    np.testing.assert_array_equal(compiled(data), expected)
    np.testing.assert_array_equal(run(parse_module(text), data), expected)
    ir = compiled.native.llvm_ir()
    kernel = ir[ir.index("define") :]
    assert re.search(r"load <\d+ x float>", kernel), "the copy is vectorized"


def test_concatenate() -> None:
    check_lowering([[2, 1], [2, 3], [2, 2]], lambda p: relay.ConcatenateOp(*p, axis=1))
    check_lowering([[1, 3], [2, 3]], lambda p: relay.ConcatenateOp(*p))


# -- fused kernels -----------------------------------------------------------


def _fused(p: Sequence[SSAValue]) -> list[Operation]:
    conv = relay.Conv2DOp(p[0], p[1], padding=(1, 1, 1, 1))
    bias = relay.BiasAddOp(conv, p[2])
    relu = relay.ReluOp(bias)
    return [conv, bias, relu]


def test_fused_chain_inlines_elementwise() -> None:
    """conv2d applies bias_add + relu as it stores each output element: no
    intermediate of the conv result's shape."""
    types = [TensorType(f32, s) for s in ([1, 2, 4, 4], [3, 2, 3, 3], [3])]
    func = relay.FuncOp(
        "k",
        types,
        TensorType(f32, [1, 3, 4, 4]),
        param_vdevices=[CPU] * 3,
        result_vdevice=CPU,
        attributes={"Primitive": UnitAttr()},
    )
    ops = _fused(func.args)
    func.body.block.add_ops([*ops, relay.ReturnOp(ops[-1])])
    module = ModuleOp([func])
    inputs = [RNG.standard_normal(t.get_shape()).astype(np.float32) for t in types]
    expected = evaluate_function(module, "k", inputs)
    LowerTEPass().apply(Context(), module)
    prim = next(op for op in module.ops if isinstance(op, PrimFuncOp))
    conv_type = ops[0].results[0].type
    allocs = [
        op
        for op in prim.walk()
        if op.name == "tir.alloc"
        and op.buffer.type.get_shape() == conv_type.get_shape()
    ]
    assert not allocs
    outer = [op for op in prim.body.block.ops if isinstance(op, ForOp)]
    assert all(op.kind.data == ForKind.PARALLEL for op in outer)
    out = np.zeros(expected.shape, np.float32)
    with complete_interpreter():
        tir_interpreter.run_prim_func(module, "k_tir", *inputs, out)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


# -- fuse-ops ------------------------------------------------------------------

NETWORK = """
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%x: tensor<1x2x4x4xf32>, %w1: tensor<2x2x3x3xf32>, %b1: tensor<2xf32>,
                   %w2: tensor<2x2x3x3xf32>, %b2: tensor<2xf32>) -> tensor<1x8xf32> {
    %0 = relay.nn.conv2d %x, %w1 {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
    %1 = relay.nn.bias_add %0, %b1 : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
    %2 = relay.relu %1 : tensor<1x2x4x4xf32>
    %3 = relay.nn.conv2d %2, %w2 {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
    %4 = relay.nn.bias_add %3, %b2 : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
    %5 = relay.add %4, %2 : tensor<1x2x4x4xf32>
    %6 = relay.relu %5 : tensor<1x2x4x4xf32>
    %7 = relay.nn.max_pool2d %6 {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
    %8 = relay.reshape %7 {newshape = array<i64: 1, -1>} : (tensor<1x2x2x2xf32>) -> tensor<1x8xf32>
    %9 = relay.exp %8 : tensor<1x8xf32>
    relay.return %9 : tensor<1x8xf32>
  }
}
"""


def _network_inputs(module: ModuleOp) -> list[np.ndarray]:
    main = next(f for f in module.ops if isinstance(f, relay.FuncOp))
    return [
        RNG.standard_normal(t.get_shape()).astype(np.float32)
        for t in main.function_type.inputs.data
    ]


def test_fuse_ops_groups_and_values() -> None:
    """conv+bias+relu | conv+bias+add+relu (the shared relu result stops the
    first group) | pool (an injective op never follows a reduction) |
    reshape+exp; values unchanged, every kernel lowers."""
    module = parse_module(NETWORK)
    inputs = _network_inputs(module)
    PlanDevicesPass().apply(Context(), module)
    before = evaluate_function(module, "main", inputs)
    FuseOpsPass().apply(Context(), module)
    module.verify()
    kernels = [f for f in module.ops if isinstance(f, relay.FuncOp) and f.is_primitive]
    assert [f.sym_name.data for f in kernels] == [
        "fused_nn_conv2d_nn_bias_add_relu",
        "fused_nn_conv2d_nn_bias_add_add_relu",
        "fused_nn_max_pool2d",
        "fused_reshape_exp",
    ]
    assert all(
        f.result_vdevice is not None and f.result_vdevice.target is not None
        for f in kernels
    )
    np.testing.assert_array_equal(evaluate_function(module, "main", inputs), before)
    FuseOpsPass().apply(Context(), module)  # idempotent: nothing left to fuse
    assert len([f for f in module.ops if isinstance(f, relay.FuncOp)]) == 5
    LowerTEPass().apply(Context(), module)
    module.verify()
    assert len([f for f in module.ops if isinstance(f, PrimFuncOp)]) == 4


def test_fuse_ops_keeps_devices_apart() -> None:
    """A device_copy is a boundary: the ops on each side form separate kernels."""
    module = parse_module(
        """
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%x: tensor<4xf32> {vdevice = #target.vdevice<cpu>}) -> tensor<4xf32> {
    %0 = relay.exp %x : tensor<4xf32>
    %1 = relay.device_copy %0 from #target.vdevice<cpu> to #target.vdevice<cuda> : tensor<4xf32>
    %2 = relay.negative %1 : tensor<4xf32>
    %3 = relay.relu %2 : tensor<4xf32>
    relay.return %3 : tensor<4xf32>
  }
}
"""
    )
    x = RNG.standard_normal(4).astype(np.float32)
    PlanDevicesPass().apply(Context(), module)
    before = evaluate_function(module, "main", [x])
    FuseOpsPass().apply(Context(), module)
    module.verify()
    kernels = {
        f.sym_name.data: f
        for f in module.ops
        if isinstance(f, relay.FuncOp) and f.is_primitive
    }
    assert set(kernels) == {"fused_exp", "fused_negative_relu"}
    assert (
        kernels["fused_exp"].result_vdevice
        != kernels["fused_negative_relu"].result_vdevice
    )
    np.testing.assert_array_equal(evaluate_function(module, "main", [x]), before)
