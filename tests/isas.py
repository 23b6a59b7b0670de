"""The two x86-64 vector ISAs that tests pin their targets to.

A test that checks a schedule's shape or the code it emits pins the
target, for both ISAs, so that it checks the same thing on an AVX-512
development machine and on an AVX2-only CI runner: emitting IR or
assembly for an ISA needs no such CPU.  Only running that code does
(`runs_here`).
"""

import llvmlite.binding as llvm

from hetero.dialects.target import TargetAttr

ISAS = {
    "avx2": {"mcpu": "haswell", "mattr": ["+avx2", "-avx512f"]},
    "avx512": {"mcpu": "skylake-avx512", "mattr": ["+avx512f"]},
}
"""`llvm` target options per ISA, as the FileCheck tests spell them."""


def target(isa: str, **options: object) -> TargetAttr:
    """The `llvm` target of `isa`, with further `options`."""
    return TargetAttr("llvm", {**ISAS[isa], **options})


def options(isa: str) -> str:
    """The target options of `isa` as MLIR text (`mcpu = "haswell", mattr = [...]`)."""
    mattr = ", ".join(f'"{feature}"' for feature in ISAS[isa]["mattr"])
    return f'mcpu = "{ISAS[isa]["mcpu"]}", mattr = [{mattr}]'


def runs_here(isa: str) -> bool:
    """Whether this host can run code generated for `isa`."""
    features = llvm.get_host_cpu_features()
    wanted = [f[1:] for f in ISAS[isa]["mattr"] if f.startswith("+")]
    return all(features.get(feature, False) for feature in wanted)
