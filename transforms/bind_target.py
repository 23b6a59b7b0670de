"""`bind-target{target=...}`: give every prim_func a `target` (docs/design.md §7.1).

The `target` attribute is the single source of truth for where a function
runs (docs/design.md §1), so this pass only *fills in* a missing one and never
overwrites it (TVM #14942).  Which target a function gets depends on how it
is reached:

* a function marked `tir.is_host_func` runs on the host: it gets the host
  target (the option's `host`, else `llvm`) with that same host;
* a public function (TVM: has a `global_symbol`) is exposed through the
  host-side API, so it gets the target *with* its host;
* a private function is an internal subroutine, callable only from other
  prim_funcs (possibly device code): it gets the target *without* a host.

A public function that already has a target without a host only gains the
option's host.  `tir.is_host_func` is removed everywhere: afterwards the
target alone says where each function runs.

One addition to TVM: a public function marked `tir.is_global_func = true`
(a kernel `lower-device-kernel-launch` launches or extern-calls) is reached by
its symbol, not through the host API, so it counts as internal.  In TVM's
flow BindTarget never sees such functions (it runs first); here it makes the
whole pipeline idempotent instead of re-outlining lowered kernels.

The options use TVM's target-string syntax (`hetero.dialects.target.target_string`):
`bind-target{target="cuda -arch=sm_80 -host=llvm"}` (kind name, then
`-option=value` flags checked against the kind's schema; `-host=` names the
host kind); a host with options goes in its own option,
`host="llvm -opt_level=0"`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass

from hetero.dialects.target import TargetAttr
from hetero.dialects.target.target_string import parse_target_string
from hetero.dialects.tir import PrimFuncOp, prim_funcs
from hetero.utils.diagnostics import HeteroError

IS_HOST_FUNC = "tir.is_host_func"
IS_GLOBAL_FUNC = "tir.is_global_func"
DEFAULT_HOST = "llvm"


def _is_true(flag: Attribute | None) -> bool:
    return isinstance(flag, IntegerAttr) and flag.value.data != 0


def is_global_func(func: PrimFuncOp) -> bool:
    """Whether `func` is a kernel, launched or extern-called by its symbol."""
    return _is_true(func.attributes.get(IS_GLOBAL_FUNC))


def is_host_exposed(func: PrimFuncOp) -> bool:
    """Whether `func` is reached through the host API: public, not a kernel."""
    return not func.is_private and not is_global_func(func)


def bound_target(func: PrimFuncOp, target: TargetAttr) -> TargetAttr | None:
    """The target `bind-target` gives `func`, or None to leave its attribute as is."""
    exposed = is_host_exposed(func)
    if (existing := func.target) is not None:
        if target.host is not None and existing.host is None and exposed:
            return existing.with_host(target.host)
        return None
    if _is_true(func.attributes.get(IS_HOST_FUNC)):
        host = target.host or TargetAttr(DEFAULT_HOST)
        return host.with_host(host)
    return target if exposed else target.without_host()


@dataclass(frozen=True)
class BindTargetPass(ModulePass):
    """Fill in each prim_func's missing `target` from the `target` option."""

    name = "bind-target"
    target: str = ""
    host: str = ""
    """The host target, in the same syntax; overrides a `-host=` in `target`."""

    def _parse(self, text: str, op: ModuleOp) -> TargetAttr:
        try:
            return parse_target_string(text)
        except ValueError as e:
            raise HeteroError(f"{self.name}: bad target '{text}': {e}", op) from e

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.target.strip():
            raise HeteroError(
                f'{self.name} needs a target, e.g. {self.name}{{target="cuda -host=llvm"}}',
                op,
            )
        target = self._parse(self.target, op)
        if self.host.strip():
            target = target.with_host(self._parse(self.host, op))
        bind_target(op, target)


def bind_target(module: ModuleOp, target: TargetAttr) -> None:
    """`bind-target` with `target` (its host included) on `module`."""
    for func in prim_funcs(module):
        if (new := bound_target(func, target)) is not None:
            func.target = new
        func.attributes.pop(IS_HOST_FUNC, None)
