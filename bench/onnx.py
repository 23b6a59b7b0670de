"""Whole ONNX networks: hetero vs onnxruntime, 1 and 2 threads.

    python -m bench onnx [--data-layout NCHWc] [MODEL ...]
                                         # default: squeezenet resnet50, NCHW

`--data-layout NCHWc` compiles with the `llvm` target's `data_layout =
"NCHWc"` (blocked activations between convolutions, `alter-data-layout`).

Each model of the `onnx` wheel's light zoo gets seeded random weights
(`hetero.frontends.onnx_models.randomized`), is imported with
`hetero.frontends.onnx.from_onnx` and compiled by `hetero.compile` once per
thread count (the `llvm` target's `num_threads`); onnxruntime runs the same
model with `intra_op_num_threads` set to the same count (spinning off, so
its idle threads do not steal the other implementation's core).  The two
run in interleaved rounds in this process (medians).  The results are
checked against each other (relative error of the logits) before timing.

A per-kernel table follows for each model at the highest thread count:
the call replayed kernel by kernel (`CompiledFunction.profile`, a debug
executor: the real buffers, each kernel call timed), each kernel's calls
summed (lower-te's kernel cache makes one kernel serve every identical
layer), the costliest first, then summed per kind of kernel (the fused op
names without their numbering).

After each table, where that compile's time went (`compile_breakdown`):
the relay passes, then code generation, with the CPU seconds of its xDSL
conversions and of LLVM; then code generation function by function
(`kernel_compile_table`: each kernel compiled alone, its xDSL and LLVM
seconds and `tir` ops, the costliest first, then per kind of kernel).
Then, where TVM is installed (`pip install apache-tvm`), compile times side
by side (`compile_table`): `hetero.compile` and TVM's `tvm.compile` of the
same model, each the first compile of a process of its own
(`bench.hetero_compile`, `bench.tvm_compile`), alternating, `COMPILE_ROUNDS`
each, medians.  Every compile
is from scratch (`python -m bench` turns the compile cache off) but the one
of `cached_compile_line`: the model compiled again with its code in a fresh
compile cache, as a second compile of it is.

The last line is `onnx: X.XX× onnxruntime (...)`, X = onnxruntime time /
hetero time, the worst over models and thread counts.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

import hetero
from bench.common import (
    SETTLE_SECONDS,
    interleaved,
    llvm_options,
    rounds_argument,
)

MODELS = ("squeezenet", "resnet50")
THREADS = (1, 2)
ROUNDS = 7
COMPILE_ROUNDS = 3
KERNEL_ROUNDS = 5
TOP_KERNELS = 12


def with_threads(module: Any, threads: int, data_layout: str = "NCHW") -> Any:
    """A copy of the module whose configuration is `llvm` with `num_threads`
    (and `data_layout`)."""
    from hetero.dialects.target import (
        CONFIG_ATTR_NAME,
        CompilationConfigAttr,
        TargetAttr,
    )

    module = module.clone()
    module.attributes[CONFIG_ATTR_NAME] = CompilationConfigAttr(
        [TargetAttr("llvm", llvm_options(num_threads=threads, data_layout=data_layout))]
    )
    return module


def _onnxruntime(model: Any, threads: int) -> Any:
    """`f(*inputs) -> the first output` of onnxruntime on `threads` threads."""
    import onnxruntime

    onnxruntime.set_default_logger_severity(3)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    names = [i.name for i in session.get_inputs()]
    return lambda *x: session.run(None, dict(zip(names, x)))[0]


def bench_model(name: str) -> Any:
    """Light model `name` as the ONNX benchmarks take it (seeded random
    weights, logits), or the ONNX file `name` as it is where it ends in
    `.onnx` (`bench models` writes its corpus so)."""
    import onnx

    from hetero.frontends.onnx_models import light_model_path, logits, randomized

    if name.endswith(".onnx"):
        return onnx.load(name)
    return logits(randomized(onnx.load(light_model_path(name)), seed=0))


def kind_of(function: str) -> str:
    """A lowered function's kind: its name without numbering and `_tir`
    (`fused_nn_conv2d_nn_bias_add_relu_3_tir` → `fused_nn_conv2d_nn_bias_add_relu`),
    or `_shared` for a kernel `merge-kernels` made."""
    return re.sub(r"(_\d+)?_tir$|_shared(_\d+)?$", "", function)


def kernel_table(name: str, compiled: Any, x: np.ndarray) -> None:
    """Where a call's time goes: `CompiledFunction.profile` replays the host
    function kernel by kernel on the real buffers, a few settled rounds
    summarized per kernel (`runtime.profiler.summarize`), costliest first,
    then per kind of kernel (the fused op names without their numbering)."""
    from hetero.runtime.profiler import summarize

    runs = []
    for _ in range(KERNEL_ROUNDS):
        time.sleep(SETTLE_SECONDS)
        runs.append(compiled.profile(x).calls)
    rows = summarize(runs)
    total = sum(r.seconds for r in rows)
    kinds: dict[str, float] = {}
    for row in rows:
        kind = kind_of(row.kernel)
        kinds[kind] = kinds.get(kind, 0.0) + row.seconds
    print(
        f"\n{name}: {len(rows)} kernels, {sum(r.calls for r in rows)} calls, "
        f"{1e3 * total:.1f} ms in all, timed in the network (CompiledFunction.profile)"
    )
    print(f"{'ms':>9} {'share':>6} {'calls':>5}  kernel (costliest {TOP_KERNELS})")
    for row in rows[:TOP_KERNELS]:
        print(
            f"{1e3 * row.seconds:>9.3f} {100 * row.seconds / total:>5.1f}% "
            f"{row.calls:>5}  {row.kernel}"
        )
    print(f"{'ms':>9} {'share':>6}  kind of kernel")
    for kind, seconds in sorted(kinds.items(), key=lambda item: -item[1]):
        print(f"{1e3 * seconds:>9.3f} {100 * seconds / total:>5.1f}%  {kind}")


COMPILE_STAGES: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("LLVM", lambda stage: stage.startswith("llvm-")),
    (
        "xDSL conversions",
        lambda stage: (
            stage.startswith("convert-") or stage == "reconcile-unrealized-casts"
        ),
    ),
    ("", lambda stage: stage in ("parse", "compile_cpu", "compile-workers")),
    ("relay passes", lambda stage: True),
)
"""Kinds of `hetero.compile` timings, the first that matches a stage's name
(the empty kind: wall times of the steps around them, reported apart)."""


def compile_breakdown(name: str, timings: dict[str, float]) -> None:
    """One line: the relay passes (this process), then code generation's
    wall time and the CPU seconds its processes spent in xDSL's conversions
    and in LLVM (summed over the compile workers)."""
    kinds: dict[str, float] = {}
    for stage, seconds in timings.items():
        kind = next(k for k, matches in COMPILE_STAGES if matches(stage))
        kinds[kind] = kinds.get(kind, 0.0) + seconds
    print(
        f"{name} compile: relay passes {kinds.get('relay passes', 0.0):.2f} s, "
        f"code generation {timings.get('compile_cpu', 0.0):.2f} s "
        f"(CPU: xDSL conversions {kinds.get('xDSL conversions', 0.0):.2f} s, "
        f"LLVM {kinds.get('LLVM', 0.0):.2f} s)"
    )


def kernel_compile_table(name: str, module: Any) -> None:
    """Where code generation's time goes, function by function: `module`
    taken through the relay passes, then each of its `tir` functions (the
    kernels and the host function) lowered and compiled alone, in this
    process (`compile_cpu` of the module restricted to it; the sum is more
    than one compile of them all, which makes each declaration once); the
    costliest `TOP_KERNELS`, then summed per kind of function."""
    from xdsl.dialects.builtin import ModuleOp

    from hetero.dialects import tir
    from hetero.dialects.target.config import module_config
    from hetero.driver import lower_to_tir
    from hetero.lowering.cpu_codegen import compile_cpu
    from hetero.lowering.parallel_compile import restrict
    from hetero.utils.gc_pause import gc_paused

    lowered = module.clone()
    module_config(lowered, "llvm", "bench onnx")
    lower_to_tir(lowered)
    functions = [f for f in lowered.ops if isinstance(f, tir.PrimFuncOp)]
    rows = []
    for function in functions:
        if function.is_private:
            continue
        alone = restrict(
            ModuleOp([f.clone() for f in functions]), [function.sym_name.data]
        )
        timings: dict[str, float] = {}
        with gc_paused():  # as in `hetero.compile`: a collection is no kernel's
            compile_cpu(alone, timings=timings, jobs=1)
        llvm = sum(t for stage, t in timings.items() if stage.startswith("llvm-"))
        xdsl = sum(timings.values()) - llvm
        rows.append(
            (
                xdsl + llvm,
                xdsl,
                llvm,
                sum(1 for _ in function.walk()),
                function.sym_name.data,
            )
        )
    rows.sort(reverse=True)
    total = sum(row[0] for row in rows)
    print(
        f"\n{name}: code generation function by function, {total:.2f} s in all (each compiled alone)"
    )
    print(
        f"{'s':>7} {'xDSL s':>7} {'LLVM s':>7} {'tir ops':>7}  function (costliest {TOP_KERNELS})"
    )
    for row in rows[:TOP_KERNELS]:
        print(f"{row[0]:>7.3f} {row[1]:>7.3f} {row[2]:>7.3f} {row[3]:>7}  {row[4]}")
    kinds: dict[str, list[float]] = {}
    for seconds, *_, function_name in rows:
        kind = kinds.setdefault(kind_of(function_name), [0.0, 0])
        kind[0] += seconds
        kind[1] += 1
    print(f"{'s':>7} {'count':>7}  kind of function")
    for kind_name, (seconds, count) in sorted(
        kinds.items(), key=lambda item: -item[1][0]
    ):
        print(f"{seconds:>7.3f} {count:>7}  {kind_name}")


def tvm_compile_seconds(name: str) -> float | None:
    """One `tvm.compile` of model `name`, timed in a process of its own
    (`bench.tvm_compile`); None where TVM is not installed."""
    if importlib.util.find_spec("tvm") is None:
        return None
    return _seconds_printed("bench.tvm_compile", name, "1")[0]


def hetero_compile_seconds(
    name: str, threads: int, data_layout: str
) -> tuple[float, float]:
    """The first `hetero.compile` of model `name` as this bench configures
    it in a process of its own, as TVM's is timed, and the same compile
    again in that process (`bench.hetero_compile`)."""
    first, again = _seconds_printed(
        "bench.hetero_compile", name, str(threads), data_layout
    )
    return first, again


def _seconds_printed(script: str, *args: str) -> list[float]:
    done = subprocess.run(
        [sys.executable, "-m", script, *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return [float(word) for word in done.stdout.split()]


def compile_table(
    name: str, threads: int, data_layout: str, rounds: int = COMPILE_ROUNDS
) -> None:
    """hetero's and TVM's compile times of `name`, each the first compile of
    a process of its own, alternating (the machine's noise hits both alike),
    medians of `rounds`, and hetero's second compile in its process;
    nothing without TVM, or where TVM fails on the model (its last line
    naming an error: TVM logs warnings after it)."""
    try:
        installed = tvm_compile_seconds(name) is not None  # also warms TVM's caches up
    except subprocess.CalledProcessError as e:
        lines = (e.stderr or "").strip().splitlines()
        errors = [line for line in lines if re.match(r"\w+(Error|Exception)\b", line)]
        reason = (errors or lines or [f"exit status {e.returncode}"])[-1]
        print(f"{name} compile: TVM failed: {reason}")
        return
    if not installed:
        print(f"{name} compile: TVM is not installed (pip install apache-tvm)")
        return
    ours: list[tuple[float, float]] = []
    theirs: list[float] = []
    for _ in range(rounds):
        ours.append(hetero_compile_seconds(name, threads, data_layout))
        theirs.append(tvm_compile_seconds(name) or 0.0)
    first = statistics.median(s for s, _ in ours)
    again = statistics.median(s for _, s in ours)
    tvm_s = statistics.median(theirs)
    print(
        f"{name} compile: hetero {first:.2f} s, TVM {tvm_s:.2f} s "
        f"(relax default pipeline, no schedules): {tvm_s / first:.2f}× TVM; "
        f"hetero again in its process {again:.2f} s ({tvm_s / again:.2f}× TVM) "
        f"(medians of {rounds}, alternating, each the first compile of "
        "a fresh process)"
    )


def cached_compile_line(name: str, module: Any) -> None:
    """One line: `hetero.compile` of `module` when the compile cache
    (`hetero.lowering.compile_cache`, in a fresh directory) holds its code
    from one compile before, against a compile from scratch."""
    from hetero.lowering.compile_cache import CACHE_VARIABLE

    with tempfile.TemporaryDirectory() as directory:
        os.environ[CACHE_VARIABLE] = directory
        try:
            start = time.perf_counter()
            hetero.compile(module)
            cold = time.perf_counter() - start
            start = time.perf_counter()
            hetero.compile(module)
            warm = time.perf_counter() - start
        finally:
            os.environ[CACHE_VARIABLE] = ""
    print(
        f"{name} compile from the compile cache: {warm:.2f} s against {cold:.2f} s "
        f"from scratch ({cold / warm:.1f}x: the relay passes, then the kernels' code loaded)"
    )


def arguments(argv: list[str]) -> argparse.Namespace:
    """The models and options of `python -m bench onnx [--data-layout L] [MODEL ...]`
    (a bad one: argparse's usage line and exit status 2)."""
    from hetero.frontends.onnx_models import LIGHT_MODELS

    parser = argparse.ArgumentParser(
        prog="python -m bench onnx",
        description="Latency and compile time of ONNX models, hetero and onnxruntime.",
    )
    parser.add_argument(
        "models",
        nargs="*",
        metavar="MODEL",
        help=f"light models of the onnx wheel (default: {' '.join(MODELS)}; "
        f"any of {', '.join(LIGHT_MODELS)})",
    )
    parser.add_argument(
        "--data-layout",
        choices=("NCHW", "NCHWc"),
        default="NCHW",
        help="the llvm target's data_layout option",
    )
    rounds_argument(parser, ROUNDS)
    args = parser.parse_args(argv)
    for name in args.models:
        if name not in LIGHT_MODELS:
            parser.error(
                f"unknown model '{name}' (choose from {', '.join(LIGHT_MODELS)})"
            )
    return args


def main(argv: list[str]) -> None:
    from hetero.frontends.onnx import from_onnx

    args = arguments(argv)
    data_layout = args.data_layout
    models = tuple(args.models) or MODELS
    x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    print(
        f"{'model':>12} {'threads':>7} {'hetero ms':>10} {'ort ms':>9} {'ort/hetero':>10} "
        f"{'import s':>9} {'compile s':>10} {'rel err':>9}"
    )
    ratios: list[float] = []
    tables: list[tuple[str, Any, Any]] = []
    for name in models:
        model = bench_model(name)
        start = time.perf_counter()
        module = from_onnx(model)
        import_s = time.perf_counter() - start
        for threads in THREADS:
            configured = with_threads(module, threads, data_layout)
            start = time.perf_counter()
            compiled = hetero.compile(configured)
            compile_s = time.perf_counter() - start
            ort = _onnxruntime(model, threads)
            reference = ort(x)
            error = float(
                np.abs(compiled(x) - reference).max() / np.abs(reference).max()
            )
            ours, theirs = interleaved(
                [partial(compiled, x), partial(ort, x)], args.rounds
            )
            ratios.append(theirs / ours)
            print(
                f"{name:>12} {threads:>7} {1e3 * ours:>10.2f} {1e3 * theirs:>9.2f} "
                f"{theirs / ours:>10.3f} {import_s:>9.2f} {compile_s:>10.1f} {error:>9.1e}",
                flush=True,
            )
        tables.append((name, compiled, configured))
    for name, compiled, configured in tables:
        kernel_table(name, compiled, x)
        compile_breakdown(name, compiled.timings)
        kernel_compile_table(name, configured)
        compile_table(name, THREADS[-1], data_layout)
        cached_compile_line(name, configured)
    print(
        f"onnx: {min(ratios):.3f}× onnxruntime (worst of {', '.join(models)} at "
        f"{'/'.join(map(str, THREADS))} threads; random weights, batch 1, median of "
        f"{args.rounds} interleaved rounds)"
    )
