"""Collage's measuring cost estimator: compile a candidate, run it, keep the median.

`collage-partition` (a transform) places external kinds by cost and asks the
estimator registered in `hetero.targets.costs` what a candidate costs.  This
module is that estimator, at the driver's layer because measuring compiles
(`hetero.compile`) and runs code: a candidate's module is compiled alone and
timed on this host, the median of a few timed runs on random inputs of the
right shapes, less the cost of calling an empty function.  Measurements go to
a `CostDatabase` keyed by the candidate's structure (its module printed with
constants as their shapes), the backend and the machine, so a layer measured
once is never measured again, in any model or process (docs/passes/collage.md).

`hetero/__init__.py` imports this module, so every use of hetero, from
`hetero-opt` to `hetero.compile`, has it registered.  That import must not
cost a deployed model anything: the compiler's modules (and xDSL) are
imported only where a measurement needs them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import statistics
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hetero.targets.costs import register_estimator

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

DATABASE_VARIABLE = "HETERO_COLLAGE_DB"
"""The cost database's file; empty: keep measurements in memory only."""

DATABASE_FILE = "collage-costs.json"


@cache
def device_name() -> str:
    """This host as measurements depend on it: the CPU and its features."""
    import llvmlite.binding as llvm

    from hetero.runtime.cpu import _initialize

    _initialize()
    features = llvm.get_host_cpu_features().flatten()
    return f"{llvm.get_host_cpu_name()} {hashlib.sha256(features.encode()).hexdigest()[:16]}"


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


@dataclass
class Measurer:
    """Costs of candidates: from the database, else compiled and timed."""

    database: CostDatabase
    runs: int = 5
    device: str = field(default_factory=device_name)
    measured: int = 0
    reused: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    """Structure key → seconds, this run's (measured or reused)."""

    def cost(self, module: ModuleOp, backend: str) -> float:
        key = CostDatabase.key(structure(module), backend, self.device)
        if key not in self.seconds:
            known = self.database.get(key)
            if known is None:
                known = measure(module, self.runs)
                self.database.put(key, known)
                self.measured += 1
            else:
                self.reused += 1
            self.seconds[key] = known
        return self.seconds[key]

    def finish(self) -> str:
        """Save this run's measurements; how many there were."""
        self.database.save()
        return f"candidates measured: {self.measured}, from the database: {self.reused}"


def measure(module: ModuleOp, runs: int) -> float:
    """Median seconds of a call of `module`'s `@main`, compiled alone, on
    random inputs, less the cost of calling an empty function."""
    from hetero import driver

    compiled = driver.compile(module)
    return max(0.0, _median_call(compiled, runs) - _call_overhead())


def _median_call(compiled: object, runs: int) -> float:
    """Median seconds per call over `runs` samples of enough calls to last
    about a millisecond (after one call that warms caches)."""
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s.shape).astype(s.dtype) for s in compiled.inputs]  # type: ignore[attr-defined]
    start = time.perf_counter()
    compiled(*inputs)  # type: ignore[operator]
    repeat = max(1, int(1e-3 / max(time.perf_counter() - start, 1e-7)))
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(repeat):
            compiled(*inputs)  # type: ignore[operator]
        samples.append((time.perf_counter() - start) / repeat)
    return statistics.median(samples)


@cache
def _call_overhead() -> float:
    """What calling any compiled function costs (argument checks, output
    allocation): counted once per kernel would favour fewer, larger
    candidates for no reason."""
    from hetero import driver

    text = (
        "builtin.module {\n  relay.func @main(%x: tensor<1xf32>) -> tensor<1xf32> {\n"
        "    %y = relay.negative %x : tensor<1xf32>\n    relay.return %y : tensor<1xf32>\n  }\n}\n"
    )
    return _median_call(driver.compile(text), 9)


@register_estimator
def measuring_estimator(database: str | None = None, runs: int = 5) -> Measurer:
    """The default estimator: `database` names the cost database's file
    (default `database_path()`), `runs` the timed samples per candidate."""
    path = Path(database) if database else database_path()
    return Measurer(CostDatabase.open(path), runs)
