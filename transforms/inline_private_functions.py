"""`inline-private-functions`: inline subroutines where codegen cannot call (docs/design.md §7.6).

Some code generators cannot emit calls between functions (TVM #16184: "PrimFunc
to PrimFunc calls broke some codegens"); rather than teaching each one, the
calls are inlined in TIR.  Whether a target can call is a capability of its
kind (`TargetKind.supports_calls`; `cuda` cannot).  A `tir.call` is inlined
when

* the code around it runs on a target whose kind cannot call (the innermost
  device region or thread-bound loop decides, else the caller's target —
  its host when it has one), and the callee runs on that same target (equal
  as strings) or has no target: **cross-target calls are kept** for
  `lower-device-kernel-launch`; or the code around the call has no target
  at all (no code generator is known, so TVM's rule applies: inline);
* or the call has results and is in the host part of a host-exposed
  function (outside its device regions and thread-bound loops), and the
  callee runs on that function's device, which cannot call (or has no
  target): a launch returns nothing, so such a helper cannot become a
  kernel; its body joins the function instead, and runs on the host or, if
  `annotate-device-regions` puts it there, in a kernel (a call without
  results stays: `lower-device-kernel-launch` launches it);
* the callee is private (TVM: no `global_symbol`), so nothing outside needs
  it as a function, and not a kernel (`tir.is_global_func`: outlined code
  that `lower-device-kernel-launch` launches);
* the callee is not recursive, directly or through other functions.

The callee's body replaces the call with its parameters bound to the
arguments; calls in the inlined body are considered in turn, so chains of
private helpers disappear.  Unlike TVM, which only inlines calls in statement
position (`Evaluate(f(args))`), calls with results are inlined too: in SSA
form the returned values simply replace the call's results.  A callee whose
calls were all inlined is removed; one still called or launched elsewhere is
kept.
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from hetero.analysis.execution_targets import (
    execution_target,
    function_execution_target,
)
from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import (
    CallOp,
    LaunchOp,
    PrimFuncOp,
    called_function,
    function_of,
    prim_funcs,
)
from hetero.transforms.annotate_device_regions import is_device_construct
from hetero.transforms.bind_target import is_global_func


def called_functions(op: Operation) -> set[PrimFuncOp]:
    """The functions `op` calls or launches."""
    return {
        called_function(call)
        for call in op.walk()
        if isinstance(call, CallOp | LaunchOp)
    }


def recursive_functions(functions: Iterable[PrimFuncOp]) -> set[PrimFuncOp]:
    """Functions that can reach themselves through calls."""
    graph = {f: called_functions(f) for f in functions}

    def reaches_itself(start: PrimFuncOp) -> bool:
        seen: set[PrimFuncOp] = set()
        stack = list(graph[start])
        while stack:
            func = stack.pop()
            if func is start:
                return True
            if func not in seen:
                seen.add(func)
                stack.extend(graph.get(func, ()))
        return False

    return {func for func in graph if reaches_itself(func)}


def inline_call(call: CallOp, callee: PrimFuncOp) -> list[Operation]:
    """Replace `call` by a copy of `callee`'s body; returns the copied ops."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(callee.args, call.args))
    block = callee.body.block
    copied = [op.clone(mapping) for op in list(block.ops)[:-1]]
    Rewriter.insert_op(copied, InsertPoint.before(call))
    returned = block.last_op
    assert returned is not None
    Rewriter.replace_op(call, [], [mapping.get(v, v) for v in returned.operands])
    return copied


def _places(call: CallOp) -> list[TargetAttr | None]:
    """Where the code around `call` runs, and, for a call with results in the
    host part of a host-exposed function, that function's device (whose
    helpers it may inline there, see the module docstring)."""
    here = execution_target(call)
    target = function_of(call).target
    if (
        not call.res
        or target is None
        or target.host is None
        or _under_device_construct(call)
    ):
        return [here]
    return [here, target.without_host()]


def _under_device_construct(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, PrimFuncOp):
        if is_device_construct(parent):
            return True
        parent = parent.parent_op()
    return False


def _cannot_call(here: TargetAttr | None, there: TargetAttr | None) -> bool:
    """Whether code on `here` must inline a callee running on `there`: no
    target known around the call, or one that cannot call, calling itself."""
    if here is None:
        return True
    return not here.kind.supports_calls and (there is None or str(there) == str(here))


class PrivateFunctionInliner:
    """Inlines the calls `inlinable` accepts, then removes dead callees."""

    def __init__(self, module: ModuleOp):
        self.recursive = recursive_functions(prim_funcs(module))
        self.inlined: set[PrimFuncOp] = set()

    def inlinable(self, call: CallOp) -> PrimFuncOp | None:
        callee = called_function(call)
        if not callee.is_private or callee in self.recursive or is_global_func(callee):
            return None
        there = function_execution_target(callee)
        if any(_cannot_call(here, there) for here in _places(call)):
            return callee
        return None

    def run(self, module: ModuleOp) -> None:
        worklist = [op for op in module.walk() if isinstance(op, CallOp)]
        while worklist:
            call = worklist.pop()
            if (callee := self.inlinable(call)) is None:
                continue
            self.inlined.add(callee)
            for op in inline_call(call, callee):
                worklist.extend(c for c in op.walk() if isinstance(c, CallOp))
        self.remove_unused(module)

    def remove_unused(self, module: ModuleOp) -> None:
        """Erase inlined callees nothing calls any more (erasing one may free another)."""
        while unused := self.inlined - called_functions(module):
            for func in unused:
                Rewriter.erase_op(func)
            self.inlined -= unused


class InlinePrivateFunctionsPass(ModulePass):
    """Inline private same-target callees into callers that cannot call."""

    name = "inline-private-functions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PrivateFunctionInliner(op).run(op)
