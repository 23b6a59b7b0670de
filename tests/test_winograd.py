"""Winograd's F(m x m, 3 x 3) for conv2d: the transforms, the weight layout
`winograd<m>_OI<b>o`, when the CPU schedule asks for it, and the compiled
convolutions against the reference interpreter (which reads the weight
back as OIHW and convolves directly)."""

from __future__ import annotations

import isas
import numpy as np
import pytest
from lowered import kernel_buffer_shapes
from xdsl.dialects.builtin import f32, f64

import hetero
from hetero.context import parse_module
from hetero.dialects.target import VirtualDeviceAttr
from hetero.dialects.target.target_string import parse_target_string
from hetero.dialects.tir import AllocOp
from hetero.interpreter.relay import oihw_weight, run
from hetero.te.schedules import cpu_winograd
from hetero.te.schedules.cpu_winograd import conv2d_winograd_tile
from hetero.utils.winograd import (
    TRANSFORMS,
    program,
    spatial_weight,
    transformed_weight,
)

RNG = np.random.default_rng(11)
AVX512 = parse_target_string("llvm -mcpu=x86-64 -mattr=+avx512f")


@pytest.mark.parametrize("m", sorted(TRANSFORMS))
def test_transforms_compute_a_correlation(m: int) -> None:
    """A^T [(G g) * (B^T d)] is the correlation of d with g, and L G = I."""
    t = TRANSFORMS[m]
    bt, g, at, left = map(np.asarray, (t.bt, t.g, t.at, t.left))
    np.testing.assert_allclose(left @ g, np.eye(3), atol=1e-15)
    d, w = RNG.standard_normal(t.alpha), RNG.standard_normal(3)
    expected = [d[i : i + 3] @ w for i in range(m)]
    np.testing.assert_allclose(
        at @ ((g @ w) * (bt @ d)), expected, rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("m", sorted(TRANSFORMS))
def test_transformed_weight_layout_and_its_inverse(m: int) -> None:
    w = RNG.standard_normal((70, 5, 3, 3)).astype(np.float32)
    u = transformed_weight(w, m, 64)
    alpha = m + 2
    assert u.shape == (alpha * alpha, 2, 5, 64) and u.dtype == np.float32
    g = np.asarray(TRANSFORMS[m].g)
    # Element [u * a + v, o // b, i, o % b] is (G w[o, i] G^T)[u, v] ...
    np.testing.assert_allclose(
        u[1 * alpha + 2, 1, 3, 69 - 64], (g @ w[69, 3] @ g.T)[1, 2], rtol=1e-6
    )
    assert not u[:, 1, :, 70 - 64 :].any()  # ... and zero past channel 70
    np.testing.assert_allclose(spatial_weight(u, m, 70), w, rtol=1e-5, atol=1e-6)
    layout = f"winograd{m}_OI64o"
    np.testing.assert_allclose(oihw_weight(u, layout, 70), w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("weight", "out", "strides", "dilation", "groups", "element", "blocked", "wanted"),
    [
        ((64, 64, 3, 3), (1, 64, 56, 56), (1, 1), (1, 1), 1, f32, False, (4, 64)),
        ((64, 16, 3, 3), (1, 64, 55, 55), (1, 1), (1, 1), 1, f32, False, (4, 64)),
        ((64, 16, 3, 3), (1, 64, 23, 55), (1, 1), (1, 1), 1, f32, False, (2, 64)),
        ((256, 256, 3, 3), (1, 256, 14, 14), (1, 1), (1, 1), 1, f32, False, (2, 64)),
        ((512, 512, 3, 3), (1, 512, 7, 7), (1, 1), (1, 1), 1, f32, False, (2, 64)),
        ((64, 64, 3, 3), (1, 64, 28, 28), (2, 2), (1, 1), 1, f32, False, (0, 0)),
        ((64, 64, 3, 3), (1, 64, 28, 28), (1, 1), (2, 2), 1, f32, False, (0, 0)),
        ((64, 32, 3, 3), (1, 64, 28, 28), (1, 1), (1, 1), 2, f32, False, (0, 0)),
        ((64, 64, 1, 1), (1, 64, 28, 28), (1, 1), (1, 1), 1, f32, False, (0, 0)),
        ((64, 64, 3, 3), (1, 64, 28, 28), (1, 1), (1, 1), 1, f64, False, (0, 0)),
        ((64, 64, 3, 3), (1, 64, 28, 28), (1, 1), (1, 1), 1, f32, True, (0, 0)),
        ((48, 32, 3, 3), (1, 48, 28, 28), (1, 1), (1, 1), 1, f32, False, (4, 48)),
        ((64, 8, 3, 3), (1, 64, 28, 28), (1, 1), (1, 1), 1, f32, False, (0, 0)),
        ((100, 64, 3, 3), (1, 100, 28, 28), (1, 1), (1, 1), 1, f32, False, (0, 0)),
        ((64, 64, 3, 3), (1, 64, 6, 6), (1, 1), (1, 1), 1, f32, False, (0, 0)),
    ],
    ids=[
        "resnet",
        "shallow",
        "short",
        "14x14",
        "7x7",
        "stride",
        "dilation",
        "groups",
        "1x1",
        "f64",
        "blocked",
        "48-channels",
        "few-inputs",
        "ragged-channels",
        "small-image",
    ],
)
def test_when_the_cpu_schedule_asks_for_winograd(
    weight: tuple[int, ...],
    out: tuple[int, ...],
    strides: tuple[int, int],
    dilation: tuple[int, int],
    groups: int,
    element: object,
    blocked: bool,
    wanted: tuple[int, int],
) -> None:
    got = conv2d_winograd_tile(
        weight, out, strides, dilation, groups, element, AVX512, blocked
    )
    assert got == wanted


@pytest.mark.parametrize(
    ("option", "wanted"), [("", (4, 64)), (4, (4, 64)), (2, (2, 64)), (0, (0, 0))]
)
def test_the_target_caps_the_winograd_tile(option: object, wanted: tuple[int, int]):
    """The `llvm` target's `winograd` option: the largest output tile a 3x3
    convolution may take (F(4x4) by default on a 28x28 image), 0 none."""
    target = parse_target_string(
        f"llvm -mcpu=x86-64 -mattr=+avx512f{f' -winograd={option}' if option != '' else ''}"
    )
    shape = ((64, 64, 3, 3), (1, 64, 28, 28), (1, 1), (1, 1), 1, f32)
    assert conv2d_winograd_tile(*shape, target) == wanted


def test_a_convolution_the_target_keeps_from_winograd_is_direct_and_right() -> None:
    """`winograd = 0`: no weight in the Winograd domain, and the result is
    the interpreter's; `winograd = 2` on an image F(4x4) would take."""
    x = (1, 16, 24, 24)
    w = (RNG.standard_normal((32, 16, 3, 3)) / 12).astype(np.float32)
    data = RNG.standard_normal(x).astype(np.float32)
    for option, positions in ((0, []), (2, [16]), (4, [36])):
        text = _conv(x, w, 1, target=f"winograd = {option} : i64")
        assert [s[0] for s in _winograd_weights(text)] == positions
        _check(text, data)


def _hex(array: np.ndarray) -> str:
    return "0x" + np.ascontiguousarray(array, "<f4").tobytes().hex().upper()


def _t(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def _conv(
    x: tuple[int, ...],
    w: np.ndarray,
    pad: int,
    *,
    residual: bool = False,
    layout: str = "OIHW",
    channels: int = 0,
    strides: int = 1,
    target: str = "",
) -> str:
    """conv2d + bias_add + (add of a second input) + relu: the epilogue the
    schedule applies as it stores."""
    o = channels or w.shape[0]
    oh = (x[2] + 2 * pad - 3) // strides + 1
    ow = (x[3] + 2 * pad - 3) // strides + 1
    out = (x[0], o, oh, ow)
    b = RNG.standard_normal(o).astype(np.float32)
    params = f"%x: {_t(x)}" + (f", %r: {_t(out)}" if residual else "")
    attrs = [f"padding = array<i64: {pad}, {pad}, {pad}, {pad}>"]
    if strides != 1:
        attrs.append(f"strides = array<i64: {strides}, {strides}>")
    if layout != "OIHW":
        attrs += [f'kernel_layout = "{layout}"', f"channels = {o} : i64"]
    options = f", {{{target}}}" if target else ""
    add = (
        f"    %2 = relay.add %1, %r : ({_t(out)}, {_t(out)}) -> {_t(out)}\n"
        if residual
        else f"    %2 = relay.add %1, %1 : ({_t(out)}, {_t(out)}) -> {_t(out)}\n"
    )
    return (
        f'builtin.module attributes {{target.config = #target.config<[#target.target<"llvm"{options}>]>}} {{\n'
        f"  relay.func @main({params}) -> {_t(out)} {{\n"
        f'    %w = relay.constant dense<"{_hex(w)}"> : {_t(w.shape)}\n'
        f'    %b = relay.constant dense<"{_hex(b)}"> : {_t((o,))}\n'
        f"    %0 = relay.nn.conv2d %x, %w {{{', '.join(attrs)}}} : ({_t(x)}, {_t(w.shape)}) -> {_t(out)}\n"
        f"    %1 = relay.nn.bias_add %0, %b : ({_t(out)}, {_t((o,))}) -> {_t(out)}\n"
        f"{add}"
        f"    %3 = relay.relu %2 : {_t(out)}\n"
        f"    relay.return %3 : {_t(out)}\n  }}\n}}\n"
    )


def _check(text: str, *inputs: np.ndarray) -> None:
    expected = run(parse_module(text), *inputs)
    got = hetero.compile(text)(*inputs)
    scale = np.abs(expected).max()
    np.testing.assert_allclose(got / scale, expected / scale, rtol=0, atol=1e-5)


def _winograd_weights(text: str) -> list[tuple[int, ...]]:
    """The 4-D kernel buffers of the compiled program: transformed weights
    (`[positions, channel blocks, inputs, block]`)."""
    return [s for s in kernel_buffer_shapes(text) if len(s) == 4 and s[0] in (16, 36)]


@pytest.mark.parametrize(
    ("x", "o", "pad", "residual"),
    [
        ((1, 64, 14, 14), 64, 1, False),  # ResNet's kind: even, padded
        (
            (2, 32, 13, 11),
            48,
            1,
            True,
        ),  # odd sizes (the last tile row and column clipped), batch 2
        ((1, 16, 9, 20), 80, 0, False),  # unpadded, a channel tile of 16 past 64
        ((1, 24, 7, 7), 32, 1, True),  # a row of 4 tiles: one block of 4
        (
            (1, 16, 27, 30),
            64,
            1,
            True,
        ),  # F(4x4): clipped, blocks of 5 of 8 tiles overlap
        (
            (1, 16, 9, 70),
            32,
            1,
            False,
        ),  # F(2x2), 35 tiles a row: vectors of tiles overlap
        ((1, 16, 24, 72), 32, 1, False),  # F(4x4), 18 tiles a row
    ],
)
def test_compiled_winograd_conv_matches_the_interpreter(
    x: tuple[int, ...], o: int, pad: int, residual: bool
) -> None:
    w = (RNG.standard_normal((o, x[1], 3, 3)) / np.sqrt(9 * x[1])).astype(np.float32)
    text = _conv(x, w, pad, residual=residual)
    assert _winograd_weights(text), "the CPU schedule should have asked for Winograd"
    data = RNG.standard_normal(x).astype(np.float32)
    out = (x[0], o, x[2] + 2 * pad - 2, x[3] + 2 * pad - 2)
    extra = [RNG.standard_normal(out).astype(np.float32)] if residual else []
    _check(text, data, *extra)


def test_bands_of_rows_of_tiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows of tiles in bands of 3 (a small V_BAND_BYTES) over two images of
    5 rows of tiles each: bands span both images, the last overlaps the one
    before, each band's patches are transformed and multiplied in turn."""
    x = (2, 16, 10, 12)
    row_bytes = 16 * 16 * 6 * 4  # F(2x2): 16 positions, 16 channels, 6 tiles
    monkeypatch.setattr(cpu_winograd, "V_BAND_BYTES", 3 * row_bytes)
    w = (RNG.standard_normal((32, 16, 3, 3)) / 12).astype(np.float32)
    text = _conv(x, w, 1, residual=True)
    assert [s[0] for s in _winograd_weights(text)] == [16]
    out = (2, 32, 10, 12)
    _check(
        text,
        RNG.standard_normal(x).astype(np.float32),
        RNG.standard_normal(out).astype(np.float32),
    )


def test_f2_tiles_compile_and_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """F(2x2, 3x3) on an image large enough for F(4x4, 3x3)."""
    monkeypatch.setattr(cpu_winograd, "OUTPUT_TILES", {2: 0})
    x = (1, 32, 25, 30)
    w = (RNG.standard_normal((64, 32, 3, 3)) / np.sqrt(9 * 32)).astype(np.float32)
    text = _conv(x, w, 1)
    assert [s[0] for s in _winograd_weights(text)] == [16]
    _check(text, RNG.standard_normal(x).astype(np.float32))


def test_f4_tiles_compile_and_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """F(4x4, 3x3): 6x6 tiles, 36 positions (here on a small image)."""
    monkeypatch.setattr(cpu_winograd, "OUTPUT_TILES", {4: 0})
    x = (1, 32, 15, 18)
    w = (RNG.standard_normal((64, 32, 3, 3)) / np.sqrt(9 * 32)).astype(np.float32)
    text = _conv(x, w, 1, residual=True)
    assert [s[0] for s in _winograd_weights(text)] == [36]
    out = (1, 64, 15, 18)
    _check(
        text,
        RNG.standard_normal(x).astype(np.float32),
        RNG.standard_normal(out).astype(np.float32),
    )


@pytest.mark.parametrize(
    ("m", "block", "strides"), [(2, 16, 2), (4, 16, 2), (2, 8, 1), (4, 2048, 1)]
)
def test_a_winograd_weight_the_schedule_cannot_use_is_read_as_oihw(
    m: int, block: int, strides: int
) -> None:
    """A weight given in the Winograd domain to a conv of stride 2, or in
    blocks the schedule's tiles cannot take (8 channels: half a vector with
    AVX-512; 2048: more than a register tile), is read through its OIHW
    view by the direct schedule: same result as the interpreter."""
    x = (1, 8, 11, 11)
    w = RNG.standard_normal((20, 8, 3, 3)).astype(np.float32)
    u = transformed_weight(w, m, block)
    text = _conv(
        x, u, 1, layout=f"winograd{m}_OI{block}o", channels=20, strides=strides
    )
    _check(text, RNG.standard_normal(x).astype(np.float32))


def test_avx2_tiles() -> None:
    """With AVX2, 16-channel blocks (two vectors) and 8-lane vectors."""
    x = (1, 32, 10, 10)
    w = (RNG.standard_normal((32, 32, 3, 3)) / np.sqrt(9 * 32)).astype(np.float32)
    text = _conv(x, w, 1, target='mcpu = "haswell", mattr = ["+avx2", "-avx512f"]')
    assert [s[-1] for s in _winograd_weights(text)] == [16]
    _check(text, RNG.standard_normal(x).astype(np.float32))


@pytest.mark.parametrize("m", sorted(TRANSFORMS))
@pytest.mark.parametrize("name", ["bt", "at", "g", "left"])
def test_transform_programs(m: int, name: str) -> None:
    """The straight-line programs of the transforms compute `matrix · x`,
    in fewer steps than term by term where the matrix has the structure
    (F(4x4)'s B^T 19 steps instead of 28, A^T 13 instead of 20)."""
    matrix = getattr(TRANSFORMS[m], name)
    steps = program(matrix)
    values = list(RNG.standard_normal(len(matrix[0])))
    expected = np.asarray(matrix) @ values
    for op, a, b in steps.steps:
        left, right = values[a], values[int(b)] if op != "scale" else b
        values.append({"add": left + right, "sub": left - right, "scale": b * left}[op])
    got = [values[k] for k in steps.outputs]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    if (m, name) in {(4, "bt"), (4, "at")}:
        assert len(steps.steps) == {"bt": 19, "at": 13}[name]


@pytest.mark.parametrize(
    ("isa", "m", "block"),
    [("avx512", 2, 16), ("avx512", 4, 32), ("avx2", 2, 16), ("avx2", 4, 16)],
)
def test_lowered_winograd_kernel_interpreted(isa: str, m: int, block: int) -> None:
    """The schedule's TIR itself for `isa` (32-channel blocks are AVX-512's
    two vectors, 16-channel ones AVX2's), run by the TIR interpreter (no
    LLVM, so on any host), against the relay interpreter: a transformed
    weight given as a parameter in layout winograd<m>_OI<b>o, 20 channels (a
    partial channel tile with 16), a clipped last row and column of tiles."""
    from test_lower_te import complete_interpreter, kernel_module
    from xdsl.context import Context

    import hetero.interpreter.tir as tir_interpreter
    from hetero.dialects import relay
    from hetero.interpreter.relay import evaluate_function
    from hetero.transforms.lower_te import LowerTEPass

    layout = f"winograd{m}_OI{block}o"
    w = RNG.standard_normal((20, 4, 3, 3)).astype(np.float32)
    inputs = [
        RNG.standard_normal((1, 4, 5, 7)).astype(np.float32),
        transformed_weight(w, m, block),
    ]
    module = kernel_module(
        [a.shape for a in inputs],
        lambda p: relay.Conv2DOp(
            *p, padding=(1, 1, 1, 1), kernel_layout=layout, channels=20
        ),
        VirtualDeviceAttr.for_target(isas.target(isa)),
    )
    expected = evaluate_function(module, "k", inputs)
    LowerTEPass().apply(Context(), module)
    # The Winograd schedule's transformed patches: [positions, band, 4, tiles].
    assert any(
        isinstance(op, AllocOp) and op.results[0].type.get_shape()[0] == (m + 2) ** 2
        for op in module.walk()
    )
    out = np.zeros(expected.shape, np.float32)
    with complete_interpreter():
        tir_interpreter.run_prim_func(module, "k_tir", *inputs, out)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
