"""fp32 matmul N×N on the GPU: hetero's own PTX vs cuBLAS.

hetero lowers `relay.matmul` on a `cuda` device with its GPU schedule
(`te/schedules/gpu.py`: 128×128 shared-memory tiles, 8×8 per thread),
compiles it to PTX (`lowering/gpu_codegen.py`) and launches it with
`hetero.runtime.cuda`; cuBLAS runs through cupy or torch, whichever is
installed (without either the reference is skipped, saying so).  Both work
on device-resident operands, in interleaved rounds; each time is a launch
plus the device synchronisation.  X = cuBLAS time / hetero time.  Without a
GPU it prints `skipped: no GPU` and exits 0.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from functools import partial

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from bench.common import sizes_argument
from hetero.context import parse_module
from hetero.dialects import tir
from hetero.lowering.gpu_codegen import compile_gpu
from hetero.runtime import cuda
from hetero.transforms.lower_te import LowerTEPass

SIZES = (4096,)
ROUNDS = 10


def program(n: int) -> str:
    t = f"tensor<{n}x{n}xf32>"
    gpu = '#target.vdevice<cuda:0, target = #target.target<"cuda", {arch = "sm_90"}>>'
    return (
        "builtin.module {\n"
        f"  relay.func @mm(%a: {t} {{vdevice = {gpu}}}, %b: {t} {{vdevice = {gpu}}}) "
        f"-> ({t} {{vdevice = {gpu}}}) attributes {{Primitive}} {{\n"
        f"    %c = relay.matmul %a, %b : {t}\n"
        f"    relay.return %c : {t}\n  }}\n}}\n"
    )


def hetero_kernel(n: int) -> cuda.CudaKernel:
    """The matmul kernel, compiled from relay through lower-te and PTX."""
    module = parse_module(program(n))
    LowerTEPass().apply(Context(), module)
    kernels = ModuleOp(
        [op.clone() for op in module.ops if isinstance(op, tir.PrimFuncOp)]
    )
    [ptx] = compile_gpu(kernels)
    return cuda.CudaModule(ptx).kernel(ptx.kernels[0].name)


def cublas(a: np.ndarray, b: np.ndarray) -> tuple[str, Callable[[], object]] | None:
    """A cuBLAS matmul on device copies of `a`, `b` (cupy, else torch), or None."""
    try:
        import cupy

        da, db = cupy.asarray(a), cupy.asarray(b)
        return "cupy", lambda: (da @ db, cupy.cuda.Device().synchronize())
    except ImportError:
        pass
    try:
        import torch

        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        return "torch", lambda: (ta @ tb, torch.cuda.synchronize())
    except ImportError:
        return None


def _seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str]) -> None:
    sizes = sizes_argument("gpu-matmul", argv, SIZES)
    if (reason := cuda.unavailable_reason()) is not None:
        print(f"gpu-matmul: skipped: no GPU ({reason})")
        return
    print(f"device: {cuda.device().name}")
    print(f"{'N':>6} {'hetero GF/s':>12} {'cuBLAS GF/s':>12} {'ratio':>7}")
    summary = ""
    for n in sizes:
        rng = np.random.default_rng(0)
        a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
        kernel = hetero_kernel(n)
        da, db = cuda.DeviceArray.from_numpy(a), cuda.DeviceArray.from_numpy(b)
        dc = cuda.DeviceArray((n, n), np.float32)
        ours = partial(kernel, da, db, dc)
        ours()
        rows = rng.choice(n, 8, replace=False)
        np.testing.assert_allclose(
            dc.to_numpy()[rows], a[rows] @ b, rtol=2e-3, atol=2e-2
        )
        reference = cublas(a, b)
        if reference is not None:
            reference[1]()
        times: dict[str, list[float]] = {"hetero": [], "cublas": []}
        for _ in range(ROUNDS):
            times["hetero"].append(_seconds(ours))
            if reference is not None:
                times["cublas"].append(_seconds(reference[1]))
        flop = 2.0 * n**3
        hetero = statistics.median(times["hetero"])
        if reference is None:
            print(f"{n:>6} {flop / hetero / 1e9:>12.1f} {'-':>12} {'-':>7}")
            summary = (
                f"gpu-matmul: reference skipped: no cupy or torch for cuBLAS "
                f"(hetero {flop / hetero / 1e9:.0f} GF/s at {n}²)"
            )
            continue
        theirs = statistics.median(times["cublas"])
        print(
            f"{n:>6} {flop / hetero / 1e9:>12.1f} {flop / theirs / 1e9:>12.1f} "
            f"{theirs / hetero:>7.2f}"
        )
        summary = (
            f"gpu-matmul: {theirs / hetero:.2f}× cuBLAS ({reference[0]}; {n}², "
            f"hetero {flop / hetero / 1e9:.0f} GF/s, cuBLAS {flop / theirs / 1e9:.0f} GF/s, "
            f"median of {ROUNDS})"
        )
    print(summary)
