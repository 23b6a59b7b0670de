"""`convert-scf-to-cf` keeping loop annotations: xDSL's lowering, plus what MLIR adds.

xDSL 0.74's `ConvertScfToCf` drops the attributes of an `scf.for`.  MLIR's
moves those of the `llvm` dialect (`llvm.loop_annotation`) to the loop's
back edge, the `cf.br` that ends the latch block, where LLVM wants its
`!llvm.loop` metadata; `AnnotatedForLowering` does the same around xDSL's
`ForLowering`.  `scf.if` and `scf.index_switch` are xDSL's lowerings.

`hetero-opt -p convert-scf-to-cf` runs this one, in place of xDSL's pass
of the same name (`hetero.universe.REPLACED_PASSES`); `lower-to-llvm` runs
it too.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.transforms.convert_scf_to_cf import ForLowering, IfLowering, SwitchLowering

from hetero.lowering.conversion import apply_lowerings, lowering


class AnnotatedForLowering(ForLowering):
    """xDSL's `scf.for` lowering; the loop's `llvm` attributes go to its back edge."""

    @lowering
    def match_and_rewrite(self, for_op: scf.ForOp, rewriter: PatternRewriter, /):
        annotations = {
            name: value
            for name, value in for_op.attributes.items()
            if value.name.startswith("llvm.")
        }
        # xDSL's lowering keeps the body's first block as the loop header,
        # entered from the loop's block and from the back edge.
        header, entry = for_op.body.first_block, for_op.parent_block()
        super().match_and_rewrite(for_op, rewriter)
        if not annotations or header is None or for_op.parent is not None:
            return
        for use in header.uses:
            if use.operation.parent_block() is not entry:
                use.operation.attributes |= annotations


@dataclass(frozen=True)
class ConvertScfToCfPass(ModulePass):
    """Lowers `scf.for`, `scf.if` and `scf.index_switch` to `cf` branches."""

    name = "convert-scf-to-cf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_lowerings(op, [SwitchLowering(), IfLowering(), AnnotatedForLowering()])
