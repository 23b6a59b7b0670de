"""`fold-device-call-results`: simplify the host across the device boundary (docs/design.md §7.7).

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
(ordinary inlining and constant folding handle them).

Only callees computing on integers (`index`, `iN`, `i1`) are evaluated: the
interpreter computes floats in double precision, and the device's own float
arithmetic (approximate `exp`, contracted `fma`s) differs again, so a
folded float would not be what the device computes.  A call whose
evaluation fails in any way (a division by zero, an op the interpreter does
not know) or takes more than `STEP_BUDGET` ops (a long loop must not stall
compilation) is left for run time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, ModuleOp
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.interpreters import register_implementations
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import Rewriter
from xdsl.traits import ConstantLike, IsTerminator, is_side_effect_free
from xdsl.transforms.canonicalization_patterns.scf import IfPropagateConstantCondition
from xdsl.transforms.constant_fold_interp import ConstantFoldInterpPattern

from hetero.analysis.execution_targets import (
    execution_target,
    function_execution_target,
)
from hetero.dialects.tir import CallOp, PrimFuncOp, called_function
from hetero.interpreter.tir import make_interpreter
from hetero.transforms.inline_private_functions import called_functions

STEP_BUDGET = 100_000
"""Ops one evaluation may run before it is abandoned (left for run time)."""

FOLDABLE_TYPES = (IntegerType, IndexType)
"""The value types a folded callee may compute with (see the module docstring)."""


class BudgetExceeded(Exception):
    """An evaluation ran more than `STEP_BUDGET` ops."""


class StepBudget(Interpreter.Listener):
    """Stops an evaluation after `STEP_BUDGET` ops."""

    def __init__(self) -> None:
        self.left = STEP_BUDGET

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        self.left -= 1
        if self.left < 0:
            raise BudgetExceeded()


def constant_value(value: SSAValue) -> Any | None:
    """The Python value of a value defined by `arith.constant`, else None."""
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def constant_op(value: Any, type: Attribute) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(int(value), type))  # type: ignore[arg-type]


def has_no_effects(func: PrimFuncOp) -> bool:
    return all(
        op.has_trait(IsTerminator) or is_side_effect_free(op)
        for op in func.body.block.ops
    )


def computes_on_integers(func: PrimFuncOp) -> bool:
    """Every value `func` defines (arguments, results, loop indices) is an
    integer: its interpreted results are exactly the device's."""
    values = [
        *(arg for block in _blocks(func) for arg in block.args),
        *(result for op in func.walk() for result in op.results),
    ]
    return all(isinstance(v.type, FOLDABLE_TYPES) for v in values)


def _blocks(func: PrimFuncOp) -> Iterator[Block]:
    return (
        block for op in func.walk() for region in op.regions for block in region.blocks
    )


def evaluate(module: ModuleOp, callee: PrimFuncOp, args: list[Any]) -> list[Any] | None:
    """`callee(*args)` by the TIR interpreter, or None when that fails or
    exceeds the step budget: the call then happens at run time."""
    interpreter = make_interpreter(module)
    interpreter.listeners = (StepBudget(),)
    try:
        return list(interpreter.call_op(callee, tuple(args)))
    except Exception:  # noqa: BLE001 (any failure: xDSL asserts, too)
        return None


def crosses_targets(call: CallOp, callee: PrimFuncOp) -> bool:
    here, there = execution_target(call), function_execution_target(callee)
    return here is not None and there is not None and str(here) != str(there)


class HostFolder:
    """Evaluates known device results and folds the host code using them."""

    def __init__(self, ctx: Context, module: ModuleOp):
        self.module = module
        interpreter = Interpreter(module)
        register_implementations(interpreter, ctx)
        self.fold_op = ConstantFoldInterpPattern(ctx, interpreter)
        self.called_before = called_functions(module)
        self.maybe_dead: list[Operation] = []

    def known_results(self, call: CallOp) -> list[Any] | None:
        callee = called_function(call)
        if not call.res or not crosses_targets(call, callee):
            return None
        args = [constant_value(a) for a in call.args]
        if (
            any(a is None for a in args)
            or not has_no_effects(callee)
            or not computes_on_integers(callee)
        ):
            return None
        return evaluate(self.module, callee, args)

    def fold_call(self, call: CallOp, results: list[Any]) -> None:
        constants = [constant_op(v, r.type) for v, r in zip(results, call.res)]
        for constant, result in zip(constants, call.res):
            constant.result.name_hint = result.name_hint
        users = [u.operation for r in call.res for u in r.uses]
        self.note_operands(call)
        Rewriter.replace_op(call, constants, [c.result for c in constants])
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
        for func in self.called_before - called_functions(self.module):
            if func.is_private:
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
