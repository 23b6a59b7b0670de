"""The NumPy reference interpreter (`interpreter/relay.py`), op by op.

Every expected value is computed here independently of the interpreter: by
explicit loop nests, hand-written numbers or direct formulas, never by calling
the interpreter's own kernels.  Programs are MLIR text in the syntax of
`docs/dialects/relay.md`, parsed with the real dialect.
"""

import itertools

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, TensorType, f32

from hetero.context import make_context, parse_module
from hetero.dialects.relay import AddOp, FuncOp, ReturnOp
from hetero.interpreter.relay import InterpreterError, evaluate_function, run, run_text

RNG = np.random.default_rng(20240611)
ELEMENT = {np.float16: "f16", np.float32: "f32", np.float64: "f64", np.bool_: "i1"}


def tensor(shape: tuple[int, ...], element: str = "f32") -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def type_of(a: np.ndarray) -> str:
    return tensor(a.shape, ELEMENT[a.dtype.type])


def rand(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def run_op(
    op: str, *inputs: np.ndarray, out: tuple[int, ...], attrs: str = ""
) -> np.ndarray:
    """Run `relay.<op>` on the inputs as the only op of `@main`."""
    params = ", ".join(f"%a{i}: {type_of(a)}" for i, a in enumerate(inputs))
    operands = ", ".join(f"%a{i}" for i in range(len(inputs)))
    result = tensor(out, ELEMENT[inputs[0].dtype.type])
    signature = f"({', '.join(type_of(a) for a in inputs)}) -> {result}"
    attr_dict = f" {{{attrs}}}" if attrs else ""
    text = f"""
relay.func @main({params}) -> {result} {{
  %r = relay.{op} {operands}{attr_dict} : {signature}
  relay.return %r : {result}
}}"""
    return run_text(text, *inputs)


def check(got: np.ndarray, expected: np.ndarray, dtype: type = np.float32) -> None:
    assert isinstance(got, np.ndarray) and got.dtype == dtype
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


# -- elementwise -----------------------------------------------------------------------


def test_add_broadcasts_like_numpy():
    a, b = rand(2, 1, 3), rand(4, 1)
    expected = np.empty((2, 4, 3), np.float32)
    for i, j, k in itertools.product(range(2), range(4), range(3)):
        expected[i, j, k] = a[i, 0, k] + b[j, 0]
    check(run_op("add", a, b, out=(2, 4, 3)), expected)


@pytest.mark.parametrize(
    "op, formula",
    [
        ("subtract", lambda a, b: a - b),
        ("multiply", lambda a, b: a * b),
        ("divide", lambda a, b: a / b),
        ("maximum", lambda a, b: np.where(a > b, a, b)),
        ("minimum", lambda a, b: np.where(a < b, a, b)),
    ],
)
def test_binary_ops(op, formula):
    a, b = rand(3, 4), rand(4) + 3
    check(run_op(op, a, b, out=(3, 4)), formula(a.astype(np.float64), b))


@pytest.mark.parametrize(
    "op, formula",
    [
        ("negative", lambda x: -x),
        ("exp", lambda x: np.e**x),
        ("tanh", lambda x: (np.e**x - np.e**-x) / (np.e**x + np.e**-x)),
        ("sigmoid", lambda x: 1 / (1 + np.e**-x)),
        ("relu", lambda x: np.where(x > 0, x, 0.0)),
    ],
)
def test_unary_ops(op, formula):
    x = rand(2, 5)
    check(run_op(op, x, out=(2, 5)), formula(x.astype(np.float64)))


def test_sigmoid_saturates_without_overflow():
    x = np.array([-1000.0, 0.0, 1000.0], np.float32)
    check(run_op("sigmoid", x, out=(3,)), np.array([0.0, 0.5, 1.0]))


def test_clip():
    x = np.array([-2.0, -0.5, 0.25, 7.0], np.float32)
    got = run_op("clip", x, out=(4,), attrs="a_min = -1.0 : f64, a_max = 6.0 : f64")
    check(got, np.array([-1.0, -0.5, 0.25, 6.0]))


# -- dense and matmul ------------------------------------------------------------------


def test_dense_is_x_times_w_transposed():
    x, w = rand(3, 4), rand(5, 4)
    expected = np.array(
        [[sum(x[m, k] * w[n, k] for k in range(4)) for n in range(5)] for m in range(3)]
    )
    check(run_op("nn.dense", x, w, out=(3, 5)), expected)


def test_matmul_broadcasts_batch_dims():
    a, b = rand(2, 3, 4), rand(4, 5)
    expected = np.stack([a[i].astype(np.float64) @ b for i in range(2)])
    check(run_op("matmul", a, b, out=(2, 3, 5)), expected)


# -- conv2d ----------------------------------------------------------------------------


def conv2d_loops(x, w, strides, padding, dilation, groups):
    """The definition, one multiply-add at a time."""
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    (sh, sw), (pt, pl, pb, pr), (dh, dw) = strides, padding, dilation
    oh = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + pl + pr - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    for b, oc, i, j in itertools.product(range(n), range(o), range(oh), range(ow)):
        g = oc // (o // groups)
        for ic, p, q in itertools.product(range(cg), range(kh), range(kw)):
            y, z = i * sh + p * dh - pt, j * sw + q * dw - pl
            if 0 <= y < h and 0 <= z < wd:
                out[b, oc, i, j] += x[b, g * cg + ic, y, z] * w[oc, ic, p, q]
    return out


@pytest.mark.parametrize(
    "x_shape, w_shape, strides, padding, dilation, groups",
    [
        ((1, 2, 5, 5), (3, 2, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
        ((2, 3, 7, 6), (4, 3, 3, 2), (2, 1), (1, 0, 2, 1), (1, 1), 1),
        ((1, 2, 8, 8), (2, 2, 3, 3), (1, 2), (2, 2, 2, 2), (2, 3), 1),
        ((2, 4, 6, 5), (6, 2, 2, 3), (1, 1), (1, 1, 0, 0), (1, 1), 2),
        ((1, 3, 5, 5), (3, 1, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 3),
    ],
    ids=["plain", "strided-asymmetric-padding", "dilated", "grouped", "depthwise"],
)
def test_conv2d_matches_loop_nest(x_shape, w_shape, strides, padding, dilation, groups):
    x, w = rand(*x_shape), rand(*w_shape)
    expected = conv2d_loops(x, w, strides, padding, dilation, groups)
    attrs = (
        f"strides = array<i64: {strides[0]}, {strides[1]}>, "
        f"padding = array<i64: {', '.join(map(str, padding))}>, "
        f"dilation = array<i64: {dilation[0]}, {dilation[1]}>, groups = {groups} : i64"
    )
    check(run_op("nn.conv2d", x, w, out=expected.shape, attrs=attrs), expected)


def test_conv2d_defaults():
    x, w = rand(1, 1, 3, 3), np.ones((1, 1, 2, 2), np.float32)
    expected = np.array(
        [[x[0, 0, i : i + 2, j : j + 2].sum() for j in range(2)] for i in range(2)]
    )
    check(run_op("nn.conv2d", x, w, out=(1, 1, 2, 2)), expected[None, None])


# -- pooling ---------------------------------------------------------------------------

GRID = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
"""[[0 1 2 3] [4 5 6 7] [8 9 10 11] [12 13 14 15]]"""


def window(size: int, stride: int = 1, pad: int = 0, extra: str = "") -> str:
    """Attributes of a square pooling window, plus `extra` ones."""
    attrs = [f"pool_size = array<i64: {size}, {size}>"]
    attrs.append(f"strides = array<i64: {stride}, {stride}>")
    attrs.append(f"padding = array<i64: {pad}, {pad}, {pad}, {pad}>")
    return ", ".join(attrs + ([extra] if extra else []))


CEIL = "ceil_mode = true"


@pytest.mark.parametrize(
    "op, attrs, expected",
    [
        ("max", window(2, 2), [[5, 7], [13, 15]]),
        ("max", window(3, 2), [[10]]),
        ("max", window(3, 2, extra=CEIL), [[10, 11], [14, 15]]),
        ("max", window(2, extra="dilation = array<i64: 2, 2>"), [[10, 11], [14, 15]]),
        ("avg", window(3, 2, 1), [[10 / 4, 24 / 6], [51 / 6, 90 / 9]]),
        (
            "avg",
            window(3, 2, 1, "count_include_pad = true"),
            [[10 / 9, 24 / 9], [51 / 9, 90 / 9]],
        ),
        ("avg", window(2, 2), [[2.5, 4.5], [10.5, 12.5]]),
        ("avg", window(3, 2, extra=CEIL), [[5, 6.5], [11, 12.5]]),
    ],
    ids=[
        "max",
        "max-floor",
        "max-ceil",
        "max-dilated",
        "avg-pad",
        "avg-pad-counted",
        "avg",
        "avg-ceil",
    ],
)
def test_pool2d_on_a_4x4_grid(op, attrs, expected):
    expected = np.array(expected, np.float64)[None, None]
    check(run_op(f"nn.{op}_pool2d", GRID, out=expected.shape, attrs=attrs), expected)


def test_max_pool_pads_with_minus_infinity():
    x = GRID - 20  # all negative: zero padding would win every border window
    expected = np.array([[-20, -18, -17], [-12, -10, -9], [-8, -6, -5]])[None, None]
    check(run_op("nn.max_pool2d", x, out=(1, 1, 3, 3), attrs=window(2, 2, 1)), expected)


def test_global_avg_pool2d():
    x = rand(2, 3, 4, 5)
    expected = np.array(
        [
            [[[x[n, c].astype(np.float64).sum() / 20]] for c in range(3)]
            for n in range(2)
        ]
    )
    check(run_op("nn.global_avg_pool2d", x, out=(2, 3, 1, 1)), expected)


# -- normalisation ---------------------------------------------------------------------


def test_softmax_rows_sum_to_one_and_match_the_formula():
    x = rand(3, 5)
    got = run_op("nn.softmax", x, out=(3, 5))
    e = np.e ** x.astype(np.float64)
    check(got, e / e.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(got.sum(axis=1), np.ones(3), rtol=1e-6)


def test_softmax_along_axis_is_stable_for_large_inputs():
    x = np.array([[1000.0, 0.0], [999.0, 1.0]], np.float32)
    got = run_op("nn.softmax", x, out=(2, 2), attrs="axis = 0 : i64")
    s = 1 / (1 + np.e**-1)
    check(got, np.array([[s, 1 - s], [1 - s, s]]))


def test_bias_add_along_axis():
    x, b = rand(2, 3, 4), rand(3)
    check(run_op("nn.bias_add", x, b, out=(2, 3, 4)), x + b[None, :, None])
    b4 = rand(4)
    got = run_op("nn.bias_add", x, b4, out=(2, 3, 4), attrs="axis = -1 : i64")
    check(got, x + b4[None, None, :])


def test_batch_norm_inference_formula():
    x = rand(2, 3, 2, 2)
    gamma, beta, mean = rand(3), rand(3), rand(3)
    var = np.abs(rand(3)) + 0.1
    expected = np.empty(x.shape)
    for c in range(3):
        expected[:, c] = (x[:, c] - mean[c]) / np.sqrt(var[c] + 1e-3) * gamma[c] + beta[
            c
        ]
    got = run_op(
        "nn.batch_norm",
        x,
        gamma,
        beta,
        mean,
        var,
        out=x.shape,
        attrs="epsilon = 1.0e-03 : f64",
    )
    check(got, expected)


def test_batch_norm_default_epsilon_and_last_axis():
    x, ones, zeros = rand(4, 2), np.ones(2, np.float32), np.zeros(2, np.float32)
    got = run_op(
        "nn.batch_norm", x, ones, zeros, zeros, ones, out=(4, 2), attrs="axis = 1 : i64"
    )
    check(got, x / np.sqrt(1 + 1e-5))


# -- shapes ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "newshape, out",
    [
        ("0, -1", (2, 12)),
        ("-1, 0, 2", (4, 3, 2)),
        ("0, 2, -1", (2, 2, 6)),
        ("24", (24,)),
    ],
)
def test_reshape_zero_copies_and_minus_one_infers(newshape, out):
    x = rand(2, 3, 4)
    got = run_op("reshape", x, out=out, attrs=f"newshape = array<i64: {newshape}>")
    check(got, x.flatten().reshape(out))


def test_reshape_like_takes_the_shape_of_its_second_operand():
    x, like = rand(2, 3, 4), rand(4, 1, 6)
    check(run_op("reshape_like", x, like, out=(4, 1, 6)), x.reshape(4, 1, 6))
    rows, input_ = rand(6, 5), rand(2, 3, 8)  # a dense's rows, like its input
    got = run_op("reshape_like", rows, input_, out=(2, 3, 5), attrs="keep = 1")
    check(got, rows.reshape(2, 3, 5))


def test_arange_like_counts_from_start_by_step_along_its_axis():
    x = rand(2, 5)
    got = run_op(
        "arange_like", x, out=(5,), attrs="axis = 1, start = 2, step = 3, dtype = f32"
    )
    check(got, np.array([2, 5, 8, 11, 14], np.float32))


def test_transpose_default_reverses_axes():
    x = rand(2, 3, 4)
    expected = np.array(
        [[[x[i, j, k] for i in range(2)] for j in range(3)] for k in range(4)]
    )
    check(run_op("transpose", x, out=(4, 3, 2)), expected)
    got = run_op("transpose", x, out=(3, 2, 4), attrs="axes = array<i64: 1, 0, 2>")
    check(got, np.array([[x[i, j] for i in range(2)] for j in range(3)]))


@pytest.mark.parametrize(
    "axis, out", [(None, (2, 12)), (2, (6, 4)), (0, (1, 24)), (-1, (6, 4))]
)
def test_flatten(axis, out):
    x = rand(2, 3, 4)
    attrs = "" if axis is None else f"axis = {axis} : i64"
    check(run_op("flatten", x, out=out, attrs=attrs), x.flatten().reshape(out))


def test_concatenate():
    a, b, c = rand(2, 1), rand(2, 3), rand(2, 2)
    got = run_op("concatenate", a, b, c, out=(2, 6), attrs="axis = 1 : i64")
    check(got, np.array([list(a[i]) + list(b[i]) + list(c[i]) for i in range(2)]))
    check(run_op("concatenate", a, a, out=(4, 1)), np.array([a[0], a[1], a[0], a[1]]))


def test_squeeze():
    x = rand(1, 3, 1, 2)
    check(run_op("squeeze", x, out=(3, 2)), x[0, :, 0, :])
    check(
        run_op("squeeze", x, out=(1, 3, 2), attrs="axis = array<i64: 2>"), x[:, :, 0, :]
    )


def test_squeeze_keeps_a_dynamic_dim_that_is_one_at_run_time():
    text = """
relay.func @main(%x: tensor<?x1xf32>) -> tensor<?xf32> {
  %r = relay.squeeze %x : (tensor<?x1xf32>) -> tensor<?xf32>
  relay.return %r : tensor<?xf32>
}"""
    x = rand(1, 1)
    check(run_text(text, x), x[:, 0])


@pytest.mark.parametrize(
    "axis, num, out",
    [(1, 2, (2, 1, 1, 3)), (0, 1, (1, 2, 3)), (-1, 1, (2, 3, 1)), (2, None, (2, 3, 1))],
)
def test_expand_dims(axis, num, out):
    x = rand(2, 3)
    attrs = f"axis = {axis} : i64" + (
        "" if num is None else f", num_newaxis = {num} : i64"
    )
    check(run_op("expand_dims", x, out=out, attrs=attrs), x.flatten().reshape(out))


# -- element types ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_results_keep_the_element_type(dtype):
    x, w = rand(1, 2, 4, 4, dtype=dtype), rand(3, 2, 3, 3, dtype=dtype)
    expected = conv2d_loops(
        x.astype(np.float64), w.astype(np.float64), (1, 1), (0,) * 4, (1, 1), 1
    )
    got = run_op("nn.conv2d", x, w, out=(1, 3, 2, 2))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, expected, rtol=1e-2, atol=1e-2)
    assert run_op("nn.softmax", x, out=x.shape).dtype == dtype
    assert run_op("sigmoid", x, out=x.shape).dtype == dtype


# -- constants, tuples, devices --------------------------------------------------------


def test_dense_and_splat_constants():
    types = "tensor<2x2xf32>, tensor<3xf32>, tensor<i1>, tensor<2xi1>, "
    types += "tensor<3xi32>, tensor<f16>"
    text = f"""
relay.func @main() -> tuple<{types}> {{
  %a = relay.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = relay.constant dense<0.5> : tensor<3xf32>
  %c = relay.constant dense<true> : tensor<i1>
  %d = relay.constant dense<[false, true]> : tensor<2xi1>
  %e = relay.constant dense<[-1, 0, 7]> : tensor<3xi32>
  %f = relay.constant dense<-2.5> : tensor<f16>
  %t = relay.tuple(%a, %b, %c, %d, %e, %f) : tuple<{types}>
  relay.return %t : tuple<{types}>
}}"""
    a, b, c, d, e, f = run_text(text)
    check(a, np.array([[1.0, 2.0], [3.0, 4.0]]))
    check(b, np.array([0.5, 0.5, 0.5]))
    assert c.dtype == np.bool_ and c.shape == () and bool(c)
    assert d.dtype == np.bool_ and d.tolist() == [False, True]
    assert e.dtype == np.int32 and e.tolist() == [-1, 0, 7]
    assert f.dtype == np.float16 and f.shape == () and float(f) == -2.5


def test_tuples_nest_and_project():
    text = """
relay.func @main(%x: tensor<2xf32>, %y: tensor<3xf32>)
    -> tuple<tensor<3xf32>, tuple<tensor<2xf32>, tuple<>>> {
  %e = relay.tuple() : tuple<>
  %t = relay.tuple(%x, %y) : tuple<tensor<2xf32>, tensor<3xf32>>
  %y2 = relay.get_item %t[1] : tuple<tensor<2xf32>, tensor<3xf32>> -> tensor<3xf32>
  %x2 = relay.get_item %t[0] : tuple<tensor<2xf32>, tensor<3xf32>> -> tensor<2xf32>
  %inner = relay.tuple(%x2, %e) : tuple<tensor<2xf32>, tuple<>>
  %r = relay.tuple(%y2, %inner) : tuple<tensor<3xf32>, tuple<tensor<2xf32>, tuple<>>>
  relay.return %r : tuple<tensor<3xf32>, tuple<tensor<2xf32>, tuple<>>>
}"""
    x, y = rand(2), rand(3)
    got = run_text(text, x, y)
    assert type(got) is tuple and type(got[1]) is tuple and got[1][1] == ()
    check(got[0], y)
    check(got[1][0], x)


def test_on_device_and_device_copy_do_not_change_values():
    text = """
relay.func @main(%x: tensor<2x2xf32> {vdevice = #target.vdevice<cpu>})
    -> (tensor<2x2xf32> {vdevice = #target.vdevice<cpu>}) {
  %a = relay.on_device %x to #target.vdevice<cuda:0> : tensor<2x2xf32>
  %b = relay.on_device %a to #target.vdevice<cuda:0> fixed : tensor<2x2xf32>
  %c = relay.on_device %b free : tensor<2x2xf32>
  %d = relay.device_copy %c from #target.vdevice<cuda:0> to #target.vdevice<cpu>
      : tensor<2x2xf32>
  %e = relay.multiply %d, %x {vdevice = #target.vdevice<cpu>} : tensor<2x2xf32>
  relay.return %e : tensor<2x2xf32>
}"""
    x = rand(2, 2)
    check(run_text(text, x), x.astype(np.float64) ** 2)


# -- functions, closures, recursion ----------------------------------------------------

T2 = "tensor<2xf32>"


def test_global_calls_and_a_chosen_entry():
    text = f"""
relay.func private @double(%a: {T2}) -> {T2}
    attributes {{Primitive, Compiler = "blas"}} {{
  %r = relay.add %a, %a : {T2}
  relay.return %r : {T2}
}}
relay.func @main(%x: {T2}) -> {T2} {{
  %d = relay.call @double(%x) : ({T2}) -> {T2}
  %r = relay.call @double(%d) : ({T2}) -> {T2}
  relay.return %r : {T2}
}}"""
    module = parse_module(text)
    x = rand(2)
    check(run(module, x), 4 * x.astype(np.float64))
    check(run(module, x, entry="double"), 2 * x.astype(np.float64))
    check(evaluate_function(module, "double", [x]), 2 * x.astype(np.float64))


def test_closure_captures_an_outer_value():
    text = f"""
relay.func @main(%x: {T2}, %y: {T2}) -> {T2} {{
  %k = relay.multiply %y, %y : {T2}
  %f = relay.fn (%a: {T2}) -> {T2} {{
    %s = relay.subtract %a, %k : {T2}
    relay.return %s : {T2}
  }}
  %r1 = relay.call_indirect %f(%x) : ({T2}) -> {T2}
  %r2 = relay.call_indirect %f(%r1) : ({T2}) -> {T2}
  relay.return %r2 : {T2}
}}"""
    x, y = rand(2), rand(2)
    check(run_text(text, x, y), x - 2 * y.astype(np.float64) ** 2)


def test_closure_body_branches_on_captured_values():
    text = f"""
relay.func @main(%c: tensor<i1>, %x: {T2}, %y: {T2}) -> {T2} {{
  %f = relay.fn (%a: {T2}) -> {T2} attributes {{Composite = "pick"}} {{
    %r = relay.if %c : tensor<i1> -> {T2} {{
      %s = relay.add %a, %y : {T2}
      relay.yield %s : {T2}
    }} else {{
      relay.yield %y : {T2}
    }}
    relay.return %r : {T2}
  }}
  %r = relay.call_indirect %f(%x) : ({T2}) -> {T2}
  relay.return %r : {T2}
}}"""
    x, y = rand(2), rand(2)
    check(run_text(text, np.array(True), x, y), x + y)
    check(run_text(text, np.array(False), x, y), y)


def test_closures_are_first_class_values():
    """A closure made by one call is returned, passed to a global and applied there."""
    fty = f"({T2}) -> {T2}"
    text = f"""
relay.func private @adder(%k: {T2}) -> ({fty}) {{
  %f = relay.fn (%a: {T2}) -> {T2} {{
    %s = relay.add %a, %k : {T2}
    relay.return %s : {T2}
  }}
  relay.return %f : {fty}
}}
relay.func private @twice(%f: {fty}, %x: {T2}) -> {T2} {{
  %a = relay.call_indirect %f(%x) : ({T2}) -> {T2}
  %b = relay.call_indirect %f(%a) : ({T2}) -> {T2}
  relay.return %b : {T2}
}}
relay.func @main(%x: {T2}, %k1: {T2}, %k2: {T2}) -> {T2} {{
  %f1 = relay.call @adder(%k1) : ({T2}) -> ({fty})
  %f2 = relay.call @adder(%k2) : ({T2}) -> ({fty})
  %a = relay.call @twice(%f1, %x) : ({fty}, {T2}) -> {T2}
  %b = relay.call @twice(%f2, %a) : ({fty}, {T2}) -> {T2}
  relay.return %b : {T2}
}}"""
    x, k1, k2 = rand(2), rand(2), rand(2)
    check(run_text(text, x, k1, k2), x + 2.0 * k1 + 2.0 * k2)


FLAGS = "tuple<tensor<i1>, tensor<i1>, tensor<i1>>"
COUNTDOWN = f"""
relay.func private @countdown(%flags: {FLAGS}, %x: {T2}) -> {T2} {{
  %go = relay.get_item %flags[0] : {FLAGS} -> tensor<i1>
  %r = relay.if %go : tensor<i1> -> {T2} {{
    %one = relay.constant dense<1.0> : {T2}
    %next = relay.add %x, %one : {T2}
    %f1 = relay.get_item %flags[1] : {FLAGS} -> tensor<i1>
    %f2 = relay.get_item %flags[2] : {FLAGS} -> tensor<i1>
    %stop = relay.constant dense<false> : tensor<i1>
    %rest = relay.tuple(%f1, %f2, %stop) : {FLAGS}
    %rec = relay.call @countdown(%rest, %next) : ({FLAGS}, {T2}) -> {T2}
    relay.yield %rec : {T2}
  }} else {{
    relay.yield %x : {T2}
  }}
  relay.return %r : {T2}
}}
relay.func @main(%a: tensor<i1>, %b: tensor<i1>, %c: tensor<i1>, %x: {T2}) -> {T2} {{
  %flags = relay.tuple(%a, %b, %c) : {FLAGS}
  %r = relay.call @countdown(%flags, %x) : ({FLAGS}, {T2}) -> {T2}
  relay.return %r : {T2}
}}"""


@pytest.mark.parametrize(
    "flags, steps",
    [
        ((True, True, True), 3),
        ((True, True, False), 2),
        ((True, False, True), 1),
        ((False, True, True), 0),
    ],
)
def test_recursion_through_if_counts_down(flags, steps):
    x = rand(2)
    got = run_text(COUNTDOWN, *(np.array(f) for f in flags), x)
    check(got, x + float(steps))


def test_endless_recursion_is_an_interpreter_error():
    text = f"""
relay.func @main(%c: tensor<i1>, %x: {T2}) -> {T2} {{
  %r = relay.if %c : tensor<i1> -> {T2} {{
    %rec = relay.call @main(%c, %x) : (tensor<i1>, {T2}) -> {T2}
    relay.yield %rec : {T2}
  }} else {{
    relay.yield %x : {T2}
  }}
  relay.return %r : {T2}
}}"""
    with pytest.raises(InterpreterError, match="too deeply"):
        run_text(text, np.array(True), rand(2))


def test_ten_thousand_chained_ops_need_no_recursion():
    """Built with the dialect's Python API (parsing 10,000 lines is slow)."""
    t = TensorType(f32, [2])
    func = FuncOp("main", [t], t)
    block = func.body.block
    x = v = block.args[0]
    for _ in range(10_000):
        add = AddOp(v, x)
        block.add_op(add)
        v = add.result
    block.add_op(ReturnOp(v))
    x0 = np.array([1.0, -0.5], np.float32)
    check(run(ModuleOp([func]), x0), x0 * 10_001.0)


# -- errors ----------------------------------------------------------------------------

DYNAMIC = """
relay.func @main(%x: tensor<?x3xf32>, %y: tensor<3xf32>) -> tensor<?x3xf32> {
  %r = relay.add %x, %y : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  relay.return %r : tensor<?x3xf32>
}"""


def test_dynamic_dims_accept_any_size():
    y = rand(3)
    for rows in (1, 4):
        x = rand(rows, 3)
        check(run_text(DYNAMIC, x, y), x + y)


@pytest.mark.parametrize(
    "inputs, message",
    [
        ((rand(2, 3),), r"@main takes 2 input\(s\), 1 given"),
        ((rand(2, 3), rand(3), rand(3)), r"takes 2 input\(s\), 3 given"),
        (
            (rand(2, 4), rand(3)),
            r"parameter #0 \(%x\) of @main: expected tensor<\?x3xf32>",
        ),
        ((rand(2, 3), rand(1, 3)), r"parameter #1 \(%y\).*shape \(1, 3\)"),
        ((rand(2, 3), rand(3, dtype=np.float64)), r"parameter #1 \(%y\).*float64"),
        ((rand(2, 3), [1.0, 2.0, 3.0]), r"parameter #1 \(%y\).*got list"),
    ],
    ids=["too-few", "too-many", "static-dim", "rank", "dtype", "not-an-array"],
)
def test_bad_inputs_name_the_parameter(inputs, message):
    with pytest.raises(InterpreterError, match=message):
        run_text(DYNAMIC, *inputs)


def test_missing_entry_function():
    with pytest.raises(InterpreterError, match="no relay.func @nope"):
        run_text(DYNAMIC, rand(1, 3), rand(3), entry="nope")


def test_unknown_op_is_named():
    text = f"""
relay.func @main(%x: {T2}) -> {T2} {{
  %r = "test.op"(%x) : ({T2}) -> {T2}
  relay.return %r : {T2}
}}"""
    module = parse_module(text, ctx=make_context())
    with pytest.raises(InterpreterError, match="does not know the op 'test.op'"):
        run(module, rand(2))


def test_shape_of_gives_the_runtime_shape():
    text = """
    relay.func @main(%x: tensor<?x3xf32>) -> tensor<2xi64> {
      %s = relay.shape_of %x : (tensor<?x3xf32>) -> tensor<2xi64>
      relay.return %s : tensor<2xi64>
    }
    """
    got = run_text(text, np.zeros((5, 3), np.float32))
    np.testing.assert_array_equal(got, np.array([5, 3], np.int64))
    assert got.dtype == np.int64
