"""fp32 matmul and an MLP through the `blas` partition vs NumPy, in one process.

`hetero.compile(..., targets=["llvm", "blas"])` partitions the matmul (the
MLP's dense+bias+relu layers) to the BLAS codegen: generated host code calls
`cblas_sgemm` of scipy-openblas32 directly.  NumPy calls its own bundled
OpenBLAS.  Both run in interleaved rounds (medians).  The two libraries are
separate builds (versions in the header) with separate thread pools; both
read `OPENBLAS_CORETYPE` (some shells here set it to Haswell: the header
says), and each case runs twice, with both pools set to 1 thread (the
like-for-like check that the BYOC path adds no overhead: two pools
busy-waiting on the same cores disturb each other) and to one thread per
core.  hetero's epilogue loops use hetero's own thread pool.
X = NumPy time / hetero time; the final X is the worst matmul size at 1
thread.
"""

import ctypes
import importlib.metadata
import os
from functools import partial
from itertools import pairwise

import numpy as np

import hetero
from bench.common import interleaved, sizes_argument
from hetero.utils import programs

SIZES = (1024, 2048)
MLP_BATCH, MLP_WIDTHS = 256, (1024, 1024, 1024, 10)
ROUNDS = 11


def matmul_program(n: int) -> str:
    t = programs.tensor(n, n)
    return (
        f"builtin.module {{\n  relay.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
        f"    %c = relay.matmul %a, %b : ({t}, {t}) -> {t}\n"
        f"    relay.return %c : {t}\n  }}\n}}\n"
    )


def numpy_mlp(x: np.ndarray, *weights: np.ndarray) -> np.ndarray:
    for w, b in zip(weights[::2], weights[1::2]):
        x = np.maximum(x @ w.T + b, 0)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _libraries() -> tuple[ctypes.CDLL, str, ctypes.CDLL, str]:
    """Each OpenBLAS (hetero's, NumPy's bundled one) and its symbol suffix."""
    from hetero.runtime.blas import load_blas

    ours = ctypes.CDLL(load_blas().path)
    numpy_libs = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    bundled = [f for f in os.listdir(numpy_libs) if f.startswith("libscipy_openblas")]
    return ours, "", ctypes.CDLL(os.path.join(numpy_libs, bundled[0])), "64_"


def set_threads(count: int) -> str:
    """Give both OpenBLAS thread pools `count` threads; describe the setting."""
    ours, suffix, theirs, theirs_suffix = _libraries()
    for library, end in ((ours, suffix), (theirs, theirs_suffix)):
        library[f"scipy_openblas_set_num_threads{end}"](count)
    got = [
        lib[f"scipy_openblas_get_num_threads{end}"]()
        for lib, end in ((ours, suffix), (theirs, theirs_suffix))
    ]
    return f"{got[0]}+{got[1]} threads"


def environment() -> str:
    config = np.show_config(mode="dicts")["Build Dependencies"]["blas"]  # type: ignore[index]
    return (
        f"hetero: scipy-openblas32 {importlib.metadata.version('scipy-openblas32')}; numpy: "
        f"{config.get('name')} {config.get('version')}; "
        f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')}"
    )


def main(argv: list[str]) -> None:
    sizes = sizes_argument("blas", argv, SIZES)
    rng = np.random.default_rng(0)
    print(environment())
    print(
        f"{'case':>12} {'threads':>12} {'hetero ms':>10} {'numpy ms':>9} {'hetero GF/s':>12} {'ratio':>7}"
    )
    ratios: dict[int, list[float]] = {}
    cores = os.cpu_count() or 1
    for n in sizes:
        compiled = hetero.compile(matmul_program(n), targets=["llvm", "blas"])
        a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
        for count in sorted({1, cores}):
            setting = set_threads(count)
            t_ours, t_np = interleaved(
                [partial(compiled, a, b), partial(np.matmul, a, b)], ROUNDS
            )
            ratios.setdefault(count, []).append(t_np / t_ours)
            print(
                f"{f'matmul {n}':>12} {setting:>12} {1e3 * t_ours:>10.2f} {1e3 * t_np:>9.2f} "
                f"{2.0 * n**3 / t_ours / 1e9:>12.1f} {t_np / t_ours:>7.3f}"
            )
    text = programs.mlp(MLP_BATCH, MLP_WIDTHS)
    compiled = hetero.compile(text, targets=["llvm", "blas"])
    inputs = [rng.standard_normal((MLP_BATCH, MLP_WIDTHS[0])).astype(np.float32)]
    for n_in, n_out in pairwise(MLP_WIDTHS):
        inputs += [
            (rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)).astype(np.float32),
            rng.standard_normal(n_out).astype(np.float32),
        ]
    flops = 2.0 * MLP_BATCH * sum(i * o for i, o in pairwise(MLP_WIDTHS))
    mlp: dict[int, float] = {}
    for count in sorted({1, cores}):
        setting = set_threads(count)
        t_ours, t_np = interleaved(
            [partial(compiled, *inputs), partial(numpy_mlp, *inputs)], ROUNDS
        )
        mlp[count] = t_np / t_ours
        print(
            f"{'MLP':>12} {setting:>12} {1e3 * t_ours:>10.2f} {1e3 * t_np:>9.2f} "
            f"{flops / t_ours / 1e9:>12.1f} {t_np / t_ours:>7.3f}"
        )
    shape = f"{MLP_BATCH}x{'-'.join(map(str, MLP_WIDTHS))}"
    print(
        f"blas: {min(ratios[1]):.2f}× numpy.matmul (worst of N={', '.join(map(str, sizes))}, "
        f"1 BLAS thread each; {min(ratios[cores]):.2f}× with {cores}; MLP {shape} end to end "
        f"{mlp[1]:.2f}× NumPy, {mlp[cores]:.2f}× with {cores})"
    )
