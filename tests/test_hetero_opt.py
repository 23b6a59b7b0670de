"""hetero-opt as a user meets it: diagnostics, atomic output, timing, IR dumps."""

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hetero.tools.hetero_opt import main

GOOD = '"test.op"() {d = #target.vdevice<cuda:0>} : () -> ()\n'
BAD = '"test.op"() {d = #target.vdevice<tpu:0>} : () -> ()\n'


@pytest.fixture
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.mlir"
    path.write_text(GOOD)
    return path


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    path = tmp_path / "bad.mlir"
    path.write_text("\n" + BAD)
    return path


def test_error_is_file_line_col_and_exit_code_is_one(bad: Path, capsys):
    assert main([str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:2:34: error: unknown device type 'tpu'")
    assert "Traceback" not in err


def test_output_file_is_written(good: Path, tmp_path: Path):
    out = tmp_path / "out.mlir"
    assert main([str(good), "-o", str(out)]) == 0
    assert "#target.vdevice<cuda:0>" in out.read_text()


def test_failed_run_leaves_no_output_file(bad: Path, tmp_path: Path):
    out = tmp_path / "out.mlir"
    assert main([str(bad), "-o", str(out)]) == 1
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.mlir"]  # no temp file left


def test_failed_run_never_clobbers_the_input(bad: Path):
    before = bad.read_text()
    assert main([str(bad), "-o", str(bad)]) == 1
    assert bad.read_text() == before


def test_failed_run_keeps_an_existing_output_file(bad: Path, tmp_path: Path):
    out = tmp_path / "out.mlir"
    out.write_text("previous")
    assert main([str(bad), "-o", str(out)]) == 1
    assert out.read_text() == "previous"


def test_missing_input_file(tmp_path: Path, capsys):
    assert main([str(tmp_path / "nope.mlir")]) == 1
    assert "cannot read input file" in capsys.readouterr().err


def test_unknown_pass_is_a_clean_error(good: Path, capsys):
    assert main([str(good), "-p", "no-such-pass"]) == 1
    assert "invalid pass pipeline 'no-such-pass'" in capsys.readouterr().err


def test_malformed_pass_options_are_a_clean_error(good: Path, capsys):
    assert main([str(good), "-p", "specialize-shapes{shapes=-1x7}"]) == 1
    assert "Malformed pass arguments" in capsys.readouterr().err


def test_split_input_file_reports_every_chunk(tmp_path: Path, capsys):
    path = tmp_path / "split.mlir"
    path.write_text(BAD + "// -----\n" + GOOD + "// -----\n" + BAD)
    assert main([str(path), "--split-input-file"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:1:34: error" in err and f"{path}:5:34: error" in err


def test_split_output_is_separated(tmp_path: Path, capsys):
    path = tmp_path / "split.mlir"
    path.write_text(GOOD + "// -----\n" + GOOD)
    assert main([str(path), "--split-input-file"]) == 0
    assert capsys.readouterr().out.count("// -----") == 1


def test_timing_table_lists_parse_passes_and_total(good: Path, capsys):
    assert main([str(good), "--timing", "-p", "canonicalize,cse"]) == 0
    err = capsys.readouterr().err
    for row in ("(parse)", "canonicalize", "cse", "(print)", "Total"):
        assert row in err


def test_print_ir_after_all(good: Path, capsys):
    assert main([str(good), "--print-ir-after-all", "-p", "canonicalize,cse"]) == 0
    err = capsys.readouterr().err
    assert "IR Dump After canonicalize" in err and "IR Dump After cse" in err


def test_generic_printing(good: Path, capsys):
    assert main([str(good), "--mlir-print-op-generic"]) == 0
    assert '"builtin.module"() ({' in capsys.readouterr().out


LOWERED = """func.func @f(%x: f32, %v: vector<4xf32>, %i: index, %m: memref<8xf32>) -> (i32, f32) {
  %n = arith.fptosi %x : f32 to i32
  %e = vector.extract %v[2] : f32 from vector<4xf32>
  memref.prefetch %m[%i], read, locality<3>, data : memref<8xf32>
  func.return %n, %e : i32, f32
}
"""


def test_lowered_ops_that_xdsl_lacks_parse_back(tmp_path: Path, capsys):
    """lower-to-llvm's output names upstream ops that xDSL's llvm dialect
    lacks (`llvm.fptosi`, `llvm.extractelement`, `llvm.intr.prefetch`): hetero-opt
    reads them back, as it reads `memref.prefetch`."""
    source = tmp_path / "f.mlir"
    source.write_text(LOWERED)
    assert main([str(source), "-p", "lower-to-llvm"]) == 0
    lowered = capsys.readouterr().out
    for name in ("llvm.fptosi", "llvm.extractelement", "llvm.intr.prefetch"):
        assert name in lowered
    again = tmp_path / "lowered.mlir"
    again.write_text(lowered)
    assert main([str(again)]) == 0
    assert capsys.readouterr().out == lowered


def test_upstream_extras_load_into_a_context_that_has_them():
    """`load_upstream_extras` on a context that has them (`make_context`'s)
    leaves them: an extension may call it on any context."""
    from hetero.context import load_upstream_extras, make_context

    ctx = make_context()
    load_upstream_extras(ctx)
    assert ctx.get_optional_op("memref.prefetch") is not None


# -- --verify-diagnostics ----------------------------------------------------------


def test_verify_diagnostics_accepts_a_matching_annotation(tmp_path: Path):
    path = tmp_path / "v.mlir"
    path.write_text("// expected-error@+1 {{unknown device type 'tpu'}}\n" + BAD)
    assert main([str(path), "--verify-diagnostics"]) == 0


def test_verify_diagnostics_rejects_a_wrong_line(tmp_path: Path, capsys):
    path = tmp_path / "v.mlir"
    path.write_text("// expected-error@+2 {{unknown device type 'tpu'}}\n" + BAD + GOOD)
    assert main([str(path), "--verify-diagnostics"]) == 1
    err = capsys.readouterr().err
    assert "unexpected error: unknown device type 'tpu'" in err
    assert "was not produced" in err


def test_verify_diagnostics_rejects_a_missing_error(tmp_path: Path, capsys):
    path = tmp_path / "v.mlir"
    path.write_text("// expected-error@below {{boom}}\n" + GOOD)
    assert main([str(path), "--verify-diagnostics"]) == 1
    assert 'expected error "boom" was not produced' in capsys.readouterr().err


def test_verify_diagnostics_same_line_and_above(tmp_path: Path):
    path = tmp_path / "v.mlir"
    path.write_text(BAD.rstrip("\n") + " // expected-error {{unknown device type}}\n")
    assert main([str(path), "--verify-diagnostics"]) == 0
    path.write_text(BAD + "// expected-error@above {{unknown device type}}\n")
    assert main([str(path), "--verify-diagnostics"]) == 0


def test_internal_errors_print_no_traceback(good: Path, monkeypatch, capsys):
    from hetero.tools import hetero_opt

    def explode(*_args, **_kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(hetero_opt.HeteroOptMain, "run", explode)
    monkeypatch.delenv("HETERO_DEBUG", raising=False)
    assert main([str(good)]) == 2
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: boom" in err and "Traceback" not in err


def test_console_script_runs_as_a_process(bad: Path):
    proc = subprocess.run(
        [sys.executable, "-m", "hetero.tools.hetero_opt", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert (
        "error: unknown device type" in proc.stderr and "Traceback" not in proc.stderr
    )


def test_unterminated_string_on_a_long_line_is_a_prompt_error(tmp_path: Path, capsys):
    # xDSL's string regex backtracked exponentially here (utils/xdsl_fixes.py).
    path = tmp_path / "quote.mlir"
    path.write_text('"test.op"() {s = "' + "abc def " * 40 + "} : () -> ()\n")
    assert main([str(path)]) == 1
    assert "closing string literal" in capsys.readouterr().err


# -- issue 36: help, MLIR spellings, standard input, -t llvm --------------------

RELAY = """relay.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = relay.nn.softmax %x : tensor<2x4xf32>
  relay.return %0 : tensor<2x4xf32>
}
"""


def test_help_lists_passes_grouped_with_descriptions_and_options(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--help"])
    assert exit.value.code == 0
    out = capsys.readouterr().out
    hetero_part, xdsl_part = out.split("\nhetero passes:\n", 1)[1].split(
        "\nxDSL passes:\n"
    )
    assert re.search(
        r"^  fuse-ops +Outline groups of fusable tensor ops", hetero_part, re.MULTILINE
    )
    assert re.search(
        r"^  lower-aot-main .*\n      entry: str = main$", hetero_part, re.MULTILINE
    )
    assert re.search(
        r"^  canonicalize +Applies all canonicalization patterns",
        xdsl_part,
        re.MULTILINE,
    )
    assert "inline,plan-devices" not in out  # no comma-joined list
    assert (
        "annotations (also warning, note, remark); exit 1 on any mismatch"
        in " ".join(out.split())
    )


@pytest.mark.parametrize(
    "flags",
    [
        ["--time-passes", "--print-between-passes"],
        ["-mlir-timing", "-print-ir-after-all"],
    ],
)
def test_xdsl_and_single_dash_pass_flags_time_and_print(tmp_path: Path, capsys, flags):
    path = tmp_path / "m.mlir"
    path.write_text(RELAY)
    assert main([str(path), "-p", "inline,fuse-ops", *flags]) == 0
    err = capsys.readouterr().err
    assert (
        "// -----// IR Dump After fuse-ops //----- //" in err
        and "@fused_nn_softmax" in err
    )
    assert (
        re.search(r"\(\s*\d+\.\d%\)  fuse-ops", err) and "Execution time report" in err
    )


def test_mlir_pass_pipeline_and_split_input_file_spellings(tmp_path: Path, capsys):
    path = tmp_path / "m.mlir"
    path.write_text(RELAY + "// -----\n" + RELAY)
    assert (
        main(
            [str(path), "-split-input-file", "-pass-pipeline=builtin.module(fuse-ops)"]
        )
        == 0
    )
    assert capsys.readouterr().out.count("relay.func private @fused_nn_softmax") == 2


def test_mlir_spellings_leave_short_options_and_values_alone():
    from hetero.tools.hetero_opt import mlir_spellings

    longs = {"--split-input-file", "--passes"}
    argv = ["-split-input-file", "-pfuse-ops", "-o", "-", "--", "-passes"]
    assert mlir_spellings(argv, longs) == [
        "--split-input-file",
        "-pfuse-ops",
        "-o",
        "-",
        "--",
        "-passes",
    ]


def test_dash_reads_standard_input(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(RELAY))
    assert main(["-", "-p", "fuse-ops"]) == 0
    assert "@fused_nn_softmax" in capsys.readouterr().out


def test_llvm_target_on_relay_ir_says_what_to_run_first(tmp_path: Path, capsys):
    path = tmp_path / "m.mlir"
    path.write_text(RELAY)
    assert main([str(path), "-t", "llvm"]) == 1
    err = capsys.readouterr().err
    assert f"{path}: error: -t llvm cannot translate 'relay.func'" in err
    assert "convert-tir-to-scf,lower-to-llvm" in err and "hetero-translate" in err
    assert "internal error" not in err
