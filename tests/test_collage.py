"""`collage-partition` (docs/passes/collage.md): placement by measured cost.

* The search on synthetic graphs with injected, deterministic costs: the
  cheaper backend per region, copies that make a locally cheaper choice
  globally worse, agreement with brute force on random graphs.
* The cost database: hit and miss, keys that separate devices and
  structures, a corrupted file ignored, atomic writes, the directory rules
  of the compile cache.
* End to end: a small conv/dense program compiled with `collage=True`
  (measurements stubbed) runs what the costs say where they say, and equals
  the reference interpreter; one real measurement.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import stat
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from byoc_programs import random_inputs
from xdsl.context import Context
from xdsl.dialects.builtin import StringAttr

import hetero
from hetero import collage_measure as measuring
from hetero import driver
from hetero.collage_measure import CostDatabase, Measurer
from hetero.context import parse_module
from hetero.dialects import relay
from hetero.interpreter.relay import run
from hetero.targets import costs as estimators
from hetero.targets.costs import WHOLE
from hetero.transforms import collage_partition as collage
from hetero.transforms.collage_partition import (
    PLAN_ATTR,
    Candidate,
    CollagePartitionPass,
    Edge,
    search,
)
from hetero.transforms.plan_devices import PlanDevicesPass


@pytest.fixture(autouse=True)
def measure_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Candidates measured in this process, where the tests' stubs of
    `measure` are (tests/test_collage_parallel.py tests the workers)."""
    monkeypatch.setenv(measuring.JOBS_VARIABLE, "1")


# ----------------------------------------------------------------------------
# The search
# ----------------------------------------------------------------------------


def chain(n: int) -> list[Edge]:
    return [Edge(i, i + 1, 4) for i in range(n - 1)]


def c(backend: str, *nodes: int) -> Candidate:
    return Candidate(backend, frozenset(nodes))


def costs(table: dict[Candidate, float]):
    return lambda candidate: table[candidate]


def test_the_cheaper_backend_per_region():
    table = {
        c("llvm", 0): 3.0, c("llvm", 1): 3.0, c("llvm", 2): 3.0, c("llvm", 3): 1.0,
        c("a", 0, 1): 2.0, c("b", 1, 2): 2.5, c("b", 3): 2.0,
    }  # fmt: skip
    total, chosen = search(4, chain(4), list(table), costs(table))
    assert set(chosen) == {c("a", 0, 1), c("llvm", 2), c("llvm", 3)}
    assert total == 6.0


def test_copies_make_a_locally_cheaper_choice_globally_worse():
    table = {c("llvm", 0): 1.0, c("llvm", 1): 1.0, c("llvm", 2): 1.0, c("x", 1): 0.6}

    def copy(edge: Edge, source: str, destination: str) -> float:
        return 0.3 if source != destination else 0.0

    assert set(search(3, chain(3), list(table), costs(table))[1]) == {
        c("llvm", 0),
        c("x", 1),
        c("llvm", 2),
    }
    total, chosen = search(3, chain(3), list(table), costs(table), copy)
    assert set(chosen) == {c("llvm", 0), c("llvm", 1), c("llvm", 2)}
    assert total == 3.0
    # a cheap enough library is worth its two copies
    table[c("x", 1)] = 0.3
    total, chosen = search(3, chain(3), list(table), costs(table), copy)
    assert c("x", 1) in chosen and total == pytest.approx(2.9)


def test_copies_are_counted_per_edge_with_their_bytes():
    # a diamond: 0 feeds 1 and 2, which feed 3; x takes 1 and 2 (two regions)
    edges = [Edge(0, 1, 100), Edge(0, 2, 100), Edge(1, 3, 10), Edge(2, 3, 10)]
    table = {c("llvm", n): 1.0 for n in range(4)} | {c("x", 1): 0.5, c("x", 2): 0.5}

    def copy(edge: Edge, source: str, destination: str) -> float:
        return edge.bytes * 1e-3

    total, chosen = search(4, edges, list(table), costs(table), copy)
    assert set(chosen) == {c("llvm", 0), c("x", 1), c("x", 2), c("llvm", 3)}
    assert total == pytest.approx(3.0 + 2 * 0.1 + 2 * 0.01)


def test_a_node_no_candidate_covers_is_an_error():
    with pytest.raises(ValueError, match="no candidate"):
        search(2, chain(2), [c("llvm", 0)], lambda _: 1.0)


def _brute_force(nodes, edges, candidates, cost, copy):
    best = float("inf")
    for r in range(1, nodes + 1):
        for chosen in itertools.combinations(candidates, r):
            covered = [n for k in chosen for n in k.nodes]
            if sorted(covered) != list(range(nodes)):
                continue
            backend = {n: k.backend for k in chosen for n in k.nodes}
            total = sum(cost(k) for k in chosen) + sum(
                copy(e, backend[e.producer], backend[e.consumer])
                for e in edges
                if backend[e.producer] != backend[e.consumer]
            )
            best = min(best, total)
    return best


@pytest.mark.parametrize("seed", range(12))
def test_search_equals_brute_force_on_random_graphs(seed: int):
    rng = random.Random(seed)
    nodes = rng.randint(3, 7)
    edges = [
        Edge(i, j, rng.randint(1, 50))
        for j in range(nodes)
        for i in range(j)
        if rng.random() < 0.4
    ]
    found = [c("llvm", n) for n in range(nodes)]
    for _ in range(rng.randint(1, 6)):
        start = rng.randrange(nodes)
        size = rng.randint(1, min(3, nodes - start))
        found.append(c(rng.choice("ab"), *range(start, start + size)))
    found = list(dict.fromkeys(found))
    table = {k: round(rng.uniform(0.1, 3.0), 3) for k in found}

    def copy(edge: Edge, source: str, destination: str) -> float:
        return edge.bytes / 100

    total, chosen = search(nodes, edges, found, costs(table), copy)
    assert sorted(n for k in chosen for n in k.nodes) == list(range(nodes))
    assert total == pytest.approx(_brute_force(nodes, edges, found, costs(table), copy))


# ----------------------------------------------------------------------------
# The cost database
# ----------------------------------------------------------------------------


def test_database_hit_miss_and_keys(tmp_path: Path):
    path = tmp_path / "costs" / "db.json"
    database = CostDatabase.open(path)
    key = CostDatabase.key("conv 1x8x10x10", "dnnl", "zen4 abc")
    assert database.get(key) is None
    database.put(key, 1.5e-3)
    database.save()
    again = CostDatabase.open(path)
    assert again.get(key) == 1.5e-3
    assert again.get(CostDatabase.key("conv 1x8x10x10", "dnnl", "skylake abc")) is None
    assert again.get(CostDatabase.key("conv 1x8x12x12", "dnnl", "zen4 abc")) is None
    assert again.get(CostDatabase.key("conv 1x8x10x10", "llvm", "zen4 abc")) is None
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700


def test_database_merges_concurrent_writers_atomically(tmp_path: Path):
    path = tmp_path / "db.json"
    first, second = CostDatabase.open(path), CostDatabase.open(path)
    first.put("a", 1.0)
    second.put("b", 2.0)
    first.save()
    second.save()
    assert json.loads(path.read_text()) == {"a": 1.0, "b": 2.0}
    assert [p.name for p in tmp_path.iterdir()] == ["db.json"]  # no temporary file left


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", ""])
def test_a_corrupted_database_is_ignored_and_replaced(tmp_path: Path, content: str):
    path = tmp_path / "db.json"
    path.write_text(content)
    database = CostDatabase.open(path)
    assert database.entries == {}
    database.put("k", 3.0)
    database.save()
    assert json.loads(path.read_text()) == {"k": 3.0}


def test_a_directory_others_can_write_is_refused(tmp_path: Path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.warns(RuntimeWarning, match="others can write to it"):
        database = CostDatabase.open(shared / "db.json")
    database.put("k", 1.0)
    database.save()
    assert not (shared / "db.json").exists()


@pytest.mark.skipif(
    os.geteuid() != 0, reason="making a directory another user's needs root"
)
def test_a_directory_of_another_user_is_refused(tmp_path: Path):
    foreign = tmp_path / "foreign"
    foreign.mkdir(0o700)
    os.chown(foreign, os.geteuid() + 1, -1)
    with pytest.warns(RuntimeWarning, match="owned by user"):
        assert CostDatabase.open(foreign / "db.json").path is None


def test_the_database_path_is_overridable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    monkeypatch.setenv(measuring.DATABASE_VARIABLE, str(tmp_path / "x.json"))
    assert measuring.database_path() == tmp_path / "x.json"
    monkeypatch.setenv(measuring.DATABASE_VARIABLE, "")
    assert measuring.database_path() is None
    monkeypatch.delenv(measuring.DATABASE_VARIABLE)
    monkeypatch.setenv("HETERO_CACHE_DIR", str(tmp_path / "cache"))
    assert measuring.database_path() == tmp_path / "cache" / measuring.DATABASE_FILE


def test_structure_replaces_constants_by_their_types():
    text = """builtin.module {
  relay.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %w = relay.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %y = relay.add %x, %w : tensor<2xf32>
    relay.return %y : tensor<2xf32>
  }
}"""
    other = text.replace("[1.0, 2.0]", "[3.0, 4.0]")
    assert measuring.structure(parse_module(text)) == measuring.structure(
        parse_module(other)
    )
    assert "dense" not in measuring.structure(parse_module(text))


# ----------------------------------------------------------------------------
# End to end
# ----------------------------------------------------------------------------

PROGRAM = """builtin.module {
  relay.func @main(%x: tensor<1x8x10x10xf32>, %b: tensor<16xf32>, %fb: tensor<10xf32>) -> tensor<1x10xf32> {
    %w = relay.constant dense<0.5> : tensor<16x8x3x3xf32>
    %fw = relay.constant dense<0.25> : tensor<10x1600xf32>
    %c = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x10x10xf32>
    %cb = relay.nn.bias_add %c, %b : (tensor<1x16x10x10xf32>, tensor<16xf32>) -> tensor<1x16x10x10xf32>
    %a = relay.relu %cb : tensor<1x16x10x10xf32>
    %f = relay.reshape %a {newshape = array<i64: 1, 1600>} : (tensor<1x16x10x10xf32>) -> tensor<1x1600xf32>
    %g = relay.nn.dense %f, %fw : (tensor<1x1600xf32>, tensor<10x1600xf32>) -> tensor<1x10xf32>
    %h = relay.nn.bias_add %g, %fb : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
    relay.return %h : tensor<1x10xf32>
  }
}"""


def fake_costs(favourite: dict[str, str], per_call: float = 0.0):
    """A `measure` that makes each anchor op cheapest on its favourite
    backend (the kind of the `Composite` it is in, else `llvm`), plus
    `per_call` for each library call of a whole program."""

    def measure(module, runs):
        whole = collage.PLACED_ATTR in module.attributes
        total = 0.0
        for op in module.walk():
            if op.name not in favourite:
                continue
            composite = getattr(op.parent_op(), "composite", None)
            kind = composite.partition(".")[0] if composite else "llvm"
            total += 1.0 if favourite[op.name] == kind else 5.0
            total += per_call if whole and kind != "llvm" else 0.0
        return total or 0.1

    return measure


def stub_measure(monkeypatch: pytest.MonkeyPatch, measure) -> None:
    """`measure` stands in for the timing of candidates and of whole programs."""
    monkeypatch.setattr(measuring, "measure", measure)
    monkeypatch.setattr(
        measuring,
        "measure_together",
        lambda modules, runs: [measure(m, runs) for m in modules],
    )


def partitions(module) -> dict[str, list[str]]:
    """Compiler kind → the composites of its partitions."""
    found: dict[str, list[str]] = {}
    for op in module.walk():
        if isinstance(op, relay.FnOp) and op.attributes.get("Compiler") is not None:
            kind = op.attributes["Compiler"].data
            found.setdefault(kind, []).extend(
                f.composite
                for f in op.walk()
                if isinstance(f, relay.FnOp) and f.composite
            )
    return found


def test_collage_places_each_anchor_where_it_is_cheapest(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    pytest.importorskip("scipy_openblas32")
    stub_measure(
        monkeypatch, fake_costs({"relay.nn.dense": "blas", "relay.nn.conv2d": "llvm"})
    )
    module = parse_module(PROGRAM)
    PlanDevicesPass(targets="llvm,blas").apply(Context(), module)
    (plan,) = collage.collage_partition(
        module, estimator=Measurer(CostDatabase.open(tmp_path / "db.json"))
    )
    assert partitions(module) == {"blas": ["blas.dense_bias"]}
    assert "blas.dense_bias" in module.attributes[PLAN_ATTR].data
    # conv2d is in no table of the configured kinds: not a candidate
    assert plan.single == {"blas": 1.0, "llvm": 5.0}


def test_collage_compile_equals_the_reference(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys
):
    pytest.importorskip("scipy_openblas32")
    monkeypatch.setenv(measuring.DATABASE_VARIABLE, str(tmp_path / "db.json"))
    stub_measure(
        monkeypatch, fake_costs({"relay.nn.dense": "blas", "relay.nn.conv2d": "llvm"})
    )
    compiled = hetero.compile(PROGRAM, targets=["llvm", "blas"], collage=True)
    assert "blas.dense_bias" in capsys.readouterr().err
    inputs = random_inputs(PROGRAM)
    np.testing.assert_allclose(
        compiled(*inputs), run(parse_module(PROGRAM), *inputs), rtol=1e-5, atol=1e-5
    )


def test_collage_with_dnnl_measured_for_real(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    from hetero.lowering.external.dnnl import available

    if available() is not None:
        pytest.skip("the dnnl kind needs onednn-cpu-gomp (hetero[dnnl])")
    monkeypatch.setenv(measuring.DATABASE_VARIABLE, str(tmp_path / "db.json"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = hetero.compile(PROGRAM, targets=["llvm", "dnnl"], collage=True)
    inputs = random_inputs(PROGRAM)
    np.testing.assert_allclose(
        compiled(*inputs), run(parse_module(PROGRAM), *inputs), rtol=1e-4, atol=1e-4
    )
    entries = json.loads((tmp_path / "db.json").read_text())
    assert len(entries) > 0
    # a second compile measures nothing: every candidate is in the database
    stub_measure(monkeypatch, lambda module, runs: pytest.fail("measured again"))
    hetero.compile(PROGRAM, targets=["llvm", "dnnl"], collage=True)


def test_hetero_opt_runs_the_pass_and_prints_the_plan(tmp_path: Path):
    import subprocess
    import sys

    pytest.importorskip("scipy_openblas32")
    source = tmp_path / "p.mlir"
    source.write_text(PROGRAM)
    database = tmp_path / "db.json"
    passes = f'plan-devices{{targets="llvm,blas"}},collage-partition{{database="{database}" runs=1 print_plan=true}}'
    done = subprocess.run(
        [sys.executable, "-m", "hetero.tools.hetero_opt", str(source), "-p", passes],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "collage plan" in done.stderr and "estimated total" in done.stderr
    assert PLAN_ATTR in done.stdout
    assert "whole program measured" in done.stderr
    # blas.dense_bias, blas.dense, and on llvm: dense+bias_add, dense, bias_add;
    # the whole program placed by collage, on llvm alone and with blas (the
    # last two, or all three, differ)
    assert len(json.loads(database.read_text())) in (7, 8)


class FixedCosts:
    """An injected estimator: the costs of `fake_costs`, nothing compiled."""

    def __init__(self, favourite: dict[str, str], per_call: float = 0.0) -> None:
        self.measure = fake_costs(favourite, per_call)
        self.asked = 0

    def cost(self, module, backend: str) -> float:
        self.asked += 1
        return self.measure(module, 1)

    def finish(self) -> str:
        return f"candidates asked: {self.asked}"


def test_the_pass_asks_the_registered_estimator(monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("scipy_openblas32")
    monkeypatch.setattr(estimators, "_DEFAULT", [])
    favourite = {"relay.nn.dense": "blas", "relay.nn.conv2d": "llvm"}
    estimators.register_estimator(lambda **options: FixedCosts(favourite))
    module = parse_module(PROGRAM)
    PlanDevicesPass(targets="llvm,blas").apply(Context(), module)
    CollagePartitionPass().apply(Context(), module)
    assert partitions(module) == {"blas": ["blas.dense_bias"]}
    # 5 candidates, then the program placed by collage, on llvm, with blas
    assert "candidates asked: 8" in module.attributes[PLAN_ATTR].data


# ----------------------------------------------------------------------------
# Sound against noise and context: the margin, the whole-program check
# ----------------------------------------------------------------------------


def test_a_library_must_be_faster_by_the_margin():
    graph = collage.Graph([None, None], chain(2))  # type: ignore[list-item]
    table = {c("llvm", 0): 1.0, c("llvm", 1): 1.0, c("x", 0): 0.95, c("x", 1): 0.8}
    plan = collage.plan_block(graph, list(table), costs(table), margin=0.1)
    # 5% faster is within the margin; 20% is not
    assert set(plan.chosen) == {c("llvm", 0), c("x", 1)}
    assert plan.estimated == pytest.approx(1.8)  # measured costs, not weighed
    plan = collage.plan_block(graph, list(table), costs(table), margin=0.0)
    assert set(plan.chosen) == {c("x", 0), c("x", 1)}


@pytest.mark.parametrize(
    ("seconds", "kept"),
    [
        ({"collage": 0.96, "llvm": 1.0, "blas": 1.2}, "collage"),
        ({"collage": 0.98, "llvm": 1.0, "blas": 1.2}, "llvm"),
        ({"collage": 2.0, "llvm": 6.0, "blas": 2.0}, "blas"),
        ({"collage": 3.0, "llvm": 1.0, "blas": 2.0}, "llvm"),
    ],
)
def test_collage_is_kept_only_ahead_by_the_whole_margin(
    seconds: dict[str, float], kept: str
):
    """Within `WHOLE_MARGIN` (3 %) of the fastest single-backend placement,
    collage's is not shown to be faster: that backend's program is kept."""
    assert collage.kept_placement(seconds) == kept


@pytest.mark.parametrize(
    ("per_call", "kept", "expected"),
    [(0.0, "blas", {"blas": ["blas.dense_bias"]}), (10.0, "llvm", {})],
)
def test_the_fastest_whole_program_is_kept(
    per_call: float, kept: str, expected: dict[str, list[str]]
):
    """The candidates say blas's dense is faster; measured whole, a library
    call may cost more than alone (here `per_call`): the placement measured
    fastest is kept, a single backend's where collage's is no faster (here
    the same placement as blas's)."""
    pytest.importorskip("scipy_openblas32")
    favourite = {"relay.nn.dense": "blas", "relay.nn.conv2d": "llvm"}
    module = parse_module(PROGRAM)
    PlanDevicesPass(targets="llvm,blas").apply(Context(), module)
    (plan,) = collage.collage_partition(
        module, estimator=FixedCosts(favourite, per_call)
    )
    assert [c.backend for c in plan.chosen if c.match] == ["blas"]
    assert partitions(module) == expected
    assert f"kept {kept}" in module.attributes[PLAN_ATTR].data
    assert collage.PLACED_ATTR not in module.attributes


def test_the_placements_measured_whole():
    """Collage's, the regular target's, each kind's manual one: all marked,
    so that the driver only partitions them."""
    pytest.importorskip("scipy_openblas32")
    module = parse_module(PROGRAM)
    PlanDevicesPass(targets="llvm,blas").apply(Context(), module)
    original = module.clone()
    placed = collage.placements(module, original, ["blas"])
    assert list(placed) == ["collage", "llvm", "blas"]
    assert all(collage.PLACED_ATTR in m.attributes for m in placed.values())
    composites = {
        name: [f.composite for f in m.walk() if isinstance(f, relay.FnOp)]
        for name, m in placed.items()
    }
    assert composites == {"collage": [], "llvm": [], "blas": ["blas.dense_bias"]}
    # the driver compiles a placed program as placed: it only partitions it
    stages = [stage.name for stage in driver._partition_stages(placed["llvm"].clone())]
    assert "merge-composite" not in stages and "partition-graph" in stages
    inputs = random_inputs(PROGRAM)
    np.testing.assert_allclose(
        hetero.compile(placed["blas"])(*inputs),
        run(parse_module(PROGRAM), *inputs),
        rtol=1e-5,
        atol=1e-5,
    )


def test_without_the_check_collage_keeps_its_plan():
    pytest.importorskip("scipy_openblas32")
    favourite = {"relay.nn.dense": "blas", "relay.nn.conv2d": "llvm"}
    module = parse_module(PROGRAM)
    PlanDevicesPass(targets="llvm,blas").apply(Context(), module)
    estimator = FixedCosts(favourite, per_call=10.0)
    collage.collage_partition(module, estimator=estimator, whole=False)
    assert partitions(module) == {"blas": ["blas.dense_bias"]}
    assert estimator.asked == 5


def test_whole_programs_are_timed_together_in_interleaved_rounds(
    monkeypatch: pytest.MonkeyPatch,
):
    """Each round calls every program once, so a shared machine's load
    falls on all alike; the median of each program's rounds is its cost."""
    calls: list[str] = []
    clock = iter(range(100))

    def recorder(name: str):
        return lambda: calls.append(name)

    monkeypatch.setattr(driver, "compile", lambda module: module)
    monkeypatch.setattr(measuring, "_call", recorder)
    monkeypatch.setattr(
        measuring, "_sample", lambda call, repeat: call() or next(clock)
    )
    assert measuring.measure_together(["a", "b"], 3) == [2, 3]  # type: ignore[list-item]
    # a warm-up call of each, then rounds: a, b, a, b, ...
    assert calls == ["a", "b", "a", "b", "a", "b", "a", "b"]


def test_the_measurer_times_whole_programs_together_and_keeps_them(tmp_path: Path):
    timed: list[list[str]] = []

    def together(modules, runs):
        timed.append([m.attributes["name"].data for m in modules])
        return [1.0] * len(modules)

    def named(name: str):
        module = parse_module(PROGRAM)
        module.attributes["name"] = StringAttr(name)
        return module

    path = tmp_path / "db.json"
    measurer = Measurer(
        CostDatabase.open(path), measure=lambda m, runs: 0.5, together=together
    )
    assert measurer.costs(
        [(named("x"), "llvm"), (named("y"), WHOLE), (named("z"), WHOLE)]
    ) == [0.5, 1.0, 1.0]
    assert timed == [["y", "z"]]
    measurer.finish()
    again = Measurer(CostDatabase.open(path), together=together)
    assert again.costs([(named("z"), WHOLE)]) == [1.0] and timed == [["y", "z"]]


@pytest.mark.parametrize(
    ("shape", "name", "whole"),
    [("2x4", "main", True), ("?x4", "main", False), ("2x4", "f", False)],
)
def test_only_a_static_main_is_measured_whole(shape: str, name: str, whole: bool):
    module = parse_module(f"""builtin.module {{
  relay.func @{name}(%x: tensor<{shape}xf32>) -> tensor<{shape}xf32> {{
    %y = relay.relu %x : tensor<{shape}xf32>
    relay.return %y : tensor<{shape}xf32>
  }}
}}""")
    assert collage._whole_program(module) == whole


def test_the_bench_knows_collage_kept_a_single_backends_program():
    """Plans of the same machine code (collage's kept a single backend's; a
    kind that took nothing) are one program to the bench, timed once."""
    from bench.collage import same_programs

    def plan(*objects: bytes) -> SimpleNamespace:
        code = [SimpleNamespace(object=o) for o in objects]
        return SimpleNamespace(native=SimpleNamespace(objects=code))

    plans = {"llvm": plan(b"a", b"b"), "+blas": plan(b"b", b"a"), "+dnnl": plan(b"c")}
    assert same_programs({**plans, "collage": plan(b"c")}) == {
        "llvm": "llvm",
        "+blas": "llvm",
        "+dnnl": "+dnnl",
        "collage": "+dnnl",
    }
    assert same_programs({**plans, "collage": plan(b"d")})["collage"] == "collage"
