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
