"""The depthwise conv2d schedule (`te/schedules/cpu_depthwise.py`) against
the reference interpreter, on both x86-64 vector ISAs (pinned; run where
the host can), and the tiles it chooses for them."""

from __future__ import annotations

import isas
import numpy as np
import pytest
from lowered import local_buffer_shapes
from xdsl.dialects.builtin import f32

import hetero
from hetero.context import parse_module
from hetero.interpreter.relay import run
from hetero.te.schedules.cpu_depthwise import (
    SPARE_REGISTERS,
    DepthwiseTile,
    depthwise_tile,
)
from hetero.te.schedules.isa import vector_isa
from hetero.te.schedules.problems import Conv2D

RNG = np.random.default_rng(0)


def _t(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def _out(x: tuple[int, ...], o: int, k: int, stride: int, pad: int, dil: int):
    size = [(s + 2 * pad - dil * (k - 1) - 1) // stride + 1 for s in x[2:]]
    return (x[0], o, *size)


def _program(
    x: tuple[int, ...],
    o: int,
    k: int,
    stride: int,
    isa: str,
    pad: int | None = None,
    dil: int = 1,
    threads: int = 1,
) -> tuple[str, tuple[int, ...]]:
    """A depthwise conv2d (`o / channels` outputs per channel) + bias +
    relu, its weight and bias parameters, for `isa`."""
    pad = dil * (k // 2) if pad is None else pad
    out = _out(x, o, k, stride, pad, dil)
    w, b = (o, 1, k, k), (o,)
    attrs = (
        f"strides = array<i64: {stride}, {stride}>, "
        f"padding = array<i64: {pad}, {pad}, {pad}, {pad}>, "
        f"dilation = array<i64: {dil}, {dil}>, groups = {x[1]} : i64"
    )
    target = f'#target.target<"llvm", {{num_threads = {threads}, {isas.options(isa)}}}>'
    text = (
        f"builtin.module attributes {{target.config = #target.config<[{target}]>}} {{\n"
        f"  relay.func @main(%x: {_t(x)}, %w: {_t(w)}, %b: {_t(b)}) -> {_t(out)} {{\n"
        f"    %0 = relay.nn.conv2d %x, %w {{{attrs}}} : ({_t(x)}, {_t(w)}) -> {_t(out)}\n"
        f"    %1 = relay.nn.bias_add %0, %b : ({_t(out)}, {_t(b)}) -> {_t(out)}\n"
        f"    %r = relay.relu %1 : {_t(out)}\n"
        f"    relay.return %r : {_t(out)}\n  }}\n}}\n"
    )
    return text, out


def _check(text: str, x: tuple[int, ...], o: int, k: int) -> None:
    inputs = [
        RNG.standard_normal(s).astype(np.float32) for s in (x, (o, 1, k, k), (o,))
    ]
    expected = run(parse_module(text), *inputs)
    np.testing.assert_allclose(
        hetero.compile(text)(*inputs), expected, rtol=1e-5, atol=1e-5
    )


CASES = [
    # (input, output channels, window, stride)
    ((1, 16, 56, 56), 16, 3, 1),  # rows of several vectors, edges overlapping
    ((1, 24, 28, 28), 24, 3, 2),  # stride 2: four phase planes
    ((1, 8, 14, 14), 8, 5, 1),
    ((1, 8, 15, 15), 8, 5, 2),  # odd image, stride 2: a phase shorter
    ((1, 5, 7, 7), 5, 5, 1),  # a row narrower than a vector, odd channels
    ((1, 3, 9, 30), 3, 3, 2),  # wide, short, odd channels
    ((2, 6, 11, 13), 6, 3, 1),  # a batch, rows of odd widths
    ((1, 4, 10, 10), 8, 3, 1),  # two outputs per channel
    ((1, 7, 20, 19), 7, 3, 3),  # stride 3: nine planes
]


@pytest.mark.parametrize("isa", isas.ISAS)
@pytest.mark.parametrize("x, o, k, stride", CASES)
def test_depthwise_matches_the_interpreter(
    isa: str, x: tuple[int, ...], o: int, k: int, stride: int
) -> None:
    if not isas.runs_here(isa):
        pytest.skip(f"this host cannot run {isa} code")
    text, _ = _program(x, o, k, stride, isa)
    _check(text, x, o, k)


@pytest.mark.parametrize("isa", isas.ISAS)
@pytest.mark.parametrize(
    "pad, dil, threads", [(0, 1, 1), (2, 1, 2), (1, 2, 3), (3, 1, 2)]
)
def test_depthwise_padding_dilation_threads(
    isa: str, pad: int, dil: int, threads: int
) -> None:
    """No padding, more than the window needs, dilated windows, and any
    number of threads (one task per image and channel)."""
    if not isas.runs_here(isa):
        pytest.skip(f"this host cannot run {isa} code")
    x = (1, 9, 17, 23)
    text, _ = _program(x, 9, 3, 2, isa, pad=pad, dil=dil, threads=threads)
    _check(text, x, 9, 3)


@pytest.mark.parametrize("isa", isas.ISAS)
def test_depthwise_pads_each_channel_on_the_stack(isa: str) -> None:
    """A task's planes (4 for stride 2) and its register tile are its own
    `local` buffers, sized as `depthwise_tile` says."""
    x = (1, 32, 56, 56)
    text, out = _program(x, 32, 3, 2, isa)
    shapes = local_buffer_shapes(text)
    t = _tile(isas.target(isa), out)
    assert (t.rows, t.nr) in shapes
    assert any(len(s) == 2 and s[0] == 4 and s[1] >= 29 * 29 for s in shapes)


def _tile(target, out: tuple[int, ...]) -> DepthwiseTile:  # type: ignore[no-untyped-def]
    """The tile of a depthwise conv2d with output `out`."""

    class _Shapes:
        def __init__(self, shape: tuple[int, ...]) -> None:
            self.shape = shape
            self.element_type = f32

    c = Conv2D(
        _Shapes((1, out[1], 1, 1)),  # type: ignore[arg-type]
        _Shapes((out[1], 1, 3, 3)),  # type: ignore[arg-type]
        out,
        (1, 1),
        (1, 1),
        (1, 1, 1, 1),
        out[1],
        lambda *_: None,
    )
    return depthwise_tile(c, target)


@pytest.mark.parametrize("isa", isas.ISAS)
@pytest.mark.parametrize("size", [7, 8, 14, 15, 28, 56, 112, 120])
def test_depthwise_tile_fits_the_registers(isa: str, size: int) -> None:
    """The accumulators leave `SPARE_REGISTERS` of the ISA's; the tiles
    cover the image once, overlapping at its edges by less than a tile; a
    row of 8 pixels or fewer takes 8-lane vectors, with AVX-512 too."""
    target = isas.target(isa)
    t = _tile(target, (1, 16, size, size))
    assert t.rows * t.vectors <= vector_isa(target).registers - SPARE_REGISTERS
    assert t.row_tiles * t.rows >= size > (t.row_tiles - 1) * t.rows
    covered = t.col_tiles * t.nr
    assert covered >= size and (t.col_tiles == 1 or size >= t.nr)
    assert size > 8 or t.nr == 8
