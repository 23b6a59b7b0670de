"""Makes this host look AVX2-only to every Python process that has this
folder on its `PYTHONPATH`, to check on an AVX-512 machine that the tests
pass on an AVX2 one (issue 33):

    PYTHONPATH=tests/avx2_host lit -sv tests/filecheck
    PYTHONPATH=tests/avx2_host python -m pytest tests

LLVM's host features lose AVX-512 (the schedules' and the JIT's default
target, `simd_bits`, `CpuTarget`), and NumPy's OpenBLAS takes its Haswell
kernels (the reference interpreter's summation order on such a host).
"""

import os

os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")

import llvmlite.binding as _llvm

_host_features = _llvm.get_host_cpu_features
AVX512_PREFIXES = ("avx512", "avx10", "evex512", "amx")
"""Features an AVX2-only x86-64 CPU (Haswell to Zen 3) lacks."""


def _avx2_host_features() -> object:
    features = _host_features()
    for name in features:
        if name.startswith(AVX512_PREFIXES):
            features[name] = False
    return features


_llvm.get_host_cpu_features = _avx2_host_features
