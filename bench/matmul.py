"""fp32 matmul N×N from hetero's own code generation vs `numpy.matmul`.

hetero compiles `relay.matmul` through the whole CPU pipeline (`hetero.compile`:
plan-devices, fuse-ops, lower-te, convert-tir-to-scf, LLVM) and both run in
interleaved rounds in this process.  NumPy is also timed in a subprocess
without `OPENBLAS_CORETYPE` (this environment pins OpenBLAS to its AVX2
kernels; unset, it uses AVX-512), and the fraction of the measured per-core
peak (~245 GFLOP/s, ../shared/research/perf-anchors.md) is shown.
X = NumPy time / hetero time in this process.
"""

import os
import statistics
import subprocess
import sys
import time

import numpy as np

import hetero

SIZES = (1024, 2048)
PEAK_PER_CORE = 245.0


def program(n: int) -> str:
    t = f"tensor<{n}x{n}xf32>"
    return (
        'builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {\n'
        f"  relay.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
        f"    %c = relay.matmul %a, %b : {t}\n"
        f"    relay.return %c : {t}\n  }}\n}}\n"
    )


def _numpy_unpinned(n: int, rounds: int) -> float:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    code = (
        "import numpy as np, time, statistics\n"
        f"a = np.random.rand({n}, {n}).astype(np.float32); b = a.copy(); a @ b\n"
        "ts = []\n"
        f"for _ in range({rounds}):\n"
        "    s = time.perf_counter(); a @ b; ts.append(time.perf_counter() - s)\n"
        "print(statistics.median(ts))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout)


def main(argv: list[str]) -> None:
    sizes = tuple(int(a) for a in argv) or SIZES
    print(f"{'N':>6} {'hetero GF/s':>12} {'numpy GF/s':>11} {'numpy AVX-512':>14} {'ratio':>7} {'% peak/core':>12}")
    ratios = []
    for n in sizes:
        compiled = hetero.compile(program(n))
        rng = np.random.default_rng(0)
        a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
        compiled(a, b), a @ b  # warm up
        rounds = 3
        ours, theirs = [], []
        for _ in range(rounds):
            s = time.perf_counter(); compiled(a, b); ours.append(time.perf_counter() - s)
            s = time.perf_counter(); a @ b; theirs.append(time.perf_counter() - s)
        t_ours, t_np = statistics.median(ours), statistics.median(theirs)
        flops = 2.0 * n**3
        t_fast = _numpy_unpinned(n, rounds)
        ratios.append(t_np / t_ours)
        print(f"{n:>6} {flops / t_ours / 1e9:>12.1f} {flops / t_np / 1e9:>11.1f} "
              f"{flops / t_fast / 1e9:>14.1f} {t_np / t_ours:>7.3f} "
              f"{100 * flops / t_ours / 1e9 / PEAK_PER_CORE:>11.1f}%")
    print(f"matmul: {min(ratios):.2f}× numpy.matmul (worst of N={', '.join(map(str, sizes))}; "
          "naive lower-te loops, no tiling/packing schedule yet)")
