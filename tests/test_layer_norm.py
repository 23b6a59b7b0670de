"""`relay.nn.layer_norm`: its reference meaning, its one-kernel lowering
(CPU through the TIR interpreter and natively; the GPU's flat schedule
through the TIR interpreter and PTX), numerically steady rows whose mean is
large next to their spread, and a fused epilogue."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from test_gpu_codegen import (
    GPU,
    assemble,
    check_in_lockstep,
    ptx_of,
)
from test_lower_te import check_lowering, kernel_module
from xdsl.dialects.builtin import TensorType, f32

import hetero
from hetero.context import parse_module
from hetero.dialects import relay, tir
from hetero.dialects.tir import PrimFuncOp
from hetero.driver import lower_to_tir
from hetero.interpreter.relay import run_text

RNG = np.random.default_rng(7)


def _reference(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, axis: int, eps: float = 1e-5
) -> np.ndarray:
    """ONNX's LayerNormalization in float64."""
    x = x.astype(np.float64)
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * gamma + beta


def _program(shape: Sequence[int], axis: int, epilogue: str = "") -> str:
    """`main(x, gamma, beta)`: layer_norm over the axes from `axis`, then
    the relay op `epilogue` (unary) if given."""
    tensor = f"tensor<{'x'.join(map(str, shape))}xf32>"
    vector = f"tensor<{'x'.join(map(str, shape[axis % len(shape) :]))}xf32>"
    lines = [
        f"relay.func @main(%x: {tensor}, %g: {vector}, %b: {vector}) -> {tensor} {{",
        (
            f"  %0 = relay.nn.layer_norm %x, %g, %b {{axis = {axis} : i64}} : "
            f"({tensor}, {vector}, {vector}) -> {tensor}"
        ),
    ]
    result = "%0"
    if epilogue:
        lines.append(f"  %1 = relay.{epilogue} %0 : {tensor}")
        result = "%1"
    lines += [f"  relay.return {result} : {tensor}", "}"]
    return "\n".join(lines)


def _inputs(
    shape: Sequence[int], axis: int, scale: float = 1.0, shift: float = 0.0
) -> list[np.ndarray]:
    normalised = tuple(shape[axis % len(shape) :])
    return [
        (RNG.standard_normal(shape) * scale + shift).astype(np.float32),
        RNG.standard_normal(normalised).astype(np.float32),
        RNG.standard_normal(normalised).astype(np.float32),
    ]


SHAPES = [
    ((4, 37), -1),  # two whole vectors of partial sums and 5 left
    ((3, 5), -1),  # fewer elements than partial sums
    ((2, 16), 1),  # exactly one vector
    ((2, 3, 7), 1),  # two normalised axes
    ((1, 2, 768), -1),  # a transformer's rows
]


@pytest.mark.parametrize("shape, axis", SHAPES)
def test_interpreted_and_compiled(shape: tuple[int, ...], axis: int) -> None:
    text = _program(shape, axis)
    inputs = _inputs(shape, axis)
    expected = _reference(*inputs, axis)
    np.testing.assert_allclose(run_text(text, *inputs), expected, rtol=1e-6, atol=1e-6)
    compiled = hetero.compile(text)(*inputs)
    np.testing.assert_allclose(compiled, expected, rtol=1e-5, atol=1e-5)


def test_rows_with_a_large_mean_keep_their_precision() -> None:
    """Rows of mean 1000 and spread 1: E[x²] - E[x]² in float32 would lose
    every digit (x² ~ 1e6, its rounding ~0.06, the variance 1); the kernel's
    sums of x - x[0] keep the result within 1e-5 of float64's."""
    shape = (8, 300)
    inputs = _inputs(shape, -1, scale=1.0, shift=1000.0)
    compiled = hetero.compile(_program(shape, -1))(*inputs)
    np.testing.assert_allclose(compiled, _reference(*inputs, -1), rtol=0, atol=5e-5)


def test_epilogue_is_fused_into_the_store() -> None:
    """A relu after the layer_norm is applied as it stores: one kernel."""
    shape = (3, 40)
    text = _program(shape, -1, epilogue="relu")
    inputs = _inputs(shape, -1)
    np.testing.assert_allclose(
        hetero.compile(text)(*inputs),
        np.maximum(_reference(*inputs, -1), 0),
        rtol=1e-5,
        atol=1e-5,
    )
    module = parse_module(
        'builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} '
        f"{{\n{text}\n}}"
    )
    lower_to_tir(module)
    kernels = [
        op.sym_name.data
        for op in module.ops
        if isinstance(op, PrimFuncOp) and not op.sym_name.data.endswith("_host")
    ]
    assert kernels == ["fused_nn_layer_norm_relu_tir"], kernels


def _build(axis: int):
    return lambda p: relay.LayerNormOp(*p, axis=axis)


@pytest.mark.parametrize("shape, axis", SHAPES[:4])
def test_lowering_on_the_tir_interpreter(shape: tuple[int, ...], axis: int) -> None:
    normalised = list(shape[axis % len(shape) :])
    check_lowering([list(shape), normalised, normalised], _build(axis))


@pytest.mark.parametrize(
    "shape, axis, threads",
    [([5, 37], -1, 32), ([2, 3, 600], -1, 64), ([2, 4, 9, 9], 1, 32)],
)
def test_gpu_rows_are_blocks(
    shape: list[int], axis: int, threads: int, tmp_path: Path
) -> None:
    """On a GPU a row is a block of `row_threads` threads, strided over it,
    whose partial sums meet in shared memory: run with each block's threads
    concurrent and its barriers waited for (`_Lockstep`), against relay."""
    normalised = shape[axis % len(shape) :]
    shapes = [shape, normalised, normalised]
    module = kernel_module(shapes, _build(axis), GPU)
    inputs = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    inputs[0] += np.float32(3.0)  # a mean far from 0, as a residual stream's
    check_in_lockstep(module, inputs)
    bound = {
        op.thread_tag.data: op.ub.owner.value.value.data  # type: ignore[union-attr]
        for op in module.walk()
        if isinstance(op, tir.ForOp) and op.thread_tag is not None
    }
    assert bound == {
        "blockIdx.x": math.prod(shape) // math.prod(normalised),
        "threadIdx.x": threads,
    }
    [ptx] = ptx_of(module)
    assert "bar.sync" in ptx.ptx
    assemble(ptx, tmp_path)


def test_result_type_is_the_data_type() -> None:
    """A `?` of gamma or beta agrees with the data's size."""
    result = relay.LayerNormOp.infer_result_type(
        [
            TensorType(f32, [relay.DYNAMIC, 8]),
            TensorType(f32, [8]),
            TensorType(f32, [relay.DYNAMIC]),
        ]
    )
    assert tuple(result.get_shape()) == (relay.DYNAMIC, 8)
