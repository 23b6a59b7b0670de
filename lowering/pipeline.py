"""`lower-to-llvm`: `func`/`scf`/`cf`/`arith`/`math`/`memref`/`vector` down to `llvm`.

CPU code first goes through `approximate-math` (f32 `exp`, `log`, `erf`,
`tanh` as inline polynomials, `hetero.lowering.approximate_math`).  Then
the passes GPU kernels share (`lower_to_llvm_passes`), in order:
`convert-scf-to-cf` (xDSL's, moving loop annotations to the back edges:
`hetero.lowering.convert_scf_to_cf`), then `convert-to-llvm`, which
converts the rest in one go with the patterns of the passes of one dialect
each (memref, vector, arith, math, cf, func: see
`hetero.lowering.convert_to_llvm`), and finally
`reconcile-unrealized-casts` (xDSL's pattern, on the casts only:
`hetero.lowering.reconcile_unrealized_casts`).  What is left is `llvm`
dialect only, ready for `hetero.lowering.llvmir`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from hetero.lowering.approximate_math import ApproximateMathPass
from hetero.lowering.convert_scf_to_cf import ConvertScfToCfPass
from hetero.lowering.convert_to_llvm import ConvertToLLVMPass
from hetero.lowering.reconcile_unrealized_casts import ReconcileUnrealizedCastsPass
from hetero.utils.diagnostics import HeteroError


def lower_to_llvm_passes(index_bitwidth: int = 64) -> tuple[ModulePass, ...]:
    """The passes of `lower-to-llvm` after `approximate-math`, in order (GPU
    kernels too: `convert-gpu-to-nvvm`)."""
    return (
        ConvertScfToCfPass(),
        ConvertToLLVMPass(index_bitwidth),
        ReconcileUnrealizedCastsPass(),
    )


def lower_to_llvm(
    module: ModuleOp,
    index_bitwidth: int = 64,
    ctx: Context | None = None,
    timings: dict[str, float] | None = None,
    isa: str | None = None,
) -> ModuleOp:
    """Lower the CPU code `module` in place to the `llvm` dialect; return it.
    `timings` receives the seconds each pass took, by pass name.  `isa`:
    the vector ISA `approximate-math` may use (`math_isa` of the CPU the
    code is for), None for none.

    Raises `HeteroError` at the first op no pass lowers."""
    ctx = ctx or Context()
    for p in (ApproximateMathPass(isa), *lower_to_llvm_passes(index_bitwidth)):
        start = time.perf_counter()
        p.apply(ctx, module)
        if timings is not None:
            timings[p.name] = time.perf_counter() - start
    for op in module.walk():
        if op is not module and op.dialect_name() != "llvm":
            raise HeteroError(f"lower-to-llvm: '{op.name}' is left after lowering", op)
    return module


@dataclass(frozen=True)
class LowerToLLVMPass(ModulePass):
    """Runs the whole lowering to the `llvm` dialect (see `lower_to_llvm`)."""

    name = "lower-to-llvm"

    index_bitwidth: int = 64

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_to_llvm(op, self.index_bitwidth, ctx)
