"""Dynamic shapes compiled once (`hetero.compile(..., dynamic="once")`): the
shape functions (`hetero.analysis.shape_functions`), kernels of run-time
extents, and a BERT-like encoder run at several sequence lengths against the
relay interpreter."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.traits import SymbolTable

import hetero
from bench.dynamic import encoder, inputs
from hetero.analysis.shape_functions import (
    SIZE_LIMIT,
    BlockShapes,
    Dim,
    DynamicShapeError,
    function_shapes,
)
from hetero.context import parse_module
from hetero.dialects import relay, tir
from hetero.dialects.relay import DYNAMIC
from hetero.dialects.relay.shapes import strided_slice_shape
from hetero.driver import (
    CompiledFunctionError,
    DynamicFunction,
    ShapeSpecializedFunction,
    lower_to_tir,
)
from hetero.interpreter.relay import InterpreterError, run
from hetero.utils.diagnostics import HeteroError

S = Dim(1, ((0, 1),))


def test_sizes_compute_exactly_and_never_guess() -> None:
    assert S * 768 // 768 == S
    assert (S * 12 * 64) // 768 == S
    assert S != -1 and S > 0 and S >= 1  # a size is at least 1
    assert S * 2 != S  # decided for every S
    for undecided in (lambda: S == 1, lambda: S < 64, lambda: S == Dim(1, ((1, 1),))):
        with pytest.raises(DynamicShapeError):
            undecided()
    for inexact in (lambda: S // 2, lambda: S + 1, lambda: S * 768 // 1024):
        with pytest.raises(DynamicShapeError):
            inexact()


def test_a_size_plus_nothing_is_that_size_and_no_size_reaches_the_limit() -> None:
    """A pad of nothing and a slice from 0 keep a size (`S + 0`, `S - 0`);
    a slice "to the end" bound (`SIZE_LIMIT`) is beyond every size."""
    assert S + 0 == S and 0 + S == S and S - 0 == S
    assert S < SIZE_LIMIT and not S >= SIZE_LIMIT and min(S, SIZE_LIMIT) == S
    with pytest.raises(DynamicShapeError):
        0 - S
    assert strided_slice_shape((S, 8), (0, 2), (SIZE_LIMIT, 8), (1, 3)) == (S, 2)


def test_block_shapes_follow_a_block_as_it_grows_and_unify_what_is_named_alike() -> (
    None
):
    """The ONNX importer's view: the sizes of a block's values while ops are
    added, its arguments' symbols of one name one size; an op without a
    shape rule leaves only its own results unknown."""
    block = Block(arg_types=[TensorType(f32, [DYNAMIC, 4]), TensorType(f32, [DYNAMIC])])
    shapes = BlockShapes(block, same=[[(0, 0), (1, 0)]])
    a, b = block.args
    reshaped = relay.ReshapeOp(a, newshape=(-1,))
    block.add_op(reshaped)
    assert shapes.shape(reshaped.results[0]) == (Dim(4, ((0, 0),)),)
    assert shapes.shape(b) == (Dim(1, ((0, 0),)),)  # the same size as a's rows
    pair = relay.TupleOp([a, b])
    block.add_op(pair)
    with pytest.raises(DynamicShapeError):
        shapes.shape(pair.results[0])
    added = relay.AddOp(a, a)
    block.add_op(added)
    assert shapes.shape(added.results[0]) == (Dim(1, ((0, 0),)), 4)
    # Exact: a shape that depends on the sizes' values is unknown ...
    sliced = relay.StridedSliceOp(a, begin=(0, 0), end=(2, 4))
    block.add_op(sliced)
    with pytest.raises(DynamicShapeError):
        shapes.shape(sliced.results[0])  # `?` rows, or 2
    # ... but not one that is the same where a product is answered 1.
    block = Block(
        arg_types=[TensorType(f32, [DYNAMIC, DYNAMIC, 4]), TensorType(f32, [4])]
    )
    shapes = BlockShapes(block)
    rows = relay.ReshapeOp(block.args[0], newshape=(-1, 4))
    bias = relay.AddOp(rows.results[0], block.args[1])
    block.add_ops([rows, bias])
    assert shapes.shape(bias.results[0]) == (Dim(1, ((0, 0), (0, 1))), 4)


ARANGE_LIKE = """
builtin.module {
  relay.func @main(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
    %0 = relay.arange_like %x {start = 2 : i64, step = 3 : i64, dtype = f32} : (tensor<?x3xf32>) -> tensor<?xf32>
    %1 = relay.reshape %0 {newshape = array<i64: -1, 1>} : (tensor<?xf32>) -> tensor<?x1xf32>
    %2 = relay.multiply %x, %1 : (tensor<?x3xf32>, tensor<?x1xf32>) -> tensor<?x3xf32>
    relay.return %2 : tensor<?x3xf32>
  }
}
"""


@pytest.mark.parametrize("dynamic", ["specialize", "once"])
def test_arange_like_counts_along_a_run_time_axis(dynamic: str) -> None:
    compiled = hetero.compile(ARANGE_LIKE, dynamic=dynamic)
    for rows in (1, 4, 17):
        x = np.ones((rows, 3), np.float32)
        want = x * (2 + 3 * np.arange(rows, dtype=np.float32))[:, None]
        np.testing.assert_array_equal(compiled(x), want)
        np.testing.assert_array_equal(run(parse_module(ARANGE_LIKE), x), want)


TAKE_FROM_A_FLAT_BATCH = """
builtin.module {
  relay.func @main(%x: tensor<?x12x?xf32>, %i: tensor<3xi64>) -> tensor<3xf32> {
    %0 = relay.reshape %x {newshape = array<i64: -1>} : (tensor<?x12x?xf32>) -> tensor<?xf32>
    %1 = relay.take %0, %i : (tensor<?xf32>, tensor<3xi64>) -> tensor<3xf32>
    relay.return %1 : tensor<3xf32>
  }
}
"""


def test_take_from_a_dynamic_axis_compiles_once() -> None:
    """`take` wraps and clamps by the axis's run-time extent (`12·b·s - 1`:
    a size of two symbols and a coefficient, computed once at the kernel's
    entry in order)."""
    compiled = hetero.compile(TAKE_FROM_A_FLAT_BATCH, dynamic="once")
    indices = np.array([0, -1, 5], np.int64)
    for b, s in ((1, 1), (2, 3), (4, 7)):
        x = np.arange(b * 12 * s, dtype=np.float32).reshape(b, 12, s)
        np.testing.assert_array_equal(compiled(x, indices), x.reshape(-1)[indices])


TWO_INPUTS = """
builtin.module {
  relay.func @main(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x2x2xf32> {
    %0 = relay.add %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %1 = relay.reshape %0 {newshape = array<i64: -1, 2, 2>} : (tensor<?x4xf32>) -> tensor<?x2x2xf32>
    relay.return %1 : tensor<?x2x2xf32>
  }
}
"""


def test_two_dynamic_dimensions_that_must_agree_are_one_guarded_size() -> None:
    module = parse_module(TWO_INPUTS)
    main = SymbolTable.lookup_symbol(module, "main")
    shapes = function_shapes(main, module)  # type: ignore[arg-type]
    returned = main.body.block.last_op.operands[0]  # type: ignore[union-attr]
    assert shapes.shape(returned) == (Dim(1, ((0, 0),)), 2, 2)
    assert shapes.same == {(1, 0): (0, 0)}
    assert shapes.check({(0, 0): 5, (1, 0): 5}) is None
    assert shapes.check({(0, 0): 5, (1, 0): 3}) is not None
    # NumPy would broadcast a 1 against 5: the code compiled once does not,
    # and says so rather than compute a wrong result
    assert shapes.check({(0, 0): 5, (1, 0): 1}) is not None
    assert shapes.check({(0, 0): 1, (1, 0): 1}) is None


def test_two_inputs_compiled_once_run_at_each_size_and_refuse_what_does_not_fit() -> (
    None
):
    f = hetero.compile(TWO_INPUTS, dynamic="once")
    assert isinstance(f, DynamicFunction)
    for rows in (1, 3, 17):
        a, b = (np.random.default_rng(rows + i).random((rows, 4), "f4") for i in (0, 1))
        np.testing.assert_allclose(f(a, b), (a + b).reshape(rows, 2, 2), rtol=1e-6)
    a = np.ones((5, 4), "f4")
    with pytest.raises(CompiledFunctionError, match="do not fit"):
        f(a, np.ones((3, 4), "f4"))
    with pytest.raises(CompiledFunctionError, match="do not fit"):
        f(a, np.ones((1, 4), "f4"))
    with pytest.raises(CompiledFunctionError, match="at least one element"):
        f(np.ones((0, 4), "f4"), np.ones((0, 4), "f4"))
    with pytest.raises(CompiledFunctionError, match=r"must have shape \(\?, 4\)"):
        f(a, np.ones((5, 3), "f4"))
    with pytest.raises(CompiledFunctionError, match=r"shape \(5, 2, 2\)"):
        f(a, a, out=np.empty((4, 2, 2), "f4"))
    out = np.empty((5, 2, 2), "f4")
    assert f(a, a, out=out) is out and (out == 2).all()


def test_specialization_stays_the_default() -> None:
    assert isinstance(hetero.compile(TWO_INPUTS), ShapeSpecializedFunction)
    with pytest.raises(ValueError, match="dynamic must be one of"):
        hetero.compile(TWO_INPUTS, dynamic="sometimes")


BROADCAST_AGAINST_STATIC = """
builtin.module {
  relay.func @main(%a: tensor<?xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
    %0 = relay.add %a, %b : (tensor<?xf32>, tensor<3xf32>) -> tensor<3xf32>
    relay.return %0 : tensor<3xf32>
  }
}
"""


def test_what_cannot_compile_once_is_a_located_error() -> None:
    """`[?] + [3]` is `[3]` whether the `?` is 1 or 3: no kernel reads the
    operand right for both, so compiling once refuses (specializing works)."""
    with pytest.raises(HeteroError, match="relay.add") as error:
        hetero.compile(BROADCAST_AGAINST_STATIC, dynamic="once")
    assert error.value.location is not None
    f = hetero.compile(BROADCAST_AGAINST_STATIC)
    np.testing.assert_allclose(
        f(np.ones(1, "f4"), np.arange(3, dtype="f4")), np.arange(3) + 1
    )


@pytest.fixture(scope="module")
def bert() -> tuple[object, DynamicFunction]:
    module = encoder(layers=1)
    compiled = hetero.compile(module, dynamic="once")
    assert isinstance(compiled, DynamicFunction)
    return module, compiled


@pytest.mark.parametrize("length", [1, 7, 77, 128])
def test_bert_like_encoder_compiled_once_runs_every_length(
    bert: tuple[object, DynamicFunction], length: int
) -> None:
    module, f = bert
    x = inputs(length)
    expected = run(module, *x)  # type: ignore[arg-type]
    np.testing.assert_allclose(f(*x), expected, rtol=1e-4, atol=1e-4)


def test_bert_like_encoder_checks_its_lengths_agree(
    bert: tuple[object, DynamicFunction],
) -> None:
    _, f = bert
    ids, _ = inputs(7)
    with pytest.raises(CompiledFunctionError, match="do not fit"):
        f(ids, inputs(8)[1])


def _dense(k: int, n: int) -> str:
    return f"""
builtin.module {{
  relay.func @main(%x: tensor<?x{k}xf32>, %w: tensor<{n}x{k}xf32>) -> tensor<?x{n}xf32> {{
    %0 = relay.nn.dense %x, %w {{units = {n}}} : (tensor<?x{k}xf32>, tensor<{n}x{k}xf32>) -> tensor<?x{n}xf32>
    %1 = relay.tanh %0 : tensor<?x{n}xf32>
    relay.return %1 : tensor<?x{n}xf32>
  }}
}}
"""


@pytest.mark.parametrize("k", [3072, 768])
def test_dense_of_run_time_rows_at_every_chunk_boundary(k: int) -> None:
    """`gemm_rows`: whole chunks (a cache block of row tiles: a dozen or two
    rows at K = 3072, several dozen at 768), then the rows left, the last
    tile partly outside; rows 12 KiB apart packed, 3 KiB apart read in
    place (`test_dense_of_run_time_rows_reads_them_in_place`)."""
    f = hetero.compile(_dense(k, 40), dynamic="once")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((40, k), dtype="f4") * 0.02
    for rows in (1, 5, 6, 11, 12, 13, 18, 19, 25, 37, 40, 83, 84, 85, 97, 170):
        x = rng.standard_normal((rows, k), dtype="f4")
        np.testing.assert_allclose(f(x, w), np.tanh(x @ w.T), rtol=2e-4, atol=2e-5)


def _lowered(text: str, options: str) -> ModuleOp:
    """`text` lowered to `tir` for an `llvm` target of `options`."""
    target = f'#target.target<"llvm", {options}>'
    config = (
        f"builtin.module attributes {{target.config = #target.config<[{target}]>}} {{"
    )
    module = parse_module(text.replace("builtin.module {", config))
    lower_to_tir(module)
    return module


def test_dense_of_run_time_rows_tails_each_task_s_panels() -> None:
    """The last rows run after each panel's whole tiles in the last row
    block's tasks: with tasks cut for four threads (several row and panel
    blocks, 600 columns), every row count around the tiles is right."""
    target = '#target.target<"llvm", {num_threads = 4}>'
    config = (
        f"builtin.module attributes {{target.config = #target.config<[{target}]>}} {{"
    )
    f = hetero.compile(
        _dense(64, 600).replace("builtin.module {", config), dynamic="once"
    )
    rng = np.random.default_rng(0)
    w = rng.standard_normal((600, 64), dtype="f4") * 0.1
    for rows in (*range(1, 27), 35, 61, 97):
        x = rng.standard_normal((rows, 64), dtype="f4")
        np.testing.assert_allclose(f(x, w), np.tanh(x @ w.T), rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("mcpu", ["znver4", "haswell"])
def test_dense_of_run_time_rows_reads_them_in_place(mcpu: str) -> None:
    """Rows of `a` 768 floats apart are read where they are, as for a static
    row count (`_reads_a_in_place`), not packed per task: the chunks of
    `gemm_rows` allocate no `[row tiles, k, mr]` buffer of them (QKV
    projections of DistilBERT compiled once, 128 tokens, one Zen 4 thread:
    1.74 -> 1.48 ms, 1.44 per shape)."""
    module = _lowered(_dense(768, 40), f'{{mcpu = "{mcpu}", num_threads = 2}}')
    shapes = [
        op.results[0].type.get_shape()
        for op in module.walk()
        if isinstance(op, tir.AllocOp)
    ]
    assert shapes and not [s for s in shapes if len(s) == 3 and s[1] == 768]


def _scores(mattr: str) -> str:
    """An attention's scores compiled once: `Q·Kᵀ` with `Kᵀ` a buffer
    contiguous along the columns, plus a mask, over run-time rows and
    columns, for `mattr`."""
    q, k, mask, out = (
        "tensor<2x3x?x16xf32>",
        "tensor<2x3x16x?xf32>",
        "tensor<2x1x?x?xf32>",
        "tensor<2x3x?x?xf32>",
    )
    target = f'#target.target<"llvm", {{mattr = {mattr}, num_threads = 2}}>'
    return f"""
builtin.module attributes {{target.config = #target.config<[{target}]>}} {{
  relay.func @main(%q: {q}, %k: {k}, %m: {mask}) -> {out} {{
    %0 = relay.matmul %q, %k : ({q}, {k}) -> {out}
    %1 = relay.add %0, %m : ({out}, {mask}) -> {out}
    relay.return %1 : {out}
  }}
}}
"""


@pytest.mark.parametrize("mattr", ['["+avx2", "-avx512f"]', "[]"])
def test_matmul_of_run_time_rows_and_columns_in_register_tiles(mattr: str) -> None:
    """`gemm_in_place`: rows in tiles whose last one reads the last row for
    the rows past `m` and stores only its own; columns in panels whose last
    one overlaps the one before; fewer columns than a panel through masks.
    Every count around the tiles of AVX2 (6 × 16) and AVX-512 (12 × 32)."""
    f = hetero.compile(_scores(mattr), dynamic="once")
    rng = np.random.default_rng(0)
    for m, n in (
        (1, 1),
        (5, 15),
        (6, 16),
        (7, 17),
        (12, 31),
        (13, 32),
        (25, 33),
        (37, 37),
        (11, 64),
        (50, 100),
        (128, 128),
    ):
        q = rng.standard_normal((2, 3, m, 16), "f4")
        k = rng.standard_normal((2, 3, 16, n), "f4")
        mask = rng.standard_normal((2, 1, m, n), "f4")
        np.testing.assert_allclose(f(q, k, mask), q @ k + mask, rtol=1e-5, atol=1e-5)


BROADCAST_SCORES = """
builtin.module {
  relay.func @main(%a: tensor<1x3x?x?xf64>, %b: tensor<2x1x?x?xf64>) -> tensor<2x3x?x?xf64> {
    %0 = relay.matmul %a, %b : (tensor<1x3x?x?xf64>, tensor<2x1x?x?xf64>) -> tensor<2x3x?x?xf64>
    %1 = relay.relu %0 : tensor<2x3x?x?xf64>
    relay.return %1 : tensor<2x3x?x?xf64>
  }
}
"""


def test_matmul_of_run_time_sizes_broadcasts_its_batches() -> None:
    """`gemm_in_place` over batches that broadcast (`[1, 3] × [2, 1]`), a
    run-time depth too, f64, a relu in the stores."""
    f = hetero.compile(BROADCAST_SCORES, dynamic="once")
    rng = np.random.default_rng(1)
    for m, k, n in ((1, 1, 1), (7, 3, 17), (13, 40, 33), (30, 5, 64)):
        a, b = rng.standard_normal((1, 3, m, k)), rng.standard_normal((2, 1, k, n))
        np.testing.assert_allclose(
            f(a, b), np.maximum(a @ b, 0), rtol=1e-12, atol=1e-12
        )


@pytest.mark.parametrize(
    ("mattr", "tile"), [('["+avx512f"]', [12, 32]), ('["+avx2", "-avx512f"]', [6, 16])]
)
def test_matmul_of_run_time_sizes_accumulates_in_a_register_tile(
    mattr: str, tile: list[int]
) -> None:
    """The scores' kernel sums in a `local` tile of the ISA's `mr × nr`
    registers, not into the output in place (each step of `k` a load and
    a store of every output: 4x slower at 128 tokens)."""
    module = parse_module(_scores(mattr))
    lower_to_tir(module)
    local = [
        op.results[0].type.get_shape()
        for op in module.walk()
        if isinstance(op, tir.AllocOp) and "local" in str(op.results[0].type)
    ]
    assert list(tile) in [list(s) for s in local]


def test_the_function_compiled_once_is_only_called_through_its_guards(
    tmp_path: object,
) -> None:
    f = hetero.compile(TWO_INPUTS, dynamic="once")
    a = np.ones((3, 4), "f4")
    with pytest.raises(CompiledFunctionError, match="call the DynamicFunction"):
        f.compiled(a, a, out=np.empty((3, 2, 2), "f4"))  # type: ignore[union-attr]
    with pytest.raises(CompiledFunctionError, match="it is not saved"):
        f.compiled.save(f"{tmp_path}/f.hetero")  # type: ignore[union-attr]


D = DYNAMIC


def _program(inputs: list[list[int]], build: Callable[..., object]) -> ModuleOp:
    """`@main` of f32 parameters of `inputs` (`D`: dynamic) returning
    `build(*parameters)`, built with the relay Python builders."""
    block = Block(arg_types=[TensorType(f32, shape) for shape in inputs])
    ops: list[Operation] = []

    def emit(op: Operation) -> SSAValue:
        ops.append(op)
        return op.results[0]

    result = build(emit, *block.args)
    for op in ops:
        block.add_op(op)
    block.add_op(relay.ReturnOp(result))
    types = [a.type for a in block.args]
    return ModuleOp([relay.FuncOp("main", types, result.type, Region(block))])  # type: ignore[attr-defined]


PROGRAMS: dict[str, tuple[list[list[int]], Callable[..., object]]] = {
    "outer add": ([[D, 1], [1, D]], lambda e, x, y: e(relay.AddOp(x, y))),
    "same-size add": ([[D, 4], [D, 4]], lambda e, x, y: e(relay.AddOp(x, y))),
    "add to static": ([[D, 3], [1, 3]], lambda e, x, y: e(relay.AddOp(x, y))),
    "reshape split": (
        [[D, 6]],
        lambda e, x: e(relay.ReshapeOp(x, newshape=[-1, 2, 3])),
    ),
    "reshape flatten": ([[2, D]], lambda e, x: e(relay.ReshapeOp(x, newshape=[-1]))),
    "transpose exp": (
        [[D, 3, D]],
        lambda e, x: e(relay.ExpOp(e(relay.TransposeOp(x, axes=[2, 0, 1])))),
    ),
    "softmax along": ([[3, D]], lambda e, x: e(relay.SoftmaxOp(x, axis=-1))),
    "softmax across": ([[D, 5]], lambda e, x: e(relay.SoftmaxOp(x, axis=0))),
    "sum": ([[D, 3]], lambda e, x: e(relay.SumOp(x, axis=[0]))),
    "mean": ([[4, D]], lambda e, x: e(relay.MeanOp(x, axis=[1]))),
    "matmul": ([[D, 4], [4, D]], lambda e, x, y: e(relay.MatmulOp(x, y))),
    "batched matmul": (
        [[2, 3, D], [2, D, 5]],
        lambda e, x, y: e(relay.MatmulOp(x, y)),
    ),
    "concatenate": (
        [[D, 2], [D, 2]],
        lambda e, x, y: e(relay.ConcatenateOp(x, y, axis=0)),
    ),
    "expand squeeze": (
        [[D, 3]],
        lambda e, x: e(relay.SqueezeOp(e(relay.ExpandDimsOp(x, axis=1)), axis=[1])),
    ),
    "slice": (
        [[D, 4]],
        lambda e, x: e(
            relay.StridedSliceOp(x, begin=[0, 1], end=[2, 3], strides=[1, 1])
        ),
    ),
    "layer norm": (
        [[D, 8], [8], [8]],
        lambda e, x, g, b: e(relay.LayerNormOp(x, g, b, axis=-1, epsilon=1e-5)),
    ),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_compiled_once_is_right_at_every_size_or_says_it_is_not(name: str) -> None:
    """Soundness: for every sizes (1 included), compiling once either
    refuses (at compile time, at the op), or the call refuses those sizes
    (a guard), or it computes what the interpreter computes."""
    inputs, build = PROGRAMS[name]
    module = _program(inputs, build)
    try:
        f = hetero.compile(module, dynamic="once")
    except HeteroError as error:
        assert error.op is not None  # refused at an op, with its location
        return
    rng = np.random.default_rng(0)
    for sizes in ((1, 1), (1, 3), (3, 1), (2, 2), (5, 5), (17, 17)):
        fill = iter(sizes * 4)
        arrays = [
            rng.standard_normal([next(fill) if d == D else d for d in shape], "f4")
            for shape in inputs
        ]
        try:
            expected = run(module, *arrays)
        except InterpreterError:  # the sizes do not fit the program itself
            with pytest.raises(CompiledFunctionError):
                f(*arrays)
            continue
        try:
            got = f(*arrays)
        except CompiledFunctionError:
            continue  # a guard: not compiled for these sizes, and says so
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
