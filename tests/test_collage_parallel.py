"""Collage's candidates measured in parallel (docs/passes/collage.md).

* The process pool and a local Ray instance (where `ray` is installed)
  give the same costs, and so the same plan, as measuring in this process,
  for a deterministic stand-in of `measure`.
* The pool's workers time one at a time (their compiles overlap).
* Costs from a worker on another kind of machine are refused.
* `python -m bench collage`'s last line.
"""

from __future__ import annotations

import os
import time
from itertools import pairwise

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp

from hetero import collage_measure as measuring
from hetero.collage_measure import CostDatabase, Measurer, structure
from hetero.context import parse_module
from hetero.transforms import collage_partition as collage
from hetero.transforms.plan_devices import PlanDevicesPass
from hetero.utils.dense_resources import resource_bytes
from hetero.utils.diagnostics import HeteroError

BLOB = "0x04000000" + "0000003F" * 16 * 32
"""The dense layer's weights, 0.5 everywhere, as a blob (the workers must
be handed it)."""

PROGRAM = (
    """builtin.module {
  relay.func @main(%x: tensor<4x32xf32>) -> tensor<4x8xf32> {
    %w = relay.constant dense_resource<collage_w> : tensor<16x32xf32>
    %b = relay.constant dense<0.25> : tensor<16xf32>
    %v = relay.constant dense<0.125> : tensor<8x16xf32>
    %d = relay.nn.dense %x, %w : (tensor<4x32xf32>, tensor<16x32xf32>) -> tensor<4x16xf32>
    %e = relay.nn.bias_add %d, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
    %r = relay.relu %e : tensor<4x16xf32>
    %f = relay.nn.dense %r, %v : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
    relay.return %f : tensor<4x8xf32>
  }
}
{-# dialect_resources: {builtin: {collage_w: \""""
    + BLOB
    + """\"}} #-}
"""
)


def stand_in(module: ModuleOp | str, runs: int) -> float:
    """A deterministic cost from the candidate alone (the same for its
    module here and its text in a worker): library candidates cheaper than
    hetero's, by their length and their weights' bytes (which a worker
    reads from the text's blobs)."""
    if isinstance(module, str):
        module = parse_module(module)
    text = structure(module).strip()
    scale = 1.0 if "relay.compiler" in text else 3.0
    weights = sum(
        len(resource_bytes(a))
        for op in module.walk()
        for a in op.properties.values()
        if isinstance(a, DenseResourceAttr)
    )
    return scale * (len(text) + weights) * 1e-9


def timed_in_turn(module: object, runs: int) -> float:
    """A stand-in that holds the timing lock for a while and records when."""
    with measuring._TIMING:
        start = time.time()
        time.sleep(0.2)
        return start


def plan_with(measurer: Measurer) -> tuple[str, dict[str, float]]:
    pytest.importorskip("scipy_openblas32")
    module = parse_module(PROGRAM)
    PlanDevicesPass(targets="llvm,blas").apply(Context(), module)
    collage.collage_partition(module, estimator=measurer)
    return module.attributes[collage.PLAN_ATTR].data, measurer.database.added  # type: ignore[attr-defined]


def together(modules: list[ModuleOp], runs: int) -> list[float]:
    """The whole programs `collage-partition` checks, costed by `stand_in`."""
    return [stand_in(module, runs) for module in modules]


def stand_in_measurer(**options: object) -> Measurer:
    return Measurer(
        CostDatabase.open(None), measure=stand_in, together=together, **options
    )


def serial_plan() -> tuple[str, dict[str, float]]:
    return plan_with(stand_in_measurer(jobs=1))


def test_the_pool_measures_as_this_process_does():
    pool = stand_in_measurer(jobs=2)
    plan, costs = plan_with(pool)
    assert pool.measured == len(costs) > 2
    assert (plan, costs) == serial_plan()
    assert "blas.dense_bias" in plan


def test_the_pool_workers_time_in_turn():
    modules = [parse_module(PROGRAM)] * 4
    starts = sorted(measuring.measured_in_parallel(modules, 1, timed_in_turn, 2))
    assert all(b - a >= 0.19 for a, b in pairwise(starts))


def test_ray_measures_as_this_process_does():
    ray = pytest.importorskip("ray")
    # Ray's workers import the stand-in from this file
    path = os.pathsep.join(
        [os.path.dirname(__file__), os.environ.get("PYTHONPATH", "")]
    )
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    try:
        on_ray = stand_in_measurer(ray="local")
        assert plan_with(on_ray) == serial_plan()
    finally:
        ray.shutdown()


def test_costs_from_another_machine_are_refused():
    with pytest.raises(HeteroError, match="measured on other-cpu"):
        measuring._on_this_device(
            [(1e-3, measuring.device_name()), (1e-3, "other-cpu")]
        )


@pytest.mark.parametrize(("text", "jobs"), [("3", 3), ("0", 1), ("", None)])
def test_the_jobs_variable(monkeypatch: pytest.MonkeyPatch, text: str, jobs):
    from hetero.utils.cpus import available_cpus

    monkeypatch.setenv(measuring.JOBS_VARIABLE, text)
    assert measuring.collage_jobs() == (jobs or available_cpus())


def test_the_bench_last_line():
    from bench.collage import Row, last_line

    rows = [
        Row("squeezenet", {"llvm": 8.0, "blas": 8.4, "dnnl": 9.0}, 6.0),
        Row("resnet50", {"llvm": 66.0, "blas": 68.0, "dnnl": 60.0}, 61.0),
    ]
    line = last_line(rows, 7)
    assert line.startswith("collage: 0.98× best single backend (worst of ")
    assert "squeezenet 1.33×" in line and "resnet50 0.98×" in line
