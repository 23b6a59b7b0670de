"""`convert-cf-to-llvm`: the `cf` dialect to LLVM branches.

Mirrors MLIR's `mlir/lib/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.cpp`.
Two differences, both for want of ops in xDSL 0.74's `llvm` dialect:
`cf.switch` becomes a chain of compares and conditional branches (LLVM's
SimplifyCFG turns it back into a `switch`), and a failing `cf.assert` executes
`llvm.trap` instead of printing its message and calling `abort`.  Block
arguments of type `index` become `iN` (`index-bitwidth`).  A branch's
`llvm.loop_annotation` (a loop's back edge, see `convert-scf-to-cf`) becomes
the `loop_annotation` of the `llvm.br`/`llvm.cond_br`, which
`hetero.lowering.llvmir` translates to `!llvm.loop` metadata.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import cf, llvm
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import BlockInsertPoint, InsertPoint, Rewriter

from hetero.dialects.llvm_attrs import BRANCH_LOOP_ANNOTATION, LOOP_ANNOTATION
from hetero.lowering.conversion import (
    ToLLVMPattern,
    apply_lowerings,
    cast,
    icmp,
    lowering,
    reject_leftovers,
    retype_block_args,
)


class BranchPattern(ToLLVMPattern):
    """A branch lowering: converts successor arguments and operands alike."""

    def successor(
        self,
        op: Operation,
        block: Block,
        operands: Sequence[SSAValue],
        rewriter: PatternRewriter,
    ) -> list[SSAValue]:
        """Retype `block`'s arguments; the `operands` passed to it, cast to match."""
        retype_block_args(
            block, lambda t: self.convert(t, op), rewriter, self.materialize
        )
        return [cast(v, self.convert(v.type, op), rewriter) for v in operands]

    @staticmethod
    def annotated(branch: Operation, op: Operation) -> Operation:
        """`branch` with the loop annotation of `op`, the branch it replaces."""
        if (annotation := op.attributes.get(LOOP_ANNOTATION)) is not None:
            branch.attributes[BRANCH_LOOP_ANNOTATION] = annotation
        return branch

    @staticmethod
    def cond_br(
        condition: SSAValue,
        then: tuple[Block, Sequence[SSAValue]],
        other: tuple[Block, Sequence[SSAValue]],
        at: Block,
    ) -> llvm.CondBrOp:
        """`llvm.cond_br` at the end of `at`; two edges into one block with different
        arguments (which LLVM's phis cannot tell apart) go through a new block."""
        if then[0] is other[0] and list(then[1]) != list(other[1]):
            forward = Block([llvm.BrOp(other[0], *other[1])])
            Rewriter.insert_block(forward, BlockInsertPoint.after(at))
            other = (forward, [])
        return llvm.CondBrOp(condition, then[0], then[1], other[0], other[1])


class BranchLowering(BranchPattern):
    """Lowers `cf.br` to `llvm.br`."""

    @lowering
    def match_and_rewrite(self, op: cf.BranchOp, rewriter: PatternRewriter, /):
        operands = self.successor(op, op.successor, op.arguments, rewriter)
        branch = llvm.BrOp(op.successor, *operands)
        rewriter.replace(op, self.annotated(branch, op))


class CondBranchLowering(BranchPattern):
    """Lowers `cf.cond_br` to `llvm.cond_br`."""

    @lowering
    def match_and_rewrite(
        self, op: cf.ConditionalBranchOp, rewriter: PatternRewriter, /
    ):
        then = (
            op.then_block,
            self.successor(op, op.then_block, op.then_arguments, rewriter),
        )
        other = (
            op.else_block,
            self.successor(op, op.else_block, op.else_arguments, rewriter),
        )
        block = op.parent_block()
        assert block is not None
        branch = self.cond_br(op.cond, then, other, block)
        rewriter.replace(op, self.annotated(branch, op))


class SwitchLowering(BranchPattern):
    """Lowers `cf.switch` to a chain of `llvm.icmp` and `llvm.cond_br`, one per case."""

    @lowering
    def match_and_rewrite(self, op: cf.SwitchOp, rewriter: PatternRewriter, /):
        default = (
            op.default_block,
            self.successor(op, op.default_block, op.default_operands, rewriter),
        )
        values = op.case_values.get_values() if op.case_values is not None else ()
        if not values:
            rewriter.replace(op, llvm.BrOp(default[0], *default[1]))
            return
        cases: list[tuple[int, Block, list[SSAValue]]] = []
        start = 0
        for value, block, size in zip(
            values, op.case_blocks, op.case_operand_segments.get_values()
        ):
            operands = op.case_operands[start : start + size]
            cases.append((value, block, self.successor(op, block, operands, rewriter)))
            start += size
        flag = cast(op.flag, self.convert(op.flag.type, op), rewriter)
        flag_type = flag.type
        assert isinstance(flag_type, IntegerType)
        # Each test but the first gets a block of its own, after the switch's.
        current = op.parent_block()
        assert current is not None
        tests = [current] + [Block() for _ in cases[1:]]
        for test in reversed(tests[1:]):
            Rewriter.insert_block(test, BlockInsertPoint.after(current))
        rewriter.erase(op)
        for i, (value, block, operands) in enumerate(cases):
            at = InsertPoint.at_end(tests[i])
            case = rewriter.insert(
                llvm.ConstantOp(IntegerAttr(value, flag_type), flag_type), at
            )
            hit = rewriter.insert(icmp("eq", flag, case.result), at)
            miss = (tests[i + 1], []) if i + 1 < len(cases) else default
            rewriter.insert(
                self.cond_br(hit.res, (block, operands), miss, tests[i]), at
            )


class AssertLowering(ToLLVMPattern):
    """Lowers `cf.assert` to a branch to a block that traps."""

    @lowering
    def match_and_rewrite(self, op: cf.AssertOp, rewriter: PatternRewriter, /):
        block = op.parent_block()
        region = op.parent_region()
        assert block is not None and region is not None
        rest = block.split_before(op)
        failure = Block(
            [llvm.CallIntrinsicOp("llvm.trap", [], []), llvm.UnreachableOp()]
        )
        Rewriter.insert_block(failure, BlockInsertPoint.at_end(region))
        rewriter.insert(
            llvm.CondBrOp(op.arg, rest, [], failure, []), InsertPoint.at_end(block)
        )
        rewriter.erase(op)


PATTERNS: tuple[type[ToLLVMPattern], ...] = (
    BranchLowering,
    CondBranchLowering,
    SwitchLowering,
    AssertLowering,
)
"""The conversion patterns of this pass, in the order they are tried."""


@dataclass(frozen=True)
class ConvertCfToLLVMPass(ModulePass):
    """Lowers `cf` branches, switches and asserts to the `llvm` dialect."""

    name = "convert-cf-to-llvm"

    index_bitwidth: int = 64

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [p(self.index_bitwidth) for p in PATTERNS]
        apply_lowerings(op, patterns)
        reject_leftovers(op, ["cf"], self.name)
