"""`collage-partition`: external kinds placed by measured cost (Collage's search).

The manual BYOC flow (`merge-composite`, `annotate-target`) gives every match
of a configured kind's pattern table to that kind, in configuration order,
whether or not it is faster there.  This pass chooses by measurement, as
Collage (Jeon et al.) does:

1. **Candidates.**  Every match of every pattern of every configured external
   kind whose codegen can run here (`hetero.targets.codegen`), on a device
   the kind may take, is a candidate sub-graph for that kind; the same ops
   compiled by the device's regular target (`llvm`) are a candidate too, and
   so is each op alone on it.  Ops no table covers are not candidates: they
   run on the regular target in every plan.
2. **Costs.**  Each candidate is compiled alone (`hetero.compile` of a
   module holding just its ops, constants kept so that the regular target
   packs its weights as it would) and its latency measured on this host: the
   median of a few timed runs on random inputs of the right shapes, less the
   cost of calling an empty function.  Measurements go to a `CostDatabase`
   keyed by the candidate's structure (its module printed with constants as
   their shapes), the backend and the machine, so a layer measured once is
   never measured again, in any model or process.
3. **Search.**  `search` finds the minimum-cost cover of the dataflow graph:
   a shortest path (Dijkstra) over states "ops covered so far", each step
   taking a candidate that covers the first uncovered op in topological
   order; a step adds the candidate's cost and, for every edge between it
   and an op already placed on another backend, the cost of copying that
   value (`copy_cost`; zero between the CPU's kinds, which share memory).
4. **Result.**  The chosen library candidates become `Composite` calls
   annotated `relay.compiler = "<kind>"`, then `merge-compiler-regions` and
   `partition-graph` run: the output is that of the manual flow, so
   outlining, `external-codegen`, `Extern` marking and lowering run
   unchanged.  The plan (which op runs where, the estimated and measured
   totals) is written to the module as `hetero.collage_plan` and, with
   `print_plan`, to stderr.

`hetero-opt -p collage-partition` and `hetero.compile(..., collage=True)`
run it (docs/passes/collage.md).
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache, partial
from itertools import count
from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from hetero.dialects import relay
from hetero.dialects.target import CONFIG_ATTR_NAME, CompilationConfigAttr, TargetAttr
from hetero.dialects.target.config import module_config
from hetero.targets.patterns import Match, OpPattern, PatternError, match, pattern_table
from hetero.transforms.byoc import (
    COMPILER_ATTR,
    ExternalTargets,
    compiler_names,
    program_blocks,
)
from hetero.transforms.merge_compiler_regions import MergeCompilerRegionsPass
from hetero.transforms.merge_composite import _one_device, _wrap
from hetero.transforms.partition_graph import PartitionGraphPass
from hetero.utils.diagnostics import HeteroError, HeteroRuntimeWarning, warn

PLAN_ATTR = "hetero.collage_plan"
"""Module attribute: the chosen plan as text (`Plan.describe`)."""

DATABASE_VARIABLE = "HETERO_COLLAGE_DB"
"""The cost database's file; empty: keep measurements in memory only."""

DATABASE_FILE = "collage-costs.json"


# ----------------------------------------------------------------------------
# The search
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A sub-graph (node indices) on a backend (`llvm` or an external kind)."""

    backend: str
    nodes: frozenset[int]
    pattern: str = ""
    """The kind's pattern (empty for the regular target)."""
    match: Match | None = field(default=None, compare=False, hash=False)
    """Where the pattern matched in the program (library candidates)."""

    def pattern_of(self) -> OpPattern:
        return next(
            e.pattern for e in pattern_table(self.backend) if e.name == self.pattern
        )


@dataclass(frozen=True)
class Edge:
    """A value of `producer` read by `consumer`, `bytes` large."""

    producer: int
    consumer: int
    bytes: int


CopyCost = Callable[[Edge, str, str], float]
"""Seconds to move an edge's value from one backend's memory to another's."""


def no_copies(edge: Edge, source: str, destination: str) -> float:
    """The CPU's backends share the host's memory: nothing is copied."""
    return 0.0


def search(
    nodes: int,
    edges: Sequence[Edge],
    candidates: Sequence[Candidate],
    cost: Callable[[Candidate], float],
    copy_cost: CopyCost = no_copies,
) -> tuple[float, list[Candidate]]:
    """The minimum-cost set of candidates covering each of `nodes` (numbered in
    topological order) exactly once, and its cost: candidates' costs plus a
    copy per edge whose ends are on different backends.

    Dijkstra over states: each step takes a candidate holding the first
    uncovered node, so every cover is reached in one order only.  A state is
    that node and `_frontier`, all the future depends on."""
    containing: list[list[Candidate]] = [[] for _ in range(nodes)]
    for candidate in candidates:
        for node in candidate.nodes:
            containing[node].append(candidate)
    neighbours: list[list[tuple[int, Edge]]] = [[] for _ in range(nodes)]
    for edge in edges:
        neighbours[edge.producer].append((edge.consumer, edge))
        neighbours[edge.consumer].append((edge.producer, edge))
    costs = {c: cost(c) for c in candidates}
    tie = count()
    State = tuple[int, frozenset[tuple[int, str]]]
    queue: list[tuple[float, int, State, tuple[Candidate, ...]]] = [
        (0.0, next(tie), (0, frozenset()), ())
    ]
    seen: set[State] = set()
    while queue:
        total, _, state, chosen = heapq.heappop(queue)
        if state in seen:
            continue
        seen.add(state)
        first, placed = state
        if first == nodes:
            return total, list(chosen)
        backend_of = dict(placed)
        for candidate in containing[first]:
            if any(n in backend_of for n in candidate.nodes):
                continue
            step = costs[candidate] + _copies(
                candidate, backend_of, neighbours, copy_cost
            )
            covered = {
                **backend_of,
                **dict.fromkeys(candidate.nodes, candidate.backend),
            }
            heapq.heappush(
                queue,
                (
                    total + step,
                    next(tie),
                    _frontier(first, covered, neighbours, nodes),
                    (*chosen, candidate),
                ),
            )
    raise ValueError("some node is in no candidate")


def _copies(
    candidate: Candidate,
    backend_of: dict[int, str],
    neighbours: Sequence[Sequence[tuple[int, Edge]]],
    copy_cost: CopyCost,
) -> float:
    """The copies between `candidate` and the nodes placed before it."""
    total = 0.0
    for node in candidate.nodes:
        for other, edge in neighbours[node]:
            there = backend_of.get(other)
            if there is None or there == candidate.backend:
                continue
            if edge.producer == other:
                total += copy_cost(edge, there, candidate.backend)
            else:
                total += copy_cost(edge, candidate.backend, there)
    return total


def _frontier(
    first: int,
    backend_of: dict[int, str],
    neighbours: Sequence[Sequence[tuple[int, Edge]]],
    nodes: int,
) -> tuple[int, frozenset[tuple[int, str]]]:
    """The state after covering `backend_of`'s nodes: the first uncovered node,
    and the placed nodes later steps depend on (those after it, not to cover
    them again; those with an uncovered neighbour, which a copy is counted
    against).  Every node before the first uncovered one is placed."""

    def covered(n: int) -> bool:
        return n < first or n in backend_of

    while first < nodes and covered(first):
        first += 1
    return first, frozenset(
        (n, b)
        for n, b in backend_of.items()
        if n > first or any(not covered(o) for o, _ in neighbours[n])
    )


# ----------------------------------------------------------------------------
# The cost database
# ----------------------------------------------------------------------------


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

        if path is None:
            return None
        try:
            _make(path.parent)
            _check_directory(path.parent)
        except (Refused, OSError) as problem:
            warn(
                f"collage-partition: does not keep measurements in {path}: {problem}",
                stacklevel=4,
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


# ----------------------------------------------------------------------------
# Candidates of a block, and their measurement
# ----------------------------------------------------------------------------

REGULAR = "llvm"


@dataclass
class Graph:
    """The tensor ops of a block in program (topological) order, and the
    values between them."""

    ops: list[Operation]
    edges: list[Edge]

    @staticmethod
    def of(block: Block) -> Graph:
        ops = [op for op in block.ops if _is_node(op)]
        index = {op: i for i, op in enumerate(ops)}
        edges = [
            Edge(index[v.owner], i, _bytes(v))
            for i, op in enumerate(ops)
            for v in op.operands
            if v.owner in index
        ]
        return Graph(ops, edges)


def _is_node(op: Operation) -> bool:
    return isinstance(op, relay.TensorOp)


def _bytes(value: SSAValue) -> int:
    t = value.type
    if not isinstance(t, TensorType):
        return 0
    return int(np.prod(t.get_shape())) * max(1, t.element_type.bitwidth // 8)  # type: ignore[attr-defined]


def candidates(
    graph: Graph, externals: ExternalTargets, kinds: Sequence[str]
) -> list[Candidate]:
    """Every match of the `kinds`' tables on a device they may take, the same
    ops on the regular target, and each matched op alone on it."""
    index = {op: i for i, op in enumerate(graph.ops)}
    found: dict[Candidate, None] = {}
    for target in externals.targets:
        kind = target.kind_name.data
        if kind not in kinds:
            continue
        for entry in pattern_table(kind):
            for op in graph.ops:
                if target not in externals.for_device(externals.device(op)):
                    continue
                try:
                    m = match(entry.pattern, op)
                except PatternError as e:
                    raise HeteroError(str(e), op) from e
                if (
                    m is None
                    or not _one_device(m)
                    or any(o not in index for o in m.ops)
                ):
                    continue
                nodes = frozenset(index[o] for o in m.ops)
                found[Candidate(kind, nodes, entry.name, m)] = None
                found[Candidate(REGULAR, nodes)] = None
                for n in nodes:
                    found[Candidate(REGULAR, frozenset({n}))] = None
    return list(found)


def _strip_devices(op: Operation) -> None:
    for nested in op.walk():
        nested.attributes.pop("vdevice", None)
        if "vdevice" in nested.properties:
            del nested.properties["vdevice"]


def candidate_module(
    graph: Graph, candidate: Candidate, targets: Sequence[TargetAttr]
) -> ModuleOp:
    """A module whose `@main` computes just `candidate`'s ops for `targets`:
    its inputs are parameters, constants are copied in; on an external kind
    the ops are one `Composite` call annotated for it, so that the kind
    takes exactly them."""
    ops = [graph.ops[n] for n in sorted(candidate.nodes)]
    inside = set(ops)
    inputs: list[SSAValue] = []
    constants: list[Operation] = []
    for op in ops:
        for v in op.operands:
            if v.owner in inside or v in inputs or v.owner in constants:
                continue
            if isinstance(v.owner, relay.ConstantOp):
                constants.append(v.owner)
            else:
                inputs.append(v)
    root = ops[-1]
    func = relay.FuncOp("main", [v.type for v in inputs], root.results[0].type)
    body = func.body.block
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, body.args))
    for op in [*constants, *ops]:
        clone = op.clone(value_mapper=mapping)
        _strip_devices(clone)
        mapping.update(zip(op.results, clone.results))
        body.add_op(clone)
    result = mapping[root.results[0]]
    body.add_op(relay.ReturnOp(result))
    if candidate.match is not None:
        _take(match(candidate.pattern_of(), result.owner), candidate)  # type: ignore[arg-type]
    module = ModuleOp([func])
    module.attributes[CONFIG_ATTR_NAME] = CompilationConfigAttr(list(targets))
    return module


def _take(found: Match | None, candidate: Candidate) -> None:
    """`found` as a `Composite` call of `candidate`'s pattern, annotated for its kind."""
    assert found is not None, "a candidate's ops match its pattern"
    _wrap(found, f"{candidate.backend}.{candidate.pattern}")
    literal = found.root.parent_op()
    assert literal is not None
    call = next(iter(literal.results[0].uses)).operation
    call.attributes[COMPILER_ATTR] = StringAttr(candidate.backend)


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


def measure(module: ModuleOp, runs: int) -> float:
    """Median seconds of a call of `module`'s `@main`, compiled alone, on
    random inputs, less the cost of calling an empty function."""
    import hetero

    compiled = hetero.compile(module)
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
    import hetero

    text = (
        "builtin.module {\n  relay.func @main(%x: tensor<1xf32>) -> tensor<1xf32> {\n"
        "    %y = relay.negative %x : tensor<1xf32>\n    relay.return %y : tensor<1xf32>\n  }\n}\n"
    )
    return _median_call(hetero.compile(text), 9)


# ----------------------------------------------------------------------------
# The plan and the pass
# ----------------------------------------------------------------------------


@dataclass
class Plan:
    """The chosen candidates of a block, with their costs."""

    graph: Graph
    chosen: list[Candidate]
    costs: dict[Candidate, float]
    single: dict[str, float]
    """Backend → the estimated total with only that kind (and the regular
    target), from the same measurements."""

    @property
    def estimated(self) -> float:
        return sum(self.costs[c] for c in self.chosen)

    def describe(self) -> str:
        """Which op runs where, and the totals."""
        lines = ["collage plan (measured seconds per candidate):"]
        for c in sorted(self.chosen, key=lambda c: min(c.nodes)):
            ops = ", ".join(
                self.graph.ops[n].name.removeprefix("relay.") for n in sorted(c.nodes)
            )
            what = f"{c.backend}.{c.pattern}" if c.pattern else c.backend
            lines.append(f"  {what:<32} {self.costs[c] * 1e3:9.3f} ms  {ops}")
        lines.append(f"  estimated total: {self.estimated * 1e3:.3f} ms")
        for backend, total in self.single.items():
            lines.append(f"  {backend} alone (estimated): {total * 1e3:.3f} ms")
        return "\n".join(lines)


def plan_block(
    graph: Graph,
    found: Sequence[Candidate],
    cost: Callable[[Candidate], float],
    copy_cost: CopyCost = no_copies,
) -> Plan:
    """The cheapest plan over the nodes candidates cover (other ops run on
    the regular target whatever the plan), and the single-kind estimates."""
    covered = sorted({n for c in found for n in c.nodes})
    renumber = {n: i for i, n in enumerate(covered)}
    local = {
        Candidate(
            c.backend, frozenset(renumber[n] for n in c.nodes), c.pattern, c.match
        ): c
        for c in found
    }
    edges = [
        Edge(renumber[e.producer], renumber[e.consumer], e.bytes)
        for e in graph.edges
        if e.producer in renumber and e.consumer in renumber
    ]
    costs = {c: cost(c) for c in found}

    def best(allowed: Callable[[Candidate], bool]) -> tuple[float, list[Candidate]]:
        options = [c for c in local if allowed(local[c])]
        total, chosen = search(
            len(covered), edges, options, lambda c: costs[local[c]], copy_cost
        )
        return total, [local[c] for c in chosen]

    _, chosen = best(lambda c: True)
    single = {
        b: best(lambda c, b=b: c.backend in (REGULAR, b))[0]
        for b in sorted({c.backend for c in found})
    }
    return Plan(graph, chosen, costs, single)


def apply_plan(plan: Plan) -> None:
    """The plan's library candidates as annotated `Composite` calls, the last
    first (a match's inputs may be an earlier match's root)."""
    chosen = [c for c in plan.chosen if c.match is not None]
    for candidate in sorted(chosen, key=lambda c: max(c.nodes), reverse=True):
        _take(candidate.match, candidate)


def offered_kinds(externals: ExternalTargets) -> list[str]:
    """The configured kinds whose codegen can run here (others warned about)."""
    from hetero.targets.codegen import unavailable_reason

    kinds = []
    for target in externals.targets:
        kind = target.kind_name.data
        if (why := unavailable_reason(kind)) is None:
            kinds.append(kind)
        else:
            warn(f"collage-partition: '{kind}' is not offered: {why}", stacklevel=3)
    return kinds


def collage_partition(
    module: ModuleOp,
    compilers: Sequence[str] = (),
    database: CostDatabase | None = None,
    runs: int = 5,
) -> list[Plan]:
    """Partition `module` (planned by `plan-devices`) by measured cost, as
    the pass does; the plan of each block of program code."""
    config = module_config(module, None, "collage-partition")
    externals = ExternalTargets(config, module, compiler_names(compilers, module))
    kinds = offered_kinds(externals)
    measurer = Measurer(database or CostDatabase.open(database_path()), runs)
    plans = []
    for block in program_blocks(module):
        graph = Graph.of(block)
        found = candidates(graph, externals, kinds)
        if not found:
            continue
        plan = plan_block(graph, found, partial(_measured, measurer, externals, graph))
        apply_plan(plan)
        plans.append(plan)
    measurer.database.save()
    for stage in (MergeCompilerRegionsPass(), PartitionGraphPass()):
        stage.apply(Context(), module)
    text = "\n".join(p.describe() for p in plans)
    text += f"\n  candidates measured: {measurer.measured}, from the database: {measurer.reused}"
    module.attributes[PLAN_ATTR] = StringAttr(text)
    return plans


def _measured(
    measurer: Measurer, externals: ExternalTargets, graph: Graph, candidate: Candidate
) -> float:
    """The cost of `candidate` on its device's regular target, with its kind."""
    device = externals.device(graph.ops[min(candidate.nodes)])
    regular = device.target.without_host()  # type: ignore[union-attr]
    targets = [regular]
    if candidate.backend != REGULAR:
        kind = next(
            t for t in externals.targets if t.kind_name.data == candidate.backend
        )
        targets.append(kind.without_host())
    return measurer.cost(candidate_module(graph, candidate, targets), candidate.backend)


@dataclass(frozen=True)
class CollagePartitionPass(ModulePass):
    """Place the external kinds' patterns by measured cost (module docstring).

    `compilers=blas,dnnl` restricts the kinds; `database` names the cost
    database's file (default: `HETERO_COLLAGE_DB`, else hetero's cache
    directory); `runs` is the timed samples per candidate; `print_plan`
    writes the plan to stderr.
    """

    name = "collage-partition"
    compilers: tuple[str, ...] = ()
    database: str | None = None
    runs: int = 5
    print_plan: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        path = Path(self.database) if self.database else database_path()
        collage_partition(op, self.compilers, CostDatabase.open(path), self.runs)
        if self.print_plan:
            print(op.attributes[PLAN_ATTR].data, file=sys.stderr)  # type: ignore[attr-defined]
