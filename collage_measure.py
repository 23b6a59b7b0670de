"""Collage's measuring cost estimator: compile a candidate, run it, keep the median.

`collage-partition` (a transform) places external kinds by cost and asks the
estimator registered in `hetero.targets.costs` what a candidate costs.  This
module is that estimator, at the driver's layer because measuring compiles
(`hetero.compile`) and runs code: a candidate's module is compiled alone and
timed on this host, the median of a few timed runs on random inputs of the
right shapes, less the cost of calling an empty function (on the candidate's
kind of device).  A CPU candidate is timed by the lesser of wall and CPU
time, a GPU candidate (a `GpuProgram`: hetero's kernels, cuBLAS, cuDNN) by
the wall clock between two synchronizations of the device, since the host's
wait for the GPU is no CPU time (`_sample`).  Measurements go to
a `CostDatabase` keyed by the candidate's structure (its module printed with
constants as their shapes), the backend and the machine, so a layer measured
once is never measured again, in any model or process (docs/passes/collage.md).

Candidates the database does not hold are measured in worker processes, one
candidate a worker (`HETERO_COLLAGE_JOBS` of them, default one a CPU), or as
Ray tasks where `HETERO_COLLAGE_RAY` names a cluster.  Compiling, most of a
measurement's time, overlaps; the timed calls of the process pool's workers
take turns (`_TIMING`), since two candidates timed at once on a shared
machine slow each other down and skew the plan.  The whole programs of the
pass's check (backend `whole`) are compiled here and timed together, in
interleaved rounds (`measure_together`).

`hetero/__init__.py` imports this module, so every use of hetero, from
`hetero-opt` to `hetero.compile`, has it registered.  That import must not
cost a deployed model anything: the compiler's modules (and xDSL) are
imported only where a measurement needs them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import os
import re
import statistics
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hetero.targets.costs import WHOLE, register_estimator

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

DATABASE_VARIABLE = "HETERO_COLLAGE_DB"
"""The cost database's file; empty: keep measurements in memory only."""

DATABASE_FILE = "collage-costs.json"

JOBS_VARIABLE = "HETERO_COLLAGE_JOBS"
"""How many worker processes measure candidates (default: one a CPU; 1:
measure in the compiling process)."""

RAY_VARIABLE = "HETERO_COLLAGE_RAY"
"""Measure candidates as Ray tasks: a cluster's address (`ray.init(address=)`,
`auto` for the one `ray start` made here), or `local` for a Ray instance of
this process's own.  Unset: the process pool."""


@cache
def device_name() -> str:
    """This host as measurements depend on it: the CPU and its features, and
    the GPU where there is one (a GPU candidate's cost is the GPU's: hosts of
    one CPU with different GPUs must not share it)."""
    import llvmlite.binding as llvm

    from hetero.runtime import cuda
    from hetero.runtime.cpu import _initialize

    _initialize()
    features = llvm.get_host_cpu_features().flatten()
    name = f"{llvm.get_host_cpu_name()} {hashlib.sha256(features.encode()).hexdigest()[:16]}"
    if cuda.unavailable_reason() is None:
        name += f" + {cuda.device().name}"
    return name


def database_path() -> Path | None:
    """`HETERO_COLLAGE_DB`, else `collage-costs.json` in hetero's cache
    directory (`hetero.lowering.compile_cache.cache_directory`); None: none."""
    from hetero.lowering.compile_cache import cache_directory

    text = os.environ.get(DATABASE_VARIABLE)
    if text is not None:
        return Path(text) if text else None
    directory = cache_directory()
    return directory / DATABASE_FILE if directory is not None else None


@dataclass
class CostDatabase:
    """Measured seconds by key (`key`), kept in a JSON file shared by every
    model and process: read at open, merged and replaced atomically at
    `save`.  The file's directory must be the user's own, as the compile
    cache's (0700, refused if another user's or writable by others); a file
    that is not valid JSON is ignored (and replaced at the next save)."""

    path: Path | None
    entries: dict[str, float] = field(default_factory=dict)
    added: dict[str, float] = field(default_factory=dict)

    @staticmethod
    def key(structure: str, backend: str, device: str) -> str:
        text = json.dumps([structure, backend, device])
        return hashlib.sha256(text.encode()).hexdigest()

    @classmethod
    def open(cls, path: Path | None) -> CostDatabase:
        database = cls(cls._usable(path))
        database.entries = database._read()
        return database

    @staticmethod
    def _usable(path: Path | None) -> Path | None:
        from hetero.lowering.compile_cache import Refused, _check_directory, _make
        from hetero.utils.diagnostics import HeteroRuntimeWarning, warn

        if path is None:
            return None
        try:
            _make(path.parent)
            _check_directory(path.parent)
        except (Refused, OSError) as problem:
            warn(
                f"collage-partition: does not keep measurements in {path}: {problem}",
                stacklevel=6,
                category=HeteroRuntimeWarning,
            )
            return None
        return path

    def _read(self) -> dict[str, float]:
        from hetero.lowering.compile_cache import _read

        if self.path is None or not self.path.exists():
            return {}
        try:
            _, data = _read(self.path, 1 << 28)
            entries = json.loads(data)
        except (OSError, ValueError):
            return {}
        if not isinstance(entries, dict):
            return {}
        return {k: float(v) for k, v in entries.items() if isinstance(v, int | float)}

    def get(self, key: str) -> float | None:
        return self.entries.get(key)

    def put(self, key: str, seconds: float) -> None:
        self.entries[key] = self.added[key] = seconds

    def save(self) -> None:
        """Merge this run's measurements into the file, atomically."""
        from hetero.lowering.compile_cache import _write
        from hetero.utils.diagnostics import HeteroRuntimeWarning, warn

        if self.path is None or not self.added:
            return
        merged = {**self._read(), **self.added}
        try:
            os.unlink(
                _write(self.path, json.dumps(merged, indent=0).encode(), os.replace)
            )
        except FileNotFoundError:  # the temporary file was renamed: written
            pass
        except OSError as problem:
            warn(
                f"collage-partition: cannot write {self.path}: {problem}",
                category=HeteroRuntimeWarning,
            )


_CONSTANT = re.compile(r"dense(_resource)?<[^>]*>")


def structure(module: ModuleOp) -> str:
    """`module` printed with every constant as just its type: what its
    latency depends on, the same for every model with the same layer."""
    return _CONSTANT.sub("constant", str(module).split("{-#")[0])


Measure = Callable[["ModuleOp | str", int], float]
"""Seconds of one candidate (its module, or the module's text in a worker),
timed `runs` times: `measure`, or a stand-in in tests."""

MeasureTogether = Callable[[Sequence["ModuleOp"], int], list[float]]
"""Seconds of each of several whole programs, timed together `runs` times:
`measure_together`, or a stand-in in tests."""


def collage_jobs() -> int:
    """`HETERO_COLLAGE_JOBS`, else one worker a CPU this process may use."""
    from hetero.utils.cpus import available_cpus

    text = os.environ.get(JOBS_VARIABLE, "").strip()
    return max(1, int(text)) if text.isdigit() else available_cpus()


@dataclass
class Measurer:
    """Costs of candidates: from the database, else compiled and timed
    (`measured_in_parallel`: in worker processes or Ray tasks)."""

    database: CostDatabase
    runs: int = 5
    device: str = field(default_factory=device_name)
    jobs: int = field(default_factory=collage_jobs)
    ray: str | None = field(default_factory=lambda: os.environ.get(RAY_VARIABLE))
    measure: Measure | None = None
    """None: this module's `measure`, looked up when used (a test may
    replace it).  A stand-in must be importable by name: workers are handed
    it."""
    together: MeasureTogether | None = None
    """None: this module's `measure_together`, looked up when used."""
    measured: int = 0
    reused: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    """Structure key → seconds, this run's (measured or reused)."""

    def cost(self, module: ModuleOp, backend: str) -> float:
        return self.costs([(module, backend)])[0]

    def costs(self, candidates: Sequence[tuple[ModuleOp, str]]) -> list[float]:
        """`cost` of each candidate; those the database lacks are measured
        together (`measured_in_parallel`)."""
        keys = [CostDatabase.key(structure(m), b, self.device) for m, b in candidates]
        alone: dict[str, ModuleOp] = {}
        whole: dict[str, ModuleOp] = {}
        for key, (module, backend) in zip(keys, candidates):
            if key in self.seconds or key in alone or key in whole:
                continue
            known = self.database.get(key)
            if known is None:
                (whole if backend == WHOLE else alone)[key] = module
            else:
                self.seconds[key] = known
                self.reused += 1
        found = measured_in_parallel(
            list(alone.values()),
            self.runs,
            self.measure or measure,
            self.jobs,
            self.ray,
        )
        if whole:
            together = self.together or measure_together
            found += together(list(whole.values()), self.runs)
        missing = [*alone, *whole]
        for key, seconds in zip(missing, found):
            self.database.put(key, seconds)
            self.seconds[key] = seconds
        self.measured += len(missing)
        return [self.seconds[k] for k in keys]

    def finish(self) -> str:
        """Save this run's measurements; how many there were."""
        self.database.save()
        return f"candidates measured: {self.measured}, from the database: {self.reused}"


_TIMING: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
"""Held while a candidate is timed: in a pool worker, the lock the pool's
workers share, so that no two of them time at once."""


def measure(module: ModuleOp | str, runs: int) -> float:
    """Median seconds of a call of `module`'s `@main`, compiled alone, on
    random inputs, less the cost of calling an empty function."""
    from hetero import driver

    call = _call(driver.compile(module))
    with _TIMING:
        overhead = _call_overhead(call.wait is not None)
        return max(0.0, _median_call(call, runs) - overhead)


def measure_together(modules: Sequence[ModuleOp], runs: int) -> list[float]:
    """Median seconds of a call of each whole program's `@main`, compiled
    here and timed in interleaved rounds (a call of each per round, after
    one that warms it), so that a shared machine's load falls on all alike:
    whole placements differ by a few per cent of a long call, less than
    what separately timed samples drift by."""
    from hetero import driver

    calls = [_call(driver.compile(module)) for module in modules]
    samples: list[list[float]] = [[] for _ in calls]
    for call in calls:
        call()
    for _ in range(runs):
        for call, taken in zip(calls, samples):
            taken.append(_sample(call, 1))
    return [statistics.median(taken) for taken in samples]


def measured_in_parallel(
    modules: Sequence[ModuleOp],
    runs: int,
    measure: Measure,
    jobs: int,
    ray: str | None = None,
) -> list[float]:
    """`measure(module, runs)` of each of `modules`: as Ray tasks where `ray`
    names a cluster, else in `jobs` worker processes that each compile and
    time one candidate at a time, else (one job or one module) here."""
    if ray:
        return _on_ray(modules, runs, measure, ray)
    if jobs <= 1 or len(modules) <= 1:
        return [measure(m, runs) for m in modules]
    context = multiprocessing.get_context("spawn")
    n = len(modules)
    with ProcessPoolExecutor(min(jobs, n), context, _worker, (context.Lock(),)) as pool:
        texts = map(_text, modules)
        done = pool.map(_measured_on, [measure] * n, texts, [runs] * n)
        return _on_this_device(list(done))


def _worker(lock: Any) -> None:
    """A pool worker's start: its timed calls take turns with the others'."""
    global _TIMING
    _TIMING = lock


def _text(module: ModuleOp) -> str:
    """`module` as text a worker parses, its weights' blobs included."""
    from hetero.utils.dense_resources import print_with_resources

    return print_with_resources(module)


def _measured_on(measure: Measure, text: str, runs: int) -> tuple[float, str]:
    """`measure` of the module `text`, and the device it was timed on."""
    return measure(text, runs), device_name()


def _on_ray(
    modules: Sequence[ModuleOp], runs: int, measure: Measure, address: str
) -> list[float]:
    """Each module measured by a Ray task of one CPU, where Ray schedules it
    (on `address`'s cluster, or a Ray instance of this process's for
    `local`)."""
    import ray

    if not ray.is_initialized():
        ray.init(address=None if address == "local" else address)
    task = ray.remote(num_cpus=1)(_measured_on)
    done = ray.get([task.remote(measure, _text(m), runs) for m in modules])
    return _on_this_device(done)


def _on_this_device(done: Sequence[tuple[float, str]]) -> list[float]:
    """The seconds of `done`; an error if a worker ran on another kind of
    machine, whose costs would plan this one's code wrongly."""
    from hetero.utils.diagnostics import HeteroError

    here = device_name()
    elsewhere = sorted({device for _, device in done if device != here})
    if elsewhere:
        raise HeteroError(
            f"collage-partition: candidates were measured on {', '.join(elsewhere)}, "
            f"not on this machine ({here}): give it workers of this machine's kind"
        )
    return [seconds for seconds, _ in done]


def _median_call(call: Callable[[], object], runs: int) -> float:
    """Median seconds per call over `runs` samples of enough calls to last
    about a millisecond (after one call that warms caches and JIT-compiles
    libraries' kernels)."""
    call()
    repeat = max(1, int(1e-3 / max(_sample(call, 1), 1e-7)))
    return statistics.median(_sample(call, repeat) for _ in range(runs))


@dataclass(frozen=True)
class _Call:
    """A call of a compiled function, and how to wait for its device when
    it runs on a GPU (None: on the CPU), which decides how it is timed
    (`_sample`)."""

    run: Callable[[], object]
    wait: Callable[[], None] | None = None

    def __call__(self) -> object:
        return self.run()


def _call(compiled: object) -> _Call:
    """A call of `compiled` on inputs of its shapes (`_random`)."""
    rng = np.random.default_rng(0)
    inputs = [_random(rng, s.shape, np.dtype(s.dtype)) for s in compiled.inputs]  # type: ignore[attr-defined]
    return _Call(partial(compiled, *inputs), _device_wait(compiled))  # type: ignore[arg-type]


def _device_wait(compiled: object) -> Callable[[], None] | None:
    """The GPU's synchronization where `compiled` is a GPU program (its host
    code launches kernels or calls cuBLAS/cuDNN), else None."""
    from hetero.runtime import cuda

    if not isinstance(getattr(compiled, "native", None), cuda.GpuProgram):
        return None
    return lambda: cuda.device().synchronize()


def _random(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype
) -> np.ndarray:
    """Random floats; zeros for integers, which a whole program measured
    (`collage-partition`'s check) may use as indices (token ids)."""
    if dtype.kind != "f":
        return np.zeros(shape, dtype)
    return rng.standard_normal(shape).astype(dtype)


def _sample(call: Callable[[], object], repeat: int) -> float:
    """Seconds per call of `repeat` calls.

    On the CPU: the wall time, or the process's CPU time where that is less.
    On a shared machine the wall time counts the time other processes held
    the CPU (on a loaded 2-core host it made a 20 µs candidate take
    milliseconds); a candidate that runs on one thread takes its CPU time
    undisturbed, and one on many threads uses more CPU time than wall time,
    which is then its latency.

    On a GPU (the call has a `wait`): the wall time from a synchronized
    device to the device synchronized after the last call.  The host waits
    for the GPU's kernels, and a wait that sleeps or yields is no CPU time:
    the CPU rule would read a GPU candidate as nearly free."""
    wait = getattr(call, "wait", None)
    if wait is not None:
        wait()
        start = time.perf_counter()
        for _ in range(repeat):
            call()
        wait()
        return (time.perf_counter() - start) / repeat
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeat):
        call()
    return min(time.perf_counter() - wall, time.process_time() - cpu) / repeat


_GPU_CONFIG = (
    " attributes {target.config = #target.config<"
    '[#target.target<"llvm">, #target.target<"cuda">], fallback = cuda>}'
)


def empty_program(gpu: bool) -> str:
    """The program whose call is the overhead of calling any compiled
    function on the CPU or (`gpu`) the GPU: there, one small kernel, the
    copies in and out and the waits."""
    return (
        f"builtin.module{_GPU_CONFIG if gpu else ''} {{\n"
        "  relay.func @main(%x: tensor<1xf32>) -> tensor<1xf32> {\n"
        "    %y = relay.negative %x : tensor<1xf32>\n    relay.return %y : tensor<1xf32>\n  }\n}\n"
    )


@cache
def _call_overhead(gpu: bool = False) -> float:
    """What calling any compiled function on the CPU or (`gpu`) the GPU
    costs (argument checks, output allocation; on a GPU, staging and
    synchronization too): counted once per kernel would favour fewer, larger
    candidates for no reason."""
    from hetero import driver

    return _median_call(_call(driver.compile(empty_program(gpu))), 9)


@register_estimator
def measuring_estimator(database: str | None = None, runs: int = 5) -> Measurer:
    """The default estimator: `database` names the cost database's file
    (default `database_path()`), `runs` the timed samples per candidate."""
    path = Path(database) if database else database_path()
    return Measurer(CostDatabase.open(path), runs)
