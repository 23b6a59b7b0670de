"""`bench.common`'s machine line, and `python -m bench` printing it first."""

import sys
import types

import pytest

from bench import __main__ as bench_main
from bench.common import describe_cpu, machine

ZEN4 = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC
stepping\t: 1

processor\t: 1
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC
"""


def test_describe_cpu_names_family_and_model():
    line = describe_cpu(ZEN4, "znver4", 2)
    assert line == "AMD EPYC (family 25, model 17), LLVM cpu znver4, 2 cpus"


def test_describe_cpu_tells_generations_apart():
    zen5 = ZEN4.replace(": 25", ": 26").replace(": 17", ": 2")
    assert describe_cpu(zen5, "znver5", 2) != describe_cpu(ZEN4, "znver4", 2)
    assert "(family 26, model 2)" in describe_cpu(zen5, "znver5", 2)


def test_describe_cpu_without_cpuinfo_names_the_platform(monkeypatch):
    monkeypatch.setattr("platform.processor", lambda: "arm")
    assert describe_cpu("", "generic", 4) == "arm, LLVM cpu generic, 4 cpus"


def test_machine_describes_this_host():
    import llvmlite.binding as llvm

    assert f"LLVM cpu {llvm.get_host_cpu_name()}" in machine()


def test_bench_prints_the_machine_before_the_benchmark(monkeypatch, capsys):
    fake = types.ModuleType("bench_fake")
    fake.main = lambda argv: print(f"ran {argv}")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bench_fake", fake)
    monkeypatch.setitem(bench_main.BENCHMARKS, "fake", ("bench_fake", "a fake"))
    assert bench_main.main(["fake", "x"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"machine: {machine()}", "ran ['x']"]


@pytest.mark.parametrize("argv", [[], ["no-such-benchmark"]])
def test_bench_listing_prints_no_machine(argv, capsys):
    bench_main.main(argv)
    assert "machine:" not in capsys.readouterr().out


def test_bench_onnx_arguments(capsys):
    """`python -m bench onnx`: the default models, a layout, and a bad model
    or layout as argparse's one-line error (exit status 2), no traceback."""
    pytest.importorskip("onnx")
    from bench.onnx import arguments

    default = arguments([])
    assert default.models == [] and default.data_layout == "NCHW" and default.rounds == 7
    chosen = arguments(["resnet50", "--data-layout", "NCHWc", "--rounds", "15"])
    assert chosen.models == ["resnet50"] and chosen.data_layout == "NCHWc"
    assert chosen.rounds == 15
    for bad in (["--help-me"], ["no_such_net"], ["--data-layout", "NHWC"], ["--rounds", "0"]):
        with pytest.raises(SystemExit) as exit:
            arguments(bad)
        assert exit.value.code == 2
    assert "unknown model 'no_such_net'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, expected",
    [([], (64, 128)), (["32", "5"], (32, 5))],
)
def test_sizes_argument(argv, expected):
    from bench.common import sizes_argument

    assert sizes_argument("matmul", argv, (64, 128)) == expected


@pytest.mark.parametrize(
    "argv, default, message",
    [
        (["0"], (64,), "expected a positive integer, got '0'"),
        (["x"], (64,), "expected a positive integer, got 'x'"),
        (["--bogus"], (64,), "unrecognized arguments: --bogus"),
        (["64"], (), "unrecognized arguments: 64"),
    ],
)
def test_sizes_argument_errors_are_usage_lines(argv, default, message, capsys):
    """A benchmark's bad argument is argparse's usage line and exit status 2;
    one without sizes takes no argument."""
    from bench.common import sizes_argument

    with pytest.raises(SystemExit) as exit:
        sizes_argument("matmul", argv, default)
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m bench matmul") and message in err
