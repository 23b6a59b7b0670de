"""`.hetero` files of functions compiled once for dynamic (`?`) input
dimensions (docs/deployment.md, "Dynamic shapes"): saved with their size
rules, loaded in a process where only the runtime imports, called at several
sizes against the in-memory function, the reference interpreter and
onnxruntime, refusing what does not fit as the in-memory function does;
`hetero-compile` and `hetero-run` of such a model."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_artifact import ONLY_THE_RUNTIME, TARGET

import hetero
from hetero.context import parse_module
from hetero.driver import DynamicFunction
from hetero.interpreter.relay import run
from hetero.runtime import artifact, framing
from hetero.runtime.artifact import ArtifactError
from hetero.runtime.compiled import CompiledFunctionError

PROGRAM = """
builtin.module {
  relay.func @main(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x2x2xf32> {
    %w = relay.constant dense<0.25> : tensor<4x8xf32>
    %0 = relay.add %a, %b : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %1 = relay.nn.dense %0, %w : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
    %2 = relay.tanh %1 : tensor<?x4xf32>
    %3 = relay.reshape %2 {newshape = array<i64: -1, 2, 2>} : (tensor<?x4xf32>) -> tensor<?x2x2xf32>
    relay.return %3 : tensor<?x2x2xf32>
  }
}
"""
"""Two inputs whose dynamic rows must agree (a guard), a constant weight."""

ROWS = (1, 3, 17)


def _inputs(rows: int, other: int | None = None) -> list[np.ndarray]:
    rng = np.random.default_rng(rows)
    return [
        rng.standard_normal((n, 8)).astype(np.float32)
        for n in (rows, rows if other is None else other)
    ]


@pytest.fixture(scope="module")
def saved(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, DynamicFunction]:
    f = hetero.compile(PROGRAM, TARGET, dynamic="once")
    assert isinstance(f, DynamicFunction)
    path = tmp_path_factory.mktemp("dynamic") / "model.hetero"
    f.save(path)
    return path, f


def _in_a_fresh_process(
    path: Path, calls: Sequence[Sequence[np.ndarray]], tmp_path: Path
) -> list[np.ndarray | str]:
    """Each of `calls` run by the function `hetero.load` reads from `path`,
    in a new process where xDSL and all of hetero but its runtime fail to
    import: its result, or the message of the `CompiledFunctionError` it
    raised."""
    for i, call in enumerate(calls):
        np.savez(tmp_path / f"call{i}.npz", *call)
    code = f"""
        import numpy as np, hetero
        from hetero.runtime.compiled import CompiledFunctionError
        f = hetero.load({str(path)!r})
        for i in range({len(calls)}):
            with np.load({str(tmp_path)!r} + f"/call{{i}}.npz") as a:
                inputs = [a[f"arr_{{j}}"] for j in range(len(a.files))]
            try:
                np.save({str(tmp_path)!r} + f"/result{{i}}.npy", f(*inputs))
            except CompiledFunctionError as error:
                print(i, error)
        """
    result = subprocess.run(
        [sys.executable, "-c", ONLY_THE_RUNTIME + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    errors = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    return [
        errors[str(i)] if str(i) in errors else np.load(tmp_path / f"result{i}.npy")
        for i in range(len(calls))
    ]


def _message(f: object, inputs: Sequence[np.ndarray]) -> str:
    with pytest.raises(CompiledFunctionError) as error:
        f(*inputs)  # type: ignore[operator]
    return str(error.value)


def test_a_fresh_process_runs_the_file_at_every_size(
    saved: tuple[Path, DynamicFunction], tmp_path: Path
) -> None:
    """Loaded where only the runtime imports, the file computes what the
    function compiled in memory and the reference interpreter do at each
    size, and refuses rows that differ, and empty rows, with their message."""
    path, f = saved
    calls = [_inputs(rows) for rows in ROWS] + [_inputs(5, 3), _inputs(0)]
    got = _in_a_fresh_process(path, calls, tmp_path)
    module = parse_module(PROGRAM)
    for inputs, result in zip(calls[: len(ROWS)], got):
        assert isinstance(result, np.ndarray)
        np.testing.assert_array_equal(result, f(*inputs))
        np.testing.assert_allclose(result, run(module, *inputs), rtol=1e-5, atol=1e-6)
    guard, empty = got[len(ROWS) :]
    assert guard == _message(f, calls[-2])
    assert "d0.0 != d1.0" in guard and "do not fit" in guard
    assert empty == _message(f, calls[-1])
    assert "at least one element" in empty


def test_load_gives_the_rules_the_compile_found(
    saved: tuple[Path, DynamicFunction],
) -> None:
    from hetero.runtime.dynamic import LoadedDynamicFunction

    path, f = saved
    loaded = hetero.load(path)
    assert isinstance(loaded, LoadedDynamicFunction)
    assert loaded.rules == f.rules
    assert loaded.rules.guards and loaded.rules.symbols == ((0, 0), (1, 0))
    a, b = _inputs(4)
    out = np.empty((4, 2, 2), np.float32)
    assert loaded(a=a, b=b, out=out) is out
    np.testing.assert_array_equal(out, f(a, b))
    with pytest.raises(CompiledFunctionError, match=r"out for .* shape \(4, 2, 2\)"):
        loaded(a, b, out=np.empty((3, 2, 2), np.float32))


def test_the_layout_of_a_dynamic_file(saved: tuple[Path, DynamicFunction]) -> None:
    """Version 2, its `dynamic` field as docs/deployment.md describes."""
    path, _ = saved
    manifest, _ = framing.unpack(artifact.MAGIC, 2, 2, path.read_bytes())
    fields = json.loads(manifest)
    assert fields["format"] == 2
    assert fields["inputs"][0]["shape"] == [-1, 8]
    dynamic = fields["dynamic"]
    assert dynamic["symbols"] == [[0, 0], [1, 0]]
    assert dynamic["outputs"] == [[[1, [[0, 0]]], 2, 2]]
    assert dynamic["max_sizes"] == []
    assert {
        "answers": [[[1, [[0, 0]]], "==", [1, [[1, 0]]], False]],
        "what": "relay.add needs two of its sizes equal",
        "failing": "d0.0 != d1.0",
    } in dynamic["guards"]


def test_a_damaged_dynamic_file_is_a_clean_error(
    saved: tuple[Path, DynamicFunction], tmp_path: Path
) -> None:
    path, _ = saved
    data = path.read_bytes()
    manifest, payload = framing.unpack(artifact.MAGIC, 2, 2, data)
    fields = json.loads(manifest)
    unknown = json.loads(manifest)
    unknown["dynamic"]["guards"][0]["answers"][0][1] = "<="
    missing = json.loads(manifest)
    del missing["dynamic"]["outputs"]
    symbol = json.loads(manifest)
    symbol["dynamic"]["symbols"][0] = [0]

    def changed(change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
        content = json.loads(manifest)
        change(content["dynamic"])
        return content

    first = fields["dynamic"]["symbols"][0]
    misfits = {
        "far-input": changed(lambda d: d["symbols"].__setitem__(0, [7, 0])),
        "static-axis": changed(lambda d: d["symbols"].__setitem__(0, [first[0], 1])),
        "negative": changed(lambda d: d["outputs"][0].__setitem__(0, [-1, [first]])),
        "unknown-symbol": changed(
            lambda d: d["outputs"][0].__setitem__(0, [1, [[5, 5]]])
        ),
        "rank": changed(lambda d: d["outputs"][0].append(3)),
        "max-sizes": changed(lambda d: d["max_sizes"].append([5, 5, 10])),
        "zero-size": changed(lambda d: d["outputs"][0].__setitem__(0, 0)),
        "boolean-size": changed(lambda d: d["outputs"][0].__setitem__(0, True)),
    }
    for name, content, message in [
        ("cut", data[: len(data) // 2], "truncated"),
        ("unknown", unknown, "unknown relation '<='"),
        ("missing", missing, "outputs"),
        ("symbol", symbol, "not a hetero compiled model"),
        ("newer", {**fields, "format": 3}, "version 3"),
        ("v1-with-rules", {**fields, "format": 1}, "version 1 with size rules"),
        (
            "v2-without",
            {k: v for k, v in fields.items() if k != "dynamic"},
            "version 2 without",
        ),
        *((n, c, "the size rules do not fit the code") for n, c in misfits.items()),
    ]:
        if isinstance(content, dict):
            version = content["format"]
            content = framing.pack(
                artifact.MAGIC, version, [json.dumps(content).encode(), payload]
            )
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ArtifactError, match=message):
            hetero.load(tmp_path / name)


def _transformer(table_rows: int) -> object:
    """A one-head attention block over `[batch, sequence, 8]`: a position
    table sliced to the sequence (its length the most the program holds,
    `max_sizes`), Q/K/V projections, `softmax(Q·Kᵀ)·V`, a residual add and
    a layer norm."""
    from test_onnx_dynamic import _F32, _RNG, _i64, _model, _node

    def weight(*shape: int) -> np.ndarray:
        return (_RNG.standard_normal(shape) * 0.3).astype(np.float32)

    nodes = [
        _node("Shape", ["x"], "shape"),
        _node("Slice", ["shape", "one", "two"], "length"),
        _node("Slice", ["table", "zero", "length", "one"], "rows"),
        _node("Add", ["x", "rows"], "h"),
        *(_node("MatMul", ["h", f"w{n}"], n) for n in "qkv"),
        _node("Transpose", ["k"], "kt", perm=[0, 2, 1]),
        _node("MatMul", ["q", "kt"], "s"),
        _node("Mul", ["s", "scale"], "scaled"),
        _node("Softmax", ["scaled"], "p", axis=-1),
        _node("MatMul", ["p", "v"], "a"),
        _node("Add", ["a", "h"], "r"),
        _node("LayerNormalization", ["r", "gamma", "beta"], axis=-1),
    ]
    constants = {
        "zero": _i64(0),
        "one": _i64(1),
        "two": _i64(2),
        "table": weight(1, table_rows, 8),
        **{f"w{n}": weight(8, 8) for n in "qkv"},
        "scale": np.array(8**-0.5, np.float32),
        "gamma": weight(8),
        "beta": weight(8),
    }
    return _model(nodes, {"x": (_F32, ("batch", "sequence", 8))}, constants)


def test_an_onnx_transformer_compiled_by_the_tools_runs_every_batch_and_sequence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`hetero-compile` of a model exported with a dynamic batch and
    sequence, then `hetero-run` of its file at two sizes: onnxruntime's
    results, and the interpreter's; a sequence longer than the position
    table is refused as in memory; `--random` asks for given inputs."""
    onnx = pytest.importorskip("onnx")
    onnxruntime = pytest.importorskip("onnxruntime")
    from test_onnx_dynamic import RTOL, _feeds

    from hetero.frontends.onnx import from_onnx
    from hetero.tools import hetero_compile, hetero_run

    model = _transformer(table_rows=16)
    source, compiled = tmp_path / "m.onnx", tmp_path / "m.hetero"
    onnx.save(model, source)
    assert (
        hetero_compile.main([str(source), "-o", str(compiled), "--target", TARGET]) == 0
    )
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    module = from_onnx(model)
    for sizes in ({"batch": 1, "sequence": 4}, {"batch": 3, "sequence": 7}):
        feeds = _feeds(model, sizes)
        np.savez(tmp_path / "in.npz", **feeds)
        out = tmp_path / "out.npz"
        inputs = str(tmp_path / "in.npz")
        assert (
            hetero_run.main([str(compiled), "--inputs", inputs, "--output", str(out)])
            == 0
        )
        with np.load(out) as results:
            got = results["result0"]
        (want,) = session.run(None, feeds)
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-5)
        np.testing.assert_allclose(got, run(module, feeds["x"]), rtol=RTOL, atol=1e-5)
    capsys.readouterr()
    long = np.zeros((2, 17, 8), np.float32)
    np.savez(tmp_path / "long.npz", x=long)
    assert hetero_run.main([str(compiled), "--inputs", str(tmp_path / "long.npz")]) == 1
    in_memory = hetero.compile(module, TARGET, dynamic="once")
    assert _message(in_memory, [long]) in capsys.readouterr().err
    assert hetero_run.main([str(compiled), "--random"]) == 1
    assert "needs a size for each ? dimension" in capsys.readouterr().err
    assert hetero_run.main([str(compiled), "--random", "--shape", "x=2,7,8"]) == 0
    assert "float32[2, 7, 8]" in capsys.readouterr().out
