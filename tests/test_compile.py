"""`hetero.compile`: multi-kernel relay programs run natively through the AOT
host function (`lower-aot-main`) and agree with the relay reference interpreter."""

import math

import numpy as np
import pytest

import hetero
from hetero.context import parse_module
from hetero.driver import CompiledFunctionError
from hetero.interpreter.relay import run
from hetero.utils.diagnostics import HeteroError

CNN = """
  relay.func @main(%x: tensor<1x3x9x9xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>,
                   %dw: tensor<10x16xf32>, %db: tensor<10xf32>) -> tensor<1x10xf32> {
    %0 = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x5x5xf32>
    %1 = relay.nn.bias_add %0, %b : (tensor<1x4x5x5xf32>, tensor<4xf32>) -> tensor<1x4x5x5xf32>
    %2 = relay.relu %1 : tensor<1x4x5x5xf32>
    %3 = relay.nn.max_pool2d %2 {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>) -> tensor<1x4x2x2xf32>
    %4 = relay.flatten %3 : (tensor<1x4x2x2xf32>) -> tensor<1x16xf32>
    %5 = relay.nn.dense %4, %dw : (tensor<1x16xf32>, tensor<10x16xf32>) -> tensor<1x10xf32>
    %6 = relay.nn.bias_add %5, %db : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
    %r = relay.nn.softmax %6 : tensor<1x10xf32>
    relay.return %r : tensor<1x10xf32>
  }"""

CONSTANTS = """
  relay.func @main(%x: tensor<3x4xf32>) -> tensor<3x2xf32> {
    %w = relay.constant dense<[[1.0, -2.0, 3.0, 0.25], [0.5, 0.5, -0.5, 2.0]]> : tensor<2x4xf32>
    %b = relay.constant dense<[0.5, -1.0]> : tensor<2xf32>
    %0 = relay.nn.dense %x, %w : (tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<3x2xf32>
    %1 = relay.nn.bias_add %0, %b : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
    %2 = relay.nn.softmax %1 : tensor<3x2xf32>
    %r = relay.tanh %2 : tensor<3x2xf32>
    relay.return %r : tensor<3x2xf32>
  }"""

RETURNS_PARAMETER = """
  relay.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = relay.nn.softmax %x : tensor<2x3xf32>
    relay.return %y : tensor<2x3xf32>
  }"""

DEVICE_COPY = """
  relay.func @main(%x: tensor<3x4xf32>, %w: tensor<5x4xf32>) -> tensor<3x5xf32> {
    %0 = relay.nn.dense %x, %w : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
    %1 = relay.on_device %0 to #target.vdevice<cpu:0> fixed : tensor<3x5xf32>
    %2 = relay.device_copy %1 from #target.vdevice<cpu:0> to #target.vdevice<cpu:1> : tensor<3x5xf32>
    %3 = relay.nn.softmax %2 : tensor<3x5xf32>
    %r = relay.on_device %3 to #target.vdevice<cpu:1> fixed : tensor<3x5xf32>
    relay.return %r : tensor<3x5xf32>
  }"""

PROGRAMS = {
    "cnn": CNN,
    "constants": CONSTANTS,
    "returns a parameter": RETURNS_PARAMETER,
    "cpu device copy": DEVICE_COPY,
}


def _text(
    body: str, config: str | None = '#target.config<[#target.target<"llvm">]>'
) -> str:
    attributes = f" attributes {{target.config = {config}}}" if config else ""
    return f"builtin.module{attributes} {{{body}\n}}\n"


def _random_inputs(text: str) -> list[np.ndarray]:
    main = next(iter(parse_module(text).ops))
    rng = np.random.default_rng(1)
    return [
        rng.standard_normal(a.type.get_shape()).astype(np.float32)  # type: ignore[attr-defined]
        for a in main.args  # type: ignore[attr-defined]
    ]


@pytest.mark.parametrize("name", PROGRAMS)
def test_compiled_program_matches_the_reference(name: str):
    text = _text(PROGRAMS[name])
    inputs = _random_inputs(text)
    compiled = hetero.compile(text)
    np.testing.assert_allclose(
        compiled(*inputs), run(parse_module(text), *inputs), rtol=2e-5, atol=2e-5
    )


def test_device_copy_runs_in_the_host_function():
    # Every parallel loop outlined, however small (its call names it below).
    config = '#target.config<[#target.target<"llvm", {parallel_min_ops = 0}>]>'
    module = parse_module(_text(DEVICE_COPY, config))
    compiled = hetero.compile(module)
    assert "relay.device_copy" in str(module), "the caller's module is not changed"
    ir = compiled.native.llvm_ir()
    host = ir[ir.index("@main_host(") :]
    host = host[: host.index("\n}")]
    # LLVM inlines the small kernels into the host; their parallel loops and
    # the copy's (a loop of the host function) stay calls.
    assert "fused_nn_softmax_tir" in host
    assert "main_host_parallel" in host, "the copy loop runs in the host function"


def test_targets_fill_a_missing_config():
    text = _text(CONSTANTS, config=None)
    (x,) = _random_inputs(text)
    expected = run(parse_module(_text(CONSTANTS)), x)
    np.testing.assert_allclose(
        hetero.compile(text, targets=("llvm",))(x), expected, rtol=2e-5, atol=2e-5
    )


@pytest.mark.parametrize(
    "targets", ["llvm", "llvm -num_threads=2", None, ["llvm -mattr=+sse2,+sse4.1"]]
)
def test_targets_is_one_target_string_a_list_or_none(targets):
    """One string is one target (a list option's commas stay inside it); None
    is the default."""
    text = _text(CONSTANTS, config=None)
    (x,) = _random_inputs(text)
    expected = run(parse_module(_text(CONSTANTS)), x)
    np.testing.assert_allclose(
        hetero.compile(text, targets=targets)(x), expected, rtol=2e-5, atol=2e-5
    )


@pytest.mark.parametrize(
    "targets, error, match",
    [
        (3, TypeError, "targets must be a target string"),
        ([], TypeError, "non-empty list"),
        (["llvm", 3], TypeError, "not \\['llvm', 3\\]"),
        ("llvm -num_threads=two", HeteroError, "takes an integer"),
    ],
)
def test_bad_targets_are_reported(targets, error, match):
    with pytest.raises(error, match=match):
        hetero.compile(_text(CONSTANTS, config=None), targets=targets)


def test_wrong_inputs_are_reported():
    compiled = hetero.compile(_text(RETURNS_PARAMETER))
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(CompiledFunctionError, match="takes 2 input"):
        compiled(x)
    with pytest.raises(
        CompiledFunctionError, match=r"input #1 \(%y\) must have shape \(2, 3\)"
    ):
        compiled(x, np.zeros((3, 2), np.float32))
    with pytest.raises(CompiledFunctionError, match="dtype float32"):
        compiled(x, np.zeros((2, 3), np.float64))


def test_unsupported_construct_is_a_located_error():
    text = _text("""
  relay.func @main(%x: tensor<2xf32>, %c: tensor<i1>) -> tensor<2xf32> {
    %r = relay.if %c : tensor<i1> -> tensor<2xf32> {
      %0 = relay.exp %x : tensor<2xf32>
      relay.yield %0 : tensor<2xf32>
    } else {
      relay.yield %x : tensor<2xf32>
    }
    relay.return %r : tensor<2xf32>
  }""")
    with pytest.raises(HeteroError, match="lower-aot-main") as error:
        hetero.compile(text)
    assert error.value.op is not None


def test_tuple_results_are_written_straight_into_their_outputs():
    text = """
relay.func @main(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>) -> tuple<tensor<4x2xf32>, tuple<tensor<4x3xf32>, tensor<4x2xf32>>, tensor<4x3xf32>> {
  %d = relay.nn.dense %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %s = relay.nn.softmax %d : tensor<4x2xf32>
  %pair = relay.tuple(%x, %s) : tuple<tensor<4x3xf32>, tensor<4x2xf32>>
  %again = relay.get_item %pair[1] : tuple<tensor<4x3xf32>, tensor<4x2xf32>> -> tensor<4x2xf32>
  %e = relay.exp %again : tensor<4x2xf32>
  %t = relay.tuple(%e, %pair, %x) : tuple<tensor<4x2xf32>, tuple<tensor<4x3xf32>, tensor<4x2xf32>>, tensor<4x3xf32>>
  relay.return %t : tuple<tensor<4x2xf32>, tuple<tensor<4x3xf32>, tensor<4x2xf32>>, tensor<4x3xf32>>
}
"""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    w = rng.standard_normal((2, 3)).astype(np.float32)
    f = hetero.compile(text)
    got = f(x, w)
    want = run(parse_module(text), x, w)
    assert len(f.outputs) == 4 and isinstance(got, tuple) and isinstance(got[1], tuple)
    for g, e in zip((got[0], *got[1], got[2]), (want[0], *want[1], want[2])):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


DYNAMIC_BATCH = """
relay.func @main(%x: tensor<?x3x6x6xf32>) -> tensor<?x5xf32> {
  %w = relay.constant dense<[[[[0.5]], [[-1.0]], [[2.0]]], [[[1.0]], [[0.25]], [[-0.5]]]]> : tensor<2x3x1x1xf32>
  %c = relay.nn.conv2d %x, %w : (tensor<?x3x6x6xf32>, tensor<2x3x1x1xf32>) -> tensor<?x2x6x6xf32>
  %r = relay.relu %c : tensor<?x2x6x6xf32>
  %p = relay.nn.global_avg_pool2d %r : (tensor<?x2x6x6xf32>) -> tensor<?x2x1x1xf32>
  %f = relay.flatten %p : (tensor<?x2x1x1xf32>) -> tensor<?x2xf32>
  %wd = relay.constant dense<[[1.0, 2.0], [0.0, 1.0], [-1.0, 3.0], [0.5, 0.5], [2.0, -2.0]]> : tensor<5x2xf32>
  %d = relay.nn.dense %f, %wd : (tensor<?x2xf32>, tensor<5x2xf32>) -> tensor<?x5xf32>
  %s = relay.nn.softmax %d : tensor<?x5xf32>
  relay.return %s : tensor<?x5xf32>
}
"""


def test_dynamic_batch_is_compiled_once_per_input_shape():
    f = hetero.compile(DYNAMIC_BATCH)
    rng = np.random.default_rng(7)
    for batch in (1, 4, 1):
        x = rng.standard_normal((batch, 3, 6, 6)).astype(np.float32)
        np.testing.assert_allclose(
            f(x), run(parse_module(DYNAMIC_BATCH), x), rtol=1e-5, atol=1e-6
        )
    assert sorted(f.compiled) == [((1, 3, 6, 6),), ((4, 3, 6, 6),)]
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    profile = f.profile(x)  # the batch-2 specialization, compiled now
    np.testing.assert_allclose(
        profile.outputs, run(parse_module(DYNAMIC_BATCH), x), rtol=1e-5, atol=1e-6
    )
    assert profile.calls and len(f.compiled) == 3
    with pytest.raises(
        CompiledFunctionError, match=r"input #0 \(%x\) must be a tensor<\?x3x6x6xf32>"
    ):
        f(np.zeros((2, 3, 6, 7), np.float32))
    with pytest.raises(CompiledFunctionError, match="takes 1 input"):
        f()


def test_lower_to_tir_stops_before_code_generation():
    """`lower_to_tir` is hetero.compile's relay pipeline alone: kernels and the
    host function as `tir.prim_func`s."""
    from hetero.dialects import tir
    from hetero.driver import lower_to_tir

    module = parse_module(_text(CNN))
    lower_to_tir(module)
    functions = {
        op.sym_name.data for op in module.ops if isinstance(op, tir.PrimFuncOp)
    }
    assert "main_host" in functions and len(functions) > 1


def test_relu_maximum_and_clip_follow_tvm_on_nan():
    """Float max/min are `a > b ? a : b` (TVM's codegen, MLAS's `max_ps`): a
    NaN input gives the other operand — in the compiled code (one `vmaxps`
    instead of `arith.maximumf`'s NaN-ordering sequence), vectorized or not,
    and in the reference interpreter alike."""
    t = "tensor<40xf32>"
    body = f"""
  relay.func @main(%x: {t}, %y: {t}) -> {t} {{
    %r = relay.relu %x : {t}
    %m = relay.maximum %r, %y : ({t}, {t}) -> {t}
    %c = relay.clip %m {{a_min = -1.0 : f64, a_max = 1.0 : f64}} : {t}
    relay.return %c : {t}
  }}"""
    text = _text(body)
    # 40 elements: whole vectors (vectorized selects) and a scalar rest.
    x = np.tile(np.array([np.nan, -2.0, 0.5, 3.0], np.float32), 10)
    y = np.tile(np.array([0.25, np.nan, -0.5, 0.0], np.float32), 10)
    expected = np.tile(np.array([0.25, -1.0, 0.5, 1.0], np.float32), 10)
    np.testing.assert_array_equal(run(parse_module(text), x, y), expected)
    np.testing.assert_array_equal(hetero.compile(text)(x, y), expected)


def _integer_program(element: str) -> str:
    """Every integer elementwise op: binary ones on a 3x37 (vectors and a
    rest) against a broadcast row, then the unary ones."""
    t, row = f"tensor<3x37x{element}>", f"tensor<37x{element}>"
    binary = "".join(
        f"\n    %{op} = relay.{op} %x, %y : ({t}, {row}) -> {t}"
        for op in ("add", "subtract", "multiply", "divide", "maximum", "minimum")
    )
    unary = "".join(
        f"\n    %{op}_of_{arg} = relay.{op} %{arg} : {t}"
        for op in ("negative", "relu", "abs")
        for arg in ("x", "subtract")
    )
    results = ["add", "subtract", "multiply", "divide", "maximum", "minimum"] + [
        f"{op}_of_{arg}"
        for op in ("negative", "relu", "abs")
        for arg in ("x", "subtract")
    ]
    values = ", ".join(f"%{r}" for r in results)
    types = ", ".join([t] * len(results))
    return _text(f"""
  relay.func @main(%x: {t}, %y: {row}) -> tuple<{types}> {{{binary}{unary}
    %r = relay.tuple({values}) : tuple<{types}>
    relay.return %r : tuple<{types}>
  }}""")


@pytest.mark.parametrize(
    "element, dtype", [("i8", np.int8), ("i32", np.int32), ("i64", np.int64)]
)
def test_integer_arithmetic_matches_the_reference(element: str, dtype: type) -> None:
    """Signless integers take the elementwise ops that have a meaning for
    them, wrapping like NumPy; divide truncates toward zero, and its two
    divisors that trap in x86's `idiv` (0, and -1 under the lowest value)
    give 0 and the wrapped negation instead of a crash."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(0)
    x = rng.integers(info.min, info.max, (3, 37), dtype=dtype, endpoint=True)
    x[0, :6] = [info.min, info.min, 7, -7, 7, -7]
    y = rng.integers(-9, 9, 37, dtype=dtype, endpoint=True)
    y[:6] = [-1, 0, 2, 2, -2, -2]
    text = _integer_program(element)
    expected = run(parse_module(text), x, y)
    with np.errstate(over="ignore"):
        assert expected[3][0, :6].tolist() == [info.min, 0, 3, -3, -3, 3]
    for got, want in zip(hetero.compile(text)(x, y), expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_integer_ops_without_a_meaning_are_located_errors() -> None:
    text = _text("""
  relay.func @main(%x: tensor<4xi32>) -> tensor<4xi32> {
    %r = relay.exp %x : tensor<4xi32>
    relay.return %r : tensor<4xi32>
  }""")
    with pytest.raises(
        HeteroError, match=r"relay.exp is lowered for float elements\)"
    ) as error:
        hetero.compile(text)
    assert error.value.op is not None


@pytest.mark.parametrize(
    "data, indices, axis, index_type",
    [
        ((10, 40), (2, 3), 0, "i64"),  # an embedding lookup: rows of vectors
        ((10, 40), (), 0, "i32"),  # a scalar index drops the axis
        ((4, 9, 5), (6,), 1, "i8"),
        ((4, 9, 5), (2, 2), -1, "i32"),  # the vectorized dimension is taken
    ],
)
def test_take_matches_the_reference(
    data: tuple[int, ...], indices: tuple[int, ...], axis: int, index_type: str
) -> None:
    """`relay.take`, fused with the elementwise op after it, compiled and
    interpreted alike, with indices in range, negative (counted from the end)
    and out of range on both sides (clamped)."""
    extent = data[axis]
    out = (*data[: axis % len(data)], *indices, *data[axis % len(data) + 1 :])
    t = lambda shape, e="f32": (
        f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}{e}>"
    )
    text = _text(f"""
  relay.func @main(%x: {t(data)}, %i: {t(indices, index_type)}) -> {t(out)} {{
    %0 = relay.take %x, %i {{axis = {axis} : i64}} : ({t(data)}, {t(indices, index_type)}) -> {t(out)}
    %r = relay.relu %0 : {t(out)}
    relay.return %r : {t(out)}
  }}""")
    x = np.random.default_rng(2).standard_normal(data).astype(np.float32)
    pool = np.array([-1, 0, extent - 1, 1, -extent, extent, -extent - 3, 100])
    i = (
        np.resize(pool, math.prod(indices))
        .reshape(indices)
        .astype({"i8": np.int8, "i32": np.int32, "i64": np.int64}[index_type])
    )
    expected = run(parse_module(text), x, i)
    clamped = np.clip(np.where(i < 0, i.astype(np.int64) + extent, i), 0, extent - 1)
    np.testing.assert_array_equal(
        expected, np.maximum(np.take(x, clamped, axis=axis), 0)
    )
    np.testing.assert_array_equal(hetero.compile(text)(x, i), expected)


def test_a_rank_0_input_is_passed_as_a_scalar_tensor() -> None:
    text = _text("""
  relay.func @main(%x: tensor<f32>, %y: tensor<3xf32>) -> tensor<3xf32> {
    %r = relay.multiply %x, %y : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
    relay.return %r : tensor<3xf32>
  }""")
    x, y = np.array(2.0, np.float32), np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(hetero.compile(text)(x, y), [0.0, 2.0, 4.0])


def _scatter_conv2d_transpose(x, w, strides, padding, dilation, output_padding, groups):
    """The definition, pixel by pixel: each input pixel adds its weighted
    window into the full output, which the padding then crops."""
    (sh, sw), (dh, dw), (oph, opw) = strides, dilation, output_padding
    n, c, h, width = x.shape
    _, og, kh, kw = w.shape
    full = np.zeros(
        (
            n,
            og * groups,
            (h - 1) * sh + dh * (kh - 1) + 1 + oph,
            (width - 1) * sw + dw * (kw - 1) + 1 + opw,
        )
    )
    cg = c // groups
    for ch in range(c):
        g = ch // cg
        for iy in range(h):
            for ix in range(width):
                for ky in range(kh):
                    for kx in range(kw):
                        full[
                            :,
                            g * og : (g + 1) * og,
                            iy * sh + ky * dh,
                            ix * sw + kx * dw,
                        ] += x[:, ch, iy, ix, None] * w[ch, :, ky, kx]
    pt, pl, pb, pr = padding
    return full[:, :, pt : full.shape[2] - pb, pl : full.shape[3] - pr]


@pytest.mark.parametrize(
    "x, w, attrs",
    [
        ((1, 3, 4, 5), (3, 2, 3, 3), {}),
        (
            (2, 4, 5, 6),
            (4, 3, 3, 2),
            {
                "strides": (2, 2),
                "padding": (1, 0, 0, 1),
                "output_padding": (1, 0),
                "groups": 2,
            },
        ),
        (
            (1, 2, 4, 4),
            (2, 2, 2, 3),
            {
                "strides": (3, 2),
                "dilation": (2, 2),
                "padding": (2, 1, 1, 2),
                "output_padding": (1, 1),
            },
        ),
        # a decoder's 2x upsampling (the CPU conv2d schedule's tiles)
        ((1, 32, 9, 9), (32, 24, 4, 4), {"strides": (2, 2), "padding": (1, 1, 1, 1)}),
        # cropped beyond the window's reach: the gather form
        ((1, 2, 4, 4), (2, 3, 1, 1), {"strides": (2, 2), "padding": (1, 0, 1, 1)}),
    ],
)
def test_conv2d_transpose_matches_the_definition(
    x: tuple[int, ...], w: tuple[int, ...], attrs: dict[str, object]
) -> None:
    """Compiled (as a conv2d of the spread input, or in gather form, with a
    fused bias and relu) and interpreted (one GEMM per tap) against the
    scatter definition."""
    rng = np.random.default_rng(3)
    xs, ws = (
        rng.standard_normal(x).astype(np.float32),
        rng.standard_normal(w).astype(np.float32),
    )
    b = rng.standard_normal(w[1] * attrs.get("groups", 1)).astype(np.float32)
    want = _scatter_conv2d_transpose(
        xs,
        ws,
        attrs.get("strides", (1, 1)),
        attrs.get("padding", (0, 0, 0, 0)),
        attrs.get("dilation", (1, 1)),
        attrs.get("output_padding", (0, 0)),
        attrs.get("groups", 1),
    )
    want = np.maximum(want + b[None, :, None, None], 0)
    spec = ", ".join(
        f"{k} = {v} : i64"
        if isinstance(v, int)
        else f"{k} = array<i64: {', '.join(map(str, v))}>"
        for k, v in attrs.items()
    )
    t = lambda s: f"tensor<{'x'.join(map(str, s))}xf32>"
    out = t(want.shape)
    text = _text(f"""
  relay.func @main(%x: {t(x)}, %w: {t(w)}, %b: {t(b.shape)}) -> {out} {{
    %0 = relay.nn.conv2d_transpose %x, %w {{{spec}}} : ({t(x)}, {t(w)}) -> {out}
    %1 = relay.nn.bias_add %0, %b : ({out}, {t(b.shape)}) -> {out}
    %r = relay.relu %1 : {out}
    relay.return %r : {out}
  }}""")
    np.testing.assert_allclose(
        run(parse_module(text), xs, ws, b), want, rtol=1e-5, atol=1e-5
    )
    np.testing.assert_allclose(
        hetero.compile(text)(xs, ws, b), want, rtol=1e-5, atol=1e-5
    )


def _naive_avg_pool3d(x, kernel, strides, padding, ceil_mode, count_include_pad):
    """Average pooling by its definition: for each window, the mean of the
    taps inside the input over the taps counted (inside the input, or with
    `count_include_pad` inside the explicit padding)."""
    rank = 3
    begins, ends = padding[:rank], padding[rank:]
    sizes = x.shape[2:]
    outs = []
    for size, k, s, b, e in zip(sizes, kernel, strides, begins, ends):
        rounding = s - 1 if ceil_mode else 0
        outs.append((size + b + e - k + rounding) // s + 1)
    out = np.zeros((*x.shape[:2], *outs))
    for index in np.ndindex(*outs):
        total, count = 0.0, 0
        for tap in np.ndindex(*kernel):
            at = [i * s + t - b for i, s, t, b in zip(index, strides, tap, begins)]
            inside = all(0 <= a < size for a, size in zip(at, sizes))
            padded = all(
                -b <= a < size + e for a, size, b, e in zip(at, sizes, begins, ends)
            )
            if inside:
                total = total + x[(slice(None), slice(None), *at)]
            count += inside or (count_include_pad and padded)
        out[(slice(None), slice(None), *index)] = total / max(count, 1)
    return out


@pytest.mark.parametrize("ceil_mode, count_include_pad", [(False, False), (True, True)])
def test_3d_windows_match_the_definition(
    ceil_mode: bool, count_include_pad: bool
) -> None:
    """relay.nn.avg_pool3d (padding, ceil_mode, count_include_pad) against
    its definition, and conv3d -> max_pool3d compiled as interpreted."""
    x = np.random.default_rng(4).standard_normal((1, 2, 5, 6, 4)).astype(np.float32)
    kernel, strides, padding = (2, 3, 2), (2, 2, 1), (1, 0, 1, 1, 1, 0)
    want = _naive_avg_pool3d(x, kernel, strides, padding, ceil_mode, count_include_pad)
    t = lambda s: f"tensor<{'x'.join(map(str, s))}xf32>"
    a = lambda v: f"array<i64: {', '.join(map(str, v))}>"
    flags = f"ceil_mode = {str(ceil_mode).lower()}, count_include_pad = {str(count_include_pad).lower()}"
    text = _text(f"""
  relay.func @main(%x: {t(x.shape)}) -> {t(want.shape)} {{
    %r = relay.nn.avg_pool3d %x {{pool_size = {a(kernel)}, strides = {a(strides)}, padding = {a(padding)}, {flags}}} : ({t(x.shape)}) -> {t(want.shape)}
    relay.return %r : {t(want.shape)}
  }}""")
    np.testing.assert_allclose(run(parse_module(text), x), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hetero.compile(text)(x), want, rtol=1e-5, atol=1e-6)
    w = np.random.default_rng(5).standard_normal((4, 1, 2, 2, 2)).astype(np.float32)
    text = _text(f"""
  relay.func @main(%x: {t(x.shape)}, %w: {t(w.shape)}) -> tensor<1x4x3x3x3xf32> {{
    %c = relay.nn.conv3d %x, %w {{padding = {a((1, 1, 1, 0, 0, 1))}, dilation = {a((1, 2, 1))}, groups = 2 : i64}} : ({t(x.shape)}, {t(w.shape)}) -> tensor<1x4x5x5x5xf32>
    %r = relay.nn.max_pool3d %c {{pool_size = {a((2, 2, 2))}, strides = {a((2, 2, 2))}, padding = {a((1, 1, 1, 0, 0, 0))}}} : (tensor<1x4x5x5x5xf32>) -> tensor<1x4x3x3x3xf32>
    relay.return %r : tensor<1x4x3x3x3xf32>
  }}""")
    np.testing.assert_allclose(
        hetero.compile(text)(x, w), run(parse_module(text), x, w), rtol=1e-5, atol=1e-5
    )


def test_cast_matches_numpy_astype() -> None:
    """relay.cast between floats, ints and bools, vectorized rows and a
    scalar rest: NumPy's `astype`, compiled as interpreted."""
    out = ["i32", "f64", "i1", "f32", "i8", "f32", "i64"]
    t = lambda e: f"tensor<3x37x{e}>"
    body = """
    %0 = relay.cast %x {dtype = i32} : (tensor<3x37xf32>) -> tensor<3x37xi32>
    %1 = relay.cast %x {dtype = f64} : (tensor<3x37xf32>) -> tensor<3x37xf64>
    %2 = relay.cast %i {dtype = i1} : (tensor<3x37xi64>) -> tensor<3x37xi1>
    %3 = relay.cast %2 {dtype = f32} : (tensor<3x37xi1>) -> tensor<3x37xf32>
    %4 = relay.cast %i {dtype = i8} : (tensor<3x37xi64>) -> tensor<3x37xi8>
    %5 = relay.cast %i {dtype = f32} : (tensor<3x37xi64>) -> tensor<3x37xf32>
    %6 = relay.cast %2 {dtype = i64} : (tensor<3x37xi1>) -> tensor<3x37xi64>"""
    types = ", ".join(t(e) for e in out)
    text = _text(f"""
  relay.func @main(%x: {t("f32")}, %i: {t("i64")}) -> tuple<{types}> {{{body}
    %r = relay.tuple(%0, %1, %2, %3, %4, %5, %6) : tuple<{types}>
    relay.return %r : tuple<{types}>
  }}""")
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((3, 37)) * 100).astype(np.float32)
    i = rng.integers(-300, 300, (3, 37)).astype(np.int64)
    i[0, :3] = 0
    want = [
        x.astype(np.int32),
        x.astype(np.float64),
        i != 0,
        (i != 0).astype(np.float32),
        i.astype(np.int8),
        i.astype(np.float32),
        (i != 0).astype(np.int64),
    ]
    for got, interpreted, expected in zip(
        hetero.compile(text)(x, i), run(parse_module(text), x, i), want, strict=True
    ):
        np.testing.assert_array_equal(interpreted, expected)
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("element, dtype", [("f32", np.float32), ("i32", np.int32)])
def test_comparisons_logic_and_where_match_numpy(element: str, dtype: type) -> None:
    """Every comparison (NaN compares false but with !=), the logical ops on
    their i1 results and where, broadcast, vectorized rows and a rest."""
    t, row = (lambda e: f"tensor<3x37x{e}>"), f"tensor<37x{element}>"
    names = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
    body = "".join(
        f"\n    %{n} = relay.{n} %x, %y : ({t(element)}, {row}) -> {t('i1')}"
        for n in names
    )
    text = _text(f"""
  relay.func @main(%x: {t(element)}, %y: {row}) -> tuple<{t("i1")}, {t(element)}, {t("i1")}> {{{body}
    %a = relay.logical_and %less, %not_equal : ({t("i1")}, {t("i1")}) -> {t("i1")}
    %o = relay.logical_or %a, %greater_equal : ({t("i1")}, {t("i1")}) -> {t("i1")}
    %n = relay.logical_not %o : {t("i1")}
    %w = relay.where %equal, %x, %y : ({t("i1")}, {t(element)}, {row}) -> {t(element)}
    %r = relay.tuple(%n, %w, %less_equal) : tuple<{t("i1")}, {t(element)}, {t("i1")}>
    relay.return %r : tuple<{t("i1")}, {t(element)}, {t("i1")}>
  }}""")
    rng = np.random.default_rng(7)
    x = rng.integers(-3, 3, (3, 37)).astype(dtype)
    y = rng.integers(-3, 3, 37).astype(dtype)
    if dtype == np.float32:
        x[0, :2], y[:2] = np.nan, [np.nan, 1.0]
    with np.errstate(invalid="ignore"):
        want = [
            ~(((x < y) & (x != y)) | (x >= y)),
            np.where(x == y, x, y),
            x <= y,
        ]
    for got, interpreted, expected in zip(
        hetero.compile(text)(x, y), run(parse_module(text), x, y), want, strict=True
    ):
        np.testing.assert_array_equal(interpreted, expected)
        np.testing.assert_array_equal(got, expected)


def test_floor_ceil_round_and_erf_match_the_definitions() -> None:
    """Vectorized rows and a rest; round takes halves to even (NumPy's
    rule), erf is Python's `math.erf`."""
    t = "tensor<2x37xf32>"
    ops = ("floor", "ceil", "round", "erf")
    body = "".join(f"\n    %{o} = relay.{o} %x : {t}" for o in ops)
    types = ", ".join([t] * len(ops))
    text = _text(f"""
  relay.func @main(%x: {t}) -> tuple<{types}> {{{body}
    %r = relay.tuple({", ".join(f"%{o}" for o in ops)}) : tuple<{types}>
    relay.return %r : tuple<{types}>
  }}""")
    x = (np.random.default_rng(8).standard_normal((2, 37)) * 3).astype(np.float32)
    x[0, :6] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.7]
    erf = np.array([math.erf(v) for v in x.ravel()], np.float32).reshape(x.shape)
    want = [np.floor(x), np.ceil(x), np.round(x), erf]
    assert want[2][0, :6].tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, -3.0]
    for got, interpreted, expected in zip(
        hetero.compile(text)(x), run(parse_module(text), x), want, strict=True
    ):
        np.testing.assert_allclose(interpreted, expected, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


def test_a_module_using_a_value_before_its_definition_is_a_diagnostic():
    """`hetero.compile` of a `ModuleOp` (not text, which the parser
    verifies) checks dominance first: an op moved after its user is a
    located error, not a crash in a later pass."""
    module = parse_module(
        "builtin.module {\n"
        "  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "    %0 = relay.exp %a : tensor<4xf32>\n"
        "    %1 = relay.negative %0 : tensor<4xf32>\n"
        "    relay.return %1 : tensor<4xf32>\n"
        "  }\n"
        "}\n"
    )
    main = next(iter(module.ops))
    exp, negative, _ = list(main.body.block.ops)
    exp.detach()
    main.body.block.insert_op_after(exp, negative)
    with pytest.raises(HeteroError, match="does not dominate this use"):
        hetero.compile(module)


def test_the_garbage_collector_is_paused_for_the_whole_compile(monkeypatch):
    """From its first step (the configuration) to its last, and enabled again
    after: a collection would go through the whole model, live all along."""
    import gc

    from hetero.dialects.target import config

    seen: list[bool] = []
    module_config = config.module_config

    def recording(*args, **kwargs):
        seen.append(gc.isenabled())
        return module_config(*args, **kwargs)

    monkeypatch.setattr(config, "module_config", recording)
    assert gc.isenabled()
    hetero.compile(CONSTANTS)
    assert seen and not any(seen)
    assert gc.isenabled()
