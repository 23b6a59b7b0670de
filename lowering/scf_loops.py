"""`tir.for` as `scf.for`: serial and unrolled loops, and the pieces the
other loop lowerings build with.

A `serial` loop is an `scf.for` over the same body; an `unrolled` one too,
annotated `#llvm.loop_annotation<unroll = #llvm.loop_unroll<full = true>>`
(`hetero.dialects.llvm_attrs`) when its trip count is a constant of at most
`MAX_UNROLL`, else plain: it stays a loop (`CpuTarget` runs LLVM without
its heuristic unroller; see docs/lowering.md).  LLVM unrolls, not xDSL, so
that the conversions to `llvm` handle one copy of the body, not one per
iteration.  `convert-tir-to-scf` and `convert-tir-to-gpu` both lower these
two kinds so; the vectorizer and the outlining of parallel loops fall back
to `lower_serial` and build their loops with `scf_loop` and `index`.
"""

from __future__ import annotations

from functools import cache

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from hetero.dialects import tir
from hetero.dialects.llvm_attrs import FULL_UNROLL, LOOP_ANNOTATION

MAX_UNROLL = 16
"""Loops to unroll with at most this many (constant) iterations are annotated
for LLVM to unroll them completely."""


def index(value: int) -> arith.ConstantOp:
    """An `index` constant, made with `Operation.create` (as
    `hetero.lowering.conversion.llvm_constant`: the vectorizer makes
    hundreds)."""
    return arith.ConstantOp.create(
        result_types=[tir.INDEX], properties={"value": _index_attr(value)}
    )


@cache
def _index_attr(value: int) -> IntegerAttr:
    return IntegerAttr.from_index_int_value(value)


def scf_loop(lb: SSAValue, ub: SSAValue, step: SSAValue, body: Region) -> scf.ForOp:
    """`scf.for` over `body`, a `tir.for` region whose `tir.yield` becomes `scf.yield`."""
    block = body.block
    assert block.last_op is not None
    block.erase_op(block.last_op)
    block.add_op(scf.YieldOp())
    return scf.ForOp(lb, ub, step, [], body.detach_block(block))


def lower_serial(op: tir.ForOp, rewriter: PatternRewriter) -> None:
    """`scf.for` over the same body."""
    rewriter.replace(op, scf_loop(op.lb, op.ub, op.step, op.detach_region(op.body)))


def lower_unrolled(op: tir.ForOp, rewriter: PatternRewriter) -> None:
    """`scf.for` over the same body, for LLVM to unroll when its trip count
    is small and constant."""
    loop = scf_loop(op.lb, op.ub, op.step, op.detach_region(op.body))
    bounds = [const_evaluate_operand(v) for v in (op.lb, op.ub, op.step)]
    if None not in bounds:
        annotate_unroll(loop, len(range(*bounds)))  # type: ignore[misc]
    rewriter.replace(op, loop)


def annotate_unroll(loop: scf.ForOp, trips: int) -> None:
    """Asks LLVM to unroll `loop` completely when it has at most `MAX_UNROLL`
    trips: after unrolling, a register tile's accumulators are addressed by
    constants only, which LLVM's SROA (run after its unroller) keeps in
    registers."""
    if trips <= MAX_UNROLL:
        loop.attributes[LOOP_ANNOTATION] = FULL_UNROLL
