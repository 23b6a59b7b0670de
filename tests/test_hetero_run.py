"""hetero-run: runs a relay entry function on random or given inputs."""

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

from hetero.tools.hetero_run import main

EXAMPLE = Path(__file__).parent.parent / "examples" / "multi_target.mlir"


def test_random_inputs_run_and_write_results(tmp_path: Path, capsys):
    out = tmp_path / "out.npz"
    assert main([str(EXAMPLE), "--random", "--output", str(out)]) == 0
    assert "result 0: float32[5, 7]" in capsys.readouterr().out
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((5, 7)).astype(np.float32) for _ in range(2))
    np.testing.assert_allclose(np.load(out)["result0"], np.exp(a + b) ** 2, rtol=1e-5)


def test_inputs_from_npz_by_parameter_name(tmp_path: Path):
    a = np.ones((5, 7), np.float32)
    b = np.zeros((5, 7), np.float32)
    np.savez(tmp_path / "in.npz", a=a, b=b)
    assert (
        main(
            [
                str(EXAMPLE),
                "--inputs",
                str(tmp_path / "in.npz"),
                "--output",
                str(tmp_path / "o.npz"),
            ]
        )
        == 0
    )
    np.testing.assert_allclose(
        np.load(tmp_path / "o.npz")["result0"], np.exp(a + b) ** 2, rtol=1e-6
    )


def test_missing_inputs_are_named(tmp_path: Path, capsys):
    np.savez(tmp_path / "in.npz", a=np.ones((5, 7), np.float32))
    assert main([str(EXAMPLE), "--inputs", str(tmp_path / "in.npz")]) == 1
    assert "lacks the inputs b" in capsys.readouterr().err


def test_unknown_entry_and_bad_source(tmp_path: Path, capsys):
    assert main([str(EXAMPLE), "--random", "--entry", "nope"]) == 1
    assert "no relay.func @nope" in capsys.readouterr().err
    bad = tmp_path / "bad.mlir"
    bad.write_text("relay.func @main(")
    assert main([str(bad), "--random"]) == 1
    assert f"{bad}:1:" in capsys.readouterr().err


def test_wrong_input_shape_is_a_clean_error(tmp_path: Path, capsys):
    np.savez(
        tmp_path / "in.npz",
        a=np.ones((5, 6), np.float32),
        b=np.ones((5, 7), np.float32),
    )
    assert main([str(EXAMPLE), "--inputs", str(tmp_path / "in.npz")]) == 1
    assert "error" in capsys.readouterr().err


def _chain(tmp_path: Path) -> str:
    from test_plan_memory import CHAIN as text

    path = tmp_path / "chain.mlir"
    path.write_text(text)
    return str(path)


def test_compile_runs_native_code_and_reports_memory(tmp_path: Path, capsys):
    out = tmp_path / "out.npz"
    assert (
        main(
            [
                _chain(tmp_path),
                "--random",
                "--compile",
                "--repeat",
                "2",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "native:" in printed and "median of 2" in printed
    assert "memory cpu:0:" in printed
    assert "reference interpreter" not in printed
    assert np.load(out)["result0"].shape == (64, 64)


def test_compile_says_when_the_code_comes_from_the_compile_cache(
    tmp_path: Path, capsys, monkeypatch
):
    monkeypatch.setenv("HETERO_CACHE_DIR", str(tmp_path / "cache"))
    lines = []
    for _ in range(2):
        assert main([_chain(tmp_path), "--random", "--compile"]) == 0
        lines.append(capsys.readouterr().out.splitlines()[0])
    assert lines[0].startswith("compile: ") and lines[0].endswith(" ms")
    assert lines[1].endswith(" ms (code from the compile cache)")


def test_profile_prints_each_kernel_in_the_network(tmp_path: Path, capsys):
    assert main([_chain(tmp_path), "--random", "--profile", "--repeat", "2"]) == 0
    printed = capsys.readouterr().out
    header = next(line for line in printed.splitlines() if line.startswith("profile:"))
    kernels = int(header.split()[1])
    rows = [line for line in printed.splitlines() if line.rstrip().endswith("_tir")]
    assert kernels == len(rows) >= 2
    assert all(" ms " in row and "x  fused_" in row for row in rows)
    assert "reference interpreter" not in printed


def test_check_compares_with_the_reference(tmp_path: Path, capsys):
    assert main([_chain(tmp_path), "--random", "--check"]) == 0
    assert "check result 0: ok" in capsys.readouterr().out
    # With no tolerance at all, summation-order rounding is a mismatch: exit 1.
    assert (
        main([_chain(tmp_path), "--random", "--check", "--rtol", "0", "--atol", "0"])
        == 1
    )
    assert "check result 0: MISMATCH" in capsys.readouterr().out


def test_compile_errors_are_located(tmp_path: Path, capsys):
    path = tmp_path / "if.mlir"
    path.write_text(
        """
relay.func @main(%x: tensor<2xf32>, %c: tensor<i1>) -> tensor<2xf32> {
  %r = relay.if %c : tensor<i1> -> tensor<2xf32> {
    relay.yield %x : tensor<2xf32>
  } else {
    relay.yield %x : tensor<2xf32>
  }
  relay.return %r : tensor<2xf32>
}
"""
    )
    assert main([str(path), "--random", "--compile"]) == 1
    assert f"{path}:3:" in capsys.readouterr().err


def test_compile_with_dynamic_shapes_specializes_for_the_inputs(tmp_path: Path, capsys):
    path = tmp_path / "dyn.mlir"
    path.write_text(
        """
relay.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = relay.nn.softmax %x : tensor<?x4xf32>
  relay.return %0 : tensor<?x4xf32>
}
"""
    )
    np.savez(tmp_path / "in.npz", x=np.ones((3, 4), np.float32))
    assert main([str(path), "--inputs", str(tmp_path / "in.npz"), "--check"]) == 0
    out = capsys.readouterr().out
    assert "check result 0: ok" in out and "result 0: float32[3, 4]" in out


def test_unwritable_output_is_a_clean_error(tmp_path: Path, capsys):
    assert (
        main([str(EXAMPLE), "--random", "--output", str(tmp_path / "no" / "o.npz")])
        == 1
    )
    assert "hetero-run: error:" in capsys.readouterr().err


def _imported(tmp_path: Path) -> tuple[Path, Path]:
    """An ONNX model (sigmoid of a 4x5 input) and the module that
    hetero-import-onnx makes of it."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    from hetero.tools.hetero_import_onnx import main as import_onnx

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, (4, 5))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, (4, 5))
    graph = helper.make_graph(
        [helper.make_node("Sigmoid", ["x"], ["y"])], "g", [x], [y]
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8
    )
    path, module = tmp_path / "model.onnx", tmp_path / "model.mlir"
    onnx.save(model, path)
    assert import_onnx([str(path), "-o", str(module)]) == 0
    return path, module


def test_check_compares_an_imported_model_with_onnxruntime(tmp_path: Path, capsys):
    pytest.importorskip("onnxruntime")
    path, module = _imported(tmp_path)
    assert main([str(module), "--random", "--check"]) == 0
    out = capsys.readouterr().out
    assert "check result 0: ok" in out
    assert f"({path})" in out and "onnxruntime check result 0: ok" in out


def test_onnxruntime_catches_what_the_reference_interpreter_cannot(
    tmp_path: Path, capsys
):
    """A module that no longer computes what the model does (here edited by
    hand) passes against the interpreter, which runs the same module, and
    fails against onnxruntime, which runs the model."""
    pytest.importorskip("onnxruntime")
    _, module = _imported(tmp_path)
    module.write_text(module.read_text().replace("relay.sigmoid", "relay.tanh"))
    assert main([str(module), "--random", "--check"]) == 1
    out = capsys.readouterr().out
    assert "check result 0: ok" in out and "onnxruntime check result 0: MISMATCH" in out


def test_a_model_changed_or_gone_since_the_import_is_not_compared(
    tmp_path: Path, capsys
):
    path, module = _imported(tmp_path)
    path.write_bytes(path.read_bytes() + b"\n")
    assert main([str(module), "--random", "--check"]) == 0
    assert (
        f"onnxruntime: not compared ({path} changed since it was imported)"
        in capsys.readouterr().out
    )
    path.unlink()
    assert main([str(module), "--random", "--check"]) == 0
    assert (
        "onnxruntime: not compared ([Errno 2] No such file" in capsys.readouterr().out
    )


def test_without_onnxruntime_the_check_says_so(tmp_path: Path, capsys, monkeypatch):
    _, module = _imported(tmp_path)
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "onnxruntime" else find_spec(name, *a),
    )
    assert main([str(module), "--random", "--check"]) == 0
    assert "onnxruntime: not compared (not installed)" in capsys.readouterr().out


def test_a_malformed_source_record_is_a_clean_error(tmp_path: Path, capsys):
    _, module = _imported(tmp_path)
    text = module.read_text()
    module.write_text(
        re.sub(r"onnx\.source = \{[^}]*\}", "onnx.source = 3 : i64", text)
    )
    assert main([str(module), "--random", "--check"]) == 1
    assert (
        'hetero-run: error: onnx.source should be {path = "...", sha256 = "..."}'
        in capsys.readouterr().err
    )


def test_random_inputs_for_a_dynamic_dimension_ask_for_given_inputs(
    tmp_path: Path, capsys
):
    path = tmp_path / "dyn.mlir"
    path.write_text(
        """
relay.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = relay.nn.softmax %x : tensor<?x4xf32>
  relay.return %0 : tensor<?x4xf32>
}
"""
    )
    assert main([str(path), "--random"]) == 1
    err = capsys.readouterr().err
    assert "x is ?x4; give --shape x=D,D,... or the inputs with --inputs" in err
    assert "negative dimensions" not in err
    assert main([str(path), "--random", "--shape", "x=3,5"]) == 1
    assert "--shape x: [3, 5] does not fit ?x4" in capsys.readouterr().err
    assert main([str(path), "--random", "--shape", "x=3,4", "--compile"]) == 0
    assert "float32[3, 4]" in capsys.readouterr().out


def test_trace_writes_every_profiled_call(tmp_path: Path, capsys):
    trace = tmp_path / "run.json"
    assert (
        main([_chain(tmp_path), "--random", "--trace", str(trace), "--repeat", "2"])
        == 0
    )
    assert "profile:" in capsys.readouterr().out  # --trace profiles
    events = json.loads(trace.read_text())["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert len(slices) % 2 == 0 and slices
    half = len(slices) // 2  # the two runs, one after the other
    assert [e["name"] for e in slices[:half]] == [e["name"] for e in slices[half:]]
    assert all(
        e["name"].endswith("_tir") and e["args"]["device"] == "cpu" for e in slices
    )
