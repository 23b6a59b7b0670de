"""`hetero-import-onnx --weights-file`: the blobs in a binary side file that
the `.mlir` names with its SHA-256 (`hetero.utils.dense_resources`), read back
by every parser of hetero; a missing, changed or corrupted file is a located
error."""

import hashlib
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from hetero.context import parse_module
from hetero.interpreter.relay import run
from hetero.tools.hetero_import_onnx import main as import_onnx
from hetero.tools.hetero_opt import main as hetero_opt
from hetero.utils.diagnostics import HeteroError


def _model(path: Path) -> Path:
    """A conv (8x3x3x3 weights) and a bias add: two blobs."""
    rng = np.random.default_rng(0)
    weights = {
        "w": rng.standard_normal((8, 3, 3, 3)).astype(np.float32),
        "b": rng.standard_normal((1, 8, 1, 1)).astype(np.float32),
    }
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"]),
            helper.make_node("Add", ["c", "b"], ["y"]),
        ],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, (1, 3, 6, 6))],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8
    )
    onnx.save(model, path)
    return path


@pytest.fixture
def imported(tmp_path: Path) -> Path:
    """The model imported with its weights beside it (`m.mlir`, `m.weights`)."""
    model = _model(tmp_path / "m.onnx")
    assert (
        import_onnx([str(model), "-o", str(tmp_path / "m.mlir"), "--weights-file"]) == 0
    )
    return tmp_path / "m.mlir"


X = np.random.default_rng(1).standard_normal((1, 3, 6, 6)).astype(np.float32)


def _result(path: Path) -> np.ndarray:
    return np.asarray(run(parse_module(path.read_text(), str(path)), X))


def test_weights_go_to_the_side_file_and_read_back(imported: Path, tmp_path: Path):
    inline = tmp_path / "inline.mlir"
    assert import_onnx([str(tmp_path / "m.onnx"), "-o", str(inline)]) == 0
    text = imported.read_text()
    weights = (tmp_path / "m.weights").read_bytes()
    # The blob's key is `w`, or `w_1`... where an earlier import in this
    # process holds a `w`: resource names are process-wide.
    assert "{-#" not in text and re.search(r"dense_resource<w(_\d+)?>", text)
    digest = hashlib.sha256(weights).hexdigest()
    assert f'hetero.weights = {{file = "m.weights", sha256 = "{digest}"}}' in text
    assert weights.startswith(b"HETEROW1") and len(weights) >= (8 * 27 + 8) * 4
    np.testing.assert_array_equal(_result(imported), _result(inline))


def test_hetero_opt_output_carries_its_blobs(imported: Path, tmp_path: Path):
    """Printed again (anywhere), the module has its blobs inline."""
    elsewhere = tmp_path / "out" / "again.mlir"
    elsewhere.parent.mkdir()
    assert hetero_opt([str(imported), "-o", str(elsewhere)]) == 0
    text = elsewhere.read_text()
    assert "hetero.weights" not in text and re.search(r"\bw[_0-9]*: \"0x04000000", text)
    np.testing.assert_array_equal(_result(elsewhere), _result(imported))


def test_a_relative_weights_path_and_twice_in_one_process(tmp_path: Path):
    model = _model(tmp_path / "m.onnx")
    (tmp_path / "sub").mkdir()
    out = tmp_path / "sub" / "m.mlir"
    assert (
        import_onnx(
            [str(model), "-o", str(out), "--weights-file", str(tmp_path / "w.bin")]
        )
        == 0
    )
    assert 'file = "../w.bin"' in out.read_text()
    np.testing.assert_array_equal(
        _result(out), _result(out)
    )  # keys renamed by the 2nd parse


def _fails(path: Path, capsys) -> str:
    assert hetero_opt([str(path)]) == 1
    return capsys.readouterr().err


def test_missing_weights_file_is_located(imported: Path, tmp_path: Path, capsys):
    (tmp_path / "m.weights").unlink()
    err = _fails(imported, capsys)
    assert (
        f"{imported}:1:1: error: cannot read weights file '{tmp_path / 'm.weights'}'"
        in err
    )
    with pytest.raises(HeteroError, match="No such file"):
        parse_module(imported.read_text(), str(imported))


def test_a_changed_weights_file_fails_its_hash(imported: Path, tmp_path: Path, capsys):
    weights = tmp_path / "m.weights"
    data = bytearray(weights.read_bytes())
    data[-5] ^= 1
    weights.write_bytes(bytes(data))
    assert f"{imported}:1:1: error: weights file" in (err := _fails(imported, capsys))
    assert "does not match its sha256" in err
    weights.write_bytes(bytes(data[:100]))  # truncated
    assert "does not match its sha256" in _fails(imported, capsys)


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda d: b"NOTHETER" + d[8:],  # magic
        lambda d: d[:8] + (10**9).to_bytes(8, "little") + d[16:],  # index past the end
        lambda d: d[:16] + b"{]" + d[18:],  # index not JSON
        lambda d: d.replace(b": [0, ", b": [9999999, ", 1),  # blob past the end
        lambda d: d.replace(b": [0, ", b": [0, -1", 1),  # a negative size
    ],
)
def test_a_corrupted_weights_file_is_located(
    imported: Path, tmp_path: Path, capsys, corrupt
):
    """Corrupted, with the module's hash updated to match: the header is checked."""
    weights = tmp_path / "m.weights"
    data = corrupt(weights.read_bytes())
    weights.write_bytes(data)
    text = re.sub(
        r'(hetero.weights = \{file = "m.weights", sha256 = ")\w+',
        lambda m: m[1] + hashlib.sha256(data).hexdigest(),
        imported.read_text(),
    )
    imported.write_text(text)
    assert f"{imported}:1:1: error: '{weights}' is not a hetero weights file" in _fails(
        imported, capsys
    )


def test_weights_file_needs_an_output(tmp_path: Path, capsys):
    with pytest.raises(SystemExit):
        import_onnx([str(_model(tmp_path / "m.onnx")), "--weights-file"])
    assert "--weights-file needs -o" in capsys.readouterr().err


def test_tools_find_the_weights_beside_the_mlir(
    imported: Path, tmp_path: Path, monkeypatch, capsys
):
    """hetero-run and hetero-compile, run from another folder."""
    from hetero.tools.hetero_compile import main as hetero_compile
    from hetero.tools.hetero_run import main as hetero_run

    monkeypatch.chdir(tmp_path.parent)
    assert hetero_run([str(imported), "--random", "--check"]) == 0
    assert "check result 0: ok" in capsys.readouterr().out
    assert hetero_compile([str(imported), "-o", str(tmp_path / "m.hetero")]) == 0
