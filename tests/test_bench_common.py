"""`bench.common`'s machine line, and `python -m bench` printing it first."""

import os
import re
import sys
import types
from pathlib import Path

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
    assert (
        default.models == [] and default.data_layout == "NCHW" and default.rounds == 7
    )
    chosen = arguments(["resnet50", "--data-layout", "NCHWc", "--rounds", "15"])
    assert chosen.models == ["resnet50"] and chosen.data_layout == "NCHWc"
    assert chosen.rounds == 15
    for bad in (
        ["--help-me"],
        ["no_such_net"],
        ["--data-layout", "NHWC"],
        ["--rounds", "0"],
    ):
        with pytest.raises(SystemExit) as exit:
            arguments(bad)
        assert exit.value.code == 2
    assert "unknown model 'no_such_net'" in capsys.readouterr().err


def test_bench_gpu_onnx_arguments(capsys):
    """`python -m bench gpu-onnx`: the default models, a chosen one, and an
    unknown one as argparse's one-line error (exit status 2)."""
    pytest.importorskip("onnx")
    from bench.gpu_onnx import MODELS, arguments

    assert arguments([]) == list(MODELS)
    assert arguments(["shufflenet"]) == ["shufflenet"]
    with pytest.raises(SystemExit) as exit:
        arguments(["no_such_net"])
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


def test_bench_onnx_compile_table_without_tvm(monkeypatch, capsys):
    """Without TVM the compile comparison is one line saying how to get it,
    and nothing is compiled."""
    pytest.importorskip("onnx")
    import bench.onnx

    monkeypatch.setattr(bench.onnx.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(
        bench.onnx, "hetero_compile_seconds", lambda *args: pytest.fail("compiled")
    )
    bench.onnx.compile_table("squeezenet", 2, "NCHW")
    assert capsys.readouterr().out == (
        "squeezenet compile: TVM is not installed (pip install apache-tvm)\n"
    )


def test_bench_onnx_compile_table_alternates_and_reports_medians(monkeypatch, capsys):
    """hetero's and TVM's compiles (each in a process of its own) alternate,
    after one TVM warm-up; the line gives their medians, TVM's time over
    hetero's, and hetero's second compile in its process."""
    pytest.importorskip("onnx")
    import bench.onnx

    calls: list[str] = []
    tvm_seconds = iter([9.0, 3.0, 1.0, 2.0])  # the warm-up first
    monkeypatch.setattr(
        bench.onnx,
        "tvm_compile_seconds",
        lambda name: calls.append(f"tvm {name}") or next(tvm_seconds),
    )
    hetero_seconds = iter([(1.0, 0.5), (1.5, 0.8), (0.9, 0.4)])  # (first, again)
    monkeypatch.setattr(
        bench.onnx,
        "hetero_compile_seconds",
        lambda *args: calls.append(f"hetero {args}") or next(hetero_seconds),
    )
    bench.onnx.compile_table("resnet50", 2, "NCHW")
    hetero = "hetero ('resnet50', 2, 'NCHW')"
    assert calls == ["tvm resnet50"] + [hetero, "tvm resnet50"] * 3
    assert capsys.readouterr().out.startswith(
        "resnet50 compile: hetero 1.00 s, TVM 2.00 s (relax default pipeline, "
        "no schedules): 2.00× TVM; hetero again in its process 0.50 s (4.00× TVM)"
    )


def test_bench_onnx_compile_table_when_tvm_fails(monkeypatch, capsys):
    """TVM's importer failing on a model (its process's exit status) is one
    line with its error (not the warning TVM logs after it), and hetero is
    not compiled."""
    pytest.importorskip("onnx")
    import subprocess

    import bench.onnx

    def fail(name):
        raise subprocess.CalledProcessError(
            1,
            ["python"],
            stderr="Traceback ...\nValueError: broadcast_to expects ...\n"
            "[14:39:24] block_builder.cc:67: Warning: BlockBuilder destroyed\n",
        )

    monkeypatch.setattr(bench.onnx, "tvm_compile_seconds", fail)
    monkeypatch.setattr(
        bench.onnx, "hetero_compile_seconds", lambda *args: pytest.fail("compiled")
    )
    bench.onnx.compile_table("/tmp/distilbert.onnx", 2, "NCHW", rounds=1)
    assert capsys.readouterr().out == (
        "/tmp/distilbert.onnx compile: TVM failed: ValueError: broadcast_to expects ...\n"
    )


def test_bench_model_is_a_light_model_or_a_file(tmp_path):
    """The compile scripts take a light model's name (random weights,
    logits) or an ONNX file, which they compile as it is."""
    onnx = pytest.importorskip("onnx")
    from bench.onnx import bench_model
    from hetero.frontends.onnx_models import light_model_path

    light = bench_model("squeezenet")
    assert light.graph.node[-1].op_type != "Softmax"
    assert not any(n.op_type == "ConstantOfShape" for n in light.graph.node)
    path = tmp_path / "squeezenet.onnx"
    path.write_bytes(Path(light_model_path("squeezenet")).read_bytes())
    assert bench_model(str(path)) == onnx.load(light_model_path("squeezenet"))


def test_hetero_compile_times_two_compiles_of_one_module(monkeypatch):
    """`bench.hetero_compile` compiles the model's module twice and gives
    each compile's seconds (a fake clock and compile: durations are the
    bench's business, not the test's)."""
    pytest.importorskip("onnx")
    import bench.hetero_compile
    import hetero

    compiled: list[object] = []
    monkeypatch.setattr(hetero, "compile", compiled.append)
    clock = iter([10.0, 11.5, 20.0, 20.25])
    monkeypatch.setattr(
        bench.hetero_compile,
        "time",
        type("Clock", (), {"perf_counter": clock.__next__}),
    )
    seconds = bench.hetero_compile.compile_seconds("squeezenet", 1, "NCHW")
    assert seconds == [1.5, 0.25]
    assert len(compiled) == 2 and compiled[0] is compiled[1]


def test_seconds_printed_reads_a_scripts_figures(monkeypatch):
    """How `bench onnx` reads the figures a timing script prints."""
    import bench.onnx

    ran: list[list[str]] = []

    def run(args, **kwargs):
        ran.append(args)
        return type("Done", (), {"stdout": "1.5000 0.2500\n"})

    monkeypatch.setattr(bench.onnx.subprocess, "run", run)
    printed = bench.onnx._seconds_printed(
        "bench.hetero_compile", "squeezenet", "1", "NCHW"
    )
    assert printed == [1.5, 0.25]
    assert ran[0][1:] == ["-m", "bench.hetero_compile", "squeezenet", "1", "NCHW"]


def test_bench_onnx_cached_compile_line(monkeypatch, capsys):
    """The model is compiled twice into one fresh cache directory, the second
    compile timed against the first; the cache is off again afterwards (every
    other compile of the bench is from scratch) and the directory gone."""
    pytest.importorskip("onnx")
    import bench.onnx
    from hetero.lowering.compile_cache import CACHE_VARIABLE

    directories: list[str] = []
    monkeypatch.setattr(
        bench.onnx.hetero,
        "compile",
        lambda module: directories.append(os.environ[CACHE_VARIABLE]),
    )
    clock = iter([0.0, 2.0, 10.0, 10.5])  # from scratch 2 s, from the cache 0.5 s
    monkeypatch.setattr(bench.onnx.time, "perf_counter", lambda: next(clock))
    bench.onnx.cached_compile_line("resnet50", object())
    assert len(directories) == 2 and directories[0] == directories[1] != ""
    assert os.environ[CACHE_VARIABLE] == "" and not os.path.exists(directories[0])
    assert capsys.readouterr().out == (
        "resnet50 compile from the compile cache: 0.50 s against 2.00 s from scratch "
        "(4.0x: the relay passes, then the kernels' code loaded)\n"
    )


def test_bench_onnx_kernel_compile_table(monkeypatch, capsys):
    """Each function of the lowered program compiled alone (here: timings
    made up from its op count), costliest first, its seconds the sum of its
    xDSL and LLVM stages; then summed per kind (the numbering dropped)."""
    pytest.importorskip("onnx")
    import bench.onnx
    import hetero.lowering.cpu_codegen
    from hetero.context import parse_module
    from hetero.dialects import tir

    def compile_cpu(module, timings, jobs):
        (defined,) = [
            f for f in module.ops if isinstance(f, tir.PrimFuncOp) and f.body.blocks
        ]
        ops = sum(1 for _ in defined.walk())
        timings.update(
            {"convert-tir-to-scf": ops * 0.002, "llvm-optimize": ops * 0.001}
        )

    monkeypatch.setattr(hetero.lowering.cpu_codegen, "compile_cpu", compile_cpu)
    program = parse_module(
        """
relay.func @main(%x: tensor<4x8xf32>, %w: tensor<6x8xf32>) -> tensor<4x6xf32> {
  %y = relay.nn.dense %x, %w : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %r = relay.relu %y : tensor<4x6xf32>
  %s = relay.nn.softmax %r : tensor<4x6xf32>
  relay.return %s : tensor<4x6xf32>
}
"""
    )
    bench.onnx.kernel_compile_table("tiny", program)
    lines = capsys.readouterr().out.strip().splitlines()
    header = next(i for i, line in enumerate(lines) if "kind of function" in line)
    rows = [line.split() for line in lines[2:header]]
    total = sum(int(row[3]) for row in rows) * 0.003
    printed = re.fullmatch(
        r"tiny: code generation function by function, (\d+\.\d\d) s in all "
        r"\(each compiled alone\)",
        lines[0],
    )
    assert printed is not None
    # Rounded to 2 places, from sums in another order: a total at x.xx5 may
    # round either way.
    assert abs(float(printed.group(1)) - total) <= 0.005 + 1e-9
    assert lines[1].split() == [
        "s",
        "xDSL",
        "s",
        "LLVM",
        "s",
        "tir",
        "ops",
        "function",
        "(costliest",
        "12)",
    ]
    assert {row[-1] for row in rows} >= {"main_host", "fused_nn_softmax_tir"}
    ops = [int(row[3]) for row in rows]
    assert ops == sorted(ops, reverse=True)
    for seconds, xdsl, llvm, count, _ in rows:
        assert (seconds, xdsl, llvm) == tuple(
            f"{t:.3f}"
            for t in (int(count) * 0.003, int(count) * 0.002, int(count) * 0.001)
        )
    kinds = [line.split() for line in lines[header + 1 :]]
    assert {kind[-1] for kind in kinds} >= {"main_host", "fused_nn_softmax"}
    assert sum(int(kind[1]) for kind in kinds) == len(rows)


def test_bench_onnx_kind_of_names_kinds():
    """A kernel's kind drops its numbering and `_tir`, and a shared kernel
    of `merge-kernels` counts with its kind."""
    pytest.importorskip("onnx")
    from bench.onnx import kind_of

    assert {
        kind_of(name)
        for name in (
            "fused_nn_conv2d_relu_tir",
            "fused_nn_conv2d_relu_3_tir",
            "fused_nn_conv2d_relu_shared",
            "fused_nn_conv2d_relu_shared_2",
        )
    } == {"fused_nn_conv2d_relu"}
    assert kind_of("main_host") == "main_host"


def test_cases_argument(capsys):
    """`python -m bench conv2d [CASE ...]`: the cases named, else all; an
    unknown one is argparse's usage line and exit status 2."""
    from bench.common import cases_argument

    assert cases_argument("conv2d", [], {"a": 1, "b": 2}) == ["a", "b"]
    assert cases_argument("conv2d", ["b"], {"a": 1, "b": 2}) == ["b"]
    with pytest.raises(SystemExit) as exit:
        cases_argument("conv2d", ["c"], {"a": 1, "b": 2})
    assert exit.value.code == 2
    assert "unknown case 'c' (choose from a, b)" in capsys.readouterr().err
