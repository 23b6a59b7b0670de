"""`trim-conv-taps`: convolutions whose outer taps read only padding, or
whose taps mostly do (split tap by tap), compute what they computed before
(the relay interpreter runs the untouched program), at dilations, strides
and paddings around the map's size."""

from __future__ import annotations

import numpy as np
import pytest

import hetero
from hetero.context import parse_module
from hetero.interpreter.relay import run
from hetero.transforms.trim_conv_taps import live_taps


def _conv(size: tuple[int, int], pad: int, dilation: int, stride: int) -> str:
    h, w = size
    oh = (h + 2 * pad - dilation * 2 - 1) // stride + 1
    ow = (w + 2 * pad - dilation * 2 - 1) // stride + 1
    x, k, y = (
        f"tensor<1x6x{h}x{w}xf32>",
        "tensor<5x6x3x3xf32>",
        f"tensor<1x5x{oh}x{ow}xf32>",
    )
    return f"""
relay.func @main(%x: {x}, %w: {k}) -> {y} {{
  %0 = relay.nn.conv2d %x, %w {{padding = array<i64: {pad}, {pad}, {pad}, {pad}>, dilation = array<i64: {dilation}, {dilation}>, strides = array<i64: {stride}, {stride}>}} : ({x}, {k}) -> {y}
  relay.return %0 : {y}
}}
"""


@pytest.mark.parametrize(
    ("size", "pad", "dilation", "stride"),
    [
        ((14, 14), 36, 36, 1),
        ((14, 14), 24, 24, 1),
        ((14, 14), 12, 12, 1),
        ((9, 11), 8, 8, 1),
        ((14, 14), 6, 6, 1),
        ((7, 20), 9, 9, 1),
        ((9, 9), 12, 10, 2),
        ((5, 5), 6, 6, 3),
    ],
)
def test_trimmed_convolution_computes_the_same(
    size: tuple[int, int], pad: int, dilation: int, stride: int
) -> None:
    text = _conv(size, pad, dilation, stride)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 6, *size)).astype(np.float32)
    w = rng.standard_normal((5, 6, 3, 3)).astype(np.float32)
    want = run(parse_module(text), x, w)
    np.testing.assert_allclose(hetero.compile(text)(x, w), want, rtol=1e-4, atol=1e-4)


def test_live_taps_are_those_that_read_the_map_for_some_output() -> None:
    assert live_taps(14, 14, 3, 1, 36, 36) == range(1, 2)
    assert live_taps(14, 14, 3, 1, 12, 12) == range(3)
    assert live_taps(14, 14, 3, 1, 13, 13) == range(3)  # row 13 reads row 0
    assert live_taps(14, 14, 3, 1, 14, 14) == range(1, 2)
    assert live_taps(4, 1, 3, 1, 1, 5) == range(0)  # reads padding only
