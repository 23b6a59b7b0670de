"""Progress of long compiles on stderr (`hetero.utils.progress`)."""

import io
import re

import pytest
from test_parallel_compile import PROGRAM

import hetero
from hetero.context import parse_module
from hetero.lowering.cpu_codegen import compile_cpu
from hetero.lowering.parallel_compile import run_forked
from hetero.tools import hetero_compile, hetero_run
from hetero.utils import progress

# Three kernels (two softmaxes and an add that fusion keeps apart) and the host.
SOURCE = """
relay.func @main(%a: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %0 = relay.nn.softmax %a : tensor<5x7xf32>
  %1 = relay.nn.softmax %0 : tensor<5x7xf32>
  %2 = relay.add %1, %a : tensor<5x7xf32>
  relay.return %2 : tensor<5x7xf32>
}
"""


@pytest.fixture
def no_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every compile counts as long: tests must not depend on how long one takes."""
    monkeypatch.setattr(progress, "DELAY", 0.0)


@pytest.mark.usefixtures("no_delay")
def test_forced_progress_names_stages_and_counts_kernels(monkeypatch, capsys):
    monkeypatch.setenv(progress.VARIABLE, "1")
    hetero.compile(SOURCE)
    err = capsys.readouterr().err
    assert "hetero: relay passes: fuse-ops [" in err
    counts = re.findall(r"code generation (\d+)/(\d+) kernels", err)
    assert counts[-1][0] == counts[-1][1] and int(counts[-1][1]) >= 3
    assert "\r" not in err  # not a terminal: one plain line an event


@pytest.mark.usefixtures("no_delay")
@pytest.mark.parametrize("setting", [None, "0"])
def test_no_progress_off_a_terminal_or_when_turned_off(monkeypatch, capsys, setting):
    if setting is None:
        monkeypatch.delenv(progress.VARIABLE, raising=False)
    else:
        monkeypatch.setenv(progress.VARIABLE, setting)
    hetero.compile(SOURCE)
    assert capsys.readouterr().err == ""


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_short_compiles_print_nothing_and_a_terminal_line_is_rewritten():
    stream, clock = io.StringIO(), Clock()
    report = progress.Progress(stream, in_place=True, delay=1.0, clock=clock)
    report.stage("relay passes: a-very-long-pass-name")
    clock.now = 0.5
    report.stage("code generation", 4)
    assert stream.getvalue() == ""
    clock.now = 1.5
    report.advance(2)
    report.advance(2)
    report.finish()
    first = "hetero: code generation 2/4 kernels [1.5 s]"
    second = "hetero: code generation 4/4 kernels [1.5 s]"
    done = "hetero: compiled [1.5 s]".ljust(len(second))  # the old line blanked out
    assert stream.getvalue() == f"\r{first}\r{second}\r{done}\n"


def test_a_compile_shorter_than_the_delay_leaves_no_line():
    stream = io.StringIO()
    report = progress.Progress(stream, in_place=True, delay=1.0, clock=Clock())
    report.stage("code generation", 1)
    report.advance()
    report.finish()
    assert stream.getvalue() == ""


def test_run_forked_reports_each_worker_once():
    finished: list[int] = []
    assert run_forked(lambda i: [i], 3, finished.append) == [[0], [1], [2]]
    assert sorted(finished) == [0, 1, 2]


@pytest.mark.usefixtures("no_delay")
def test_parallel_code_generation_counts_chunks_as_they_finish(monkeypatch, capsys):
    monkeypatch.setenv(progress.VARIABLE, "1")
    with progress.reporting():
        compile_cpu(parse_module(PROGRAM), jobs=2)
    counts = re.findall(r"code generation (\d+)/(\d+) kernels", capsys.readouterr().err)
    done = [int(d) for d, _ in counts]
    total = int(counts[0][1])
    assert done[0] == 0 and 0 < done[1] < total and done[-1] == total


@pytest.mark.usefixtures("no_delay")
@pytest.mark.parametrize("tool", ["hetero-run", "hetero-compile"])
def test_the_tools_progress_flag_forces_it_on(monkeypatch, capsys, tmp_path, tool):
    monkeypatch.setenv(progress.VARIABLE, "0")
    model = tmp_path / "model.mlir"
    model.write_text(SOURCE)
    if tool == "hetero-run":
        assert hetero_run.main([str(model), "--random", "--compile", "--progress"]) == 0
    else:
        out = str(tmp_path / "model.hetero")
        assert hetero_compile.main([str(model), "-o", out, "--progress"]) == 0
    assert re.search(r"code generation (\d+)/\1 kernels", capsys.readouterr().err)
