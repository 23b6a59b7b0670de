"""`hetero.compile(..., dynamic="once")`: a BERT encoder block with a
dynamic sequence length compiled once, run at three lengths against the
reference interpreter; what cannot be compiled once is a clear error."""

from __future__ import annotations

import numpy as np
import pytest

import hetero
from hetero.context import parse_module
from hetero.dynamic import SAMPLES, evaluate, fit
from hetero.interpreter.relay import run
from hetero.utils.diagnostics import HeteroError
from hetero.utils.programs import encoder

HEADS, HEAD, FFN = 2, 8, 32


def _inputs(seq: int, rng: np.random.Generator) -> list[np.ndarray]:
    d = HEADS * HEAD
    shapes = [(1, seq, d), *[(d, d)] * 4, *[(d,)] * 6, (FFN, d), (FFN,), (d, FFN)]
    shapes += [(d,)] * 3
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def test_encoder_compiles_once_for_every_length() -> None:
    f = hetero.compile(encoder("?", HEADS, HEAD, FFN), dynamic="once")
    rng = np.random.default_rng(37)
    for seq in (7, 16, 33):
        inputs = _inputs(seq, rng)
        expected = run(parse_module(encoder(seq, HEADS, HEAD, FFN)), *inputs)
        got = f(*inputs)
        assert got.shape == (1, seq, HEADS * HEAD)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_sizes_fit_polynomials_and_rounded_multiples() -> None:
    assert fit([n * n * 12 for n in SAMPLES]) == (0, 0, 0, 12)
    assert fit([n - 1 for n in SAMPLES]) == (0, -1, 1, 0)
    rounded = fit([n // 64 * 64 for n in SAMPLES])
    assert rounded is not None and evaluate(rounded, 100) == 64
    assert fit([n % 7 for n in SAMPLES]) is None


def test_unsupported_op_names_it_and_says_to_specialize() -> None:
    text = """builtin.module {
  relay.func @main(%x: tensor<1x1x?x8xf32>) -> tensor<1x1x?x4xf32> {
    %0 = relay.nn.max_pool2d %x {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x?x8xf32>) -> tensor<1x1x?x4xf32>
    relay.return %0 : tensor<1x1x?x4xf32>
  }
}"""
    with pytest.raises(
        HeteroError, match=r"dynamic=\"once\".*specialize per input shape"
    ):
        hetero.compile(text, dynamic="once")


def test_unknown_mode_is_an_error() -> None:
    with pytest.raises(HeteroError, match="is not a mode"):
        hetero.compile(encoder("?", HEADS, HEAD, FFN), dynamic="always")
