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
2. **Costs.**  Each candidate becomes a module holding just its ops
   (constants kept, so that the regular target packs its weights as it
   would), and the registered cost estimator (`hetero.targets.costs`) says
   how long it takes on its backend.  The default one,
   `hetero.collage_measure`, compiles it alone and times it on this host
   (the candidates of a block in parallel worker processes, or on a Ray
   cluster), keeping what it measured in a cost database shared by every
   model and process.
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

import heapq
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import count

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType, UnitAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from hetero.dialects import relay
from hetero.dialects.target import CONFIG_ATTR_NAME, CompilationConfigAttr, TargetAttr
from hetero.dialects.target.config import module_config
from hetero.targets.costs import WHOLE, CostEstimator, costs, default_estimator
from hetero.targets.patterns import Match, OpPattern, PatternError, match, pattern_table
from hetero.transforms.annotate_target import AnnotateTargetPass
from hetero.transforms.byoc import (
    COMPILER_ATTR,
    ExternalTargets,
    compiler_names,
    program_blocks,
)
from hetero.transforms.merge_compiler_regions import MergeCompilerRegionsPass
from hetero.transforms.merge_composite import MergeCompositePass, _one_device, _wrap
from hetero.transforms.partition_graph import PartitionGraphPass
from hetero.utils.diagnostics import HeteroError, warn

PLAN_ATTR = "hetero.collage_plan"
"""Module attribute: the chosen plan as text (`Plan.describe`)."""

PLACED_ATTR = "hetero.collage_placed"
"""Module attribute of a whole program whose external ops are placed
already (annotated `Composite` calls): `hetero.compile` only merges and
partitions its regions, so the program runs as placed."""

WHOLE_MARGIN = 0.03
"""How much faster than the best single-backend placement collage's must be
measured whole to be kept: two compiles of one program time up to 3 % apart
on a shared host (ResNet-50: 63.5 to 65.4 ms), so a plan closer than that is
not shown to be faster, and the single backend's own program is kept."""

MARGIN = 0.1
"""How much faster than hetero's own code a library candidate must be
measured, alone, to be chosen: a small measured gain is within the noise
and is often lost in the network (no fusion with the neighbours, colder
caches, the library's per-call set-up)."""


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
# Candidates of a block
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
    margin: float = 0.0,
) -> Plan:
    """The cheapest plan over the nodes candidates cover (other ops run on
    the regular target whatever the plan), and the single-kind estimates.
    The search weighs a library candidate's cost by `1 + margin`: a library
    takes ops only where it is measured that much faster."""
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
    weighed = {
        c: seconds * (1.0 if c.backend == REGULAR else 1.0 + margin)
        for c, seconds in costs.items()
    }

    def best(allowed: Callable[[Candidate], bool]) -> tuple[float, list[Candidate]]:
        options = [c for c in local if allowed(local[c])]
        _, chosen = search(
            len(covered), edges, options, lambda c: weighed[local[c]], copy_cost
        )
        return sum(costs[local[c]] for c in chosen), [local[c] for c in chosen]

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
    estimator: CostEstimator | None = None,
    margin: float = MARGIN,
    whole: bool = True,
) -> list[Plan]:
    """Partition `module` (planned by `plan-devices`) by cost, as the pass
    does (costs from `estimator`, default the registered one; `margin`:
    `plan_block`'s; `whole`: `keep_fastest` checks the result); the plan of
    each block of program code."""
    config = module_config(module, None, "collage-partition")
    externals = ExternalTargets(config, module, compiler_names(compilers, module))
    kinds = offered_kinds(externals)
    estimator = estimator or default_estimator()
    original = module.clone() if whole else None
    plans = []
    for block in program_blocks(module):
        graph = Graph.of(block)
        found = candidates(graph, externals, kinds)
        if not found:
            continue
        modules = [_candidate_module(externals, graph, c) for c in found]
        seconds = dict(zip(found, costs(estimator, modules)))
        plan = plan_block(graph, found, seconds.__getitem__, margin=margin)
        apply_plan(plan)
        plans.append(plan)
    text = "\n".join(p.describe() for p in plans)
    if original is not None and plans and _whole_program(module):
        text += "\n" + keep_fastest(module, original, kinds, estimator)
    summary = estimator.finish()
    for stage in (MergeCompilerRegionsPass(), PartitionGraphPass()):
        stage.apply(Context(), module)
    text += f"\n  {summary}"
    module.attributes[PLAN_ATTR] = StringAttr(text)
    return plans


def _whole_program(module: ModuleOp) -> bool:
    """Whether `module` is a program `hetero.compile` runs as it is: an
    `@main` with static input shapes."""
    main = SymbolTable.lookup_symbol(module, "main")
    return isinstance(main, relay.FuncOp) and all(
        not isinstance(t, TensorType) or t.has_static_shape()
        for t in main.function_type.inputs
    )


def placements(
    module: ModuleOp, original: ModuleOp, kinds: Sequence[str]
) -> dict[str, ModuleOp]:
    """The whole program placed as collage's search placed `module`, on the
    regular target alone, and with each of `kinds` taking every match of its
    table (the manual flow), each a module marked `PLACED_ATTR`."""
    placed = {"collage": module.clone(), REGULAR: original.clone()}
    for kind in kinds:
        placed[kind] = original.clone()
        for stage in (MergeCompositePass((kind,)), AnnotateTargetPass((kind,))):
            stage.apply(Context(), placed[kind])
    for program in placed.values():
        program.attributes[PLACED_ATTR] = UnitAttr()
    return placed


def kept_placement(seconds: dict[str, float]) -> str:
    """Which of the placements measured whole (`seconds`, by name) is kept:
    collage's where it is `WHOLE_MARGIN` faster than the fastest other one,
    else that one."""
    single = min((n for n in seconds if n != "collage"), key=seconds.__getitem__)
    ahead = seconds["collage"] < seconds[single] * (1 - WHOLE_MARGIN)
    return "collage" if ahead else single


def keep_fastest(
    module: ModuleOp,
    original: ModuleOp,
    kinds: Sequence[str],
    estimator: CostEstimator,
) -> str:
    """Collage's placement of `module`, measured whole against each
    single-backend placement (`placements`); `module` becomes the fastest.
    Candidates measured alone miss what the network adds (fusion with their
    neighbours, caches cold with the other layers' data, copies into a
    concatenation), and the sum of many estimates accumulates their noise:
    this check makes the result at least as fast as the best single backend,
    as measured.  Collage's placement is kept only where it is faster than
    the best single-backend one by `WHOLE_MARGIN`; else that backend's own
    program is, the same program, never slower but for noise.  A line for
    the plan."""
    placed = placements(module, original, kinds)
    seconds = dict(zip(placed, costs(estimator, [(m, WHOLE) for m in placed.values()])))
    fastest = kept_placement(seconds)
    if fastest != "collage":
        chosen = placed[fastest]
        del chosen.attributes[PLACED_ATTR]
        for op in list(module.ops):
            op.detach()
            op.erase()
        for op in list(chosen.ops):
            op.detach()
            module.body.block.add_op(op)
    measured = ", ".join(f"{name} {t * 1e3:.3f} ms" for name, t in seconds.items())
    return f"  whole program measured: {measured}; kept {fastest}"


def _candidate_module(
    externals: ExternalTargets, graph: Graph, candidate: Candidate
) -> tuple[ModuleOp, str]:
    """`candidate`'s module for its device's regular target (with its kind),
    and its backend: what the estimator is asked the cost of."""
    device = externals.device(graph.ops[min(candidate.nodes)])
    regular = device.target.without_host()  # type: ignore[union-attr]
    targets = [regular]
    if candidate.backend != REGULAR:
        kind = next(
            t for t in externals.targets if t.kind_name.data == candidate.backend
        )
        targets.append(kind.without_host())
    return candidate_module(graph, candidate, targets), candidate.backend


@dataclass(frozen=True)
class CollagePartitionPass(ModulePass):
    """Place the external kinds' patterns by measured cost (module docstring).

    `compilers=blas,dnnl` restricts the kinds; `database` and `runs` go to
    the registered cost estimator (the measuring one: the cost database's
    file, default `HETERO_COLLAGE_DB`, else hetero's cache directory; the
    timed samples per candidate); `print_plan` writes the plan to stderr;
    `margin`: how much faster a library candidate must be measured to be
    chosen (`MARGIN`); `whole`: whether the result is measured whole against
    the single-backend placements and the fastest kept (`keep_fastest`).
    """

    name = "collage-partition"
    compilers: tuple[str, ...] = ()
    database: str | None = None
    runs: int = 5
    print_plan: bool = False
    margin: float = MARGIN
    whole: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        estimator = default_estimator(database=self.database, runs=self.runs)
        collage_partition(op, self.compilers, estimator, self.margin, self.whole)
        if self.print_plan:
            print(op.attributes[PLAN_ATTR].data, file=sys.stderr)  # type: ignore[attr-defined]
