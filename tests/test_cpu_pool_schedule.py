"""The CPU pooling schedule (`te/schedules/cpu_pool.py`) and the
materialisation of concatenations and other injective results
(`te/emit.py`'s `store_all`), compiled with `hetero.compile` and
compared to the relay reference interpreter; plus the shape of their TIR:
no run-time bounds tests or source choices left in the loops."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import memref, scf, vector
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

import hetero
from hetero.context import parse_module
from hetero.dialects import tir
from hetero.dialects.relay import pool_shape
from hetero.interpreter.relay import run
from hetero.lowering.convert_tir_to_scf import ConvertTirToScfPass
from hetero.te.schedules import cpu_pool
from hetero.te.schedules.cpu_pool import MAX_TAPS, Axis
from hetero.transforms.fuse_ops import FuseOpsPass
from hetero.transforms.lower_te import LowerTEPass
from hetero.transforms.plan_devices import PlanDevicesPass

RNG = np.random.default_rng(0)

Shape = tuple[int, ...]


def _t(shape: Shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def _program(
    params: dict[str, Shape], result: Shape, body: str, threads: int | None = None
) -> str:
    options = f", {{num_threads = {threads}}}" if threads else ""
    target = f'#target.target<"llvm"{options}>'
    signature = ", ".join(f"%{name}: {_t(shape)}" for name, shape in params.items())
    return (
        f"builtin.module attributes {{target.config = #target.config<[{target}]>}} {{\n"
        f"  relay.func @main({signature}) -> {_t(result)} {{\n    {body}\n"
        f"    relay.return %r : {_t(result)}\n  }}\n}}\n"
    )


def _check(text: str, *shapes: Shape) -> None:
    inputs = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    expected = run(parse_module(text), *inputs)
    np.testing.assert_allclose(
        hetero.compile(text)(*inputs), expected, rtol=1e-5, atol=1e-5
    )


def _lowered(text: str) -> ModuleOp:
    """The module after `lower-te` (its kernels in TIR)."""
    module = parse_module(text)
    for p in (PlanDevicesPass(), FuseOpsPass(), LowerTEPass()):
        p.apply(Context(), module)
    return module


def _kernel_ops(module: ModuleOp) -> list[Operation]:
    return [
        op
        for func in module.ops
        if isinstance(func, tir.PrimFuncOp)
        for op in func.walk()
    ]


def _attributes(params: dict[str, object]) -> str:
    def value(v: object) -> str:
        if isinstance(v, bool):
            return str(v).lower()
        return f"array<i64: {', '.join(map(str, v))}>"  # type: ignore[call-overload]

    return ", ".join(f"{k} = {value(v)}" for k, v in params.items())


def _pool_program(
    op: str,
    shape: Shape,
    params: dict[str, object],
    epilogue: str = "",
    threads: int | None = None,
) -> str:
    """`relay.nn.<op>` over `shape`, then the relay line `epilogue` (`{t}`:
    the pooled type, reading `%0`, writing `%r`)."""
    out = pool_shape(
        shape,
        params["pool_size"],  # type: ignore[arg-type]
        params.get("strides", (1, 1)),  # type: ignore[arg-type]
        params.get("padding", (0, 0, 0, 0)),  # type: ignore[arg-type]
        params.get("dilation", (1, 1)),  # type: ignore[arg-type]
        bool(params.get("ceil_mode", False)),
    )
    name = "%0" if epilogue else "%r"
    body = f"{name} = relay.nn.{op} %x {{{_attributes(params)}}} : ({_t(shape)}) -> {_t(out)}"
    if epilogue:
        body += "\n    " + epilogue.format(t=_t(out))
    return _program({"x": shape}, out, body, threads)


WINDOWS = [
    {"pool_size": (3, 3), "strides": (2, 2)},  # squeezenet
    {"pool_size": (3, 3), "strides": (2, 2), "padding": (1, 1, 1, 1)},  # resnet
    {"pool_size": (3, 3), "padding": (1, 1, 1, 1)},  # stride 1, same size
    {"pool_size": (2, 2), "strides": (2, 2)},
    {"pool_size": (2, 2), "strides": (2, 2), "ceil_mode": True},
    {
        "pool_size": (3, 3),
        "strides": (2, 2),
        "padding": (1, 1, 1, 1),
        "ceil_mode": True,
    },
    {"pool_size": (3, 2), "strides": (1, 3), "padding": (2, 0, 1, 1)},
    {"pool_size": (2, 3), "dilation": (2, 2), "padding": (1, 2, 0, 1)},
    {
        "pool_size": (5, 5),
        "strides": (3, 2),
        "padding": (2, 2, 2, 2),
        "ceil_mode": True,
    },
]


@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("params", WINDOWS)
@pytest.mark.parametrize("shape", [(1, 3, 11, 11), (2, 2, 8, 21)])
def test_pool_matches_the_interpreter(
    op: str, params: dict[str, object], shape: Shape
) -> None:
    """Odd and even sizes, strides 1–3, windows wider than the stride,
    padding on one side only, dilation, `ceil_mode`'s extra windows."""
    _check(_pool_program(op, shape, params), shape)


@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
def test_input_smaller_than_the_window(op: str) -> None:
    """Every output row and column is a border one (no interior loop)."""
    params = {"pool_size": (3, 4), "padding": (1, 2, 1, 1), "count_include_pad": True}
    if op == "max_pool2d":
        del params["count_include_pad"]
    _check(_pool_program(op, (1, 2, 2, 3), params), (1, 2, 2, 3))


@pytest.mark.parametrize("params", WINDOWS[1::2])
def test_avg_pool_count_include_pad(params: dict[str, object]) -> None:
    """Padding counts in the divisor, the rows `ceil_mode` adds do not."""
    params = {**params, "count_include_pad": True}
    _check(_pool_program("avg_pool2d", (1, 2, 9, 10), params), (1, 2, 9, 10))


@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
def test_window_wholly_in_the_padding(op: str) -> None:
    """`ceil_mode` with a wide bottom/right padding adds windows with no tap
    inside: -inf for a maximum, 0 for an average."""
    params = {
        "pool_size": (1, 1),
        "strides": (3, 3),
        "padding": (0, 0, 2, 2),
        "ceil_mode": True,
    }
    text = _pool_program(op, (1, 1, 2, 2), params)
    x = RNG.standard_normal((1, 1, 2, 2)).astype(np.float32)
    got = hetero.compile(text)(x)
    np.testing.assert_array_equal(got, run(parse_module(text), x))
    assert got[0, 0, 1, 1] == (0.0 if op == "avg_pool2d" else -np.inf)


@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
def test_window_larger_than_the_unrolled_limit(op: str) -> None:
    """A window of more than `MAX_TAPS` taps is reduced by loops."""
    assert 9 * 9 > MAX_TAPS
    params = {"pool_size": (9, 9), "strides": (2, 2), "padding": (4, 4, 4, 4)}
    _check(_pool_program(op, (1, 2, 12, 13), params), (1, 2, 12, 13))


@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_pool_with_fused_epilogue(op: str, threads: int) -> None:
    """A relu after the pool is applied as each element is stored."""
    params = {"pool_size": (3, 3), "strides": (2, 2), "padding": (1, 1, 1, 1)}
    text = _pool_program(
        op, (1, 5, 13, 17), params, "%r = relay.relu %0 : {t}", threads
    )
    _check(text, (1, 5, 13, 17))


def test_pool_with_binary_epilogue() -> None:
    """The epilogue reads another tensor at the stored element (vector loads
    in the interior columns, scalars at the borders)."""
    params = {"pool_size": (3, 3), "strides": (1, 1), "padding": (1, 1, 1, 1)}
    shape = (1, 3, 9, 20)
    text = _pool_program(
        "avg_pool2d", shape, params, "%r = relay.add %0, %x : ({t}, {t}) -> {t}"
    )
    _check(text, shape)


def test_pool_epilogue_needs_no_intermediate_buffer() -> None:
    """pool + relu is one kernel writing the output once: no buffer for the
    pooled values, and no bounds test (`scf.if`) in its loops."""
    params = {"pool_size": (3, 3), "strides": (2, 2), "padding": (1, 1, 1, 1)}
    text = _pool_program(
        "max_pool2d", (1, 4, 12, 12), params, "%r = relay.relu %0 : {t}"
    )
    ops = _kernel_ops(_lowered(text))
    (scratch,) = [op for op in ops if isinstance(op, tir.AllocOp)]
    assert scratch.buffer.type.get_shape() == (6, 12)  # input rows folded, not outputs
    assert not [op for op in ops if isinstance(op, scf.IfOp)]
    kinds = {op.kind.data for op in ops if isinstance(op, tir.ForOp)}
    assert tir.ForKind.VECTORIZED in kinds and tir.ForKind.PARALLEL in kinds


@pytest.mark.parametrize(
    "shape", [(1, 8, 13, 13), (2, 3, 7, 7), (1, 2, 1, 1), (1, 3, 1, 9), (1, 2, 6, 1)]
)
def test_global_avg_pool(shape: Shape) -> None:
    out = (*shape[:2], 1, 1)
    body = f"%r = relay.nn.global_avg_pool2d %x : ({_t(shape)}) -> {_t(out)}"
    _check(_program({"x": shape}, out, body), shape)


def test_global_max_pool_with_epilogue() -> None:
    """A window over the whole plane (ONNX's GlobalMaxPool) folds rows, then
    halves the row; the epilogue follows."""
    shape, out = (1, 6, 5, 11), (1, 6, 1, 1)
    body = (
        f"%0 = relay.nn.max_pool2d %x {{pool_size = array<i64: 5, 11>}} : ({_t(shape)}) -> {_t(out)}\n"
        f"    %r = relay.relu %0 : {_t(out)}"
    )
    _check(_program({"x": shape}, out, body, threads=2), shape)


def _with_nans(shape: Shape) -> np.ndarray:
    """Random data with one element in 20 NaN, anywhere in the windows, but
    none in the last channel (so that a global pooling has a plane without)."""
    x = RNG.standard_normal(shape).astype(np.float32)
    x[RNG.random(shape) < 0.05] = np.nan
    x[:, -1] = np.nan_to_num(x[:, -1])
    return x


def _check_nan_propagates(text: str, shape: Shape) -> None:
    """Compiled as interpreted, NaN exactly where a window holds a NaN tap
    (those windows are +inf when the NaNs are +inf instead)."""
    x = _with_nans(shape)
    module = parse_module(text)
    expected = run(module, x)
    np.testing.assert_array_equal(
        np.isnan(expected), run(module, np.where(np.isnan(x), np.inf, x)) == np.inf
    )
    assert np.isnan(expected).any() and not np.isnan(expected).all()
    np.testing.assert_array_equal(hetero.compile(text)(x), expected)


NAN_WINDOWS = [
    *WINDOWS,
    {"pool_size": (9, 9), "strides": (2, 2), "padding": (4, 4, 4, 4)},  # > MAX_TAPS
    {"pool_size": (11, 13)},  # global: rows folded, then the row halved
]


@pytest.mark.parametrize("params", NAN_WINDOWS)
def test_max_pool_propagates_nan(params: dict[str, object]) -> None:
    """A window with a NaN tap is NaN, wherever the NaN lies in it (the rule
    of docs/dialects/relay.md: onnxruntime's MaxPool keeps a NaN only as the
    last tap of a window, ONNX's reference evaluator only as the first): the
    interior and border classes, strided and folded rows, loops over a
    large window, and global pooling."""
    shape = (1, 3, 11, 13)
    _check_nan_propagates(_pool_program("max_pool2d", shape, params), shape)


@pytest.mark.parametrize(
    ("attrs", "size", "out"),
    [
        (
            "strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>",
            9,
            5,
        ),  # clamped taps
        (
            "dilation = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>",
            4,
            4,
        ),  # taps skipped
    ],
)
def test_blocked_max_pool_propagates_nan(attrs: str, size: int, out: int) -> None:
    """The channel-blocked pooling (`NCHW16c`) keeps NaN too."""
    data, result = (1, 2, size, size, 16), (1, 2, out, out, 16)
    pool = (
        "pool_size = array<i64: 3, 3>"
        if "strides" in attrs
        else "pool_size = array<i64: 2, 2>"
    )
    body = (
        f'%r = relay.nn.max_pool2d %x {{{pool}, {attrs}, layout = "NCHW16c"}} '
        f": ({_t(data)}) -> {_t(result)}"
    )
    _check_nan_propagates(_program({"x": data}, result, body), data)


def test_max_pool3d_propagates_nan() -> None:
    """3-D pooling is lower-te's generic nest (`arith.maximumf`), as on GPUs."""
    data, result = (1, 2, 5, 6, 7), (1, 2, 3, 3, 4)
    body = (
        "%r = relay.nn.max_pool3d %x {pool_size = array<i64: 2, 2, 2>, "
        "strides = array<i64: 2, 2, 2>, padding = array<i64: 1, 1, 1, 0, 0, 0>} "
        f": ({_t(data)}) -> {_t(result)}"
    )
    _check_nan_propagates(_program({"x": data}, result, body), data)


@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("params", WINDOWS[:3] + WINDOWS[5:7])
@pytest.mark.parametrize("fold_bytes", [1, 3 * 4 * 19])
def test_rows_folded_in_blocks(
    op: str, params: dict[str, object], fold_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interior rows are folded a block at a time (`FOLD_BYTES`): blocks of
    one row, and of three rows with a partial last block, give the same
    result as the whole plane at once."""
    monkeypatch.setattr(cpu_pool, "FOLD_BYTES", fold_bytes)
    params = {**params, "count_include_pad": True} if op == "avg_pool2d" else params
    shape = (1, 2, 17, 19)
    _check(_pool_program(op, shape, params), shape)


def test_separable_window_reads_each_input_row_once_per_output_row() -> None:
    """A 3x3 window folds its 3 rows into a scratch row (3 input loads per
    column, unit stride), and the outputs read only that row (3 taps, not 9)."""
    params = {"pool_size": (3, 3), "strides": (2, 2)}
    ops = _kernel_ops(_lowered(_pool_program("max_pool2d", (1, 4, 13, 13), params)))
    vector_loops = [
        op
        for op in ops
        if isinstance(op, tir.ForOp) and op.kind.data == tir.ForKind.VECTORIZED
    ]
    sources = [
        sorted(
            "scratch" if isinstance(load.memref.owner, tir.AllocOp) else "input"
            for load in loop.walk()
            if isinstance(load, memref.LoadOp)
        )
        for loop in vector_loops
    ]
    assert sorted(sources) == [["input"] * 3, ["scratch"] * 3]


def test_one_row_window_reads_the_input() -> None:
    """A window of one row has nothing to fold: no `local` row."""
    params = {"pool_size": (1, 3), "strides": (1, 2)}
    text = _pool_program("max_pool2d", (1, 2, 5, 11), params)
    ops = _kernel_ops(_lowered(text))
    assert not [op for op in ops if isinstance(op, tir.AllocOp)]
    _check(text, (1, 2, 5, 11))


def test_axis_classes() -> None:
    """Interior outputs read only inside the input; border ones know their taps."""
    # 5 inputs, window 3, stride 2, padding 1 / 1: outputs 0..2.
    axis = Axis(size=5, out=3, window=3, stride=2, dilation=1, before=1, after=1)
    assert axis.interior() == range(1, 2)
    assert axis.border() == [0, 2]
    assert axis.taps(0) == range(1, 3) and axis.taps(2) == range(2)
    assert axis.counted(0, include_pad=False) == 2
    assert axis.counted(0, include_pad=True) == 3


# ----------------------------------------------------------------------------
# Concatenation and injective kernels
# ----------------------------------------------------------------------------


def _concat_program(shapes: list[Shape], axis: int) -> tuple[str, Shape]:
    rank = len(shapes[0])
    at = axis % rank
    out = tuple(
        sum(s[at] for s in shapes) if i == at else d for i, d in enumerate(shapes[0])
    )
    names = [f"%x{i}" for i in range(len(shapes))]
    types = ", ".join(_t(s) for s in shapes)
    body = f"%r = relay.concatenate {', '.join(names)} {{axis = {axis}}} : ({types}) -> {_t(out)}"
    return _program({n[1:]: s for n, s in zip(names, shapes)}, out, body), out


@pytest.mark.parametrize(
    "shapes, axis",
    [
        ([(1, 4, 5, 5), (1, 3, 5, 5)], 1),  # fire module
        ([(1, 2, 3, 17), (1, 5, 3, 17), (1, 1, 3, 17)], 1),
        ([(2, 3, 7), (2, 3, 20)], -1),  # along the vectorized axis
        ([(3, 4), (2, 4)], 0),
        ([(5,), (11,)], 0),
        ([(1, 2, 1, 1), (1, 3, 1, 1)], 1),
    ],
)
def test_concatenate(shapes: list[Shape], axis: int) -> None:
    text, _ = _concat_program(shapes, axis)
    _check(text, *shapes)


def test_concatenate_is_copies_without_choices() -> None:
    """Stored whole, a concatenation is one parallel, vectorized copy per
    input: no `scf.if` choosing the input element by element."""
    text, _ = _concat_program([(1, 4, 6, 6), (1, 3, 6, 6)], 1)
    ops = _kernel_ops(_lowered(text))
    assert not [op for op in ops if isinstance(op, scf.IfOp)]
    loops = [op for op in ops if isinstance(op, tir.ForOp)]
    assert sum(op.kind.data == tir.ForKind.PARALLEL for op in loops) == 2
    assert sum(op.kind.data == tir.ForKind.VECTORIZED for op in loops) == 2


def test_concatenated_images_are_copied_as_runs() -> None:
    """An input buffer concatenated along the channels is copied one image
    (all its rows) at a time: a vectorized loop over `H * W` pixels whose
    accesses the vectorizer makes runs across rows (27 columns: no scalar
    tail per row, only one per image)."""
    text, _ = _concat_program([(1, 4, 27, 27), (1, 3, 27, 27)], 1)
    module = _lowered(text)
    loops = [op for op in _kernel_ops(module) if isinstance(op, tir.ForOp)]
    vectorized = [op for op in loops if op.kind.data == tir.ForKind.VECTORIZED]
    assert [const_evaluate_operand(op.ub) for op in vectorized] == [27 * 27] * 2
    ConvertTirToScfPass().apply(Context(), module)
    vector_loads = [op for op in module.walk() if isinstance(op, vector.LoadOp)]
    assert {str(op.base.type) for op in vector_loads} == {
        "memref<1x4x27x27xf32>",
        "memref<1x3x27x27xf32>",
    }


def test_concatenate_of_computed_inputs() -> None:
    """Inputs computed in place (relu of a parameter, a nested concatenation)."""
    a, b, c = (1, 2, 3, 9), (1, 3, 3, 9), (1, 1, 3, 9)
    body = (
        f"%0 = relay.relu %a : {_t(a)}\n"
        f"    %1 = relay.concatenate %b, %c {{axis = 1}} : ({_t(b)}, {_t(c)}) -> {_t((1, 4, 3, 9))}\n"
        f"    %r = relay.concatenate %0, %1 {{axis = 1}} : ({_t(a)}, {_t((1, 4, 3, 9))}) -> {_t((1, 6, 3, 9))}"
    )
    _check(_program({"a": a, "b": b, "c": c}, (1, 6, 3, 9), body), a, b, c)


def test_elementwise_kernel_rows_are_vectorized() -> None:
    """A materialised elementwise result (add + relu) is stored row by row,
    each row a `vectorized` loop (7 columns: one short vector)."""
    shape = (2, 6, 7, 7)
    body = (
        f"%0 = relay.add %a, %b : ({_t(shape)}, {_t(shape)}) -> {_t(shape)}\n"
        f"    %r = relay.relu %0 : {_t(shape)}"
    )
    text = _program({"a": shape, "b": shape}, shape, body, threads=2)
    _check(text, shape, shape)
    loops = [op for op in _kernel_ops(_lowered(text)) if isinstance(op, tir.ForOp)]
    assert loops[-1].kind.data == tir.ForKind.VECTORIZED
