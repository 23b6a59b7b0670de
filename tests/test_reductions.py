"""The reductions over axes (`relay.sum`, `mean`, `max`, `min`, `prod`) and
the positions of a maximum or minimum along one (`relay.argmax`, `argmin`):
compiled against the relay interpreter (NumPy), NaNs and ties included."""

from __future__ import annotations

import numpy as np
import pytest

import hetero
from hetero.context import parse_module
from hetero.interpreter.relay import run

T = "tensor<3x5x7xf32>"

CASES = {
    "max over the middle": ("relay.max", "{axis = array<i64: 1>}", "tensor<3x7xf32>"),
    "min over two, kept": (
        "relay.min",
        "{axis = array<i64: 0, 2>, keepdims = true}",
        "tensor<1x5x1xf32>",
    ),
    "max of all": ("relay.max", "", "tensor<f32>"),
    "prod over the last": ("relay.prod", "{axis = array<i64: -1>}", "tensor<3x5xf32>"),
    "argmax over the middle": ("relay.argmax", "{axis = 1 : i64}", "tensor<3x7xi64>"),
    "argmax, last of ties": (
        "relay.argmax",
        "{axis = 1 : i64, select_last_index = true}",
        "tensor<3x7xi64>",
    ),
    "argmin kept": (
        "relay.argmin",
        "{axis = 2 : i64, keepdims = true}",
        "tensor<3x5x1xi64>",
    ),
    "argmin, last of ties": (
        "relay.argmin",
        "{axis = -1 : i64, select_last_index = true}",
        "tensor<3x5xi64>",
    ),
}


def _data() -> np.ndarray:
    """Normal numbers with ties (rounded to halves) and NaNs in some rows."""
    x = np.round(np.random.default_rng(5).standard_normal((3, 5, 7)) * 2) / 2
    x[0, 1, 2] = x[2, 3, 0] = x[2, 3, 5] = np.nan
    return x.astype(np.float32)


@pytest.mark.parametrize("name", CASES)
def test_reduction_compiled_computes_what_numpy_does(name: str) -> None:
    op, attrs, result = CASES[name]
    text = (
        f"relay.func @main(%x: {T}) -> {result} {{ %y = {op} %x {attrs} : "
        f"({T}) -> {result} relay.return %y : {result} }}"
    )
    x = _data()
    want = run(parse_module(text), x)
    got = hetero.compile(text)(x)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, equal_nan=True)


def test_argmax_follows_numpy_on_nan_and_ties() -> None:
    """The interpreter's rule itself: a NaN is the best (the first one, or
    with `select_last_index` the last), equal values the first (or last)."""
    from hetero.dialects.relay import ArgMaxOp

    x = np.array([[1, np.nan, 3, np.nan], [2, 5, 5, 1]], np.float32)
    rule = ArgMaxOp.NUMPY
    np.testing.assert_array_equal(rule(x, 1, False, False), [1, 1])
    np.testing.assert_array_equal(rule(x, 1, False, True), [3, 2])
    np.testing.assert_array_equal(rule(x, 0, True, False), [[1, 0, 1, 0]])


@pytest.mark.parametrize(
    ("op", "data", "result"),
    [
        ("relay.mean", np.full((32768,), 3, np.float16), "tensor<f16>"),
        (
            "relay.prod",
            np.array([300, 300, 1 / 300, 1 / 300], np.float16),
            "tensor<f16>",
        ),
    ],
    ids=["mean", "prod"],
)
def test_float16_reduces_in_float32(op: str, data: np.ndarray, result: str) -> None:
    """A float16 reduction totals in float32, as the interpreter does: in
    float16 a mean of 32768 threes stalls where the running sum stops
    growing (0.57), a product of 300 · 300 overflows before the divisions."""
    t = f"tensor<{data.size}xf16>"
    text = (
        f"relay.func @main(%x: {t}) -> {result} {{ %y = {op} %x : ({t}) -> "
        f"{result} relay.return %y : {result} }}"
    )
    got = hetero.compile(text)(data)
    np.testing.assert_allclose(got, run(parse_module(text), data), rtol=1e-3)
    assert abs(float(got) - {"relay.mean": 3.0, "relay.prod": 1.0}[op]) < 1e-2


def test_an_empty_axis_is_refused_by_argmax_and_a_limit_for_max() -> None:
    """No position is the best of none: `argmax` over an empty axis is a
    type error (it read outside a zero-size buffer); a maximum of none is
    -inf, a minimum inf (ONNX's ReduceMax, Min of an empty axis)."""
    from hetero.dialects import relay

    t = "tensor<3x0xf32>"
    with pytest.raises(Exception, match="axis 1 to search is empty"):
        parse_module(
            f"relay.func @main(%x: {t}) -> tensor<3xi64> {{ %y = relay.argmax %x "
            f"{{axis = 1 : i64}} : ({t}) -> tensor<3xi64> relay.return %y : "
            "tensor<3xi64> }"
        )
    empty = np.zeros((3, 0), np.float32)
    np.testing.assert_array_equal(relay.MaxOp.NUMPY(empty, (1,), False), [-np.inf] * 3)
    np.testing.assert_array_equal(relay.MinOp.NUMPY(empty, (1,), False), [np.inf] * 3)
    ints = np.zeros((2, 0), np.int64)
    assert relay.MaxOp.NUMPY(ints, (1,), False).tolist() == [np.iinfo(np.int64).min] * 2


@pytest.mark.parametrize("dtype", ["i64", "i32"])
@pytest.mark.parametrize(
    ("op", "attrs", "shape"),
    [
        ("relay.max", "{axis = array<i64: 1>}", "3x7"),
        ("relay.min", "", ""),
        ("relay.sum", "{axis = array<i64: 2>}", "3x5"),
        ("relay.prod", "{axis = array<i64: 0>, keepdims = true}", "1x5x7"),
        ("relay.argmax", "{axis = 1 : i64}", "3x7"),
        ("relay.argmin", "{axis = 2 : i64, select_last_index = true}", "3x5"),
    ],
)
def test_integer_reductions_compute_what_numpy_does(
    dtype: str, op: str, attrs: str, shape: str
) -> None:
    """Signed integers reduce in their own type (index arithmetic the
    importer could not fold: ReduceMax of sizes, ArgMax of token ids), the
    argument ones with ties; an empty maximum starts at the type's least."""
    t = f"tensor<3x5x7x{dtype}>"
    element = "i64" if op.startswith("relay.arg") else dtype
    result = f"tensor<{shape}x{element}>" if shape else f"tensor<{element}>"
    text = (
        f"relay.func @main(%x: {t}) -> {result} {{ %y = {op} %x {attrs} : ({t}) -> "
        f"{result} relay.return %y : {result} }}"
    )
    x = np.random.default_rng(3).integers(-3, 4, (3, 5, 7)).astype(f"int{dtype[1:]}")
    np.testing.assert_array_equal(hetero.compile(text)(x), run(parse_module(text), x))
