"""`alter-op-layout` in `hetero.compile`: constant conv2d weights packed at
compile time for the channel-lanes CPU schedule, dense weights in the GEMM
schedule's panels, the results checked against the reference interpreter on
the unpacked weights."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from isas import options, runs_here
from lowered import kernel_buffer_shapes
from xdsl.context import Context

import hetero
from hetero.context import parse_module
from hetero.dialects import relay, tir
from hetero.dialects.target.kind import DeviceType
from hetero.interpreter.relay import constant_value, packed_weight, run
from hetero.te.schedules import DENSE_WEIGHT_BLOCKS
from hetero.transforms.alter_op_layout import AlterOpLayoutPass
from hetero.transforms.fold_constant import LATER_LIMIT, FoldConstantPass
from hetero.transforms.fuse_ops import FuseOpsPass
from hetero.transforms.lower_te import LowerTEPass
from hetero.transforms.matmul_to_dense import MatmulToDensePass
from hetero.transforms.plan_devices import PlanDevicesPass
from hetero.utils.winograd import transformed_weight

RNG = np.random.default_rng(7)


def _hex(array: np.ndarray) -> str:
    return "0x" + np.ascontiguousarray(array, "<f4").tobytes().hex().upper()


def _program(
    x: tuple[int, ...], w: np.ndarray, b: np.ndarray, out: tuple[int, ...]
) -> str:
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
    np.testing.assert_allclose(
        compiled(data), run(parse_module(text), data), rtol=1e-4, atol=1e-4
    )
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


def _dense_program(x: tuple[int, ...], w: np.ndarray, b: np.ndarray, isa: str) -> str:
    """`x · w + b`, then relu, plus `x`'s projection again (a residual add
    in the second layer's stores): `x [..., K]` by a constant `[K, N]`
    weight, through `matmul-to-dense` when `x` has more than 2 dimensions."""

    def t(shape: tuple[int, ...]) -> str:
        return f"tensor<{'x'.join(map(str, shape))}xf32>"

    out = (*x[:-1], w.shape[1])
    return (
        "builtin.module attributes {target.config = #target.config<["
        f'#target.target<"llvm", {{{options(isa)}, num_threads = 1 : i64}}>]>}} {{\n'
        f"  relay.func @main(%x: {t(x)}) -> {t(out)} {{\n"
        f'    %w = relay.constant dense<"{_hex(w)}"> : {t(w.shape)}\n'
        f'    %b = relay.constant dense<"{_hex(b)}"> : {t(b.shape)}\n'
        f"    %0 = relay.matmul %x, %w : ({t(x)}, {t(w.shape)}) -> {t(out)}\n"
        f"    %1 = relay.add %0, %b : ({t(out)}, {t(b.shape)}) -> {t(out)}\n"
        f"    %2 = relay.relu %1 : {t(out)}\n"
        f"    %3 = relay.matmul %x, %w : ({t(x)}, {t(w.shape)}) -> {t(out)}\n"
        f"    %4 = relay.add %3, %2 : {t(out)}\n"
        f"    relay.return %4 : {t(out)}\n  }}\n}}\n"
    )


DENSE_CASES = {
    "197x768x100": ((1, 197, 768), 100),  # 3-D; N not a multiple of any nr
    "odd-k": ((5, 37), 40),
    "gemv": ((1, 300), 70),
    "4-D": ((1, 3, 4, 33), 48),
}
"""`x` shape, outputs `N`: 3-D and 4-D inputs go through `matmul-to-dense`."""


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
@pytest.mark.parametrize("case", DENSE_CASES, ids=list(DENSE_CASES))
def test_dense_weights_are_packed_in_panels_and_the_result_is_the_same(
    case: str, isa: str
) -> None:
    """Packed `NK<nr>n` where the data has more than one row (`nr` = 32
    with AVX-512, 16 with AVX2), `NK` for a GEMV; either way the compiled
    program (bias, relu and a residual add fused) agrees with the
    interpreter on the unpacked weights."""
    x, n = DENSE_CASES[case]
    k, rows = x[-1], int(np.prod(x[:-1]))
    w = RNG.standard_normal((k, n)).astype(np.float32)
    b = RNG.standard_normal(n).astype(np.float32)
    text = _dense_program(x, w, b, isa)
    nr = {"avx2": 16, "avx512": 32}[isa]
    packed = (-(-n // nr), k, nr)
    shapes = kernel_buffer_shapes(text)
    assert (packed in shapes) == (rows > 1)
    assert ((n, k) in shapes) == (rows == 1)
    if not runs_here(isa):
        return
    data = RNG.standard_normal(x).astype(np.float32)
    compiled = hetero.compile(text)
    expected = run(parse_module(text), data)
    np.testing.assert_allclose(compiled(data), expected, rtol=1e-4, atol=1e-4)


def _lowered_allocations(text: str) -> list[tuple[int, ...]]:
    """The shapes of the buffers `lower-te`'s kernels allocate for `text`."""
    module = parse_module(text)
    for stage in (
        FoldConstantPass(),
        MatmulToDensePass(),
        PlanDevicesPass(),
        AlterOpLayoutPass(),
        FuseOpsPass(),
        LowerTEPass(),
    ):
        stage.apply(Context(), module)
    return [
        tuple(op.results[0].type.get_shape())
        for op in module.walk()
        if isinstance(op, tir.AllocOp)
    ]


def test_a_packed_dense_packs_nothing_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GEMM kernel of a packed dense reads its panels in place: no
    buffer of panels `[1, panels, K, nr]` is allocated for a per-call copy
    (there is one without `alter-op-layout`'s packing)."""
    w = RNG.standard_normal((64, 40)).astype(np.float32)
    text = _dense_program((1, 8, 64), w, np.zeros(40, np.float32), "avx512")
    per_call = (1, 2, 64, 32)
    assert per_call not in _lowered_allocations(text)
    monkeypatch.setitem(DENSE_WEIGHT_BLOCKS, DeviceType.cpu, lambda *_: 0)
    assert per_call in _lowered_allocations(text)


def test_the_interpreter_reads_a_packed_dense_weight() -> None:
    """After `alter-op-layout` (a weight of 40 outputs in panels of 32, the
    last half empty), the reference interpreter computes the same dense."""
    w = RNG.standard_normal((24, 40)).astype(np.float32)
    text = _dense_program((3, 24), w, np.ones(40, np.float32), "avx512")
    module = parse_module(text)
    for stage in (MatmulToDensePass(), PlanDevicesPass(), AlterOpLayoutPass()):
        stage.apply(Context(), module)
    assert "NK32n" in str(module)
    data = RNG.standard_normal((3, 24)).astype(np.float32)
    np.testing.assert_allclose(
        run(module, data), run(parse_module(text), data), rtol=1e-6
    )


def test_a_transposed_weight_is_packed_from_the_weight(
    background_jobs: list[Any],
) -> None:
    """`matmul-to-dense`'s transpose of a large weight is kept as a view
    (`fold-constant`'s `VIEWS`), which the packing reads: one job makes the
    panels from the `[K, N]` weight, and the transposed `[N, K]` copy is
    never made (it was a second job, and a second pass over the weight)."""
    w = RNG.standard_normal((256, 300)).astype(np.float32)
    assert w.size > LATER_LIMIT
    text = _dense_program((2, 4, 256), w, np.zeros(300, np.float32), "avx512")
    module = parse_module(text)
    for stage in (MatmulToDensePass(), PlanDevicesPass(), AlterOpLayoutPass()):
        stage.apply(Context(), module)
    weights = {op.weight.owner for op in module.walk() if isinstance(op, relay.DenseOp)}
    for weight in weights:
        assert isinstance(weight, relay.ConstantOp)
        np.testing.assert_array_equal(constant_value(weight), packed_weight(w.T, 32))
    assert len(background_jobs) == len(weights)  # the packing alone
