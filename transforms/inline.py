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

Closures that are only applied are beta-reduced too (what TVM's
`PartialEval` does to them): a `relay.fn` literal whose every use is as the
callee of a `relay.call_indirect` becomes a copy of its body at each call,
its parameters bound to the arguments, and is erased.  `lower-aot-main`
compiles no closure into the host function, and such a closure is only a
name for its body.  Literals with attributes (`Composite`, `Primitive`: BYOC
and fusion give them meaning) or with placement in their signature or at a
call (a device the body alone would lose) are kept.  An SSA literal cannot
name itself, so none is recursive; the innermost are reduced first, and
reducing one may make another only applied (a closure passed to a closure).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from hetero.dialects.relay import CallIndirectOp, CallOp, FnOp, FuncOp
from hetero.transforms.byoc import inline_body, inline_literal_call
from hetero.transforms.plan_devices import is_optimizable
from hetero.utils.diagnostics import HeteroError

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


def _only_applied(closure: FnOp) -> bool:
    """A plain, unplaced literal whose every use is the callee of an unplaced
    call: its calls mean exactly its body."""
    return (
        not closure.attributes
        and closure.vdevice is None
        and closure.result_vdevice is None
        and not any(closure.param_vdevices)
        and all(
            isinstance(use.operation, CallIndirectOp)
            and use.index == 0
            and use.operation.vdevice is None
            for use in closure.result.uses
        )
    )


def _reduce_closures(function: FuncOp) -> None:
    """Inline the calls of `function`'s only-applied literals, innermost
    first, until none is left."""
    while closure := next(
        (
            op
            for op in function.walk(region_first=True)
            if isinstance(op, FnOp) and _only_applied(op)
        ),
        None,
    ):
        for use in list(closure.result.uses):
            inline_literal_call(use.operation, closure)  # type: ignore[arg-type]
        if closure.parent is not None:  # an unused literal
            Rewriter.erase_op(closure)


@dataclass(frozen=True)
class InlinePass(ModulePass):
    """Inline every call of a global function marked `Inline`, then every call
    of a closure that is only applied."""

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
        for function in op.ops:
            if isinstance(function, FuncOp) and is_optimizable(function):
                _reduce_closures(function)
