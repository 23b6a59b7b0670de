"""`inline`: calls of global functions marked `Inline` become their bodies.

TVM's `Inline`: a `relay.func` with the unit attribute `Inline` is a helper
that its callers should see through.  Every `relay.call` of one, in every
function (inside `relay.if` branches and function literals too), is replaced
by a copy of the callee's body with its parameters bound to the arguments;
an `Inline` function that calls another is inlined through first, so no call
of an `Inline` function is left.  Device planning, fusion and
`lower-aot-main` then see one function: `lower-aot-main` compiles no call
that `lower-te` did not lower.

A private `Inline` function is erased once inlined (nothing else can call
it); a public one stays, callable as before.  `Inline` functions that call one
another in a cycle cannot be inlined: a diagnostic at the call that closes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from hetero.dialects.relay import CallOp, FuncOp
from hetero.transforms.byoc import inline_body
from hetero.utils.diagnostics import HeteroError
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

PASS = "inline"


def _inline_calls(function: FuncOp, inline: dict[str, FuncOp]) -> None:
    """Every call of an `inline` function in `function`, as its body."""
    for call in [op for op in function.walk() if isinstance(op, CallOp)]:
        if (callee := inline.get(call.callee.string_value())) is not None:
            inline_body(callee, call, call.args)


def _callees_first(inline: dict[str, FuncOp]) -> list[FuncOp]:
    """The `Inline` functions, each after the `Inline` functions it calls."""
    order: list[FuncOp] = []
    state: dict[str, bool] = {}  # False: being visited, True: done

    def visit(function: FuncOp) -> None:
        state[function.sym_name.data] = False
        for call in function.walk():
            if not isinstance(call, CallOp):
                continue
            name = call.callee.string_value()
            if name not in inline or state.get(name):
                continue
            if name in state:
                raise HeteroError(
                    f"{PASS}: @{name} is marked Inline but calls itself through "
                    f"@{function.sym_name.data}: a recursive function cannot be inlined",
                    call,
                )
            visit(inline[name])
        state[function.sym_name.data] = True
        order.append(function)

    for function in inline.values():
        if function.sym_name.data not in state:
            visit(function)
    return order


@dataclass(frozen=True)
class InlinePass(ModulePass):
    """Inline every call of a global function marked `Inline`."""

    name = "inline"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = [f for f in op.ops if isinstance(f, FuncOp)]
        inline = {f.sym_name.data: f for f in functions if f.is_inline}
        for function in _callees_first(inline):
            _inline_calls(function, inline)
        for function in functions:
            if not function.is_inline:
                _inline_calls(function, inline)
        for function in inline.values():
            if (
                function.sym_visibility is not None
                and function.sym_visibility.data == "private"
            ):
                Rewriter.erase_op(function)
