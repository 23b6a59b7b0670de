"""`fold-device-call-results`: simplify the host across the device boundary (spec §7.8).

With one module holding host and device functions, the host can see what a
device subroutine computes.  When the host calls a function on another
target whose result is known at compile time — the callee has no side
effects (only pure ops, so its results depend on its arguments alone) and
every argument is a constant — the call is evaluated now (by the TIR
reference interpreter) and its results become constants on the host.  The
host-side code depending only on them is folded in turn: pure ops with
integer results whose operands are all constant become constants (xDSL's
interpreter-based constant folding), and an `scf.if` on a constant
condition is replaced by the branch taken — so kernels called only from the
branch not taken are never launched.  Calls that were evaluated are
removed, and so are the private functions nothing calls any more.

This is the "host-side conditional on the known output of a device-side
internal subroutine" the single-module flow (TVM PR #14985) was meant to
enable; TVM itself has no pass for it.  Same-target calls are left alone
(ordinary inlining and constant folding handle them), and so is a call
whose evaluation fails (e.g. divides by zero): that happens at run time.
"""

from __future__ import annotations

from typing import Any

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters import register_implementations
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import Rewriter
from xdsl.traits import ConstantLike, IsTerminator, is_side_effect_free
from xdsl.transforms.canonicalization_patterns.scf import IfPropagateConstantCondition
from xdsl.transforms.constant_fold_interp import ConstantFoldInterpPattern
from xdsl.utils.exceptions import InterpretationError

from hetero.analysis.execution_targets import (
    execution_target,
    function_execution_target,
)
from hetero.dialects.tir import CallOp, PrimFuncOp
from hetero.interpreter.tir import run_prim_func
from hetero.transforms.inline_private_functions import callees


def constant_value(value: SSAValue) -> Any | None:
    """The Python value of a value defined by `arith.constant`, else None."""
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(
        op.value, IntegerAttr | FloatAttr
    ):
        return op.value.value.data
    return None


def constant_op(value: Any, type: Attribute) -> arith.ConstantOp:
    if isinstance(type, AnyFloat):
        return arith.ConstantOp(FloatAttr(float(value), type))
    return arith.ConstantOp(IntegerAttr(int(value), type))  # type: ignore[arg-type]


def has_no_effects(func: PrimFuncOp) -> bool:
    return all(
        op.has_trait(IsTerminator) or is_side_effect_free(op)
        for op in func.body.block.ops
    )


def crosses_targets(call: CallOp, callee: PrimFuncOp) -> bool:
    here, there = execution_target(call), function_execution_target(callee)
    return here is not None and there is not None and str(here) != str(there)


class HostFolder:
    """Evaluates known device results and folds the host code using them."""

    def __init__(self, ctx: Context, module: ModuleOp):
        self.module = module
        self.functions = {
            f.sym_name.data: f for f in module.ops if isinstance(f, PrimFuncOp)
        }
        interpreter = Interpreter(module)
        register_implementations(interpreter, ctx)
        self.fold_op = ConstantFoldInterpPattern(ctx, interpreter)
        self.called_before = set(callees(module))
        self.maybe_dead: list[Operation] = []

    def known_results(self, call: CallOp) -> list[Any] | None:
        callee = self.functions.get(call.callee.string_value())
        if callee is None or not call.res or not crosses_targets(call, callee):
            return None
        args = [constant_value(a) for a in call.args]
        if any(a is None for a in args) or not has_no_effects(callee):
            return None
        try:
            return list(run_prim_func(self.module, callee.sym_name.data, *args))
        except (InterpretationError, ArithmeticError):
            return None  # e.g. a division by zero: left for run time

    def fold_call(self, call: CallOp, results: list[Any]) -> None:
        constants = [constant_op(v, r.type) for v, r in zip(results, call.res)]
        for constant, result in zip(constants, call.res):
            constant.result.name_hint = result.name_hint
        users = [u.operation for r in call.res for u in r.uses]
        self.note_operands(call)
        Rewriter.replace_op(call, constants)
        self.fold_users(users)

    def fold_users(self, worklist: list[Operation]) -> None:
        """Fold the host ops that now depend on constants only."""
        while worklist:
            op = worklist.pop(0)
            if op.parent is None:  # already folded away
                continue
            users = [u.operation for r in op.results for u in r.uses]
            self.note_operands(op)
            rewriter = PatternRewriter(op)
            if isinstance(op, scf.IfOp):
                IfPropagateConstantCondition().match_and_rewrite(op, rewriter)
            elif not op.has_trait(ConstantLike):
                self.fold_op.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                worklist.extend(users)

    def note_operands(self, op: Operation) -> None:
        """Remember the constants `op` uses: folding it may leave them dead."""
        for value in op.operands:
            if isinstance(owner := value.owner, Operation) and owner.has_trait(
                ConstantLike
            ):
                self.maybe_dead.append(owner)

    def erase_dead_constants(self) -> None:
        for op in dict.fromkeys(self.maybe_dead):
            if op.parent is not None and not any(r.uses for r in op.results):
                Rewriter.erase_op(op)

    def remove_unused_callees(self) -> None:
        """Private functions only the evaluated calls or the branches not taken
        called are dead now."""
        for name in self.called_before - set(callees(self.module)):
            if (func := self.functions.get(name)) is not None and func.is_private:
                Rewriter.erase_op(func)


class FoldDeviceCallResultsPass(ModulePass):
    """Evaluate known results of device subroutines and fold the host code on them."""

    name = "fold-device-call-results"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        folder = HostFolder(ctx, op)
        for call in [c for c in op.walk() if isinstance(c, CallOp)]:
            if (
                call.parent is not None
                and (results := folder.known_results(call)) is not None
            ):
                folder.fold_call(call, results)
        folder.erase_dead_constants()
        folder.remove_unused_callees()
