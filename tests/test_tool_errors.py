"""Bad input to a tool is a located diagnostic and exit status 1.

The verifier's dominance check (a value defined before its uses), the one
place that turns errors into diagnostics (`run_tool`), hetero-run's checked
reading of `.npz` inputs and the ONNX importer's boundary (a failure names
the node, initializer or graph input being read).  tests/test_fuzz_inputs.py
runs the same tools on many random corruptions.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_fuzz_inputs import NPZ_PROGRAM, _declaring, _npy, _npz

import hetero
from hetero.context import parse_module
from hetero.tools import hetero_import_onnx, hetero_opt, hetero_run, hetero_translate
from hetero.utils.diagnostics import HeteroError, run_tool

USE_BEFORE_DEFINITION = """\
relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.add %1, %a : tensor<4xf32>
  %1 = relay.exp %a : tensor<4xf32>
  relay.return %0 : tensor<4xf32>
}
"""


def test_parse_module_rejects_a_use_before_its_definition() -> None:
    with pytest.raises(HeteroError, match="operand #0 does not dominate this use") as e:
        parse_module(USE_BEFORE_DEFINITION, "f.mlir")
    assert str(e.value.location) == "f.mlir:2:3"
    assert [n.message for n in e.value.notes] == [
        "operand defined here (after the use)"
    ]


def test_hetero_compile_rejects_a_use_before_its_definition() -> None:
    with pytest.raises(HeteroError, match="does not dominate"):
        hetero.compile(USE_BEFORE_DEFINITION)


@pytest.mark.parametrize(
    "main, options",
    [
        (hetero_opt.main, []),
        (hetero_run.main, ["--random"]),
        (hetero_translate.main, ["--emit=llvm-ir"]),
    ],
)
def test_tools_reject_a_use_before_its_definition(
    main, options, tmp_path: Path, capsys
) -> None:
    path = tmp_path / "f.mlir"
    path.write_text(USE_BEFORE_DEFINITION)
    assert (
        main(
            [
                str(path),
                *options,
                "-o" if main is not hetero_run.main else "--output",
                str(tmp_path / "out"),
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert f"{path}:2:3: error: operand #0 does not dominate this use" in err
    assert f"{path}:3:3: note: operand defined here (after the use)" in err
    assert not (tmp_path / "out").exists()


def test_an_unresolved_forward_reference_is_a_diagnostic(
    tmp_path: Path, capsys
) -> None:
    """A top-level op's operand named only inside an isolated function: the
    parser leaves it a forward reference, which xDSL's verifier of
    `IsolatedFromAbove` met with a `ValueError` (hetero-opt's exit 2)."""
    path = tmp_path / "f.mlir"
    path.write_text(
        "tir.for %j = %c0 to %c0 step %c0 {\n"
        "tir.prim_func @f(%a: memref<4xf32>, %x: f32) {\n"
        "  %c0 = arith.constant 0 : index\n"
        "  memref.store %x, %a[%j] : memref<4xf32>\n"
        "}\n"
        "}\n"
    )
    assert hetero_opt.main([str(path)]) == 1
    assert f"{path}:1:1: error: operand #0 is never defined" in capsys.readouterr().err


def test_a_verifier_raising_a_plain_exception_is_a_diagnostic() -> None:
    """xDSL's memref.store verifier raises `Exception`, not `VerifyException`."""
    text = (
        "func.func @f(%a: memref<8xf32>, %z: f32) {\n"
        "  memref.store %z, %a[] : memref<8xf32>\n"
        "  func.return\n"
        "}\n"
    )
    with pytest.raises(HeteroError, match="Expected an index for each dimension") as e:
        parse_module(text, "f.mlir")
    assert str(e.value.location) == "f.mlir:2:3"


def test_a_lexer_error_at_the_first_character() -> None:
    with pytest.raises(HeteroError, match="Unexpected character") as e:
        parse_module("\x1a", "f.mlir")
    assert str(e.value.location) == "f.mlir:1:1"


# ----------------------------------------------------------------------------
# run_tool: where the tools' errors become diagnostics
# ----------------------------------------------------------------------------


def _raising(error: BaseException):
    def body() -> int:
        raise error

    return body


def test_run_tool_statuses(capsys, monkeypatch) -> None:
    monkeypatch.delenv("HETERO_DEBUG", raising=False)
    assert run_tool("t", "in.mlir", lambda: 0) == 0
    assert run_tool("t", "in.mlir", _raising(HeteroError("bad"))) == 1
    assert capsys.readouterr().err == "in.mlir: error: bad\n"
    assert run_tool("t", "in.mlir", _raising(OSError("gone")), (OSError,)) == 1
    assert capsys.readouterr().err == "t: error: gone\n"
    assert run_tool("t", "in.mlir", _raising(MemoryError())) == 1
    assert capsys.readouterr().err == "t: error: out of memory (an allocation failed)\n"
    assert run_tool("t", "in.mlir", _raising(KeyError("k"))) == 2
    assert capsys.readouterr().err.startswith("t: internal error: KeyError: 'k'\n")
    monkeypatch.setenv("HETERO_DEBUG", "1")
    with pytest.raises(KeyError):
        run_tool("t", "in.mlir", _raising(KeyError("k")))


# ----------------------------------------------------------------------------
# hetero-run
# ----------------------------------------------------------------------------


def test_hetero_run_rejects_an_entry_returning_a_function(
    tmp_path: Path, capsys
) -> None:
    path = tmp_path / "f.mlir"
    path.write_text(
        "relay.func @main(%a: tensor<4xf32>) -> ((tensor<4xf32>) -> tensor<4xf32>) {\n"
        "  %f = relay.fn (%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "    relay.return %x : tensor<4xf32>\n"
        "  }\n"
        "  relay.return %f : (tensor<4xf32>) -> tensor<4xf32>\n"
        "}\n"
    )
    assert hetero_run.main([str(path), "--random"]) == 1
    assert f"{path}:1:1: error: @main returns (tensor<4xf32>) -> tensor<4xf32>" in (
        capsys.readouterr().err
    )


X = np.ones((2, 3), np.float32)
N = np.zeros((1, 3), np.int32)


@pytest.mark.parametrize(
    "data, message",
    [
        (
            _npy(X),
            "in.npz is not a readable .npz file (BadZipFile: File is not a zip file)",
        ),
        (b"", "in.npz is not a readable .npz file"),
        (_npz({"x": X, "n": N})[:100], "in.npz is not a readable .npz file"),
        (
            _npz({"x": X, "n": _declaring((5 * 2**32, 3), "<i4")}),
            "in.npz: n.npy holds 24 bytes of data, its header declares 257698037760",
        ),
        (
            _npz({"x": X, "n": _declaring((-2, 3), "<i4")}),
            "in.npz: input n is int32[-2, 3]; the parameter is tensor<?x3xi32>",
        ),
        (
            _npz({"x": np.ones((2, 3)), "n": N}),
            "in.npz: input x is float64[2, 3]; the parameter is tensor<2x3xf32>",
        ),
        (
            _npz({"x": X.T, "n": N}),
            "in.npz: input x is float32[3, 2]; the parameter is tensor<2x3xf32>",
        ),
        (
            _npz({"x": X, "n": b"hello"}),
            "in.npz is not a readable .npz file (ValueError: EOF",
        ),
        (_npz({"x": X}), "in.npz lacks the inputs n (or arg1) (has x)"),
    ],
    ids=[
        "npy",
        "empty",
        "truncated",
        "huge",
        "negative",
        "dtype",
        "shape",
        "not-npy",
        "missing",
    ],
)
def test_hetero_run_bad_npz(data: bytes, message: str, tmp_path: Path, capsys) -> None:
    program, inputs = tmp_path / "main.mlir", tmp_path / "in.npz"
    program.write_text(NPZ_PROGRAM)
    inputs.write_bytes(data)
    assert hetero_run.main([str(program), "--inputs", str(inputs)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"hetero-run: error: {tmp_path}/") and message in err, err


def test_hetero_run_reads_npz_by_position_in_any_byte_order(
    tmp_path: Path, capsys
) -> None:
    program, inputs = tmp_path / "main.mlir", tmp_path / "in.npz"
    program.write_text(NPZ_PROGRAM)
    x = np.asfortranarray(np.arange(6, dtype=">f4").reshape(2, 3))
    np.savez_compressed(inputs, arg0=x, arg1=np.zeros((4, 3), np.int32))
    assert hetero_run.main([str(program), "--inputs", str(inputs)]) == 0
    assert "result 0: float32[2, 3] sum=30" in capsys.readouterr().out


# ----------------------------------------------------------------------------
# hetero-import-onnx
# ----------------------------------------------------------------------------


def _import(model, tmp_path: Path, capsys) -> str:
    """hetero-import-onnx's stderr on `model`, which must fail leaving no file."""
    import onnx

    path, out = tmp_path / "m.onnx", tmp_path / "m.mlir"
    onnx.save(model, path)
    assert hetero_import_onnx.main([str(path), "-o", str(out)]) == 1
    assert not out.exists()
    err = capsys.readouterr().err
    assert err.startswith(f"{path}: error: ") and "Traceback" not in err
    return err


def _relu(inputs: list[str], dims: list[int] | None = None, initializers=()):
    onnx = pytest.importorskip("onnx")
    from onnx import helper

    graph = helper.make_graph(
        [helper.make_node("Relu", inputs, ["y"], name="relu")],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, dims or [2, 3])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
        list(initializers),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_import_names_a_node_input_that_names_no_tensor(tmp_path: Path, capsys) -> None:
    err = _import(_relu(["nothing"]), tmp_path, capsys)
    assert (
        "ONNX node 'relu' (Relu): input 0 'nothing' is no graph input, initializer"
        in err
    )


def test_import_names_a_bad_initializer(tmp_path: Path, capsys) -> None:
    pytest.importorskip("onnx")
    from onnx import numpy_helper

    weight = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
    weight.dims[1] = 4
    err = _import(_relu(["w"], initializers=[weight]), tmp_path, capsys)
    assert (
        "initializer 'w': ValueError: cannot reshape array of size 6 into shape (2,4)"
        in err
    )


def test_import_rejects_a_negative_dimension(tmp_path: Path, capsys) -> None:
    err = _import(_relu(["x"], dims=[2, -3]), tmp_path, capsys)
    assert "graph input 'x': negative dimension in [2, -3]" in err


def test_import_converts_a_converter_failure_at_the_node(
    tmp_path: Path, capsys
) -> None:
    """A required attribute missing reaches the converter unchecked: its
    failure becomes a diagnostic naming the node, not a traceback."""
    model = _relu(["x"], dims=[1, 1, 4, 4])
    model.graph.node[0].op_type = "MaxPool"  # without its kernel_shape
    err = _import(model, tmp_path, capsys)
    assert "ONNX node 'relu' (MaxPool): KeyError: 'kernel_shape'" in err


def test_import_writes_nothing_that_does_not_parse_back(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """The importer re-reads what it prints: a type that prints but does
    not parse (a negative dimension, written `tensor<-5xf32>`) is an error."""
    pytest.importorskip("onnx")
    from xdsl.dialects.builtin import Float32Type, ModuleOp, TensorType

    from hetero.dialects import relay
    from hetero.frontends import onnx as frontend

    def unparsable(*_args, **_kwargs) -> ModuleOp:
        t = TensorType(Float32Type(), [-5])
        func = relay.FuncOp("main", [t], t)
        func.body.block.add_op(relay.ReturnOp(func.body.block.args[0]))
        return ModuleOp([func])

    monkeypatch.setattr(frontend, "from_onnx", unparsable)
    err = _import(_relu(["x"]), tmp_path, capsys)
    assert "does not parse back" in err
