"""`convert-to-llvm`: memref, vector, arith, math, cf and func to `llvm` at once.

MLIR's `convert-to-llvm` gathers the conversion patterns of every dialect
into one dialect conversion.  This pass does the same with the patterns of
`convert-{memref,vector,arith,math,cf,func}-to-llvm` (their `PATTERNS`
tables), in that order, under one `apply_lowerings`, and gives the same
`llvm` code as those passes and `convert-index-to-llvm` run one by one.

It is cheaper: each op is converted where it stands, in one sweep over the
module for nearly all of them, and takes the converted values of the ops
before it as they are.  A pass of one dialect has to cast every result back
to its old type for the users it leaves to later passes
(`ToLLVMPattern.materialize`), and `convert-index-to-llvm` must first retype
every `index` value in place; here neither is done.  What is left of
`index` (a cast made for a value converted later in the sweep) becomes `iN`
as in `convert-index-to-llvm`, and `reconcile-unrealized-casts` removes the
casts afterwards, as after the passes one by one.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import RewritePattern

from hetero.lowering import (
    convert_arith_to_llvm,
    convert_cf_to_llvm,
    convert_func_to_llvm,
    convert_math_to_llvm,
    convert_memref_to_llvm,
    convert_vector_to_llvm,
)
from hetero.lowering.allocation_checks import check_allocations
from hetero.lowering.conversion import apply_lowerings, reject_leftovers
from hetero.lowering.convert_index_to_llvm import IndexTypeConversion
from hetero.lowering.convert_memref_to_llvm import (
    DeadDescriptorErasure,
    reject_memref_values,
)

CONVERSIONS = {
    "memref": convert_memref_to_llvm.PATTERNS,
    "vector": convert_vector_to_llvm.PATTERNS,
    "arith": convert_arith_to_llvm.PATTERNS,
    "math": convert_math_to_llvm.PATTERNS,
    "cf": convert_cf_to_llvm.PATTERNS,
    "func": convert_func_to_llvm.PATTERNS,
}
"""Each dialect and its patterns, in the order of `lower-to-llvm`'s passes:
memref first (it sets the function ABI that calls and addresses need)."""


@dataclass(frozen=True)
class ConvertToLLVMPass(ModulePass):
    """Lowers memref, vector, arith, math, cf and func (and `index`) to
    `llvm` in one conversion (see the module docstring)."""

    name = "convert-to-llvm"

    index_bitwidth: int = 64

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns: list[RewritePattern] = [
            p(self.index_bitwidth, materialize=False)
            for table in CONVERSIONS.values()
            for p in table
        ]
        patterns += [DeadDescriptorErasure(), IndexTypeConversion(self.index_bitwidth)]
        reject_memref_values(op)  # first: a branch would fail on the type
        check_allocations(op)
        apply_lowerings(op, patterns)
        reject_leftovers(op, list(CONVERSIONS), self.name)
