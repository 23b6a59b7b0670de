"""Compile time of the whole pipeline (`hetero.compile`) for the benchmark
programs, with the per-pass table.

The programs are those of `python -m bench matmul` (N = 1024, 2048) and
`python -m bench conv2d`.  Each is compiled `ROUNDS` times, interleaved; the
table gives the median seconds of every stage that `hetero.compile` times
(`CompiledFunction.timings`: parse, each relay/TIR pass, then `compile_cpu`
= convert-tir-to-scf, lower-to-llvm and LLVM) and their total.  The
reference is TVM's compile time of the same unscheduled matmul
(`TVM_UNSCHEDULED_MATMUL_S`, docs/performance.md): X = that / hetero's median total
(a target for the pipeline's own overhead, not a like-for-like comparison:
TVM there applies no schedule).
"""

import statistics
import time

import hetero
from bench import conv2d, matmul
from bench.common import sizes_argument

ROUNDS = 3
TVM_UNSCHEDULED_MATMUL_S = 0.03

PROGRAMS = {
    "matmul 1024": lambda: matmul.program(1024),
    "matmul 2048": lambda: matmul.program(2048),
    "conv2d 56x56": conv2d.program,
}


def main(argv: list[str]) -> None:
    sizes_argument("compile-time", argv)
    timings: dict[str, list[dict[str, float]]] = {name: [] for name in PROGRAMS}
    for _ in range(ROUNDS):
        for name, text in PROGRAMS.items():
            start = time.perf_counter()
            compiled = hetero.compile(text())
            total = time.perf_counter() - start
            timings[name].append({**compiled.timings, "total": total})
    stages = list(dict.fromkeys(s for runs in timings.values() for s in runs[0]))
    print(f"{'stage (median s)':>26} " + " ".join(f"{n:>13}" for n in PROGRAMS))
    medians = {
        name: {s: statistics.median(r.get(s, 0.0) for r in runs) for s in stages}
        for name, runs in timings.items()
    }
    for stage in stages:
        print(
            f"{stage:>26} " + " ".join(f"{medians[n][stage]:>13.4f}" for n in PROGRAMS)
        )
    worst = max(m["total"] for m in medians.values())
    print(
        f"compile-time: {TVM_UNSCHEDULED_MATMUL_S / worst:.2f}× TVM's unscheduled matmul "
        f"compile (worst total {worst:.2f} s of {', '.join(PROGRAMS)}; median of {ROUNDS})"
    )
