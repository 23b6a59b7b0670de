"""`relay.nn.softmax` and `relay.nn.log_softmax`: compiled against the
reference interpreter on every kind of axis (innermost: vectorized along the
row; middle and first: vectorized across the innermost axis), rows that are
not whole vectors, special values as onnxruntime treats them, a
log-softmax that stays finite far below the row's maximum, vector code
pinned to each ISA, and the TIR of the CPU and GPU lowerings."""

from __future__ import annotations

import re
from collections.abc import Sequence

import isas
import numpy as np
import pytest
from test_gpu_codegen import GPU, check_in_lockstep
from test_lower_te import check_lowering, kernel_module
from xdsl.dialects import memref

import hetero
from hetero.context import parse_module
from hetero.dialects import relay, tir
from hetero.driver import lower_to_tir
from hetero.interpreter.relay import run_text

OPS = ("softmax", "log_softmax")

RNG = np.random.default_rng(34)


def _program(op: str, shape: Sequence[int], axis: int, options: str = "") -> str:
    tensor = f"tensor<{'x'.join(map(str, shape))}xf32>"
    config = f'#target.config<[#target.target<"llvm", {{{options}}}>]>'
    return (
        f"builtin.module attributes {{target.config = {config}}} {{\n"
        f"relay.func @main(%x: {tensor}) -> {tensor} {{\n"
        f"  %0 = relay.nn.{op} %x {{axis = {axis} : i64}} : {tensor}\n"
        f"  relay.return %0 : {tensor}\n}}\n}}"
    )


def _check(op: str, x: np.ndarray, axis: int) -> np.ndarray:
    """Compiled equals interpreted (NaN where it is NaN); the interpreted.
    A log-softmax near 0 is `log(s)` for a sum `s` near 1, whose rounding
    is 1.2e-7."""
    text = _program(op, x.shape, axis)
    expected = run_text(text, x)
    compiled = hetero.compile(text)(x)
    np.testing.assert_allclose(compiled, expected, rtol=2e-6, atol=3e-7, equal_nan=True)
    return expected


SHAPES = [
    ((3, 256), -1),  # whole vectors of partial results
    ((4, 37), -1),  # fewer than one chunk
    ((2, 3, 203), 2),  # three chunks and a rest of 11
    ((1, 1), -1),
    ((4, 5, 19), 1),  # a middle axis; one block of 16 and a rest of 3
    ((2, 33, 4), 1),  # a middle axis narrower than a vector
    ((5, 3, 2, 7), 0),  # the first axis
    ((6, 70), 0),  # the first axis of a 2-D tensor: 64 lanes and a rest of 6
    ((9,), 0),
]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape, axis", SHAPES)
def test_compiled_against_the_interpreter(
    op: str, shape: tuple[int, ...], axis: int
) -> None:
    x = (RNG.standard_normal(shape) * 30).astype(np.float32)
    x.reshape(-1)[::7] = -np.inf
    x.reshape(-1)[3::11] = 80.0
    _check(op, x, axis)


SPECIAL_ROWS = np.array(
    [
        [-np.inf] * 5,  # only -inf: NaN (max - max is NaN)
        [0.0, -np.inf, 1.0, -np.inf, 2.0],
        [np.inf, 0.0, 1.0, 2.0, 3.0],  # +inf: NaN
        [np.nan, 0.0, 1.0, 2.0, 3.0],  # NaN anywhere: NaN
        [1e30, -1e30, 0.0, 1e30, 3e38],
        [0.0, -200.0, 0.0, -100.0, -3e38],
    ],
    np.float32,
)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axis", [-1, 0])
def test_special_values_as_onnxruntime(op: str, axis: int) -> None:
    """NaN exactly where onnxruntime's Softmax/LogSoftmax is NaN, and equal
    values elsewhere, along and across rows."""
    onnxruntime = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    node = helper.make_node(
        "Softmax" if op == "softmax" else "LogSoftmax", ["x"], ["y"], axis=axis
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, SPECIAL_ROWS.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8
    )
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    expected = session.run(None, {"x": SPECIAL_ROWS})[0]
    np.testing.assert_allclose(
        _check(op, SPECIAL_ROWS, axis), expected, rtol=1e-6, atol=1e-30, equal_nan=True
    )


def test_log_softmax_is_finite_far_below_the_maximum() -> None:
    """`x - max - log(sum)`: -1000 below the maximum is -1000 (plus
    log 2), where `log(softmax)` would be `log(0) = -inf`."""
    x = np.array([[0.0, -1000.0, 0.0, -90.0]], np.float32)
    result = _check("log_softmax", x, -1)
    np.testing.assert_allclose(
        result, x - np.log(np.float32(2.0)), rtol=1e-6, atol=1e-6
    )


def _kernel_assembly(assembly: str) -> str:
    """The softmax kernel's functions (with its parallel loop's task)."""
    return "\n".join(
        re.findall(r"\n(fused_nn_[\w.]*:\n.*?)\n\.Lfunc_end", assembly, re.DOTALL)
    )


def _element_loops(text: str) -> list[tir.ForOp]:
    """The loops of the lowered kernel that read the input or write the
    output directly."""
    module = parse_module(text)
    lower_to_tir(module)
    kernel = next(
        f
        for f in module.ops
        if isinstance(f, tir.PrimFuncOp) and f.sym_name.data.startswith("fused_")
    )
    data, out = kernel.args
    return [
        loop
        for loop in kernel.walk()
        if isinstance(loop, tir.ForOp)
        and any(
            isinstance(op, memref.LoadOp | memref.StoreOp)
            and op.memref in (data, out)
            and op.parent_op() is loop
            for op in loop.walk()
        )
    ]


@pytest.mark.parametrize("isa", isas.ISAS)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axis", [-1, 0])
def test_nan_the_maximum_passes_over(isa: str, op: str, axis: int) -> None:
    """The row maximum is `fmax`, which may pass a NaN or keep it
    depending on the lane and order it meets it in; whichever, that
    element's `exp(x - max)`, the row's sum and so every result of the row
    is NaN, as interpreted: a NaN or +inf first, in the middle of a vector
    of partial results, last, in the tail past the whole vectors, and a row
    of -inf, in rows longer than the partial results of either ISA."""
    x = np.random.default_rng(5).standard_normal((6, 101)).astype(np.float32)
    for row, (place, value) in enumerate(
        [(0, np.nan), (37, np.nan), (100, np.nan), (70, np.inf), (99, np.nan)]
    ):
        x[row, place] = value
    x[5] = -np.inf
    x = x if axis == -1 else np.ascontiguousarray(x.T)
    text = _program(op, x.shape, axis, isas.options(isa))
    expected = run_text(text, x)
    compiled = hetero.compile(text)(x)
    assert np.isnan(expected).sum() == 6 * 101
    np.testing.assert_array_equal(np.isnan(compiled), np.isnan(expected))


@pytest.mark.parametrize("isa", isas.ISAS)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape, axis", [((8, 256), -1), ((4, 32, 64), 1)])
def test_passes_are_vector_code(
    isa: str, op: str, shape: tuple[int, ...], axis: int
) -> None:
    """Every loop over the elements is `vectorized` in TIR, and LLVM makes
    vector code of them: `x - max` and `exp`'s multiply-adds on the ISA's
    vector registers, no C library call (the template before ran the max,
    and `exp` with the sum, one element at a time)."""
    text = _program(op, shape, axis, isas.options(isa))
    loops = _element_loops(text)
    assert loops and all(loop.kind.data == tir.ForKind.VECTORIZED for loop in loops)
    register = {"avx2": "%ymm", "avx512": "%zmm"}[isa]
    kernel = _kernel_assembly(hetero.compile(text).native.assembly())
    assert re.search(rf"\n\tvsubps\t[^\n]*{register}", kernel)
    assert re.search(rf"\n\tvfmadd\w*ps\t[^\n]*{register}", kernel)
    assert not re.search(r"call\w*\t[^\n]*(exp|log)", kernel)


def _build(op: type[relay.RowNormalizationOp], axis: int):
    return lambda p: op(p[0], axis=axis)


@pytest.mark.parametrize("op", [relay.SoftmaxOp, relay.LogSoftmaxOp])
@pytest.mark.parametrize("shape, axis", [((3, 70), -1), ((4, 5, 19), 1), ((6, 3), 0)])
def test_lowering_on_the_tir_interpreter(
    op: type[relay.RowNormalizationOp], shape: tuple[int, ...], axis: int
) -> None:
    check_lowering([list(shape)], _build(op, axis))


@pytest.mark.parametrize("op", [relay.SoftmaxOp, relay.LogSoftmaxOp])
@pytest.mark.parametrize("shape, axis", [((5, 37), -1), ((2, 5, 3), 1)])
def test_gpu_lowering_on_the_tir_interpreter(
    op: type[relay.RowNormalizationOp], shape: tuple[int, ...], axis: int
) -> None:
    """On a GPU a block per row along the innermost axis, a thread per row
    across an outer one: run with each block's threads concurrent."""
    module = kernel_module([list(shape)], _build(op, axis), GPU)
    check_in_lockstep(module, [RNG.standard_normal(shape).astype(np.float32)])
