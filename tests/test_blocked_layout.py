"""Channel-blocked data (`NCHW<b>c`): conv2d reading and writing it through
the channel-lanes CPU schedule, pooling and `layout_transform` of blocked
data, and `alter-data-layout` in `hetero.compile`, each compiled and
compared to the relay reference interpreter (which computes in NCHW)."""

from __future__ import annotations

import isas
import numpy as np
import pytest
from lowered import kernel_buffer_shapes
from xdsl.dialects.builtin import f32

import hetero
from hetero.context import parse_module
from hetero.dialects.target import TargetAttr
from hetero.interpreter.relay import blocked_data, nchw_data, run
from hetero.targets.cpu import simd_bits
from hetero.te.schedules.cpu_conv2d import conv2d_weight_block
from hetero.te.schedules.cpu_conv2d_lanes import conv2d_data_block

RNG = np.random.default_rng(3)
AVX2 = 'mcpu = "haswell", mattr = ["+avx2", "-avx512f"]'


def _t(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def _program(params: str, result: str, body: str, options: str = "") -> str:
    target = f'#target.target<"llvm"{", {" + options + "}" if options else ""}>'
    return (
        f"builtin.module attributes {{target.config = #target.config<[{target}]>}} {{\n"
        f"  relay.func @main({params}) -> {result} {{\n    {body}\n"
        f"    relay.return %r : {result}\n  }}\n}}\n"
    )


def _blocked(shape: tuple[int, ...], layout: str) -> tuple[int, ...]:
    if layout == "NCHW":
        return shape
    block = int(layout[4:-1])
    n, c, h, w = shape
    return (n, c // block, h, w, block)


def _hex(array: np.ndarray) -> str:
    return "0x" + np.ascontiguousarray(array, "<f4").tobytes().hex().upper()


def _check(text: str, inputs: list[np.ndarray]) -> None:
    expected = run(parse_module(text), *inputs)
    np.testing.assert_allclose(
        hetero.compile(text)(*inputs), expected, rtol=1e-4, atol=1e-4
    )


def _conv(
    x: tuple[int, ...],
    o: int,
    kernel: tuple[int, int],
    attrs: dict[str, tuple[int, ...]],
    data_layout: str,
    out_layout: str,
    options: str = "",
) -> None:
    """conv2d (a constant weight, which `alter-op-layout` packs) → add of a
    residual → relu, the data and the result in the given layouts."""
    pad = attrs.get("padding", (0, 0, 0, 0))
    strides, dilation = attrs.get("strides", (1, 1)), attrs.get("dilation", (1, 1))
    size = [
        (x[2 + i] + pad[i] + pad[2 + i] - dilation[i] * (kernel[i] - 1) - 1)
        // strides[i]
        + 1
        for i in range(2)
    ]
    out = _blocked((x[0], o, *size), out_layout)
    data = _blocked(x, data_layout)
    weight = RNG.standard_normal((o, x[1], *kernel)).astype(np.float32)
    spec = ", ".join(
        [f"{k} = array<i64: {', '.join(map(str, v))}>" for k, v in attrs.items()]
        + [f'data_layout = "{data_layout}"', f'out_layout = "{out_layout}"']
    )
    body = (
        f'%w = relay.constant dense<"{_hex(weight)}"> : {_t(weight.shape)}\n'
        f"    %0 = relay.nn.conv2d %x, %w {{{spec}}} : ({_t(data)}, {_t(weight.shape)}) -> {_t(out)}\n"
        f"    %1 = relay.add %0, %y : {_t(out)}\n"
        f"    %r = relay.relu %1 : {_t(out)}"
    )
    text = _program(f"%x: {_t(data)}, %y: {_t(out)}", _t(out), body, options)
    inputs = [RNG.standard_normal(s).astype(np.float32) for s in (data, out)]
    _check(text, inputs)


CONVS = [
    # 1x1, stride 1, no padding: the data read in place (a flat window)
    ((1, 32, 7, 7), 64, (1, 1), {}),
    # padded 3x3, a batch of 2, 48 channels (tiles of 3 vectors)
    ((2, 16, 14, 14), 48, (3, 3), {"padding": (1, 1, 1, 1)}),
    # stride 2 into 7x7; dilation with uneven padding
    ((1, 32, 13, 13), 64, (3, 3), {"strides": (2, 2), "padding": (1, 1, 1, 1)}),
    ((1, 16, 9, 11), 32, (3, 2), {"dilation": (2, 1), "padding": (2, 0, 1, 1)}),
    # 4 output pixels: fewer than a tile; 80 channels: 5 single-vector tiles
    ((1, 16, 2, 2), 80, (1, 1), {}),
    # a stride-2 1x1 (one of four stride planes read)
    ((1, 64, 8, 8), 128, (1, 1), {"strides": (2, 2)}),
]


@pytest.mark.parametrize("x, o, kernel, attrs", CONVS)
@pytest.mark.parametrize(
    "data_layout, out_layout",
    [("NCHW16c", "NCHW16c"), ("NCHW", "NCHW16c"), ("NCHW16c", "NCHW")],
)
def test_conv2d_blocked(
    x: tuple[int, ...],
    o: int,
    kernel: tuple[int, int],
    attrs: dict[str, tuple[int, ...]],
    data_layout: str,
    out_layout: str,
) -> None:
    """Blocked data read a block of channels per pixel, a blocked result
    stored a vector of channels at a time, through the fused epilogue."""
    _conv(x, o, kernel, attrs, data_layout, out_layout)


def test_conv2d_blocked_rgb_input_and_unfilled_output_tiles() -> None:
    """Three input channels (the stem of a CNN) into blocks; blocked data
    into 100 NCHW channels (a last tile of 36)."""
    _conv(
        (1, 3, 17, 17),
        32,
        (7, 7),
        {"strides": (2, 2), "padding": (3, 3, 3, 3)},
        "NCHW",
        "NCHW16c",
    )
    _conv((1, 32, 5, 5), 100, (1, 1), {}, "NCHW16c", "NCHW")


def test_conv2d_in_another_block_is_read_through_its_view() -> None:
    """Blocks of 8 with AVX-512 (16 lanes): not the schedule's own, read and
    written through the NCHW views, still right."""
    _conv((1, 16, 6, 6), 32, (3, 3), {"padding": (1, 1, 1, 1)}, "NCHW8c", "NCHW8c")


@pytest.mark.skipif(simd_bits(None) < 256, reason="needs an AVX2 host")
def test_conv2d_blocked_avx2() -> None:
    """AVX2: blocks of 8 channels, tiles of 2 vectors."""
    _conv(
        (1, 16, 9, 9), 24, (3, 3), {"padding": (1, 1, 1, 1)}, "NCHW8c", "NCHW8c", AVX2
    )


POOLS = [
    (
        "relay.nn.max_pool2d",
        '{pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, layout = "NCHW16c"}',
        (9, 9),
        (5, 5),
    ),
    (
        "relay.nn.max_pool2d",
        '{pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true, layout = "NCHW16c"}',
        (7, 7),
        (4, 4),
    ),
    (
        "relay.nn.avg_pool2d",
        '{pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, layout = "NCHW16c"}',
        (6, 6),
        (6, 6),
    ),
    (
        "relay.nn.avg_pool2d",
        '{pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = true, layout = "NCHW16c"}',
        (6, 6),
        (6, 6),
    ),
    ("relay.nn.global_avg_pool2d", '{layout = "NCHW16c"}', (7, 7), (1, 1)),
    # dilated taps: the nearest pixel inside is no tap of the window
    (
        "relay.nn.max_pool2d",
        '{pool_size = array<i64: 2, 2>, dilation = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, layout = "NCHW16c"}',
        (4, 4),
        (4, 4),
    ),
    # the last row and column of windows lie wholly in the padding: -inf
    (
        "relay.nn.max_pool2d",
        '{pool_size = array<i64: 2, 2>, padding = array<i64: 0, 0, 2, 2>, layout = "NCHW16c"}',
        (4, 4),
        (5, 5),
    ),
]


@pytest.mark.parametrize("name, attrs, size, out", POOLS)
def test_pooling_of_blocks(
    name: str, attrs: str, size: tuple[int, int], out: tuple[int, int]
) -> None:
    """A pixel's block of channels pooled as one vector: max, average (with
    and without the padding counted) and global average."""
    data, result = (2, 2, *size, 16), (2, 2, *out, 16)
    body = f"%r = {name} %x {attrs} : ({_t(data)}) -> {_t(result)}"
    _check(
        _program(f"%x: {_t(data)}", _t(result), body),
        [RNG.standard_normal(data).astype(np.float32)],
    )


@pytest.mark.parametrize(
    "src, dst, shape",
    [
        ("NCHW", "NCHW16c", (2, 32, 3, 5)),
        ("NCHW16c", "NCHW", (1, 48, 4, 4)),
        ("NCHW16c", "NCHW8c", (1, 32, 3, 3)),
    ],
)
def test_layout_transform(src: str, dst: str, shape: tuple[int, ...]) -> None:
    data, result = _blocked(shape, src), _blocked(shape, dst)
    body = f'%r = relay.layout_transform %x {{src_layout = "{src}", dst_layout = "{dst}"}} : ({_t(data)}) -> {_t(result)}'
    x = RNG.standard_normal(data).astype(np.float32)
    compiled = hetero.compile(_program(f"%x: {_t(data)}", _t(result), body))(x)
    np.testing.assert_array_equal(compiled, blocked_data(nchw_data(x, src), dst))


def test_interpreter_layouts_round_trip() -> None:
    x = RNG.standard_normal((2, 32, 3, 4)).astype(np.float32)
    blocked = blocked_data(x, "NCHW16c")
    assert blocked.shape == (2, 2, 3, 4, 16)
    assert blocked[1, 1, 2, 3, 5] == x[1, 21, 2, 3]
    np.testing.assert_array_equal(nchw_data(blocked, "NCHW16c"), x)


def _residual_network() -> tuple[str, list[tuple[int, ...]]]:
    """NCHW relay: conv → bias → relu → conv → bias → + input → relu → max
    pool → global average → flatten; a CPU with AVX-512 lanes or not."""
    c = 32
    w1 = RNG.standard_normal((c, c, 3, 3)).astype(np.float32) * 0.1
    w2 = RNG.standard_normal((c, c, 1, 1)).astype(np.float32) * 0.1
    b = RNG.standard_normal(c).astype(np.float32)
    x, pooled = (1, c, 10, 10), (1, c, 5, 5)
    body = "\n    ".join(
        [
            f'%w1 = relay.constant dense<"{_hex(w1)}"> : {_t(w1.shape)}',
            f'%w2 = relay.constant dense<"{_hex(w2)}"> : {_t(w2.shape)}',
            f'%b = relay.constant dense<"{_hex(b)}"> : {_t(b.shape)}',
            f"%0 = relay.nn.conv2d %x, %w1 {{padding = array<i64: 1, 1, 1, 1>}} : ({_t(x)}, {_t(w1.shape)}) -> {_t(x)}",
            f"%1 = relay.nn.bias_add %0, %b : ({_t(x)}, {_t(b.shape)}) -> {_t(x)}",
            f"%2 = relay.relu %1 : {_t(x)}",
            f"%3 = relay.nn.conv2d %2, %w2 : ({_t(x)}, {_t(w2.shape)}) -> {_t(x)}",
            f"%4 = relay.nn.bias_add %3, %b : ({_t(x)}, {_t(b.shape)}) -> {_t(x)}",
            f"%5 = relay.add %4, %x : {_t(x)}",
            f"%6 = relay.relu %5 : {_t(x)}",
            f"%7 = relay.nn.max_pool2d %6 {{pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}} : ({_t(x)}) -> {_t(pooled)}",
            f"%8 = relay.nn.global_avg_pool2d %7 : ({_t(pooled)}) -> {_t((1, c, 1, 1))}",
            f"%r = relay.flatten %8 : ({_t((1, c, 1, 1))}) -> {_t((1, c))}",
        ]
    )
    return f"%x: {_t(x)}", body


@pytest.mark.parametrize("isa, block", [("avx512", 16), ("avx2", 8)])
def test_alter_data_layout_in_compile(isa: str, block: int) -> None:
    """With `data_layout = "NCHWc"`, `hetero.compile` blocks the activations
    between the convolutions (the kernels take 5-D buffers, a vector of
    channels per block), and the network computes what the interpreter
    computes in NCHW (where the host runs the ISA's code)."""
    params, body = _residual_network()
    text = _program(
        params, _t((1, 32)), body, f'{isas.options(isa)}, data_layout = "NCHWc"'
    )
    shapes = kernel_buffer_shapes(text)
    assert any(len(shape) == 5 and shape[-1] == block for shape in shapes)
    if isas.runs_here(isa):
        _check(text, [RNG.standard_normal((1, 32, 10, 10)).astype(np.float32)])


def test_the_default_pipeline_keeps_nchw() -> None:
    """Without the option, no kernel reads or writes blocked data (5-D
    buffers are the packed weights only: `[O / b, I, KH, KW, b]`)."""
    params, body = _residual_network()
    shapes = kernel_buffer_shapes(_program(params, _t((1, 32)), body))
    assert all(len(shape) == 4 or shape[1] == 32 for shape in shapes if len(shape) >= 4)


@pytest.mark.parametrize(
    "mattr, weight, groups, layout, block",
    [
        (["+avx512f"], (64, 64, 3, 3), 1, "NCHWc", 16),
        (["+avx2", "-avx512f"], (64, 64, 3, 3), 1, "NCHWc", 8),
        (["+avx512f"], (64, 1, 3, 3), 64, "NCHWc", 0),  # depthwise
        (["+avx512f"], (64, 64, 3, 3), 1, "NCHW", 0),  # the default
    ],
)
def test_conv2d_data_block(
    mattr: list[str], weight: tuple[int, ...], groups: int, layout: str, block: int
) -> None:
    """The CPU schedule wants one vector of channels per block, where the
    target asks for blocked activations."""
    target = TargetAttr(
        "llvm", {"mcpu": "x86-64", "mattr": mattr, "data_layout": layout}
    )
    assert conv2d_data_block(weight, groups, f32, target) == block


def test_conv2d_data_block_of_nchw_data() -> None:
    """NCHW data gets a blocked result only after a deep enough reduction
    (an RGB 3x3 is 27 deep, a 7x7 147)."""
    target = TargetAttr(
        "llvm", {"mcpu": "x86-64", "mattr": ["+avx512f"], "data_layout": "NCHWc"}
    )
    assert conv2d_data_block((64, 3, 3, 3), 1, f32, target, False) == 0
    assert conv2d_data_block((64, 3, 3, 3), 1, f32, target, True) == 16
    assert conv2d_data_block((64, 3, 7, 7), 1, f32, target, False) == 16


@pytest.mark.parametrize(
    "weight, block",
    [
        ((64, 64, 1, 1), 64),  # a shallow reduction, channel lanes all the same
        ((48, 16, 3, 3), 48),  # 3 vectors
        ((80, 16, 1, 1), 16),  # 5 vectors: one a tile
        ((100, 32, 1, 1), 64),  # blocked data into unblocked channels
    ],
)
def test_conv2d_weight_block_of_blocked_convs(
    weight: tuple[int, ...], block: int
) -> None:
    """With blocked data or output, the channel-lanes tiles always, as wide as
    divides the output channels where they fill vectors."""
    target = TargetAttr("llvm", {"mcpu": "x86-64", "mattr": ["+avx512f"]})
    out = (1, weight[0], 7, 7)
    assert conv2d_weight_block(weight, out, 1, f32, target, True) == block
