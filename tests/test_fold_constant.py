"""`fold-constant`: large elementwise folds (a weight scaled by
`fold-scale-axis`) computed on the background thread, large transposes kept
as views; the others where they stand.  The values are NumPy's either way."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp

from hetero.context import parse_module
from hetero.dialects import relay
from hetero.interpreter.relay import constant_value
from hetero.transforms.fold_constant import LATER_LIMIT, FoldConstantPass
from hetero.utils.dense_resources import make_in_background, resource_bytes

RNG = np.random.default_rng(3)


def _hex(array: np.ndarray) -> str:
    return "0x04000000" + np.ascontiguousarray(array, "<f4").tobytes().hex()


def _t(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def _module(
    body: str, result: tuple[int, ...], blobs: dict[str, np.ndarray]
) -> ModuleOp:
    """`body` (ops on the constants `blobs`, `%r` last), folded."""
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
    return module


def _folded(
    body: str, result: tuple[int, ...], blobs: dict[str, np.ndarray]
) -> np.ndarray:
    """The value `body` (ops on the constants `blobs`, `%r` last) folds to."""
    module = _module(body, result, blobs)
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


def _folded_transpose(w: np.ndarray) -> relay.ConstantOp:
    """The constant that `w`'s transpose (2-D) folds to."""
    body = (
        f"  %r = relay.transpose %w {{axes = array<i64: 1, 0>}} : "
        f"({_t(w.shape)}) -> {_t(w.shape[::-1])}\n"
    )
    module = _module(body, w.shape[::-1], {"w": w})
    (constant,) = [op for op in module.walk() if isinstance(op, relay.ConstantOp)]
    return constant


def test_small_folds_stay_and_large_transposes_are_kept_as_views(
    background_jobs: list[Any],
) -> None:
    """A fold of at most LATER_LIMIT elements is done in place; a large
    transpose (`matmul-to-dense`'s weights) is kept as the view it is, its
    bytes made only when read (once), on no background thread."""
    w = RNG.standard_normal((16, 8, 3, 3), np.float32)  # at most LATER_LIMIT elements
    body = f"  %r = relay.multiply %w, %w : {_t(w.shape)}\n"
    np.testing.assert_array_equal(_folded(body, w.shape, {"w": w}), w * w)
    assert not background_jobs
    large = RNG.standard_normal((64, 2048), np.float32)
    constant = _folded_transpose(large)
    assert isinstance(constant.value, DenseResourceAttr)
    view = constant_value(constant)
    assert not view.flags.c_contiguous and not view.flags.writeable
    np.testing.assert_array_equal(view, large.T)
    made = np.frombuffer(resource_bytes(constant.value), np.float32).reshape(2048, 64)
    np.testing.assert_array_equal(made, large.T)
    assert constant_value(constant).flags.c_contiguous  # the bytes, from now on
    assert not background_jobs


def test_views_are_made_in_the_background_when_asked(
    background_jobs: list[Any],
) -> None:
    """`make_in_background` (the constants a compiled program keeps) makes a
    view's bytes on the background thread; blobs made already are left."""
    large = RNG.standard_normal((64, 2048), np.float32)
    constant = _folded_transpose(large)
    make_in_background([constant.value, constant.value])
    assert len(background_jobs) == 1
    np.testing.assert_array_equal(constant_value(constant), large.T)
    assert constant_value(constant).flags.c_contiguous
