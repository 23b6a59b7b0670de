"""Models whose batch (and sequence) is dynamic (`dim_param`s, as
`torch.onnx.export` with `dynamic_axes` writes them): the shape arithmetic
on them folds at import over sizes (`hetero.frontends.onnx.sizes`), and each
model is imported, interpreted and compiled (per shape, and once for every
shape where it can be) at two sizes against onnxruntime, which runs the
same file.  Then what stays out: a shape computed at run time, a value
whose sizes are no product of the inputs'.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper

import hetero
from hetero.driver import CompiledFunctionError
from hetero.frontends.onnx import from_onnx
from hetero.interpreter.relay import InterpreterError, run
from hetero.utils.diagnostics import HeteroError

RTOL, ATOL = 1e-5, 1e-6
BATCHES = (1, 3)
_TYPES = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.int64): TensorProto.INT64,
}
_RNG = np.random.default_rng(35)


def _model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, tuple[np.dtype, tuple[int | str, ...]]],
    initializers: dict[str, np.ndarray] | None = None,
) -> onnx.ModelProto:
    """A model of `nodes` with output `y`; an input dimension given as a
    string is that `dim_param`."""
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info(name, _TYPES[np.dtype(dtype)], shape)
            for name, (dtype, shape) in inputs.items()
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in (initializers or {}).items()],
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9
    )


def _node(op_type: str, inputs: list[str], output: str = "y", **attrs: object):
    return helper.make_node(op_type, inputs, [output], **attrs)


def _i64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


_F32 = np.dtype(np.float32)
_X = {"x": (_F32, ("batch", 5, 8))}


def _feeds(model: onnx.ModelProto, sizes: dict[str, int]) -> dict[str, np.ndarray]:
    """Random inputs, each `dim_param` the size `sizes` gives it."""
    feeds = {}
    for value in model.graph.input:
        dims = value.type.tensor_type.shape.dim
        shape = [sizes[d.dim_param] if d.dim_param else d.dim_value for d in dims]
        if value.type.tensor_type.elem_type == TensorProto.INT64:
            feeds[value.name] = _RNG.integers(-3, 3, shape).astype(np.int64)
        else:
            feeds[value.name] = _RNG.standard_normal(shape).astype(np.float32)
    return feeds


def _check(
    model: onnx.ModelProto,
    calls: tuple[dict[str, int], ...] = tuple({"batch": b} for b in BATCHES),
) -> None:
    """Interpreted, compiled per shape and compiled once, at each of
    `calls`' sizes, against onnxruntime."""
    module = from_onnx(model)
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    per_shape, once = hetero.compile(module), hetero.compile(module, dynamic="once")
    for sizes in calls:
        feeds = _feeds(model, sizes)
        (want,) = session.run(None, feeds)
        for got in (
            run(module, *feeds.values()),
            per_shape(*feeds.values()),
            once(*feeds.values()),
        ):
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def _batch_of(tensor: str, output: str) -> list[onnx.NodeProto]:
    """`[tensor.size(0)]`: Shape, Gather of axis 0, Unsqueeze."""
    return [
        _node("Shape", [tensor], f"{output}_shape"),
        _node("Gather", [f"{output}_shape", "zero"], f"{output}_scalar", axis=0),
        _node("Unsqueeze", [f"{output}_scalar", "axis0"], output),
    ]


_SHAPE_CONSTANTS = {"zero": np.array(0, np.int64), "axis0": _i64(0)}


def test_flatten_by_the_batch_is_a_reshape_of_the_batch() -> None:
    """`x.view(x.size(0), -1)`."""
    nodes = [
        *_batch_of("x", "b"),
        _node("Concat", ["b", "minus_one"], "target", axis=0),
        _node("Reshape", ["x", "target"]),
    ]
    constants = {**_SHAPE_CONSTANTS, "minus_one": _i64(-1)}
    _check(_model(nodes, _X, constants))


def test_reshapes_through_products_and_quotients_of_the_batch() -> None:
    """`[b * 5, 8]` and back by a division that divides."""
    nodes = [
        *_batch_of("x", "b"),
        _node("Mul", ["b", "five"], "rows"),
        _node("Concat", ["rows", "eight"], "flat", axis=0),
        _node("Reshape", ["x", "flat"], "r"),
        _node("Div", ["rows", "five"], "b2"),
        _node("Concat", ["b2", "five", "eight"], "back", axis=0),
        _node("Reshape", ["r", "back"], "s"),
        _node("Relu", ["s"]),
    ]
    constants = {**_SHAPE_CONSTANTS, "five": _i64(5), "eight": _i64(8)}
    _check(_model(nodes, _X, constants))


def test_a_class_token_is_expanded_to_the_batch() -> None:
    """ViT's `class_token.expand(x.size(0), -1, -1)`, concatenated."""
    nodes = [
        *_batch_of("x", "b"),
        _node("Concat", ["b", "one", "eight"], "target", axis=0),
        _node("Expand", ["token", "target"], "tokens"),
        _node("Concat", ["tokens", "x"], axis=1),
    ]
    constants = {
        **_SHAPE_CONSTANTS,
        "one": _i64(1),
        "eight": _i64(8),
        "token": _RNG.standard_normal((1, 1, 8)).astype(np.float32),
    }
    _check(_model(nodes, _X, constants))


def test_a_constant_of_the_batch_s_shape() -> None:
    """`torch.ones(x.shape)`, then a channel count gathered from the shape
    (a plain number: 5)."""
    value = numpy_helper.from_array(np.array([2.0], np.float32))
    nodes = [
        _node("Shape", ["x"], "shape"),
        _node("ConstantOfShape", ["shape"], "twos", value=value),
        _node("Gather", ["shape", "one"], "channels", axis=0),
        _node("Cast", ["channels"], "c", to=TensorProto.FLOAT),
        _node("Mul", ["twos", "c"], "tens"),
        _node("Add", ["x", "tens"]),
    ]
    _check(_model(nodes, _X, {"one": _i64(1)}))


def test_a_range_over_the_batch_is_arange_like() -> None:
    """`torch.arange(0, 3 * x.size(0), 3)` scaling each sample:
    `relay.arange_like` of a run-time length."""
    nodes = [
        _node("Shape", ["x"], "shape"),
        _node("Gather", ["shape", "zero"], "b", axis=0),
        _node("Mul", ["b", "step"], "limit"),
        _node("Range", ["zero", "limit", "step"], "positions"),
        _node("Cast", ["positions"], "p", to=TensorProto.FLOAT),
        _node("Reshape", ["p", "column"], "scale"),
        _node("Mul", ["x", "scale"]),
    ]
    constants = {
        "zero": np.array(0, np.int64),
        "step": np.array(3, np.int64),
        "column": _i64(-1, 1, 1),
    }
    _check(_model(nodes, _X, constants))


def test_a_slice_to_the_size_of_its_axis_is_whole() -> None:
    """`x[:, : x.size(1)]`, and a pad of the batch axis by nothing, whose
    shape is taken again."""
    nodes = [
        _node("Shape", ["x"], "shape"),
        _node("Slice", ["shape", "one", "two"], "length"),
        _node("Slice", ["x", "zero", "length", "one"], "s"),
        _node("Pad", ["s", "pads"], "p"),
        _node("Shape", ["p"], "p_shape"),
        _node("Reshape", ["p", "p_shape"]),
    ]
    constants = {
        "zero": _i64(0),
        "one": _i64(1),
        "two": _i64(2),
        "pads": _i64(0, 1, 0, 0, 2, 0),
    }
    _check(_model(nodes, _X, constants))


def test_gather_nd_indexes_an_axis_of_the_batch() -> None:
    """`data[idx[..., 0], idx[..., 1]]` with the data's first axis the batch
    (negative indices wrapped by the take of the flattened data)."""
    inputs = {"x": (_F32, ("batch", 5)), "i": (np.dtype(np.int64), (4, 2))}
    model = _model([_node("GatherND", ["x", "i"], "g"), _node("Relu", ["g"])], inputs)
    module = from_onnx(model)
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    functions = [hetero.compile(module), hetero.compile(module, dynamic="once")]
    for batch in (3, 4):
        x = _RNG.standard_normal((batch, 5)).astype(np.float32)
        i = np.array([[0, 1], [-1, 4], [batch - 1, -5], [1, -1]], np.int64)
        (want,) = session.run(None, {"x": x, "i": i})
        for got in (run(module, x, i), *(f(x, i) for f in functions)):
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_gather_elements_along_a_row_of_the_batch() -> None:
    """RoBERTa's position embeddings: a buffer expanded to the batch, then
    `GatherElements` along axis 1 by run-time positions of each sample (its
    batch axis's offsets by `relay.arange_like`)."""
    inputs = {"x": (_F32, ("batch", 6)), "i": (np.dtype(np.int64), ("batch", 4))}
    nodes = [
        _node("GatherElements", ["x", "i"], "g", axis=1),
        _node("Relu", ["g"]),
    ]
    _check(_model(nodes, inputs))


def test_inputs_of_one_batch_name_are_one_size() -> None:
    """GPT-2's `mask.view(input_ids.size(0), -1)`: two inputs' `batch` are
    one size, so the mask's `[b, 5]` reshapes to `[b, -1]` of the other."""
    inputs = {"x": (_F32, ("batch", 5, 8)), "m": (_F32, ("batch", 5))}
    nodes = [
        *_batch_of("x", "b"),
        _node("Concat", ["b", "minus_one", "one"], "target", axis=0),
        _node("Reshape", ["m", "target"], "column"),
        _node("Mul", ["x", "column"]),
    ]
    constants = {**_SHAPE_CONSTANTS, "minus_one": _i64(-1), "one": _i64(1)}
    _check(_model(nodes, inputs, constants))


SEQUENCES = ({"batch": 1, "sequence": 4}, {"batch": 3, "sequence": 7})


def test_a_size_used_as_data_is_computed_at_run_time() -> None:
    """`x * x.size(0)`, `abs(b + 1)` and `b * 0.5`: sizes that are data (cast
    to floats) and a sum the sizes cannot fold become tensors
    (`sizes.materialize`)."""
    nodes = [
        *_batch_of("x", "b"),
        _node("Cast", ["b"], "f", to=TensorProto.FLOAT),
        _node("Mul", ["x", "f"], "scaled"),
        _node("Add", ["b", "one"], "b1"),
        _node("Abs", ["b1"], "a"),
        _node("Cast", ["a"], "g", to=TensorProto.FLOAT),
        _node("Add", ["scaled", "g"], "sum"),
        _node("Cast", ["b"], "bf", to=TensorProto.FLOAT),
        _node("Mul", ["bf", "half"], "h"),
        _node("Add", ["sum", "h"]),
    ]
    constants = {
        **_SHAPE_CONSTANTS,
        "one": _i64(1),
        "half": np.array([0.5], np.float32),
    }
    _check(_model(nodes, _X, constants))


def _sliced_table(rows: int) -> onnx.ModelProto:
    """`x + table[:, : x.size(1)]`, a table of `rows` positions."""
    inputs = {"x": (_F32, ("batch", "sequence", 8))}
    nodes = [
        _node("Shape", ["x"], "shape"),
        _node("Slice", ["shape", "one", "two"], "length"),
        _node("Slice", ["table", "zero", "length", "one"], "rows"),
        _node("Add", ["x", "rows"]),
    ]
    constants = {
        "zero": _i64(0),
        "one": _i64(1),
        "two": _i64(2),
        "table": _RNG.standard_normal((1, rows, 8)).astype(np.float32),
    }
    return _model(nodes, inputs, constants)


def test_a_table_is_sliced_to_the_sequence_length() -> None:
    """BERT's `position_embeddings[:, :seq]`: a slice of a static axis to a
    run-time end, a `relay.take` of `arange_like` positions."""
    _check(_sliced_table(10), calls=SEQUENCES)


def test_a_table_sliced_past_its_end_is_refused_at_the_call() -> None:
    """`table[:, :seq]` for a sequence longer than the table: ONNX clamps
    the slice, the program computes for the table's length at most
    (`max_sizes`), so a longer call is an error in every mode, never rows
    repeated."""
    module = from_onnx(_sliced_table(4))
    x = np.zeros((1, 6, 8), np.float32)
    message = r"parameter #0 has 6 along axis 1, at most 4"
    with pytest.raises(InterpreterError, match=message):
        run(module, x)
    for dynamic in ("specialize", "once"):
        with pytest.raises(CompiledFunctionError, match=message):
            hetero.compile(module, dynamic=dynamic)(x)


def test_shape_arithmetic_folds_as_onnx_slices_and_reshapes() -> None:
    """Folds of sizes keep the positions of empty optional inputs (a slice
    with its axes left out but its steps given), clamp a backward slice by
    ONNX's rule, and a reshape's `0` copies without dropping the dimensions
    after the input's rank."""
    nodes = [
        _node("Shape", ["x"], "shape"),
        _node("Slice", ["shape", "zero", "three", "", "two"], "every_other"),
        _node("Reshape", ["x", "every_other"], "r"),
        _node(
            "Slice",
            ["shape", "minus_ten", "minus_twenty", "zero", "minus_one"],
            "first",
        ),
        _node("Reshape", ["first", "zero_one"], "column"),
        _node("Shape", ["column"], "column_shape"),
        _node("Concat", ["column_shape", "one"], "target", axis=0),
        _node("Expand", ["r", "target"], "e"),
        _node("Relu", ["e"]),
    ]
    constants = {
        "zero": _i64(0),
        "one": _i64(1),
        "two": _i64(2),
        "three": _i64(3),
        "minus_one": _i64(-1),
        "minus_ten": _i64(-10),
        "minus_twenty": _i64(-20),
        "zero_one": _i64(0, 1),
    }
    _check(_model(nodes, {"x": (_F32, ("batch", 1, 8))}, constants))


def test_a_shape_as_the_graph_output_is_computed_at_run_time() -> None:
    inputs = {"x": (_F32, ("batch", 5))}
    model = _model([_node("Shape", ["x"], "y")], inputs)
    model.graph.output[0].type.tensor_type.elem_type = TensorProto.INT64
    module = from_onnx(model)
    compiled = hetero.compile(module)
    for batch in BATCHES:
        x = np.zeros((batch, 5), np.float32)
        np.testing.assert_array_equal(run(module, x), [batch, 5])
        np.testing.assert_array_equal(compiled(x), [batch, 5])


def test_a_reshape_to_two_run_time_sizes_is_reshape_like() -> None:
    """A flat `[b·s]` mask back to `[b, 1, 1, s]`: one `-1` cannot name both,
    so `relay.reshape_like` a tensor of those sizes."""
    inputs = {"x": (_F32, ("batch", "sequence"))}
    nodes = [
        _node("Reshape", ["x", "minus_one"], "flat"),
        _node("Shape", ["x"], "shape"),
        _node("Slice", ["shape", "zero", "one"], "b"),
        _node("Slice", ["shape", "one", "two"], "s"),
        _node("Concat", ["b", "one", "one", "s"], "target", axis=0),
        _node("Reshape", ["flat", "target"], "r"),
        _node("Relu", ["r"]),
    ]
    constants = {
        "zero": _i64(0),
        "one": _i64(1),
        "two": _i64(2),
        "minus_one": _i64(-1),
    }
    _check(_model(nodes, inputs, constants), calls=SEQUENCES)


@pytest.mark.parametrize(
    ("nodes", "message"),
    [
        (
            [
                *_batch_of("x", "b"),
                _node("Add", ["b", "one"], "b1"),
                _node("Concat", ["b1", "minus_one"], "t", axis=0),
                _node("Reshape", ["x", "t"], name="r"),
            ],
            r"ONNX node 'r' \(Reshape\): input 1 \('t'\) must be a constant",
        ),
        (
            [
                _node("Concat", ["x", "x"], "c", axis=0),
                _node("Concat", ["c", "pad"], "d", axis=0),
                _node("Shape", ["d"], "s", name="sh"),
                _node("Reshape", ["d", "s"]),
            ],
            r"ONNX node 'sh' \(Shape\): the shape of a value with dynamic dimensions",
        ),
        (
            [
                _node("Slice", ["x", "zero", "two"], "s"),
                _node("Shape", ["s"], "t", name="sh"),
                _node("ConstantOfShape", ["t"]),
            ],
            r"ONNX node 'sh' \(Shape\): the shape of a value with dynamic dimensions",
        ),
        (
            [
                *_batch_of("x", "b"),
                _node("Concat", ["b", "zero_1d", "minus_one"], "t", axis=0),
                _node("Reshape", ["x", "t"], name="r", allowzero=1),
            ],
            r"ONNX node 'r' \(Reshape\): allowzero=1 with a zero in the shape",
        ),
        (
            [_node("Squeeze", ["x"], name="sq")],
            (
                r"ONNX node 'sq' \(Squeeze\): Squeeze without axes of "
                r"tensor<\?x5x8xf32>: whether a dynamic dimension goes depends on"
            ),
        ),
    ],
    ids=[
        "shape-of-a-sum",
        "sizes-of-a-sum",
        "sizes-of-a-slice",
        "allowzero",
        "squeeze",
    ],
)
def test_what_the_sizes_do_not_give_is_a_located_diagnostic(
    nodes: list[onnx.NodeProto], message: str
) -> None:
    constants = {
        **_SHAPE_CONSTANTS,
        "one": _i64(1),
        "two": _i64(2),
        "minus_one": _i64(-1),
        "zero_1d": _i64(0),
        "pad": np.zeros((1, 5, 8), np.float32),
    }
    with pytest.raises(HeteroError, match=message):
        from_onnx(_model(nodes, _X, constants))


_SUM_OF_SIZES = [
    _node("Concat", ["x", "x"], "c", axis=0),
    _node("Shape", ["c"], "s"),
    _node("Reshape", ["c", "s"], "r"),
    _node("Sigmoid", ["r"]),
]
"""`2·batch` rows by a sum (a Concat along the batch), then its shape read:
no product of the inputs' sizes."""


def test_a_model_the_sizes_do_not_give_imports_for_given_shapes() -> None:
    """What does not import for `?` sizes says how it does; with `shapes`
    (the batch fixed) it imports as a static model and computes what
    onnxruntime computes for that batch."""
    model = _model(_SUM_OF_SIZES, _X)
    with pytest.raises(
        HeteroError, match=r"from_onnx\(model, shapes=\{'x': \[\.\.\.\]\}\)"
    ):
        from_onnx(model)
    module = from_onnx(model, shapes={"x": [3, 5, 8]})
    main = module.body.block.first_op
    assert str(main.function_type.inputs.data[0]) == "tensor<3x5x8xf32>"  # type: ignore[union-attr]
    feeds = _feeds(model, {"batch": 3})
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (want,) = session.run(None, feeds)
    np.testing.assert_allclose(run(module, *feeds.values()), want, rtol=RTOL, atol=ATOL)
    got = hetero.compile(module)(*feeds.values())
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        ({"x": [3, 5]}, r"graph input 'x' is \[\?, 5, 8\]; \[3, 5\] does not fit it"),
        ({"x": [3, 4, 8]}, r"\[3, 4, 8\] does not fit it"),
        ({"x": [0, 5, 8]}, r"sizes must be positive, got \[0, 5, 8\]"),
        ({"ids": [1, 5, 8]}, r"shapes: no graph input 'ids' \(the inputs: 'x'\)"),
    ],
    ids=["rank", "static-size", "empty", "unknown-input"],
)
def test_shapes_that_do_not_fit_the_model_are_refused(
    shapes: dict[str, list[int]], message: str
) -> None:
    with pytest.raises(HeteroError, match=message):
        from_onnx(_model([_node("Sigmoid", ["x"])], _X), shapes=shapes)


def test_the_tools_take_shapes(tmp_path, capsys) -> None:
    """`--shape NAME=D,D,...` in hetero-import-onnx and hetero-compile (an
    ONNX model only); a malformed one is a usage error."""
    from hetero.tools.hetero_compile import main as compile_tool
    from hetero.tools.hetero_import_onnx import main as import_tool

    path = tmp_path / "m.onnx"
    onnx.save(_model(_SUM_OF_SIZES, _X), path)
    out = tmp_path / "m.mlir"
    assert import_tool([str(path), "-o", str(out)]) == 1
    assert "shapes=" in capsys.readouterr().err
    assert import_tool([str(path), "-o", str(out), "--shape", "x=2,5,8"]) == 0
    assert "tensor<2x5x8xf32>" in out.read_text()
    artifact = tmp_path / "m.hetero"
    assert compile_tool([str(path), "-o", str(artifact), "--shape", "x=2,5,8"]) == 0
    x = _RNG.standard_normal((2, 5, 8)).astype(np.float32)
    want = 1 / (1 + np.exp(-np.concatenate([x, x])))
    np.testing.assert_allclose(hetero.load(artifact)(x), want, rtol=RTOL, atol=ATOL)
    for tool, argv in (
        (import_tool, [str(path), "-o", str(out), "--shape", "x="]),
        (import_tool, [str(path), "--shape", "x=2,5,8", "--shape", "x=3,5,8"]),
        (compile_tool, [str(out), "-o", str(artifact), "--shape", "x=2,5,8"]),
    ):
        with pytest.raises(SystemExit) as exit:
            tool(argv)
        assert exit.value.code == 2


def test_a_size_fixed_for_one_input_is_that_size_for_every_input_of_its_name() -> None:
    """Inputs `a` and `b` of one `batch`: fixing `a` fixes `b`'s too (by name,
    as onnxruntime's free dimension overrides), and the model compiles once
    as a static one; two sizes for one name, or sizes that are no integers,
    are refused."""
    model = _model(
        [_node("Add", ["a", "b"])],
        {"a": (_F32, ("batch", 3)), "b": (_F32, ("batch", 3))},
    )
    module = from_onnx(model, shapes={"a": [2, 3]})
    main = module.body.block.first_op
    types = [str(t) for t in main.function_type.inputs.data]  # type: ignore[union-attr]
    assert types == ["tensor<2x3xf32>", "tensor<2x3xf32>"]
    a, b = np.ones((2, 3), np.float32), np.full((2, 3), 2, np.float32)
    np.testing.assert_array_equal(hetero.compile(module, dynamic="once")(a, b), a + b)
    with pytest.raises(HeteroError, match="dimension 'batch' is 2 and 5"):
        from_onnx(model, shapes={"a": [2, 3], "b": [5, 3]})
    for bad in ([2.5, 3], [True, 3], "23"):
        with pytest.raises(HeteroError, match="sizes must be integers"):
            from_onnx(model, shapes={"a": bad})
