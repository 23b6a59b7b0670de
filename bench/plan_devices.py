"""plan-devices on generated graphs of 1k, 10k and 100k ops.

A random DAG of elementwise ops (each reads two earlier values), one op in
twenty annotated onto cuda, under a cpu+cuda configuration: every planner
phase does real work (unification, copies for values needed on both devices,
defaulting, capture).  The reference is linear extrapolation from the smallest
graph: X = (100 × time at 1k) / time at 100k, so X ≥ 1 means linear or better.
"""

import random
import time

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, f32

from bench.common import sizes_argument
from hetero.dialects.relay import AddOp, FuncOp, MultiplyOp, OnDeviceOp, ReturnOp
from hetero.dialects.target import (
    CONFIG_ATTR_NAME,
    CompilationConfigAttr,
    TargetAttr,
    VirtualDeviceAttr,
)
from hetero.dialects.target.kind import DeviceType
from hetero.transforms.plan_devices import PlanDevicesPass

SIZES = (1_000, 10_000, 100_000)


def graph(size: int, seed: int = 0) -> ModuleOp:
    rng = random.Random(seed)
    t = TensorType(f32, [16])
    func = FuncOp("main", [t, t], t)
    block = func.body.block
    values = list(func.args)
    cuda = VirtualDeviceAttr(DeviceType.cuda)
    for i in range(size):
        lo = max(0, len(values) - 64)  # mostly local reuse, like real networks
        a, b = (
            values[rng.randrange(lo, len(values))],
            values[rng.randrange(lo, len(values))],
        )
        op = (AddOp if i % 2 else MultiplyOp)(a, b)
        block.add_op(op)
        value = op.result
        if i % 20 == 0:
            note = OnDeviceOp(value, cuda)
            block.add_op(note)
            value = note.result
        values.append(value)
    block.add_op(ReturnOp(values[-1]))
    module = ModuleOp([func])
    module.attributes[CONFIG_ATTR_NAME] = CompilationConfigAttr(
        [TargetAttr("llvm"), TargetAttr("cuda")]
    )
    return module


def plan_time(size: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        module = graph(size)
        start = time.perf_counter()
        PlanDevicesPass().apply(Context(), module)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def main(argv: list[str]) -> None:
    sizes_argument("plan-devices", argv)
    results = {}
    print(f"{'ops':>8} {'time (s)':>10} {'µs/op':>8}")
    for size in SIZES:
        seconds = plan_time(size, rounds=5 if size < 100_000 else 3)
        results[size] = seconds
        print(f"{size:>8} {seconds:>10.4f} {1e6 * seconds / size:>8.2f}")
    small, large = SIZES[0], SIZES[-1]
    ratio = (results[small] * large / small) / results[large]
    growth = (results[large] / large) / (results[small] / small)
    print(
        f"plan-devices: {ratio:.2f}× linear extrapolation "
        f"({1e6 * results[large] / large:.1f} µs/op at 100k, per-op growth 1k→100k {growth:.2f}, "
        f"10k ops in {results[10_000]:.3f} s)"
    )
