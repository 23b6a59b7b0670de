"""fp32 matmul N×N from hetero's own code generation vs `numpy.matmul`.

hetero compiles `relay.matmul` through the whole CPU pipeline (`hetero.compile`:
plan-devices, fuse-ops, lower-te with the CPU GEMM schedule of
`te/schedules/cpu_gemm.py`, convert-tir-to-scf, LLVM) and both run in
interleaved rounds in this process.  NumPy is also timed in a subprocess
without `OPENBLAS_CORETYPE` (this environment pins OpenBLAS to its AVX2
kernels; unset, it uses AVX-512): the best BLAS rate this machine reaches is
the reference, rather than a peak figure, which differs from CPU to CPU (and
from a CPU's sheet where 512-bit operations run as two halves, as on Zen 4).
Each size runs on all cores, then on one thread
(hetero's `num_threads = 1`, NumPy's OpenBLAS set to 1 thread): the machine
is shared, and the one-thread rows compare the kernels when the second core
is busy elsewhere.  X = NumPy time / hetero time in this process, all cores.
"""

import ctypes
import os
import subprocess
import sys
import time

import numpy as np

import hetero
from bench.common import interleaved, llvm_target_text, sizes_argument

SIZES = (1024, 2048)
ROUNDS = 7


def program(n: int, threads: int | None = None) -> str:
    t = f"tensor<{n}x{n}xf32>"
    target = llvm_target_text(**({"num_threads": threads} if threads else {}))
    return (
        "builtin.module attributes {target.config = "
        f"#target.config<[{target}]>}} {{\n"
        f"  relay.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
        f"    %c = relay.matmul %a, %b : {t}\n"
        f"    relay.return %c : {t}\n  }}\n}}\n"
    )


def numpy_threads(count: int) -> None:
    """Set the thread count of NumPy's bundled OpenBLAS (in this process)."""
    libs = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    name = next(f for f in os.listdir(libs) if f.startswith("libscipy_openblas"))
    ctypes.CDLL(os.path.join(libs, name)).scipy_openblas_set_num_threads64_(count)


def numpy_unpinned(n: int, rounds: int, threads: int | None = None) -> float:
    """Median seconds of `a @ b` in a child process without OPENBLAS_CORETYPE."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    if threads:
        env["OPENBLAS_NUM_THREADS"] = str(threads)
    code = (
        "import numpy as np, time, statistics\n"
        f"a = np.random.rand({n}, {n}).astype(np.float32); b = a.copy(); a @ b\n"
        "ts = []\n"
        f"for _ in range({rounds}):\n"
        "    s = time.perf_counter(); a @ b; ts.append(time.perf_counter() - s)\n"
        "print(statistics.median(ts))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout)


def main(argv: list[str]) -> None:
    sizes = sizes_argument("matmul", argv, SIZES)
    cores = os.cpu_count() or 1
    print(
        f"{'N':>6} {'threads':>7} {'hetero GF/s':>12} {'numpy GF/s':>11} {'numpy AVX-512':>14} "
        f"{'vs numpy':>9} {'vs AVX-512':>11} {'compile s':>10}"
    )
    ratios = []
    for n in sizes:
        rng = np.random.default_rng(0)
        a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
        for threads in (cores, 1):
            start = time.perf_counter()
            compiled = hetero.compile(program(n, threads))
            compile_s = time.perf_counter() - start
            error = np.abs(compiled(a, b) - a.astype(np.float64) @ b).max()
            assert error < 1e-3 * n, f"hetero's matmul is wrong (max error {error})"
            numpy_threads(threads)
            t_ours, t_np = interleaved(
                [lambda: compiled(a, b), lambda: a @ b],  # noqa: B023 (called here)
                ROUNDS,
            )
            t_fast = numpy_unpinned(n, ROUNDS, threads)
            gflops = [2.0 * n**3 / t / 1e9 for t in (t_ours, t_np, t_fast)]
            if threads == cores:
                ratios.append(t_np / t_ours)
            print(
                f"{n:>6} {threads:>7} {gflops[0]:>12.1f} {gflops[1]:>11.1f} {gflops[2]:>14.1f} "
                f"{t_np / t_ours:>9.2f} {t_fast / t_ours:>11.2f} {compile_s:>10.2f}"
            )
        numpy_threads(cores)
    print(
        f"matmul: {min(ratios):.2f}× numpy.matmul (worst of N={', '.join(map(str, sizes))}; "
        f"{cores} threads, packed-panel GEMM on register tiles, "
        "same process, OPENBLAS_CORETYPE as set)"
    )
