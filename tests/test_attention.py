"""Self-attention as transformers export it, `softmax(Q·Kᵀ/√d + mask)·V`
after `matmul-to-dense`: the kernels it compiles to (the products read
their per-head reshapes and transposes in place, `fuse-ops`' views; the
scale and mask are the first product's epilogue), `Kᵀ` read along `k`, and
the compiled results against the reference interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32

import hetero
from hetero.context import parse_module
from hetero.dialects import relay, tir
from hetero.dialects.target.config import module_config
from hetero.driver import lower_to_tir
from hetero.interpreter.relay import run
from hetero.te.schedules.problems import Gemm
from hetero.te.templates import gemm

HEADS, HEAD = 3, 5
"""Odd sizes: no register tile or vector divides them."""


def _attention(seq: int, scale: str = "divide") -> str:
    """Q, K, V per head from `[1, seq, HEADS * HEAD]` projections: K
    transposed twice (heads, then `Kᵀ`), the scores scaled and masked,
    softmax, the context merged back into `[1, seq, HEADS * HEAD]`."""
    d = HEADS * HEAD

    def t(*shape: int) -> str:
        return f"tensor<{'x'.join(map(str, shape))}xf32>"

    def heads(x: str, name: str, axes: str, shape: tuple[int, ...]) -> list[str]:
        rows = f"{t(1, seq, HEADS, HEAD)}"
        return [
            f"%{name}r = relay.reshape %{x} {{newshape = array<i64: 1, {seq}, {HEADS}, {HEAD}>}} : ({t(1, seq, d)}) -> {rows}",
            f"%{name} = relay.transpose %{name}r {{axes = array<i64: {axes}>}} : ({rows}) -> {t(*shape)}",
        ]

    per_head = (1, HEADS, seq, HEAD)
    scores = (1, HEADS, seq, seq)
    lines = [
        *heads("q", "qh", "0, 2, 1, 3", per_head),
        *heads("k", "kh", "0, 2, 1, 3", per_head),
        f"%kt = relay.transpose %kh {{axes = array<i64: 0, 1, 3, 2>}} : ({t(*per_head)}) -> {t(1, HEADS, HEAD, seq)}",
        f"%s = relay.matmul %qh, %kt : ({t(*per_head)}, {t(1, HEADS, HEAD, seq)}) -> {t(*scores)}",
        f"%sd = relay.{scale} %s, %c : ({t(*scores)}, tensor<f32>) -> {t(*scores)}",
        f"%sm = relay.add %sd, %mask : ({t(*scores)}, {t(1, 1, 1, seq)}) -> {t(*scores)}",
        f"%p = relay.nn.softmax %sm : {t(*scores)}",
        *heads("v", "vh", "0, 2, 1, 3", per_head),
        f"%o = relay.matmul %p, %vh : ({t(*scores)}, {t(*per_head)}) -> {t(*per_head)}",
        f"%ot = relay.transpose %o {{axes = array<i64: 0, 2, 1, 3>}} : ({t(*per_head)}) -> {t(1, seq, HEADS, HEAD)}",
        f"%y = relay.reshape %ot {{newshape = array<i64: 1, {seq}, {d}>}} : ({t(1, seq, HEADS, HEAD)}) -> {t(1, seq, d)}",
        f"relay.return %y : {t(1, seq, d)}",
    ]
    body = "\n    ".join(lines)
    return (
        'builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {\n'
        f"  relay.func @main(%q: {t(1, seq, d)}, %k: {t(1, seq, d)}, %v: {t(1, seq, d)},"
        f" %mask: {t(1, 1, 1, seq)}, %c: tensor<f32>) -> {t(1, seq, d)} {{\n    {body}\n  }}\n}}"
    )


def _inputs(seq: int) -> list[np.ndarray]:
    rng = np.random.default_rng(34)
    d = HEADS * HEAD
    mask = np.zeros((1, 1, 1, seq), np.float32)
    mask[..., seq - seq // 3 :] = -10000.0
    return [
        *(rng.standard_normal((1, seq, d)).astype(np.float32) for _ in range(3)),
        mask,
        np.array(np.sqrt(HEAD), np.float32),
    ]


@pytest.mark.parametrize("seq", [1, 7, 37])
@pytest.mark.parametrize("scale", ["divide", "multiply"])
def test_compiled_against_the_interpreter(seq: int, scale: str) -> None:
    text = _attention(seq, scale)
    inputs = _inputs(seq)
    expected = run(parse_module(text), *inputs)
    compiled = hetero.compile(text)(*inputs)
    np.testing.assert_allclose(compiled, expected, rtol=1e-5, atol=1e-6)


def test_kernels() -> None:
    """Four kernels: Q·Kᵀ with the head views, scale and mask; softmax;
    P·V with V's view; the merge of the heads (the graph's result, so not a
    view anything reads).  Before, the three head views and Kᵀ were three
    copies of their own."""
    module = parse_module(_attention(7))
    lower_to_tir(module)
    kernels = [
        f.sym_name.data
        for f in module.ops
        if isinstance(f, tir.PrimFuncOp) and not f.sym_name.data.endswith("_host")
    ]
    assert kernels == [
        "fused_reshape_transpose_reshape_transpose_transpose_matmul_divide_add_tir",
        "fused_nn_softmax_tir",
        "fused_reshape_transpose_matmul_tir",
        "fused_transpose_reshape_tir",
    ], kernels


def test_k_transposed_is_read_along_k(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GEMM is told that `Kᵀ` is contiguous along `k` (its packing reads
    K's rows), and that V, `[seq, head]` per head, is not."""
    problems: list[Gemm] = []
    schedule = gemm.problem_schedule

    def recording(target, kind):  # type: ignore[no-untyped-def]
        chosen = schedule(target, kind)
        if chosen is None or kind is not Gemm:
            return chosen

        def record(e, problem, t):  # type: ignore[no-untyped-def]
            problems.append(problem)
            return chosen(e, problem, t)

        return record

    monkeypatch.setattr(gemm, "problem_schedule", recording)
    module = parse_module(_attention(7))
    lower_to_tir(module)
    assert [(p.batch, p.m, p.n, p.k, p.b_along_k) for p in problems] == [
        (HEADS, 7, 7, HEAD, True),
        (HEADS, 7, HEAD, 7, False),
    ]


@pytest.mark.parametrize(
    "axes, merged, contiguous",
    [
        ((0, 2, 1, 3), None, 3),
        ((0, 2, 3, 1), None, 2),
        ((0, 1, 3, 2), None, 2),
        ((0, 2, 1, 3), (6, 4), 1),  # the last axis kept: still contiguous
        ((0, 1, 3, 2), (2, 12), None),  # rows of a transposed view: none
    ],
)
def test_contiguous_axis_of_views(
    axes: tuple[int, ...], merged: tuple[int, ...] | None, contiguous: int | None
) -> None:
    """A buffer's last axis, permuted by a transpose of its reshape, kept
    by a reshape that keeps it last."""
    f = relay.FuncOp("f", [TensorType(f32, [2, 12])], TensorType(f32, [1]))
    view = relay.TransposeOp(
        relay.ReshapeOp(f.args[0], newshape=(1, 2, 3, 4)), axes=axes
    )
    if merged is not None:
        view = relay.ReshapeOp(view, newshape=merged)
    assert gemm._contiguous_axis(view.result) == contiguous


def test_bench_block_is_the_exported_attention() -> None:
    """`python -m bench attention`'s model imports to the kernels above
    (with its Q, K, V projections, whose row reshapes the dense layers read
    in place) and computes what onnxruntime does."""
    onnxruntime = pytest.importorskip("onnxruntime")
    from bench import attention
    from hetero.frontends.onnx import from_onnx

    proto = attention.model(4)
    h, mask = attention.inputs(4)
    session = onnxruntime.InferenceSession(
        proto.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    expected = session.run(None, {"h": h, "mask": mask})[0]
    module = from_onnx(proto)
    np.testing.assert_allclose(run(module, h, mask), expected, rtol=1e-4, atol=1e-5)
    module_config(module, "llvm", "test")
    lower_to_tir(module)
    host = next(
        f
        for f in module.ops
        if isinstance(f, tir.PrimFuncOp) and f.sym_name.data == "main_host"
    )
    calls = [
        op.callee.string_value() for op in host.walk() if isinstance(op, tir.CallOp)
    ]
    assert len(calls) == 7 and sum("nn_dense" in c for c in calls) == 3, calls
    with pytest.raises(SystemExit):
        attention.arguments(["--seq", "0"])
