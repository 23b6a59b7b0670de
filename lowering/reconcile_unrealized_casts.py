"""`reconcile-unrealized-casts`: xDSL's pattern, offered the casts only.

xDSL's pass walks every op of the module with its pattern, and walks again
until a walk changes nothing: after `convert-to-llvm`, two walks of tens of
thousands of ops for a few hundred casts (EfficientNet-B1: 0.09 s of its
code generation's CPU time).  This one collects the casts in one sweep and
offers each, in the walk's order, to xDSL's `ReconcileUnrealizedCastsPattern`;
a cast is only ever erased by removing the chain it heads or is part of, so
the sweep reaches the walks' fixpoint.  The code is the same (`hetero-opt`
runs this pass under the name: `hetero.universe.REPLACED_PASSES`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnrealizedConversionCastOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.transforms.reconcile_unrealized_casts import ReconcileUnrealizedCastsPattern

from hetero.lowering.conversion import nested_ops


@dataclass(frozen=True)
class ReconcileUnrealizedCastsPass(ModulePass):
    """Removes the chains of `builtin.unrealized_conversion_cast` that
    cancel out, as xDSL's pass of the name does (warning of those that do not)."""

    name = "reconcile-unrealized-casts"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pattern = ReconcileUnrealizedCastsPattern(warn_on_failure=True)
        for cast in nested_ops(op):
            if isinstance(cast, UnrealizedConversionCastOp) and cast.parent is not None:
                pattern.match_and_rewrite(cast, PatternRewriter(cast))
