"""Collage's measured plan against each single-backend plan.

    python -m bench collage [--gpu] [--rounds N] [MODEL ...]
        # default: squeezenet bvlc_alexnet inception_v1 resnet50 distilbert

Each network (the `onnx` wheel's light zoo with seeded random weights,
`bench.onnx.bench_model`; a corpus model, `hetero.frontends.model_corpus`,
exported by torch, or read from `HETERO_MODEL_CORPUS_DIR` where it was
exported before; skipped with a line where the `models` extra is missing)
is imported and compiled four ways on one thread: hetero's own code alone
(`llvm`), own + OpenBLAS (`blas`), own + oneDNN (`dnnl`), each kind taking
every match of its pattern table, and `collage=True` over all three
(`collage-partition`, its plan on stderr).  A kind whose library is missing
is left out, with a line.  The compiled functions are checked against the
`llvm` one (relative error of the output) and timed in interleaved rounds in
this process, medians of per-call CPU time (one thread: the CPU time is the
latency, without the time other processes held the CPU).

Plans of the same machine code are timed once (`same_programs`): collage's
where it kept a single backend's placement (its whole-program check found
its own plan no faster), a kind's that takes nothing of the network (then
hetero's own program); the row says which.

Collage's search is timed twice: cold (a fresh cost database, every
candidate measured, in parallel worker processes: `HETERO_COLLAGE_JOBS`),
then warm (the same database, nothing measured).

With `--gpu` the plans are the GPU's (`GPU`): hetero's own kernels
(`cuda`, the host code on one `llvm` thread), own + cuBLAS, own + cuDNN, and
collage over both, timed by the wall clock (a call returns once its results
are back on the host); without a GPU it says why and stops.

The last line is `collage: X.XX× best single backend (worst of ...)`,
X = the best single-backend plan's time / collage's time, the worst over
the networks, each network's ratio in the parentheses.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

import hetero
from bench.common import interleaved, llvm_options, rounds_argument
from hetero.frontends.onnx_models import LIGHT_MODELS

ZOO = LIGHT_MODELS
CORPUS_VARIABLE = "HETERO_MODEL_CORPUS_DIR"
"""A folder of exported corpus models (`model_corpus.file_name`) to load
rather than export again (the corpus tests' folder)."""
MODELS = ("squeezenet", "bvlc_alexnet", "inception_v1", "resnet50", "distilbert")
ROUNDS = 7
ONE_THREAD = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "HETERO_NUM_THREADS")


@dataclass(frozen=True)
class Device:
    """Where the plans run: the regular targets every plan has (the first
    takes the ops no kind takes: the configuration's fallback device), the
    external kinds collage places among, and the clock a call is timed by."""

    name: str
    targets: tuple[str, ...]
    kinds: tuple[str, ...]
    clock: Callable[[], float]
    clock_name: str


CPU = Device("cpu", ("llvm",), ("blas", "dnnl"), time.process_time, "per-call CPU time")
"""One thread's CPU time is its latency, without the time other processes
held the CPU."""

GPU = Device(
    "gpu", ("cuda", "llvm"), ("cublas", "cudnn"), time.perf_counter, "wall time"
)
"""A GPU call waits for its results, which the CPU time would not count."""


@dataclass
class Row:
    """A network's times: each single-backend plan's and collage's (seconds)."""

    name: str
    single: dict[str, float]
    collage: float

    @property
    def ratio(self) -> float:
        return min(self.single.values()) / self.collage


def last_line(rows: list[Row], rounds: int, device: Device = CPU) -> str:
    """`collage: X.XX× best single backend (worst of ...)`: the worst ratio."""
    worst = min(row.ratio for row in rows)
    each = ", ".join(f"{row.name} {row.ratio:.2f}×" for row in rows)
    where = "one thread" if device is CPU else "GPU, host code on one thread"
    return (
        f"collage: {worst:.2f}× best single backend (worst of {each}; "
        f"best of {', '.join(rows[0].single)}; {where}, medians of {rounds} "
        f"interleaved rounds of {device.clock_name})"
    )


def network(name: str) -> tuple[Any, list[np.ndarray] | None] | str:
    """The relay module of `name` and its inputs (None: random ones of the
    compiled function's shapes), or why it is skipped."""
    import onnx

    from hetero.frontends import model_corpus
    from hetero.frontends.onnx import from_onnx

    if name in ZOO:
        from bench.onnx import bench_model

        return from_onnx(bench_model(name)), None
    directory = os.environ.get(CORPUS_VARIABLE)
    path = os.path.join(directory or "", model_corpus.file_name(name, "torchscript"))
    if directory and os.path.exists(path):
        model = onnx.load(path)
    elif missing := model_corpus.missing_packages(name, "torchscript"):
        return f"its export needs {', '.join(missing)} (pip install 'hetero[models]')"
    else:
        model = onnx.load_from_string(model_corpus.export(name))
    return from_onnx(model), list(model_corpus.example_inputs(name).values())


def compiled_with(
    module: Any, kinds: tuple[str, ...], collage: bool = False, device: Device = CPU
) -> Any:
    """`module` compiled for `device`'s targets (`llvm` on one thread) plus `kinds`."""
    from hetero.dialects.target import (
        CONFIG_ATTR_NAME,
        CompilationConfigAttr,
        TargetAttr,
    )

    module = module.clone()
    targets = [
        TargetAttr(t, llvm_options(num_threads=1)) if t == "llvm" else TargetAttr(t)
        for t in (*device.targets, *kinds)
    ]
    fallback = targets[0].kind.device_type
    module.attributes[CONFIG_ATTR_NAME] = CompilationConfigAttr(targets, fallback)
    return hetero.compile(module, collage=collage)


def collage_compiles(
    module: Any, kinds: tuple[str, ...], device: Device = CPU
) -> tuple[Any, str]:
    """Collage's compile, its search cold and warm: the compiled function
    and a line of search times."""
    with tempfile.TemporaryDirectory() as directory:
        database = os.path.join(directory, "costs.json")
        os.environ["HETERO_COLLAGE_DB"] = database
        try:
            cold = compiled_with(module, kinds, True, device)
            with open(database) as f:
                measured = len(json.load(f))
            warm = compiled_with(module, kinds, True, device)
        finally:
            del os.environ["HETERO_COLLAGE_DB"]
    search = "collage-partition"
    return warm, (
        f"search: cold {cold.timings[search]:.1f} s ({measured} candidates "
        f"measured), warm {warm.timings[search]:.2f} s"
    )


def bench_network(
    name: str, kinds: tuple[str, ...], rounds: int, device: Device = CPU
) -> Row | None:
    """One network's table row (None: skipped, with a line)."""
    found = network(name)
    if isinstance(found, str):
        print(f"{name:>14}: skipped, {found}", flush=True)
        return None
    module, inputs = found
    own = device.targets[0]
    plans: dict[str, Any] = {own: compiled_with(module, (), device=device)}
    for kind in kinds:
        plans[f"+{kind}"] = compiled_with(module, (kind,), device=device)
    plans["collage"], search = collage_compiles(module, kinds, device)
    if inputs is None:
        rng = np.random.default_rng(1)
        inputs = [
            rng.standard_normal(s.shape).astype(s.dtype) for s in plans[own].inputs
        ]
    reference = plans[own](*inputs)
    error = max(
        float(np.abs(f(*inputs) - reference).max() / np.abs(reference).max())
        for f in plans.values()
    )
    alike = same_programs(plans)
    timed = {n: f for n, f in plans.items() if alike[n] == n}
    calls: list[Callable[[], object]] = [partial(f, *inputs) for f in timed.values()]
    measured = dict(zip(timed, interleaved(calls, rounds, clock=device.clock)))
    times = {n: measured[first] for n, first in alike.items()}
    collage = times.pop("collage")
    row = Row(name, times, collage)
    cells = " ".join(f"{1e3 * t:>10.2f}" for t in times.values())
    shared = [f"{n} is {first}'s" for n, first in alike.items() if n != first]
    print(
        f"{name:>14} {cells} {1e3 * collage:>10.2f} {row.ratio:>9.2f}× "
        f"{error:>8.1e}  {search}"
        + (f"; the same program: {', '.join(shared)}" if shared else ""),
        flush=True,
    )
    return row


def same_programs(plans: dict[str, Any]) -> dict[str, str]:
    """Each plan → the first plan of the same machine code: collage's compile
    is a single backend's where it kept that placement (`collage-partition`'s
    whole-program check), and a kind that takes nothing of a network leaves
    hetero's own program.  One program is timed once: timed twice, it would
    only measure the noise between two runs of it."""

    def code(plan: Any) -> tuple[bytes | str, ...]:
        native = plan.native
        host = getattr(native, "host", native)  # a GPU program's host code
        kernels = sorted(k.ptx for k in getattr(native, "kernels", ()))
        return (*sorted(o.object for o in host.objects), *kernels)

    first: dict[tuple[bytes, ...], str] = {}
    return {n: first.setdefault(code(f), n) for n, f in plans.items()}


def main(argv: list[str]) -> None:
    from hetero.runtime import cuda
    from hetero.targets.codegen import unavailable_reason

    parser = argparse.ArgumentParser(
        prog="python -m bench collage",
        description="Collage's plan vs each single-backend plan, one thread.",
    )
    parser.add_argument(
        "--gpu",
        action="store_true",
        help="the GPU's plans: cuda, +cublas, +cudnn (default: the CPU's)",
    )
    parser.add_argument(
        "models",
        nargs="*",
        metavar="MODEL",
        help=f"networks (default: {' '.join(MODELS)})",
    )
    rounds_argument(parser, ROUNDS)
    args = parser.parse_args(argv)
    from hetero.frontends.model_corpus import CORPUS

    known = (*ZOO, *CORPUS)
    for name in args.models:
        if name not in known:
            parser.error(f"unknown network '{name}' (choose from {', '.join(known)})")
    device = GPU if args.gpu else CPU
    if args.gpu and (why := cuda.unavailable_reason()) is not None:
        print(f"collage: skipped: no GPU ({why})")
        return
    for variable in ONE_THREAD:
        os.environ[variable] = "1"
    kinds = []
    for kind in device.kinds:
        if (why := unavailable_reason(kind)) is None:
            kinds.append(kind)
        else:
            print(f"{kind}: left out: {why}")
    own = device.targets[0]
    heads = " ".join(f"{h + ' ms':>10}" for h in (own, *(f"+{k}" for k in kinds)))
    print(f"{'network':>14} {heads} {'collage ms':>10} {'vs best':>10} {'rel err':>8}")
    rows = [
        row
        for name in args.models or MODELS
        if (row := bench_network(name, tuple(kinds), args.rounds, device)) is not None
    ]
    if not rows:
        print("collage: no network ran")
        return
    print(last_line(rows, args.rounds, device))
