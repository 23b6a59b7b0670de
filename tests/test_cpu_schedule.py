"""The CPU schedules of dense/matmul/conv2d (`te/schedules/cpu_*.py`),
compiled with `hetero.compile` and compared to the relay reference
interpreter, over shapes that are and are not multiples of the register tile
(`mr` rows × `nr` columns) and of the vector width, with fused epilogues, on
one and on two threads; plus the machine code of the micro-kernel."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

import isas
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lowered import global_buffer_shapes, local_buffer_shapes
from xdsl.dialects.builtin import f32

import hetero
from hetero.context import parse_module
from hetero.dialects.target import TargetAttr
from hetero.interpreter.relay import run
from hetero.targets.cpu import simd_bits
from hetero.te.schedules.cpu_conv2d import conv_vectors
from hetero.te.schedules.cpu_tiles import tiles

RNG = np.random.default_rng(0)


def _program(
    params: str, result: str, body: str, threads: int | None = None, options: str = ""
) -> str:
    """`@main(params) -> result { body }` for an `llvm` target with `num_threads`
    and other `options` (`mcpu = ..., mattr = [...]`)."""
    settings = ", ".join(
        filter(None, [f"num_threads = {threads}" if threads else "", options])
    )
    target = f'#target.target<"llvm"{", {" + settings + "}" if settings else ""}>'
    return (
        f"builtin.module attributes {{target.config = #target.config<[{target}]>}} {{\n"
        f"  relay.func @main({params}) -> {result} {{\n    {body}\n"
        f"    relay.return %r : {result}\n  }}\n}}\n"
    )


def _t(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def _check(text: str, *shapes: tuple[int, ...]) -> None:
    inputs = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    expected = run(parse_module(text), *inputs)
    np.testing.assert_allclose(
        hetero.compile(text)(*inputs), expected, rtol=1e-4, atol=1e-4
    )


def _dense(
    m: int, n: int, k: int, threads: int | None = None, epilogue: bool = False
) -> None:
    x, w, out = (m, k), (n, k), (m, n)
    body = f"%r = relay.nn.dense %x, %w : ({_t(x)}, {_t(w)}) -> {_t(out)}"
    params = f"%x: {_t(x)}, %w: {_t(w)}"
    shapes = [x, w]
    if epilogue:
        body = (
            body.replace("%r =", "%0 =")
            + f"\n    %1 = relay.nn.bias_add %0, %b : ({_t(out)}, {_t((n,))}) -> {_t(out)}"
            + f"\n    %r = relay.relu %1 : {_t(out)}"
        )
        params += f", %b: {_t((n,))}"
        shapes.append((n,))
    _check(_program(params, _t(out), body, threads), *shapes)


# An avx512 tile is 12 × 32, an avx2 one 6 × 16: sizes around both, and
# deep reductions.
ODD = [
    (1, 1, 1),
    (7, 13, 5),
    (12, 32, 8),
    (13, 33, 17),
    (129, 257, 33),
    (25, 64, 100),
    (13, 40, 300),
    (5, 70, 513),
    (25, 40, 1024),  # rows 4 KiB apart: `a` packed, the last row tile ragged
]


@pytest.mark.parametrize(
    "n, k",
    # whole groups of GEMV_ROWS outputs or not, k a multiple of the vector or not
    [(1000, 2048), (13, 37), (24, 64), (40, 5), (8, 16)],
)
def test_dense_single_row_is_a_gemv(n: int, k: int) -> None:
    """A classifier's dense layer (m = 1): dot products over vectors of k
    with the lanes and the tail added up, and the bias/relu epilogue."""
    _dense(1, n, k, epilogue=True)
    _dense(1, n, k, threads=2)


def test_gemv_reads_the_weights_in_place() -> None:
    """No packed copy of `b` for a single row: the kernel allocates only
    `local` accumulators."""
    from xdsl.context import Context

    from hetero.dialects import tir
    from hetero.transforms.fuse_ops import FuseOpsPass
    from hetero.transforms.lower_te import LowerTEPass
    from hetero.transforms.plan_devices import PlanDevicesPass

    x, w, out = (1, 64), (40, 64), (1, 40)
    body = f"%r = relay.nn.dense %x, %w : ({_t(x)}, {_t(w)}) -> {_t(out)}"
    module = parse_module(_program(f"%x: {_t(x)}, %w: {_t(w)}", _t(out), body))
    for p in (PlanDevicesPass(), FuseOpsPass(), LowerTEPass()):
        p.apply(Context(), module)
    scopes = {op.scope for op in module.walk() if isinstance(op, tir.AllocOp)}
    assert scopes == {"local"}


@pytest.mark.parametrize("m, n, k", ODD)
def test_dense_odd_sizes(m: int, n: int, k: int) -> None:
    _dense(m, n, k)


@pytest.mark.parametrize("isa", isas.ISAS)
@pytest.mark.parametrize(
    "m, rows", [(50, {"avx512": 10, "avx2": 6}), (13, {"avx512": 7, "avx2": 5})]
)
def test_gemm_row_tiles_are_even(isa: str, m: int, rows: dict[str, int]) -> None:
    """`m` rows in as many row tiles as the ISA's `mr` needs, of even
    height: ViT's 50 tokens in five tiles of 10 rows on AVX-512, not five
    of 12 whose last computes 10 rows of zeros; and the result right."""
    t = tiles(isas.target(isa), f32)
    x, w, out = (m, 64), (t.nr, 64), (m, t.nr)
    text = _program(
        f"%x: {_t(x)}, %w: {_t(w)}",
        _t(out),
        f"%r = relay.nn.dense %x, %w : ({_t(x)}, {_t(w)}) -> {_t(out)}",
        options=isas.options(isa),
    )
    assert (rows[isa], t.nr) in local_buffer_shapes(text)
    _check(text, x, w)


def test_gemm_wide_output_splits_its_panels() -> None:
    """GPT-2's output projection (128 rows, 50257 columns) at one thread:
    the four tasks split the panels, each read by a whole cache block of
    rows, so that the 154 MB weight streams twice, not four times."""
    from hetero.te.schedules.cpu_gemm import Params, _blocks
    from hetero.te.schedules.problems import Gemm

    target = isas.target("avx512", num_threads=1)
    g = Gemm(1, 128, 50257, 768, f32, None, None, None, b_along_k=True)  # type: ignore[arg-type]
    blocks = _blocks(Params(g, target, tiles(target, f32)))
    assert (blocks.row_blocks, blocks.panel_blocks) == (2, 2)


@pytest.mark.parametrize("threads, panel_blocks", [(1, 1), (2, 2), (4, 4)])
def test_gemm_splits_its_panels_where_threads_would_be_uneven(
    threads: int, panel_blocks: int
) -> None:
    """GPT-2's 128×3072 · 3072×768 dense: a cache block of `a` holds one
    row tile of 3072, so its 11 row tiles are 11 tasks, of which one of two
    threads would run 6.  With more threads than one, the panels are split
    too, so that each thread runs an even share (`makespan`)."""
    from hetero.te.schedules.cpu_gemm import Params, _blocks
    from hetero.te.schedules.problems import Gemm

    target = isas.target("avx512", num_threads=threads)
    g = Gemm(1, 128, 768, 3072, f32, None, None, None, b_along_k=True)  # type: ignore[arg-type]
    blocks = _blocks(Params(g, target, tiles(target, f32)))
    assert (blocks.row_blocks, blocks.panel_blocks) == (11, panel_blocks)


def test_gemm_of_many_row_blocks_is_not_balanced_task_by_task() -> None:
    """Where the tasks are so many that each thread's share is within the
    slack, no task list is made: a GEMM of 2**40 rows (a test's intermediate
    larger than memory) took 19 GB to plan."""
    from hetero.te.schedules.cpu_gemm import Params, _blocks
    from hetero.te.schedules.problems import Gemm

    target = isas.target("avx512", num_threads=2)
    g = Gemm(1, 2**40, 3, 4, f32, None, None, None, b_along_k=True)  # type: ignore[arg-type]
    blocks = _blocks(Params(g, target, tiles(target, f32)))
    assert blocks.panel_blocks == 1 and blocks.row_blocks > 2**25


def test_makespan_follows_the_pools_chunks() -> None:
    """Threads take the next chunk as they get free: 11 equal tasks leave
    one of two threads 6; 64 tasks go in chunks of 4 on two threads."""
    from hetero.te.schedules.cpu_tiles import makespan

    assert makespan([1] * 11, 2) == 6
    assert makespan([1] * 11, 1) == 11
    assert makespan([3, 3, 3, 2], 2) == 6
    assert makespan([2] * 32 + [1] * 32, 2) == 48
    assert makespan([10, 1, 1, 1, 1], 2) == 10


@pytest.mark.parametrize(
    "k, in_place", [(64, True), (768, True), (2304, True), (512, False), (3072, False)]
)
def test_gemm_reads_rows_of_a_in_place(k: int, in_place: bool) -> None:
    """The register tiles read a buffer's rows of `a` where they are unless
    their stride puts more than `ROWS_PER_SET` of a tile's 12 rows in one
    L1 set (rows 2 or 4 KiB apart); a computed `a` is always packed."""
    from hetero.te.schedules.cpu_gemm import Params, _reads_a_in_place
    from hetero.te.schedules.problems import Gemm

    target = isas.target("avx512", num_threads=1)
    g = Gemm(1, 128, 768, k, f32, None, None, None, a_in_place=True)  # type: ignore[arg-type]
    assert _reads_a_in_place(Params(g, target, tiles(target, f32))) == in_place
    computed = replace(g, a_in_place=False)
    assert not _reads_a_in_place(Params(computed, target, tiles(target, f32)))


@pytest.mark.parametrize(
    "view, packs",
    [
        (
            "%v = relay.reshape %x {newshape = array<i64: 26, 48>} : (tensor<2x13x48xf32>) -> tensor<26x48xf32>",
            False,
        ),
        (
            "%v = relay.reshape %x {newshape = array<i64: 26, 48>} : (tensor<2x13x48xf32>) -> tensor<26x48xf32>\n    %t = relay.transpose %v {axes = array<i64: 1, 0>} : (tensor<26x48xf32>) -> tensor<48x26xf32>\n    %u = relay.transpose %t {axes = array<i64: 1, 0>} : (tensor<48x26xf32>) -> tensor<26x48xf32>",
            True,
        ),
    ],
)
def test_dense_reads_a_reshaped_parameter_in_place(view: str, packs: bool) -> None:
    """A dense of a reshape that keeps the last dimension (`[2, 13, 48]` as
    `[26, 48]`: a transformer's projections) reads its rows where they are;
    through a transpose, `a` is packed; the result is right either way."""
    x, w, out = (2, 13, 48), (40, 48), (26, 40)
    source = "%v" if not packs else "%u"
    text = _program(
        f"%x: {_t(x)}",
        _t(out),
        f"{_random_weight(w)}\n    {view}\n"
        f"    %r = relay.nn.dense {source}, %w : ({_t((26, 48))}, {_t(w)}) -> {_t(out)}",
    )
    packed = [s for s in global_buffer_shapes(text) if len(s) == 3 and s[1] == 48]
    assert bool(packed) == packs
    _check(text, x)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_dense_bias_relu_any_thread_count(threads: int) -> None:
    _dense(37, 70, 19, threads, epilogue=True)


def test_dense_epilogue_after_the_whole_reduction() -> None:
    """A deep reduction (k = 600) in one pass: the epilogue (relu, which is
    not additive) runs once, on the complete sums."""
    _dense(14, 35, 600, epilogue=True)


@settings(max_examples=8, deadline=None)
@given(m=st.integers(1, 40), n=st.integers(1, 80), k=st.integers(1, 40))
def test_dense_random_sizes(m: int, n: int, k: int) -> None:
    _dense(m, n, k)


@pytest.mark.parametrize(
    "a, b",
    [
        ((7, 13), (13, 5)),
        ((65, 3), (3, 97)),
        ((2, 13, 9), (2, 9, 35)),  # batch matmul
        ((3, 1, 14, 6), (2, 6, 33)),  # broadcast batch dimensions
        ((5, 4), (3, 4, 17)),
        # one row: the GEMV (no packing), panels of nr and the last one's rest
        ((1, 37), (37, 70)),
        ((3, 1, 20), (3, 20, 33)),
    ],
)
def test_matmul_and_batch_matmul(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    out = (*np.broadcast_shapes(a[:-2], b[:-2]), a[-2], b[-1])
    body = f"%r = relay.matmul %a, %b : ({_t(a)}, {_t(b)}) -> {_t(out)}"
    _check(_program(f"%a: {_t(a)}, %b: {_t(b)}", _t(out), body), a, b)


def _conv(
    x: tuple[int, ...],
    w: tuple[int, ...],
    attrs: dict[str, tuple[int, ...]],
    groups: int = 1,
    threads: int | None = None,
) -> None:
    h = [
        (
            x[2 + i]
            + attrs["padding"][i]
            + attrs["padding"][2 + i]
            - attrs.get("dilation", (1, 1))[i] * (w[2 + i] - 1)
            - 1
        )
        // attrs.get("strides", (1, 1))[i]
        + 1
        for i in range(2)
    ]
    out = (x[0], w[0], *h)
    spec = ", ".join(
        f"{k} = array<i64: {', '.join(map(str, v))}>" for k, v in attrs.items()
    )
    if groups > 1:
        spec += f", groups = {groups} : i64"
    body = (
        f"%0 = relay.nn.conv2d %x, %w {{{spec}}} : ({_t(x)}, {_t(w)}) -> {_t(out)}"
        f"\n    %1 = relay.nn.bias_add %0, %b : ({_t(out)}, {_t((w[0],))}) -> {_t(out)}"
        f"\n    %r = relay.relu %1 : {_t(out)}"
    )
    params = f"%x: {_t(x)}, %w: {_t(w)}, %b: {_t((w[0],))}"
    _check(_program(params, _t(out), body, threads), x, w, (w[0],))


@pytest.mark.parametrize(
    "x, w, attrs, groups",
    [
        ((1, 3, 9, 9), (5, 3, 3, 3), {"padding": (1, 1, 1, 1)}, 1),
        ((2, 4, 7, 40), (13, 4, 3, 3), {"padding": (1, 1, 1, 1)}, 1),
        ((1, 3, 9, 9), (5, 3, 3, 3), {"strides": (2, 2), "padding": (1, 1, 1, 1)}, 1),
        ((1, 2, 8, 7), (3, 2, 2, 3), {"dilation": (2, 1), "padding": (0, 1, 1, 0)}, 1),
        # a column stride: the padded copy is split in 3 phases
        (
            (1, 3, 11, 40),
            (4, 3, 3, 3),
            {"strides": (2, 3), "dilation": (1, 2), "padding": (1, 2, 0, 1)},
            1,
        ),
        ((1, 4, 6, 6), (6, 2, 3, 3), {"padding": (1, 1, 1, 1)}, 2),
        ((1, 8, 5, 5), (8, 1, 3, 3), {"padding": (1, 1, 1, 1)}, 8),  # depthwise
        ((1, 16, 14, 14), (24, 16, 1, 1), {"padding": (0, 0, 0, 0)}, 1),
        # 1×1 convolutions, a batch of 2, a stride
        ((2, 5, 7, 9), (11, 5, 1, 1), {"padding": (0, 0, 0, 0)}, 1),
        ((1, 4, 9, 9), (6, 4, 1, 1), {"strides": (2, 2), "padding": (0, 0, 0, 0)}, 1),
        # stride 3 with a 2x2 window: phase 2 of each axis is never read
        ((1, 2, 10, 11), (3, 2, 2, 2), {"strides": (3, 3), "padding": (1, 2, 1, 0)}, 1),
        # rows of one vector (13 columns, AVX-512): row panels; 20 channels
        # take 10-row tiles, 13 take 12 and a last tile of 1
        ((1, 6, 13, 13), (20, 6, 3, 3), {"padding": (1, 1, 1, 1)}, 1),
        ((1, 4, 13, 11), (13, 4, 3, 3), {"padding": (1, 1, 1, 1)}, 1),
        # 14 = 12 + 2 output channels
        ((1, 5, 3, 64), (14, 5, 3, 3), {"padding": (1, 1, 1, 1)}, 1),
        ((1, 3, 2, 75), (5, 3, 1, 3), {"strides": (1, 2), "padding": (0, 1, 0, 1)}, 1),
        # small images: the wide domain, with strides, dilation and groups
        ((1, 6, 7, 7), (26, 6, 3, 3), {"padding": (1, 1, 1, 1)}, 1),
        (
            (1, 8, 14, 14),
            (16, 8, 3, 3),
            {"strides": (2, 2), "padding": (1, 1, 1, 1)},
            1,
        ),
        ((2, 6, 8, 9), (24, 3, 3, 2), {"dilation": (2, 2), "padding": (2, 1, 1, 2)}, 2),
    ],
)
def test_conv2d_with_epilogue(
    x: tuple[int, ...],
    w: tuple[int, ...],
    attrs: dict[str, tuple[int, ...]],
    groups: int,
) -> None:
    _conv(x, w, attrs, groups)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_conv2d_task_grid_any_thread_count(threads: int) -> None:
    """Channel blocks × panel blocks cover the output once whatever the
    number of tasks (a deep layer: several channel blocks)."""
    _conv((1, 96, 6, 6), (40, 96, 3, 3), {"padding": (1, 1, 1, 1)}, threads=threads)


@pytest.mark.parametrize(
    "x, w, wide",
    [
        ((1, 8, 7, 7), (16, 8, 3, 3), True),
        ((1, 8, 13, 13), (16, 8, 3, 3), False),
        ((1, 8, 56, 56), (16, 8, 3, 3), True),
        ((1, 3, 56, 56), (16, 3, 3, 3), False),
    ],
)
def test_conv2d_panels_follow_the_image_width(
    x: tuple[int, ...], w: tuple[int, ...], wide: bool
) -> None:
    """Panels run over the wide domain (a 7x7 image: 4 vectors instead of 7
    rows of one), except where rows of one vector compute no more (13x13:
    13 vectors each way) or the reduction is too shallow (27) to pay for
    the wide buffer's extra pass over the output."""
    assert _avx512_conv_tiles(x, w, (1, 1), (1, 1, 1, 1)).wide is wide


def _avx512_conv_tiles(
    x: tuple[int, ...],
    w: tuple[int, ...],
    strides: tuple[int, int],
    padding: tuple[int, int, int, int],
) -> Any:
    """How the CPU schedule cuts a conv2d with AVX-512 (`_ConvTiles`)."""
    from hetero.te.emit import Tensor
    from hetero.te.schedules.cpu_conv2d import _conv_tiles
    from hetero.te.schedules.problems import Conv2D

    def tensor(shape: tuple[int, ...]) -> Tensor:
        return Tensor(shape, f32, lambda e, idx: None)  # type: ignore[arg-type, return-value]

    target = TargetAttr("llvm", {"mattr": ["+avx512f"]})
    out_h = (x[2] + padding[0] + padding[2] - w[2]) // strides[0] + 1
    out_w = (x[3] + padding[1] + padding[3] - w[3]) // strides[1] + 1
    problem = Conv2D(
        tensor(x),
        tensor(w),
        (1, w[0], out_h, out_w),
        strides,
        (1, 1),
        padding,
        1,
        lambda e, idx, v: None,
    )
    return _conv_tiles(problem, tiles(target, f32, conv_vectors(target)), target)


@pytest.mark.parametrize(
    "x, w, dilation",
    [
        (
            (1, 16, 14, 14),
            (24, 16, 1, 1),
            (1, 1),
        ),  # 196 pixels: the last panel overlaps
        ((1, 8, 4, 8), (16, 8, 1, 1), (1, 1)),  # exactly one panel
        ((2, 5, 9, 11), (13, 5, 1, 1), (1, 1)),  # a batch, a rest tile of channels
        ((1, 6, 12, 9), (10, 6, 3, 1), (2, 1)),  # a column of taps, dilated
        ((1, 4, 3, 5), (8, 4, 1, 1), (1, 1)),  # 15 pixels: fewer than a panel
    ],
)
def test_conv2d_in_place_with_residual(
    x: tuple[int, ...], w: tuple[int, ...], dilation: tuple[int, int]
) -> None:
    """Stride 1, no padding, windows one column wide: panels of pixels read
    the input and write the output in place (the epilogue, a residual add,
    addressed across rows), the last panel overlapping the one before."""
    out = (x[0], w[0], x[2] - (w[2] - 1) * dilation[0], x[3])
    _conv_residual(
        x, w, out, f"dilation = array<i64: {dilation[0]}, {dilation[1]}>", "relu"
    )


def _conv_residual(
    x: tuple[int, ...],
    w: tuple[int, ...],
    out: tuple[int, ...],
    attrs: str,
    activation: str,
) -> None:
    """conv2d (with `attrs`) → add of a third input → `activation`, checked."""
    body = (
        f"%0 = relay.nn.conv2d %x, %w {{{attrs}}} : ({_t(x)}, {_t(w)}) -> {_t(out)}"
        f"\n    %1 = relay.add %0, %y : ({_t(out)}, {_t(out)}) -> {_t(out)}"
        f"\n    %r = relay.{activation} %1 : {_t(out)}"
    )
    params = f"%x: {_t(x)}, %w: {_t(w)}, %y: {_t(out)}"
    _check(_program(params, _t(out), body), x, w, out)


def test_conv2d_in_place_with_a_broadcast_epilogue() -> None:
    """An epilogue operand broadcast along the columns is addressed by row:
    correct, if not a vector access."""
    x, w, out, rows = (1, 8, 7, 9), (16, 8, 1, 1), (1, 16, 7, 9), (1, 1, 7, 1)
    body = (
        f"%0 = relay.nn.conv2d %x, %w : ({_t(x)}, {_t(w)}) -> {_t(out)}"
        f"\n    %r = relay.add %0, %y : ({_t(out)}, {_t(rows)}) -> {_t(out)}"
    )
    params = f"%x: {_t(x)}, %w: {_t(w)}, %y: {_t(rows)}"
    _check(_program(params, _t(out), body), x, w, rows)


@pytest.mark.parametrize(
    "x, w, strides, padding, in_place",
    [
        ((1, 8, 14, 14), (16, 8, 1, 1), (1, 1), (0, 0, 0, 0), True),
        ((1, 8, 14, 14), (16, 8, 3, 1), (1, 1), (0, 0, 0, 0), True),
        ((1, 8, 14, 14), (16, 8, 1, 1), (2, 2), (0, 0, 0, 0), False),
        ((1, 8, 14, 14), (16, 8, 1, 1), (1, 1), (1, 1, 1, 1), False),
        ((1, 8, 14, 14), (16, 8, 1, 3), (1, 1), (0, 0, 0, 0), False),
        ((1, 8, 3, 5), (16, 8, 1, 1), (1, 1), (0, 0, 0, 0), False),
    ],
)
def test_conv2d_in_place_where_the_conv_allows(
    x: tuple[int, ...],
    w: tuple[int, ...],
    strides: tuple[int, int],
    padding: tuple[int, int, int, int],
    in_place: bool,
) -> None:
    """No padded copy and no wide buffer for stride 1, no padding, one-column
    windows and at least a panel (16 pixels with AVX-512) of output."""
    assert _avx512_conv_tiles(x, w, strides, padding).in_place is in_place


def test_conv2d_wide_domain_applies_the_epilogue() -> None:
    """A residual add after a small-image conv reads the same (y, x) as the
    output: the epilogue runs when the output leaves the wide domain."""
    x, w, out = (1, 4, 5, 6), (13, 4, 3, 3), (1, 13, 5, 6)
    _conv_residual(x, w, out, "padding = array<i64: 1, 1, 1, 1>", "tanh")


def _reduction_step(assembly: str) -> str:
    """The loop body of `assembly` with the most FMAs, up to its first jump."""
    loops = re.split(r"\n\.LBB\S*:", assembly)
    inner = max(loops, key=lambda body: body.count("vfmadd231ps"))
    return inner.split("\n\tj")[0] if "\n\tj" in inner else inner


@pytest.mark.parametrize("isa", isas.ISAS)
def test_micro_kernel_assembly(isa: str) -> None:
    """The GEMM inner loop is FMAs on the ISA's vector registers with a
    broadcast operand, and no whole register goes to or comes from the
    stack (a spill; packed `a` may live on the stack, but it is read by
    `vbroadcastss`): the register tile fits the ISA's registers."""
    t = tiles(isas.target(isa), f32)
    m, n = 5 * t.mr, 4 * t.nr  # whole row tiles: `gemm` keeps `mr` rows
    text = _program(
        f"%a: {_t((m, 64))}, %b: {_t((64, n))}",
        _t((m, n)),
        f"%r = relay.matmul %a, %b : ({_t((m, 64))}, {_t((64, n))}) -> {_t((m, n))}",
        options=isas.options(isa),
    )
    inner = _reduction_step(hetero.compile(text).native.assembly())
    assert inner.count("vfmadd231ps") >= t.mr * t.nr // t.lanes
    assert "vbroadcastss" in inner or "{1to" in inner
    assert not re.search(r"vmov\w*\t[^\n]*\(%rsp", inner)
    assert "prefetch" not in inner  # `b` is packed per call, already in cache


@pytest.mark.parametrize("isa", isas.ISAS)
def test_packed_weight_prefetches_the_next_panel(isa: str) -> None:
    """A dense with a constant weight (packed at compile time, read in
    place) prefetches, in each step of its register tile, the step's row
    of the next panel: one prefetch per cache line of the row, into the
    outer caches (`prefetcht2`), and still no spill."""
    t = tiles(isas.target(isa), f32)
    m, n, k = 2 * t.mr, 4 * t.nr, 64
    w = (n, k)
    text = _program(
        f"%x: {_t((m, k))}",
        _t((m, n)),
        f"{_random_weight(w)}\n"
        f"    %r = relay.nn.dense %x, %w : ({_t((m, k))}, {_t(w)}) -> {_t((m, n))}",
        options=isas.options(isa),
    )
    inner = _reduction_step(hetero.compile(text).native.assembly())
    assert inner.count("prefetcht2") == t.nr * 4 // 64
    assert not re.search(r"vmov\w*\t[^\n]*\(%rsp", inner)
    if isas.runs_here(isa):
        _check(text, (m, k))


def _random_weight(shape: tuple[int, ...]) -> str:
    """`%w = relay.constant` of random values of `shape` (a constant weight
    is packed for the schedule, as a network's is)."""
    weight = RNG.standard_normal(shape).astype(np.float32)
    hexed = "0x" + np.ascontiguousarray(weight, "<f4").tobytes().hex().upper()
    return f'%w = relay.constant dense<"{hexed}"> : {_t(shape)}'


@pytest.mark.parametrize("isa", isas.ISAS)
def test_channel_lanes_tile_stays_in_registers(isa: str) -> None:
    """A tile of pixels x output channels (AVX-512: 6 x 64, 24 accumulators
    and 4 weight vectors) of a conv2d with blocked data: no register goes to
    the stack in its reduction loop.  LLVM's machine scheduler, which
    `CODEGEN_FLAGS` turns off, hoisted the six broadcasts above the FMAs and
    spilled."""
    from hetero.te.schedules.cpu_conv2d_lanes import lane_tiles

    target = isas.target(isa)
    b = lane_tiles(target, f32).lanes
    x, out, w = (1, 256 // b, 6, 6, b), (1, 64 // b, 6, 6, b), (64, 256, 3, 3)
    body = (
        f"{_random_weight(w)}\n"
        f"    %0 = relay.nn.conv2d %x, %w {{padding = array<i64: 1, 1, 1, 1>, "
        f'data_layout = "NCHW{b}c", out_layout = "NCHW{b}c"}} : ({_t(x)}, {_t(w)}) -> {_t(out)}\n'
        f"    %r = relay.relu %0 : {_t(out)}"
    )
    text = _program(f"%x: {_t(x)}", _t(out), body, options=isas.options(isa))
    inner = _reduction_step(hetero.compile(text).native.assembly())
    t = lane_tiles(target, f32, 6 * 6, blocked=True)
    assert inner.count("vfmadd231ps") == t.mr * t.nr // t.lanes
    assert not re.search(r"vmov\w*\t[^\n]*\(%rsp", inner)


@pytest.mark.parametrize("isa", isas.ISAS)
@pytest.mark.parametrize("size", [14, 56])
def test_strided_channel_lanes_step_reads_no_stack(isa: str, size: int) -> None:
    """ResNet-50's 3x3 stride-2 conv2d (channels in the lanes, the input in
    stride-phase planes): a reduction step's tile keeps its pixels in one
    image row, so their inputs are read from one address register at
    constant offsets, and the step reads and writes the stack at most for
    the one register AVX-512's 7-pixel tiles are short (`LANE_ROW_CHOICES`;
    with a tile across rows, each pixel needed an address of its own:
    AVX2's step reloaded them from the stack, 2-3x slower)."""
    from hetero.te.schedules.cpu_conv2d_lanes import lane_tiles

    channels = 128
    x, w = (1, channels, size, size), (channels, channels, 3, 3)
    out = (1, channels, size // 2, size // 2)
    body = (
        f"{_random_weight(w)}\n"
        f"    %r = relay.nn.conv2d %x, %w {{strides = array<i64: 2, 2>, "
        f"padding = array<i64: 1, 1, 1, 1>}} : ({_t(x)}, {_t(w)}) -> {_t(out)}"
    )
    text = _program(f"%x: {_t(x)}", _t(out), body, threads=1, options=isas.options(isa))
    inner = _reduction_step(hetero.compile(text).native.assembly())
    t = lane_tiles(isas.target(isa), f32, out[2] * out[3], row_width=out[3])
    assert inner.count("vfmadd231ps") == t.mr * t.nr // t.lanes
    assert inner.count("(%rsp") <= {"avx2": 0, "avx512": 2}[isa]


def _hottest_block(ir: str) -> str:
    """The basic block of `ir` with the most `fadd`s: a reduction step."""
    blocks = re.split(r"\n(?=[\w.]+:)", ir)
    return max(blocks, key=lambda block: block.count(" fadd "))


@pytest.mark.parametrize("isa", isas.ISAS)
def test_register_tile_is_simplified_in_one_round(isa: str) -> None:
    """A strided 3x3 conv2d (ResNet-50's): its parallel body is optimised
    once, inlined into its task, and still its register tiles' zeroing
    leaves no `memset` of a tile or of a tile row (the padded input's zero
    border may be one) and each weight vector is loaded once a reduction
    step, not once a tile row (GVN and DSE after LLVM's pipeline,
    `CpuTarget`).  Run where the host runs the ISA's code."""
    x, w, out = (1, 64, 28, 28), (64, 64, 3, 3), (1, 64, 14, 14)
    body = (
        f"{_random_weight(w)}\n"
        f"    %r = relay.nn.conv2d %x, %w {{strides = array<i64: 2, 2>, "
        f"padding = array<i64: 1, 1, 1, 1>}} : ({_t(x)}, {_t(w)}) -> {_t(out)}"
    )
    text = _program(f"%x: {_t(x)}", _t(out), body, options=isas.options(isa))
    compiled = hetero.compile(text)
    ir = compiled.native.llvm_ir()
    tile_bytes = {
        4 * n for s in local_buffer_shapes(text) for n in (math.prod(s), s[-1])
    }
    memsets = re.findall(r"call void @llvm\.memset[^\n]*, i64 (\d+), i1", ir)
    assert not tile_bytes & set(map(int, memsets))
    step = _hottest_block(ir)
    addresses = re.findall(r"= load <\d+ x float>, ptr (%[\w.]+)", step)
    assert addresses and len(addresses) == len(set(addresses))
    if isas.runs_here(isa):
        data = RNG.standard_normal(x).astype(np.float32)
        expected = run(parse_module(text), data)
        np.testing.assert_allclose(compiled(data), expected, rtol=1e-4, atol=1e-3)


def test_epilogue_chain_is_fused_into_the_tile_store() -> None:
    """dense → bias_add → add(residual) → tanh is applied as the tiles are
    stored: no buffer of the dense's shape in its kernel (the transpose after
    it, not elementwise, ends the chain)."""
    from xdsl.context import Context

    from hetero.dialects import tir
    from hetero.transforms.fuse_ops import FuseOpsPass
    from hetero.transforms.lower_te import LowerTEPass
    from hetero.transforms.plan_devices import PlanDevicesPass

    m, n, k = 9, 40, 7
    out, t = _t((m, n)), _t((n, m))
    body = (
        f"%0 = relay.nn.dense %x, %w : ({_t((m, k))}, {_t((n, k))}) -> {out}"
        f"\n    %1 = relay.nn.bias_add %0, %b : ({out}, {_t((n,))}) -> {out}"
        f"\n    %2 = relay.add %1, %y : ({out}, {out}) -> {out}"
        f"\n    %3 = relay.tanh %2 : {out}"
        f"\n    %r = relay.transpose %3 {{axes = array<i64: 1, 0>}} : ({out}) -> {t}"
    )
    params = f"%x: {_t((m, k))}, %w: {_t((n, k))}, %b: {_t((n,))}, %y: {out}"
    text = _program(params, t, body)
    _check(text, (m, k), (n, k), (n,), (m, n))
    module = parse_module(text)
    for p in (PlanDevicesPass(), FuseOpsPass(), LowerTEPass()):
        p.apply(Context(), module)
    kernel = next(
        op
        for op in module.ops
        if isinstance(op, tir.PrimFuncOp) and "fastmath<contract>" in str(op)
    )
    shapes = [
        op.buffer.type.get_shape()
        for op in kernel.walk()
        if isinstance(op, tir.AllocOp)
    ]
    assert (m, n) not in shapes
    assert "math.tanh" in str(kernel)  # in the tile store


@pytest.mark.parametrize(
    "channels, rows", [(64, 8), (2048, 8), (96, 12), (1000, 10), (48, 12), (7, 12)]
)
def test_conv_tiles_divide_the_output_channels(channels: int, rows: int) -> None:
    """The conv tile has the most rows (12 down to 8 with AVX-512) dividing
    the output channels, so that no last tile of fewer rows is needed; 12
    with a rest when none divides."""
    from hetero.te.schedules.cpu_conv2d import _dividing_rows
    from hetero.te.schedules.cpu_tiles import Tiles

    assert _dividing_rows(Tiles(16, 12, 32), channels).mr == rows


def _lanes_conv(
    x: tuple[int, ...],
    w: tuple[int, ...],
    attrs: dict[str, tuple[int, ...]],
    threads: int | None = None,
    block: int | None = None,
    options: str = "",
) -> None:
    """conv2d → bias_add → add of a residual → relu, with the weight passed
    in the layout `OIHW<block>o` (by default the block of this host's
    channel-lanes tiles, so that the schedule puts channels in the lanes),
    against the reference interpreter (which reads the layout itself)."""
    from hetero.interpreter.relay import packed_weight
    from hetero.te.schedules.cpu_conv2d_lanes import lane_tiles

    block = block or lane_tiles(None, f32).nr
    h = [
        (
            x[2 + i]
            + attrs.get("padding", (0,) * 4)[i]
            + attrs.get("padding", (0,) * 4)[2 + i]
            - attrs.get("dilation", (1, 1))[i] * (w[2 + i] - 1)
            - 1
        )
        // attrs.get("strides", (1, 1))[i]
        + 1
        for i in range(2)
    ]
    out = (x[0], w[0], *h)
    weight = RNG.standard_normal(w).astype(np.float32)
    packed = packed_weight(weight, block)
    spec = ", ".join(
        f"{k} = array<i64: {', '.join(map(str, v))}>" for k, v in attrs.items()
    )
    spec = ", ".join(
        filter(
            None, [spec, f'kernel_layout = "OIHW{block}o"', f"channels = {w[0]} : i64"]
        )
    )
    body = (
        f"%0 = relay.nn.conv2d %x, %w {{{spec}}} : ({_t(x)}, {_t(packed.shape)}) -> {_t(out)}"
        f"\n    %1 = relay.nn.bias_add %0, %b : ({_t(out)}, {_t((w[0],))}) -> {_t(out)}"
        f"\n    %2 = relay.add %1, %y : ({_t(out)}, {_t(out)}) -> {_t(out)}"
        f"\n    %r = relay.relu %2 : {_t(out)}"
    )
    params = f"%x: {_t(x)}, %w: {_t(packed.shape)}, %b: {_t((w[0],))}, %y: {_t(out)}"
    text = _program(params, _t(out), body, threads, options)
    inputs = [
        RNG.standard_normal(x).astype(np.float32),
        packed,
        RNG.standard_normal(w[0]).astype(np.float32),
        RNG.standard_normal(out).astype(np.float32),
    ]
    expected = run(parse_module(text), *inputs)
    np.testing.assert_allclose(
        hetero.compile(text)(*inputs), expected, rtol=1e-4, atol=1e-4
    )


@pytest.mark.parametrize(
    "x, w, attrs",
    [
        # 1x1 in place; 100 channels: a last channel tile of 36 (AVX-512)
        ((1, 40, 7, 7), (100, 40, 1, 1), {}),
        # padded 3x3, 14x14 (7-pixel tiles), a batch of 2
        ((2, 16, 14, 14), (64, 16, 3, 3), {"padding": (1, 1, 1, 1)}),
        # stride 2, 13x13 into 7x7; dilation and uneven padding
        ((1, 8, 13, 13), (70, 8, 3, 3), {"strides": (2, 2), "padding": (1, 1, 1, 1)}),
        ((1, 6, 9, 11), (33, 6, 3, 2), {"dilation": (2, 1), "padding": (2, 0, 1, 1)}),
        # 4 output pixels: fewer than a tile
        ((1, 12, 2, 2), (20, 12, 1, 1), {}),
        # 600 input channels: two blocks of the reduction, partial sums carried
        ((1, 600, 5, 5), (64, 600, 1, 1), {}),
        ((1, 70, 6, 6), (48, 70, 3, 3), {"padding": (1, 1, 1, 1)}),
    ],
)
def test_conv2d_channels_in_lanes(
    x: tuple[int, ...], w: tuple[int, ...], attrs: dict[str, tuple[int, ...]]
) -> None:
    """With the weight packed `OIHW<nr>o`, tiles of pixels x output channels
    (channels in the lanes) cover the output once, the edge tiles included,
    through the fused epilogue (a bias, a residual and relu, stored
    transposed)."""
    _lanes_conv(x, w, attrs)


@pytest.mark.parametrize("block, out_channels", [(32, 160), (48, 48)])
def test_conv2d_channels_in_narrower_lanes(block: int, out_channels: int) -> None:
    """A 7x7 image's channel tiles narrower than `nr` that divide its
    output channels (`conv2d_weight_block`: 160 channels in five tiles of
    32, 48 in one of 48) cover the output once, through the epilogue."""
    _lanes_conv((1, 128, 7, 7), (out_channels, 128, 1, 1), {}, block=block)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_conv2d_channels_in_lanes_any_thread_count(threads: int) -> None:
    _lanes_conv((1, 64, 9, 9), (130, 64, 3, 3), {"padding": (1, 1, 1, 1)}, threads)


@pytest.mark.skipif(simd_bits(None) < 256, reason="needs an AVX2 host")
def test_conv2d_channels_in_lanes_avx2() -> None:
    """AVX2 (16 registers): tiles of pixels x 2 vectors of 8 channels, the
    schedule such hosts take (this one too, told so by the target)."""
    avx2 = 'mcpu = "haswell", mattr = ["+avx2", "-avx512f"]'
    _lanes_conv(
        (1, 24, 9, 9), (40, 24, 3, 3), {"padding": (1, 1, 1, 1)}, block=16, options=avx2
    )
    _lanes_conv((1, 20, 7, 7), (33, 20, 1, 1), {}, block=16, options=avx2)


@pytest.mark.parametrize("out_channels", [64, 20, 13])
def test_conv2d_pixel_tiles_read_packed_rows(out_channels: int) -> None:
    """A 1x1 conv's weight packed by its pixel tile's rows (`OIHW<mr>o`, as
    `_pixel_tile_rows` asks) is read as such by the tile: 8 rows for 64
    channels, 10 for 20, and 12 with an edge tile of 1 for 13 (AVX-512)."""
    from hetero.te.schedules.cpu_conv2d import _pixel_tile_rows

    rows = _pixel_tile_rows((out_channels, 20, 1, 1), f32, None)
    if not rows:
        pytest.skip("this host's tile rows fill whole vectors: no packed rows")
    _lanes_conv((1, 20, 7, 7), (out_channels, 20, 1, 1), {}, block=rows)


def test_conv2d_weight_in_another_packed_layout_is_read_through() -> None:
    """A packed layout the schedule does not tile by (blocks of 8) is read
    as OIHW by the pixel tiles."""
    _lanes_conv((1, 8, 6, 6), (20, 8, 3, 3), {"padding": (1, 1, 1, 1)}, block=8)


@pytest.mark.parametrize(
    "mattr, weight, out, block",
    [
        (["+avx512f"], (256, 256, 1, 1), (1, 256, 14, 14), 64),
        (["+avx512f"], (1000, 512, 1, 1), (1, 1000, 13, 13), 64),  # 98 % of 16 tiles
        (["+avx512f"], (64, 64, 1, 1), (1, 64, 56, 56), 8),  # a reduction of 64
        (["+avx512f"], (64, 16, 3, 3), (1, 64, 56, 56), 0),  # 144
        (["+avx512f"], (48, 256, 1, 1), (1, 48, 14, 14), 12),  # 48 of 64 lanes
        (["+avx512f"], (48, 256, 1, 1), (1, 48, 7, 7), 48),  # 3 vectors at 7x7
        (["+avx512f"], (160, 960, 1, 1), (1, 160, 7, 7), 32),  # five 2-vector tiles
        (["+avx512f"], (160, 960, 1, 1), (1, 160, 14, 14), 10),  # 160 of 192
        (["+avx512f"], (960, 160, 1, 1), (1, 960, 7, 7), 64),  # 160 deep at 7x7
        (["+avx512f"], (960, 160, 1, 1), (1, 960, 14, 14), 12),  # ... at 14x14
        (["+avx512f"], (960, 64, 1, 1), (1, 960, 7, 7), 12),  # 64 deep: pixels
        (["+avx2", "-avx512f"], (48, 256, 1, 1), (1, 48, 7, 7), 16),
        (["+avx2", "-avx512f"], (100, 32, 3, 3), (1, 100, 14, 14), 0),  # 100 of 112
        (
            ["+avx2", "-avx512f"],
            (64, 64, 1, 1),
            (1, 64, 56, 56),
            4,
        ),  # 4 rows of 2 vectors
    ],
)
def test_conv2d_weight_block(
    mattr: list[str], weight: tuple[int, ...], out: tuple[int, ...], block: int
) -> None:
    """The CPU schedule asks for channels in the lanes for deep reductions
    whose output channels fill the tiles, and on images whose pixels fill
    too little of their lanes (7x7) for shallower ones too, in narrower
    tiles that divide the channels; else, for a 1x1 conv, for its
    pixel tile's rows side by side (8 or 12 rows), where they are fewer
    than a vector's lanes (else `OIHW`: a whole number of vectors would
    mean channel lanes)."""
    from hetero.te.schedules.cpu_conv2d import conv2d_weight_block

    target = TargetAttr("llvm", {"mcpu": "x86-64", "mattr": mattr})
    assert conv2d_weight_block(weight, out, 1, f32, target) == block
    assert conv2d_weight_block(weight, out, 2, f32, target) == 0  # grouped


@pytest.mark.parametrize("isa", isas.ISAS)
def test_patch_conv2d_reads_its_input_in_place(isa: str) -> None:
    """A conv2d of non-overlapping unpadded patches (a ViT's 32x32 stride-32
    embedding; here 8x8 stride 8, 6 channels: 64 stride phases) in channel
    lanes reads the input where it is: no copy in stride-phase planes (one
    plane each, filled by code of its own: ViT's kernel took 14k TIR ops and
    24 s of code generation), and the result is right."""
    from hetero.dialects import tir
    from hetero.driver import lower_to_tir

    x, w, out = (1, 6, 32, 32), (64, 6, 8, 8), (1, 64, 4, 4)
    body = (
        f"{_random_weight(w)}\n"
        f"    %r = relay.nn.conv2d %x, %w {{strides = array<i64: 8, 8>}} : "
        f"({_t(x)}, {_t(w)}) -> {_t(out)}"
    )
    text = _program(f"%x: {_t(x)}", _t(out), body, options=isas.options(isa))
    module = parse_module(text)
    lower_to_tir(module)
    [kernel] = [
        op
        for op in module.ops
        if isinstance(op, tir.PrimFuncOp) and op.sym_name.data != "main_host"
    ]
    assert sum(1 for _ in kernel.walk()) < 200  # 65; with the 64 planes 950
    if isas.runs_here(isa):
        _check(text, x)
