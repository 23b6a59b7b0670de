"""`fold-constant`: large elementwise folds (a weight scaled by
`fold-scale-axis`) computed on the background thread; the others where they
stand.  The values are NumPy's either way."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DenseResourceAttr

from hetero.context import parse_module
from hetero.dialects import relay
from hetero.interpreter.relay import constant_value
from hetero.transforms.fold_constant import LATER_LIMIT, FoldConstantPass

RNG = np.random.default_rng(3)


def _hex(array: np.ndarray) -> str:
    return "0x04000000" + np.ascontiguousarray(array, "<f4").tobytes().hex()


def _t(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def _folded(
    body: str, result: tuple[int, ...], blobs: dict[str, np.ndarray]
) -> np.ndarray:
    """The value `body` (ops on the constants `blobs`, `%r` last) folds to."""
    resources = ", ".join(f'{k}: "{_hex(v)}"' for k, v in blobs.items())
    constants = "".join(
        f"  %{k} = relay.constant dense_resource<{k}> : {_t(v.shape)}\n"
        for k, v in blobs.items()
    )
    module = parse_module(
        f"relay.func @main() -> {_t(result)} {{\n{constants}{body}"
        f"  relay.return %r : {_t(result)}\n}}\n"
        f"{{-# dialect_resources: {{builtin: {{{resources}}}}} #-}}"
    )
    FoldConstantPass().apply(Context(), module)
    (constant,) = [op for op in module.walk() if isinstance(op, relay.ConstantOp)]
    assert isinstance(constant.value, DenseResourceAttr)
    return constant_value(constant)


def test_a_large_weight_is_scaled_in_the_background(background_jobs: list[Any]) -> None:
    shape = (128, 64, 3, 3)  # more than LATER_LIMIT elements
    assert np.prod(shape) > LATER_LIMIT
    w = RNG.standard_normal(shape, np.float32)
    s = RNG.standard_normal((128, 1, 1, 1), np.float32)
    body = (
        f"  %m = relay.multiply %w, %s : ({_t(shape)}, {_t(s.shape)}) -> {_t(shape)}\n"
        f"  %r = relay.add %m, %m : {_t(shape)}\n"
    )
    np.testing.assert_array_equal(
        _folded(body, shape, {"w": w, "s": s}), (w * s) + (w * s)
    )
    assert (
        len(background_jobs) == 2
    )  # both folds: the add reads the multiply's blob there


def test_small_folds_stay_and_large_transposes_go(background_jobs: list[Any]) -> None:
    """A fold of at most LATER_LIMIT elements is done in place; a large
    transpose (`matmul-to-dense`'s weights) in the background, its axes
    read when the job is made."""
    w = RNG.standard_normal((16, 8, 3, 3), np.float32)  # at most LATER_LIMIT elements
    body = f"  %r = relay.multiply %w, %w : {_t(w.shape)}\n"
    np.testing.assert_array_equal(_folded(body, w.shape, {"w": w}), w * w)
    assert not background_jobs
    large = RNG.standard_normal((64, 2048), np.float32)
    body = (
        f"  %r = relay.transpose %w {{axes = array<i64: 1, 0>}} : "
        f"({_t(large.shape)}) -> {_t((2048, 64))}\n"
    )
    np.testing.assert_array_equal(_folded(body, (2048, 64), {"w": large}), large.T)
    assert len(background_jobs) == 1
