"""The ONNX frontend against the node tests the `onnx` wheel ships.

Every `pytorch-converted` and `pytorch-operator` node test is imported and
run twice: by the reference interpreter, and compiled by `hetero.compile`;
both must match the shipped outputs.  Tests whose operators are out of scope
are strict xfails with the reason, so one that starts working is noticed.
The counts (pytest's summary) are the issue's pass counts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper

import hetero
from hetero.frontends.onnx import from_onnx
from hetero.frontends.onnx_models import DATA
from hetero.interpreter.relay import run
from hetero.utils.diagnostics import HeteroError

RTOL, ATOL = 1e-4, 1e-5

OUT_OF_SCOPE: dict[str, str] = {}
"""Node test → why it cannot be imported."""


def _node_tests() -> list[str]:
    return [
        os.path.join(suite, name)
        for suite in ("pytorch-converted", "pytorch-operator")
        for name in sorted(os.listdir(os.path.join(DATA, suite)))
    ]


def _load_case(test: str) -> tuple[str, list[np.ndarray], list[np.ndarray]]:
    """The model path, inputs and expected outputs of test_data_set_0."""
    directory = os.path.join(DATA, test)
    data = os.path.join(directory, "test_data_set_0")

    def tensors(prefix: str) -> list[np.ndarray]:
        names = sorted(
            (f for f in os.listdir(data) if f.startswith(prefix)),
            key=lambda f: int(f.split("_")[1].split(".")[0]),
        )
        return [
            numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f)))
            for f in names
        ]

    return os.path.join(directory, "model.onnx"), tensors("input_"), tensors("output_")


def _check(results: object, expected: list[np.ndarray]) -> None:
    values = results if isinstance(results, tuple) else (results,)
    assert len(values) == len(expected)
    for value, want in zip(values, expected):
        assert value.shape == want.shape
        np.testing.assert_allclose(value, want, rtol=RTOL, atol=ATOL)


def _param(test: str, reasons: dict[str, str]) -> object:
    name = os.path.basename(test)
    marks = []
    if name in reasons:
        marks.append(
            pytest.mark.xfail(raises=HeteroError, strict=True, reason=reasons[name])
        )
    return pytest.param(test, id=name, marks=marks)


@pytest.mark.parametrize("test", [_param(t, OUT_OF_SCOPE) for t in _node_tests()])
def test_node_interpreted(test: str) -> None:
    path, inputs, expected = _load_case(test)
    module = from_onnx(path)
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore", RuntimeWarning
        )  # sqrt/pow of negatives: NaN as expected
        _check(run(module, *inputs), expected)


@pytest.mark.parametrize("test", [_param(t, OUT_OF_SCOPE) for t in _node_tests()])
def test_node_compiled(test: str) -> None:
    path, inputs, expected = _load_case(test)
    _check(hetero.compile(from_onnx(path))(*inputs), expected)


# ----------------------------------------------------------------------------
# Opset differences and converters, on small models built here
# ----------------------------------------------------------------------------


def _model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, tuple[int, ...]],
    output: str,
    opset: int,
    initializers: dict[str, np.ndarray] | None = None,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, s)
            for n, s in inputs.items()
        ],
        [helper.make_tensor_value_info(output, onnx.TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in (initializers or {}).items()],
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8
    )


def _reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """onnxruntime's result; without it, the onnx package's reference
    evaluator (which gets opset < 13 Softmax wrong: it skips the 2-D coercion)."""
    try:
        import onnxruntime
    except ImportError:
        from onnx.reference import ReferenceEvaluator

        if any(n.op_type == "Softmax" for n in model.graph.node):
            pytest.skip("the onnx reference evaluator implements only opset-13 Softmax")
        return ReferenceEvaluator(model).run(None, feeds)[0]
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return session.run(None, feeds)[0]


def _with_int_input(
    model: onnx.ModelProto, name: str, shape: tuple[int, ...]
) -> onnx.ModelProto:
    """`model` with one more graph input, `int64` (an embedding's indices)."""
    model.graph.input.append(
        helper.make_tensor_value_info(name, onnx.TensorProto.INT64, shape)
    )
    return model


def _i64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


_RNG = np.random.default_rng(0)
_X = _RNG.standard_normal((2, 4, 6, 6)).astype(np.float32)
_W = _RNG.standard_normal((4, 2, 3, 3)).astype(np.float32)
_M = _RNG.standard_normal((3, 5)).astype(np.float32)


def _grouped_conv(
    weights: dict[str, np.ndarray], **attributes: object
) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A case: `Conv` (group 2, opset 13) of `_X` with `weights` as initializers."""
    node = helper.make_node("Conv", ["x", *weights], ["y"], group=2, **attributes)
    return _model([node], {"x": _X.shape}, "y", 13, weights), {"x": _X}


CASES: dict[str, tuple[onnx.ModelProto, dict[str, np.ndarray]]] = {
    "squeeze_axes_attribute_opset11": (
        _model(
            [
                helper.make_node("Unsqueeze", ["x"], ["u"], axes=[0, 3]),
                helper.make_node("Squeeze", ["u"], ["y"], axes=[3]),
            ],
            {"x": (3, 5)},
            "y",
            11,
        ),
        {"x": _M},
    ),
    "squeeze_axes_input_opset13": (
        _model(
            [
                helper.make_node("Unsqueeze", ["x", "a"], ["u"]),
                helper.make_node("Squeeze", ["u", "b"], ["y"]),
            ],
            {"x": (3, 5)},
            "y",
            13,
            {"a": _i64(0, -1), "b": _i64(-1)},
        ),
        {"x": _M},
    ),
    "clip_attributes_opset6": (
        _model(
            [helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.25)],
            {"x": (3, 5)},
            "y",
            6,
        ),
        {"x": _M},
    ),
    "clip_inputs_opset11": (
        _model(
            [helper.make_node("Clip", ["x", "lo", ""], ["y"])],
            {"x": (3, 5)},
            "y",
            11,
            {"lo": np.array(-0.5, np.float32)},
        ),
        {"x": _M},
    ),
    "pad_attributes_opset2": (
        _model(
            [
                helper.make_node(
                    "Pad", ["x"], ["y"], pads=[0, 0, 1, 2, 0, 0, 2, 1], value=1.5
                )
            ],
            {"x": _X.shape},
            "y",
            2,
        ),
        {"x": _X},
    ),
    "pad_inputs_reflect_opset11": (
        _model(
            [helper.make_node("Pad", ["x", "p"], ["y"], mode="reflect")],
            {"x": _X.shape},
            "y",
            11,
            {"p": _i64(0, 0, 2, 1, 0, 0, 1, 3)},
        ),
        {"x": _X},
    ),
    "pad_axes_edge_opset18": (
        _model(
            [helper.make_node("Pad", ["x", "p", "", "a"], ["y"], mode="edge")],
            {"x": _X.shape},
            "y",
            18,
            {"p": _i64(1, 2, 3, 0), "a": _i64(2, -1)},
        ),
        {"x": _X},
    ),
    "softmax_coerced_2d_opset11": (
        _model(
            [helper.make_node("Softmax", ["x"], ["y"], axis=1)],
            {"x": _X.shape},
            "y",
            11,
        ),
        {"x": _X},
    ),
    "softmax_axis_opset13": (
        _model(
            [helper.make_node("Softmax", ["x"], ["y"], axis=1)],
            {"x": _X.shape},
            "y",
            13,
        ),
        {"x": _X},
    ),
    "gemm_alpha_beta_trans": (
        _model(
            [
                helper.make_node(
                    "Gemm",
                    ["a", "b", "c"],
                    ["y"],
                    alpha=0.5,
                    beta=2.0,
                    transA=1,
                    transB=1,
                )
            ],
            {"a": (5, 3)},
            "y",
            13,
            {
                "b": _RNG.standard_normal((4, 5)).astype(np.float32),
                "c": _RNG.standard_normal((4,)).astype(np.float32),
            },
        ),
        {"a": _M.T.copy()},
    ),
    "matmul_batched_and_vector": (
        _model(
            [helper.make_node("MatMul", ["x", "v"], ["y"])],
            {"x": (2, 3, 5)},
            "y",
            13,
            {"v": _RNG.standard_normal((5,)).astype(np.float32)},
        ),
        {"x": _RNG.standard_normal((2, 3, 5)).astype(np.float32)},
    ),
    "conv_same_upper_strided": _grouped_conv(
        {"w": _W}, auto_pad="SAME_UPPER", strides=[2, 2]
    ),
    "conv_same_lower_strided": _grouped_conv(
        {"w": _W}, auto_pad="SAME_LOWER", strides=[2, 2]
    ),
    "conv_pads_dilated_bias": _grouped_conv(
        {"w": _W, "b": np.arange(4, dtype=np.float32)},
        pads=[2, 1, 0, 1],
        dilations=[2, 1],
    ),
    "avgpool_count_include_pad": (
        _model(
            [
                helper.make_node(
                    "AveragePool",
                    ["x"],
                    ["y"],
                    kernel_shape=[3, 3],
                    pads=[1, 1, 1, 1],
                    strides=[2, 2],
                    count_include_pad=1,
                )
            ],
            {"x": _X.shape},
            "y",
            13,
        ),
        {"x": _X},
    ),
    "maxpool_same_upper": (
        _model(
            [
                helper.make_node(
                    "MaxPool",
                    ["x"],
                    ["y"],
                    kernel_shape=[2, 2],
                    auto_pad="SAME_UPPER",
                    strides=[2, 2],
                )
            ],
            {"x": (2, 4, 5, 5)},
            "y",
            13,
        ),
        {"x": _RNG.standard_normal((2, 4, 5, 5)).astype(np.float32)},
    ),
    "lrn_batchnorm_dropout": (
        _model(
            [
                helper.make_node(
                    "LRN", ["x"], ["l"], size=3, alpha=0.01, beta=0.6, bias=1.5
                ),
                helper.make_node(
                    "BatchNormalization", ["l", "s", "b", "m", "v"], ["n"], epsilon=1e-3
                ),
                helper.make_node("Dropout", ["n"], ["y"]),
            ],
            {"x": _X.shape},
            "y",
            13,
            {
                "s": np.full(4, 1.5, np.float32),
                "b": np.arange(4, dtype=np.float32),
                "m": np.full(4, 0.1, np.float32),
                "v": np.linspace(0.5, 2, 4).astype(np.float32),
            },
        ),
        {"x": _X},
    ),
    "shape_gather_concat_reshape_folded": (
        _model(
            [
                helper.make_node("Shape", ["x"], ["s"]),
                helper.make_node("Gather", ["s", "i"], ["n"], axis=0),
                helper.make_node("Unsqueeze", ["n", "a"], ["n1"]),
                helper.make_node("Concat", ["n1", "rest"], ["shape"], axis=0),
                helper.make_node("Reshape", ["x", "shape"], ["y"]),
            ],
            {"x": _X.shape},
            "y",
            13,
            {"i": np.array(0, np.int64), "a": _i64(0), "rest": _i64(-1)},
        ),
        {"x": _X},
    ),
    "constant_of_shape_sum_flatten_transpose": (
        _model(
            [
                helper.make_node(
                    "ConstantOfShape",
                    ["shape"],
                    ["c"],
                    value=numpy_helper.from_array(np.array([0.5], np.float32)),
                ),
                helper.make_node("Constant", [], ["k"], value_float=2.0),
                helper.make_node("Sum", ["x", "c", "k"], ["s"]),
                helper.make_node("Transpose", ["s"], ["t"], perm=[0, 2, 3, 1]),
                helper.make_node("Flatten", ["t"], ["y"], axis=2),
            ],
            {"x": _X.shape},
            "y",
            13,
            {"shape": _i64(1, 4, 1, 1)},
        ),
        {"x": _X},
    ),
    "gather_constant_indices": (
        _model(
            [
                helper.make_node("Gather", ["x", "i"], ["g"], axis=1),
                helper.make_node("Gather", ["g", "j"], ["y"], axis=-1),
            ],
            {"x": _X.shape},
            "y",
            13,
            {"i": _i64(3, 0, -1), "j": np.array(-2, np.int64)},
        ),
        {"x": _X},
    ),
    "conv_transpose_strided_padded_grouped": (
        _model(
            [
                helper.make_node(
                    "ConvTranspose",
                    ["x", "w", "b"],
                    ["y"],
                    strides=[2, 3],
                    pads=[1, 0, 2, 1],
                    output_padding=[1, 2],
                    group=2,
                    dilations=[1, 2],
                )
            ],
            {"x": _X.shape},
            "y",
            13,
            {
                "w": _RNG.standard_normal((4, 3, 3, 2)).astype(np.float32),
                "b": _RNG.standard_normal(6).astype(np.float32),
            },
        ),
        {"x": _X},
    ),
    "conv_transpose_output_shape_same_upper": (
        _model(
            [
                helper.make_node(
                    "ConvTranspose",
                    ["x", "w"],
                    ["y"],
                    strides=[2, 2],
                    auto_pad="SAME_UPPER",
                    kernel_shape=[3, 3],
                ),
                helper.make_node(
                    "ConvTranspose",
                    ["x", "w"],
                    ["z"],
                    strides=[2, 2],
                    output_shape=[11, 12],
                ),
                helper.make_node("Concat", ["y", "z"], ["o"], axis=2),
            ],
            {"x": _X.shape},
            "o",
            13,
            {"w": _RNG.standard_normal((4, 2, 3, 3)).astype(np.float32)},
        ),
        {"x": _X},
    ),
    "conv_transpose_1d": (
        _model(
            [
                helper.make_node(
                    "ConvTranspose", ["x", "w"], ["y"], strides=[3], pads=[1, 2]
                )
            ],
            {"x": (2, 4, 7)},
            "y",
            13,
            {"w": _RNG.standard_normal((4, 5, 4)).astype(np.float32)},
        ),
        {"x": _RNG.standard_normal((2, 4, 7)).astype(np.float32)},
    ),
    "comparisons_logic_and_where": (
        _model(
            [
                helper.make_node("Less", ["x", "zero"], ["neg"]),
                helper.make_node("GreaterOrEqual", ["x", "one"], ["big"]),
                helper.make_node("Or", ["neg", "big"], ["out"]),
                helper.make_node("Not", ["out"], ["mid"]),
                helper.make_node("Equal", ["x", "x"], ["same"]),
                helper.make_node("And", ["mid", "same"], ["keep"]),
                helper.make_node("Where", ["keep", "x", "zero"], ["y"]),
            ],
            {"x": _X.shape},
            "y",
            13,
            {"zero": np.array(0.0, np.float32), "one": np.array(1.0, np.float32)},
        ),
        {"x": _X},
    ),
    "floor_ceil_round_erf": (
        _model(
            [
                helper.make_node("Mul", ["x", "k"], ["s"]),
                helper.make_node("Floor", ["s"], ["f"]),
                helper.make_node("Ceil", ["s"], ["c"]),
                helper.make_node("Round", ["s"], ["r"]),
                helper.make_node("Erf", ["x"], ["e"]),
                helper.make_node("Concat", ["f", "c", "r", "e"], ["y"], axis=1),
            ],
            {"x": _X.shape},
            "y",
            13,
            {"k": np.array(2.5, np.float32)},
        ),
        {"x": _X},
    ),
    "cast_through_int_and_bool": (
        _model(
            [
                helper.make_node("Mul", ["x", "ten"], ["big"]),
                helper.make_node("Cast", ["big"], ["i"], to=onnx.TensorProto.INT32),
                helper.make_node("Cast", ["i"], ["f"], to=onnx.TensorProto.FLOAT),
                helper.make_node("Cast", ["i"], ["b"], to=onnx.TensorProto.BOOL),
                helper.make_node("Cast", ["b"], ["g"], to=onnx.TensorProto.FLOAT),
                helper.make_node("Cast", ["g"], ["h"], to=onnx.TensorProto.FLOAT),
                helper.make_node("Concat", ["f", "h"], ["y"], axis=1),
            ],
            {"x": _X.shape},
            "y",
            13,
            {"ten": np.array(1.5, np.float32)},
        ),
        {"x": _X},
    ),
    "gather_constant_indices_of_rank_2": (
        _model(
            [helper.make_node("Gather", ["x", "i"], ["y"], axis=2)],
            {"x": _X.shape},
            "y",
            13,
            {"i": np.array([[5, -1], [0, 2]], np.int64)},
        ),
        {"x": _X},
    ),
    "gather_run_time_indices": (
        _with_int_input(
            _model(
                [helper.make_node("Gather", ["x", "i"], ["y"], axis=0)],
                {"x": _M.shape},
                "y",
                13,
            ),
            "i",
            (2, 3),
        ),
        {"x": _M, "i": np.array([[0, 2, -1], [-3, 1, 1]], np.int64)},
    ),
    "reduce_sum_axes_input_opset13": (
        _model(
            [helper.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=0)],
            {"x": _X.shape},
            "y",
            13,
            {"a": _i64(1, -1)},
        ),
        {"x": _X},
    ),
    "reduce_mean_everything_opset11": (
        _model(
            [helper.make_node("ReduceMean", ["x"], ["y"])], {"x": _X.shape}, "y", 11
        ),
        {"x": _X},
    ),
    "instance_normalization": (
        _model(
            [
                helper.make_node(
                    "InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=0.01
                )
            ],
            {"x": _X.shape},
            "y",
            13,
            {
                "s": np.linspace(0.5, 2, 4).astype(np.float32),
                "b": np.arange(4, dtype=np.float32),
            },
        ),
        {"x": _X},
    ),
    "sigmoid_tanh_sub_div_broadcast": (
        _model(
            [
                helper.make_node("Sigmoid", ["x"], ["s"]),
                helper.make_node("Tanh", ["x"], ["t"]),
                helper.make_node("Sub", ["s", "t"], ["d"]),
                helper.make_node("Div", ["d", "r"], ["y"]),
            ],
            {"x": _X.shape},
            "y",
            13,
            {"r": np.linspace(1, 2, 6).astype(np.float32)},
        ),
        {"x": _X},
    ),
}
"""Small models for what the node tests do not cover (newer opsets, auto_pad, ...)."""


@pytest.mark.parametrize("case", CASES)
def test_converter_against_onnx_reference(case: str) -> None:
    """Interpreted and compiled, against onnxruntime (or onnx's reference)."""
    model, feeds = CASES[case]
    expected = _reference(model, feeds)
    module = from_onnx(model)
    np.testing.assert_allclose(
        run(module, *feeds.values()), expected, rtol=RTOL, atol=ATOL
    )
    compiled = hetero.compile(module)(*feeds.values())
    np.testing.assert_allclose(compiled, expected, rtol=RTOL, atol=ATOL)


def test_shape_chain_is_folded_at_import() -> None:
    """Shape→Gather→Concat leave no op behind: the reshape has a static target."""
    model, _ = CASES["shape_gather_concat_reshape_folded"]
    names = [op.name for op in from_onnx(model).walk()]
    assert names.count("relay.reshape") == 1 and "relay.shape_of" not in names
    assert names.count("relay.constant") == 0


def test_dynamic_batch() -> None:
    """`?` batch: one module runs every batch size, as the static import does
    per sample, interpreted and compiled."""
    model, feeds = CASES["conv_same_upper_strided"]
    module = from_onnx(model, batch="dynamic")
    main = next(iter(module.ops))
    assert "tensor<?x4x6x6xf32>" in str(main.function_type)
    static = from_onnx(model)
    x = np.concatenate([feeds["x"]] * 3)
    expected = np.concatenate([run(static, feeds["x"])] * 3)
    np.testing.assert_allclose(run(module, x), expected, rtol=1e-6)
    compiled = hetero.compile(module)  # specialised per input shape at the call
    np.testing.assert_allclose(compiled(x), expected, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(compiled(x[:2]), expected[:2], rtol=RTOL, atol=ATOL)


def test_unsupported_operator_is_a_diagnostic() -> None:
    model = _model(
        [helper.make_node("Hardmax", ["x"], ["y"], name="the_node")],
        {"x": (2, 3)},
        "y",
        13,
    )
    with pytest.raises(
        HeteroError, match=r"ONNX node 'the_node': unsupported operator 'Hardmax'"
    ):
        from_onnx(model)


def test_unsupported_attribute_is_a_diagnostic() -> None:
    model = _model(
        [helper.make_node("Pad", ["x", "p"], ["y"], mode="wrap", name="p1")],
        {"x": (2, 3)},
        "y",
        19,
        {"p": _i64(0, 1, 0, 1)},
    )
    with pytest.raises(
        HeteroError, match=r"ONNX node 'p1' \(Pad\): pad mode 'wrap' is not supported"
    ):
        from_onnx(model)


@pytest.mark.parametrize(
    "node, shape, message",
    [
        (
            helper.make_node(
                "MaxPool", ["x"], ["y"], kernel_shape=[1, 1, 1, 1], name="m"
            ),
            (1, 1, 2, 2, 2, 2),
            (
                r"ONNX node 'm' \(MaxPool\): 4-D spatial data is not supported "
                r"\(relay has 1-D, 2-D, 3-D windows here\)"
            ),
        ),
        (
            helper.make_node("GlobalAveragePool", ["x"], ["y"], name="g"),
            (1, 1, 2, 2, 2),
            (
                r"ONNX node 'g' \(GlobalAveragePool\): 3-D spatial data is not "
                r"supported \(relay has 1-D, 2-D windows here\)"
            ),
        ),
    ],
)
def test_spatial_rank_without_a_relay_op_is_a_diagnostic(
    node: onnx.NodeProto, shape: tuple[int, ...], message: str
) -> None:
    with pytest.raises(HeteroError, match=message):
        from_onnx(_model([node], {"x": shape}, "y", 13))


# ----------------------------------------------------------------------------
# The command-line tool and the resource form
# ----------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hetero.tools.hetero_import_onnx", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_cli_writes_a_module_hetero_opt_reads_back(tmp_path: object) -> None:
    """Weights above the threshold are dense_resources; the module records the
    model's path for hetero-run --check; hetero-opt prints the file back
    unchanged; interpreting it gives the node test's output."""
    path, inputs, expected = _load_case("pytorch-operator/test_operator_conv")
    out = os.path.join(str(tmp_path), "conv.mlir")
    result = _cli(path, "-o", out)
    assert result.returncode == 0, result.stderr
    with open(out) as f:
        text = f.read()
    assert "dense_resource<" in text and "{-#" in text and len(text) < 20000
    assert (
        f'attributes {{onnx.source = {{path = "{os.path.abspath(path)}", sha256 = "'
        in text
    )
    again = subprocess.run(
        [sys.executable, "-m", "hetero.tools.hetero_opt", out],
        capture_output=True,
        text=True,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout == text
    from hetero.context import parse_module

    _check(run(parse_module(text), *inputs), expected)
    _check(hetero.compile(text)(*inputs), expected)


def test_cli_unsupported_operator_exits_1(tmp_path: object) -> None:
    model = _model(
        [helper.make_node("Hardmax", ["x"], ["y"], name="h")], {"x": (2, 3)}, "y", 13
    )
    path = os.path.join(str(tmp_path), "bad.onnx")
    onnx.save(model, path)
    out = os.path.join(str(tmp_path), "bad.mlir")
    result = _cli(path, "-o", out)
    assert result.returncode == 1
    assert (
        result.stderr
        == f"{path}: error: ONNX node 'h': unsupported operator 'Hardmax'\n"
    )
    assert not os.path.exists(out)


def test_cli_missing_file() -> None:
    result = _cli("/nonexistent/model.onnx")
    assert result.returncode == 1
    assert (
        "error: cannot read ONNX model" in result.stderr
        and "Traceback" not in result.stderr
    )


def test_cli_dynamic_batch_and_threshold() -> None:
    path, _, _ = _load_case("pytorch-operator/test_operator_conv")
    result = _cli(path, "--dynamic-batch", "--resource-threshold", "100000")
    assert result.returncode == 0, result.stderr
    assert (
        "tensor<?x16x50x40xf32>" in result.stdout
        and "dense_resource" not in result.stdout
    )


def test_printed_module_parses_twice_in_one_process() -> None:
    """Re-parsing reuses resource names already in the process-wide blob
    table: each parse must still bind its own blobs (utils/xdsl_fixes.py)."""
    from hetero.context import parse_module
    from hetero.utils.dense_resources import print_with_resources

    path, inputs, expected = _load_case("pytorch-converted/test_Conv2d")
    text = print_with_resources(from_onnx(path, resource_threshold=0))
    for _ in range(2):
        _check(run(parse_module(text), *inputs), expected)


def test_resource_without_blob_is_an_error() -> None:
    from hetero.context import parse_module

    text = """relay.func @main() -> tensor<2xf32> {
      %0 = relay.constant dense_resource<nowhere_blob> : tensor<2xf32>
      relay.return %0 : tensor<2xf32>
    }"""
    with pytest.raises(HeteroError, match=r"dense_resource<nowhere_blob> has no data"):
        run(parse_module(text))
