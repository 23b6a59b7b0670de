"""Where a piece of TIR runs: the target whose code generator compiles it.

A prim_func's `target` says where the function runs, but after
`annotate-device-regions`/`split-host-device` a function for
`#target.target<"cuda", host = #target.target<"llvm">>` is host code: its host
part runs on `llvm` (TVM's MakePackedAPI makes that explicit by replacing the
attribute with the host; hetero reads it off the host instead, docs/design.md §7.4).
Inside the function, a `tir.target_region` or a thread-bound loop moves code
onto a device.  The passes that compare caller and callee targets
(`lower-device-kernel-launch`, `inline-private-functions`,
`fold-device-call-results`) all ask this one question.
"""

from __future__ import annotations

from xdsl.ir import Operation

from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import ForOp, PrimFuncOp, TargetRegionOp, function_of


def function_execution_target(func: PrimFuncOp) -> TargetAttr | None:
    """The target the body of `func` (outside device regions) runs on.

    A target with a host exposes the function through host code, so the body
    runs on the host; a target without one runs the body itself.
    """
    target = func.target
    if target is None:
        return None
    return target.host or target


def execution_target(op: Operation) -> TargetAttr | None:
    """The target `op` runs on: the innermost device region or thread-bound
    loop around it decides, else its function (None: no target known)."""
    parent = op.parent_op()
    while parent is not None:
        match parent:
            case TargetRegionOp(target=target):
                return target.without_host()
            case ForOp() if parent.is_thread_bound:
                func = function_of(parent)
                return None if func.target is None else func.target.without_host()
            case PrimFuncOp():
                return function_execution_target(parent)
            case _:
                parent = parent.parent_op()
    return None
