"""`alter-op-layout` in `hetero.compile`: constant conv2d weights packed at
compile time for the channel-lanes CPU schedule, the result checked against
the reference interpreter on the unpacked weights."""

from __future__ import annotations

from typing import Any

import hetero
import numpy as np
from hetero.context import parse_module
from hetero.dialects import relay
from hetero.interpreter.relay import packed_weight, run
from hetero.utils.winograd import transformed_weight

from lowered import kernel_buffer_shapes

RNG = np.random.default_rng(7)


def _hex(array: np.ndarray) -> str:
    return "0x" + np.ascontiguousarray(array, "<f4").tobytes().hex().upper()


def _program(x: tuple[int, ...], w: np.ndarray, b: np.ndarray, out: tuple[int, ...]) -> str:
    def t(shape: tuple[int, ...]) -> str:
        return f"tensor<{'x'.join(map(str, shape))}xf32>"

    return (
        'builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {\n'
        f"  relay.func @main(%x: {t(x)}) -> {t(out)} {{\n"
        f'    %w = relay.constant dense<"{_hex(w)}"> : {t(w.shape)}\n'
        f'    %b = relay.constant dense<"{_hex(b)}"> : {t(b.shape)}\n'
        f"    %0 = relay.nn.conv2d %x, %w {{padding = array<i64: 1, 1, 1, 1>}} : ({t(x)}, {t(w.shape)}) -> {t(out)}\n"
        f"    %1 = relay.nn.bias_add %0, %b : ({t(out)}, {t(b.shape)}) -> {t(out)}\n"
        f"    %2 = relay.relu %1 : {t(out)}\n"
        f"    relay.return %2 : {t(out)}\n  }}\n}}\n"
    )


def test_constant_weights_are_packed_and_the_result_is_the_same(
    background_jobs: list[Any],
) -> None:
    # A reduction of 32 x 3 x 3 = 288 and 64 output channels: channels in the
    # lanes on any x86 host (8, 16 or 64 channels a tile); a 6x6 image is
    # too small for Winograd (tests/test_winograd.py).
    x, out = (1, 32, 6, 6), (1, 64, 6, 6)
    w = RNG.standard_normal((64, 32, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(64).astype(np.float32)
    text = _program(x, w, b, out)
    assert any(len(shape) == 5 for shape in kernel_buffer_shapes(text))
    data = RNG.standard_normal(x).astype(np.float32)
    compiled = hetero.compile(text)
    np.testing.assert_allclose(compiled(data), run(parse_module(text), data), rtol=1e-4, atol=1e-4)
    assert background_jobs  # packed on the background thread


def test_a_packed_weight_has_the_shape_known_before_packing() -> None:
    """`alter-op-layout` types the packed constant before the background
    thread packs it: the shape must be the packed array's."""
    w = RNG.standard_normal((20, 3, 3, 3)).astype(np.float32)
    cases = {
        "OIHW": w,
        "OIHW8o": packed_weight(w, 8),
        "winograd4_OI16o": transformed_weight(w, 4, 16),
        "winograd2_OI8o": transformed_weight(w, 2, 8),
    }
    for layout, packed in cases.items():
        shape = relay.packed_weight_shape(w.shape, layout)
        assert shape == packed.shape, layout
        assert relay.logical_weight_shape(shape, layout, 20) == w.shape
