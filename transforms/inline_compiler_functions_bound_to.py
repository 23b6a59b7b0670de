"""`inline-compiler-functions-bound-to`: undo the outlining of chosen globals (docs/design.md §4.5).

For the globals named in `globals` ("cublas_main_0,blas_main_0"), every call
in an optimizable function is replaced by the callee's body with parameters
bound to the arguments, and within that copy every call of a function literal
is inlined as well — these must be `Composite` literals, the only literals a
partition holds; anything else is a diagnostic.  The globals are then removed.
The inlined ops keep their devices.  Without globals the module is unchanged.
Collage uses this to try a partition and take it back.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from hetero.dialects.relay import CallIndirectOp, CallOp, FuncOp
from hetero.transforms.byoc import inline_body, inline_literal_call, literal_callee
from hetero.transforms.plan_devices import is_optimizable
from hetero.utils.diagnostics import HeteroError


def _inline_global(call: CallOp, callee: FuncOp) -> None:
    """`call` → a copy of `callee`'s body, its composite calls inlined too."""
    for op in inline_body(callee, call, call.args):
        if not isinstance(op, CallIndirectOp) or (fn := literal_callee(op)) is None:
            continue
        if fn.composite is None:
            raise HeteroError(
                f"@{callee.sym_name.data} calls a function literal that is not a Composite "
                "function; only composites are inlined with their partition",
                fn,
            )
        inline_literal_call(op, fn)


def _check_no_calls_left(module: ModuleOp, names: set[str]) -> None:
    """Calls from functions this pass does not rewrite would dangle."""
    for op in module.walk():
        if isinstance(op, CallOp) and op.callee.string_value() in names:
            raise HeteroError(
                f"@{op.callee.string_value()} cannot be removed: it is still called here, "
                "in a function that is not optimizable",
                op,
            )


@dataclass(frozen=True)
class InlineCompilerFunctionsBoundToPass(ModulePass):
    """Inline the listed global functions (and their composites) at every call."""

    name = "inline-compiler-functions-bound-to"
    globals: tuple[str, ...] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        names = self.globals
        functions = {f.sym_name.data: f for f in op.ops if isinstance(f, FuncOp)}
        for name in names:
            if name not in functions:
                raise HeteroError(
                    f"{self.name}: no relay.func @{name} in the module", op
                )
        chosen = {name: functions[name] for name in names}
        for func in functions.values():
            if func.sym_name.data in chosen or not is_optimizable(func):
                continue
            for call in [c for c in func.walk() if isinstance(c, CallOp)]:
                if (callee := chosen.get(call.callee.string_value())) is not None:
                    _inline_global(call, callee)
        _check_no_calls_left(op, set(chosen))
        for func in chosen.values():
            Rewriter.erase_op(func)
