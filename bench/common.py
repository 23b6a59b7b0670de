"""Timing and argument helpers shared by the benchmarks."""

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterable

from hetero.utils.cpus import available_cpus


def median_time(
    fn: Callable[[], object], rounds: int = 5, setup: Callable[[], object] | None = None
) -> float:
    """Median wall time of `fn()` over `rounds` runs (each after a fresh `setup()`)."""
    times = []
    for _ in range(rounds):
        state = setup() if setup is not None else None
        start = time.perf_counter()
        fn() if state is None else fn(state)  # type: ignore[call-arg]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


SETTLE_SECONDS = 0.3
"""Pause before each timed call: thread pools keep their idle threads spinning
for a while after a call (OpenBLAS about 0.1 s, hetero's pool 0.1 ms), and a
pool still spinning on the other core would slow whichever runs next."""


def interleaved(
    fns: list[Callable[[], object]],
    rounds: int = 5,
    settle: float = SETTLE_SECONDS,
    clock: Callable[[], float] = time.perf_counter,
) -> list[float]:
    """Median time of each of `fns` by `clock` (wall time; `time.process_time`
    for one-thread code on a shared machine), timed in alternation (one
    warm-up call each first), so that machine noise hits them alike; `settle`
    seconds of quiet before each timed call."""
    for fn in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for fn, samples in zip(fns, times):
            time.sleep(settle)
            start = clock()
            fn()
            samples.append(clock() - start)
    return [statistics.median(samples) for samples in times]


CPUINFO_FIELDS = {"model name": "", "cpu family": "family ", "model": "model "}
"""The fields of Linux's `/proc/cpuinfo` that tell one CPU generation from
another, with their labels in `describe_cpu`'s line."""


def describe_cpu(cpuinfo: str, llvm_cpu: str, cpus: int) -> str:
    """One line naming the CPU: from `cpuinfo` (the text of `/proc/cpuinfo`)
    its model name, family and model number, then LLVM's name for it and the
    CPUs the process may use.  A VM often names every AMD generation `AMD
    EPYC`: the family and model tell Zen 4 (25, 17) from Zen 5 (26, 2),
    whose 512-bit multiply-adds run at twice the rate, so timings taken on
    different days compare only through this line."""
    found: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in CPUINFO_FIELDS and key not in found:
            found[key] = value.strip()
    name = found.pop("model name", "") or platform.processor() or platform.machine()
    numbers = ", ".join(
        CPUINFO_FIELDS[k] + found[k] for k in CPUINFO_FIELDS if k in found
    )
    return (
        f"{name}{f' ({numbers})' if numbers else ''}, LLVM cpu {llvm_cpu}, {cpus} cpus"
    )


MATTR_VARIABLE = "HETERO_BENCH_MATTR"
"""LLVM target features the benchmarks add to hetero's `llvm` targets
(`python -m bench --mattr=...`; compile subprocesses inherit it)."""


def bench_mattr() -> list[str]:
    """The features of `MATTR_VARIABLE`, as the `llvm` target's `mattr` list."""
    return [item for item in os.environ.get(MATTR_VARIABLE, "").split(",") if item]


def llvm_options(**options: object) -> dict[str, object]:
    """`options` of an `llvm` target, with the benchmarks' `mattr` if any."""
    return {**options, "mattr": bench_mattr()} if bench_mattr() else options


def llvm_target_text(**options: object) -> str:
    """`#target.target<"llvm", {...}>` with `llvm_options(**options)`."""
    from io import StringIO

    from xdsl.printer import Printer

    from hetero.dialects.target import TargetAttr

    text = StringIO()
    Printer(text).print_attribute(TargetAttr("llvm", llvm_options(**options)))
    return text.getvalue()


def machine() -> str:
    """`describe_cpu` of the machine this process runs on, and the features
    the benchmarks add (`bench_mattr`)."""
    import llvmlite.binding as llvm

    try:
        with open("/proc/cpuinfo") as f:
            cpuinfo = f.read()
    except OSError:
        cpuinfo = ""
    extra = f", mattr {','.join(bench_mattr())}" if bench_mattr() else ""
    return describe_cpu(cpuinfo, llvm.get_host_cpu_name(), available_cpus()) + extra


def positive_int(text: str) -> int:
    """An argparse type: a positive integer, else a usage error."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'")
    return int(text)


def sizes_argument(
    name: str, argv: list[str], default: tuple[int, ...] = ()
) -> tuple[int, ...]:
    """The sizes `python -m bench NAME SIZE ...` asks for, else `default`; a
    benchmark without sizes (`default` empty) takes no argument.  A bad one
    is argparse's usage line and exit status 2, not a traceback."""
    parser = argparse.ArgumentParser(prog=f"python -m bench {name}")
    if default:
        parser.add_argument(
            "sizes",
            nargs="*",
            type=positive_int,
            metavar="SIZE",
            help=f"problem sizes (default: {' '.join(map(str, default))})",
        )
    return tuple(getattr(parser.parse_args(argv), "sizes", ())) or default


def cases_argument(name: str, argv: list[str], cases: Iterable[str]) -> list[str]:
    """The cases `python -m bench NAME [CASE ...]` asks for, else all of
    `cases` (a bad one: argparse's usage line and exit status 2)."""
    known = list(cases)
    parser = argparse.ArgumentParser(prog=f"python -m bench {name}")
    parser.add_argument(
        "cases",
        nargs="*",
        metavar="CASE",
        help=f"any of {', '.join(known)} (default: all)",
    )
    names = parser.parse_args(argv).cases
    for case in names:
        if case not in known:
            parser.error(f"unknown case '{case}' (choose from {', '.join(known)})")
    return names or known


def thread_counts() -> list[int]:
    """One thread, and every CPU this process may use."""
    return sorted({1, available_cpus()})


def corpus_models_argument(
    parser: argparse.ArgumentParser,
) -> Callable[[list[str]], None]:
    """`MODEL ...`: models of the corpus or of the sweep
    (`hetero.frontends.model_corpus.MODELS`), by default the corpus's;
    returns the check of the parsed names, an unknown one argparse's usage
    line and exit status 2."""
    from hetero.frontends.model_corpus import CORPUS, MODELS

    parser.add_argument(
        "models",
        nargs="*",
        metavar="MODEL",
        help=f"corpus or sweep models (default: all of {', '.join(CORPUS)})",
    )

    def check(names: list[str]) -> None:
        for name in names:
            if name not in MODELS:
                parser.error(
                    f"unknown model '{name}' (choose from {', '.join(MODELS)})"
                )

    return check


def rounds_argument(parser: argparse.ArgumentParser, default: int) -> None:
    """`--rounds N`: interleaved timed calls of each side."""
    parser.add_argument(
        "--rounds",
        type=positive_int,
        default=default,
        help=f"interleaved timed calls of each side (default {default}; more on a busy machine)",
    )


def onnx_model(graph, opset: int = 13):  # type: ignore[no-untyped-def]
    """`graph` as a model of the default domain's `opset` and IR version 8
    (which every installed onnxruntime reads)."""
    from onnx import helper

    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model
