"""Code generators of the external-codegen target kinds (BYOC, docs/design.md §4.6).

A partition handed to an external kind (a `Compiler = "blas"` global after
`outline-compiler-functions`) only runs once that kind's *codegen hook* has
turned it into code.  A hook works IRModule-at-a-time, as TVM's custom
`RelayToTIR` passes do since #11474: it is called once per module with
*every* global function of its kind, and returns one public host-callable
`tir.prim_func` per function, named by the function's symbol (what the host
function's `tir.call_extern` calls once the function is `Extern`).  The
`external-codegen` pass places them in a nested module
(`hetero.transforms.external_codegen`).

    ExternalCodegen("blas", generate, available)

* `generate(module, functions)` — the module (read-only for the hook) and the
  kind's functions in module order; returns their prim_funcs in that order.
  Bad input is a `HeteroError` at the function or op concerned.
* `available()` — None when the hook can run here, else why not, naming what
  to install.  A kind whose codegen is unavailable is simply not offered:
  `hetero.compile` does not partition for it, so programs still compile on
  the regular target of that device.

Hooks come from the built-in table (imported only when asked for), the
`hetero.codegens` entry point group (the entry's name is the kind; it names an
`ExternalCodegen` or a zero-argument callable returning one), and
`register_codegen`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from hetero.dialects import relay, tir
from hetero.dialects.target.kind import lookup_target_kind
from hetero.utils.plugins import load_entry_points

ENTRY_POINT_GROUP = "hetero.codegens"

Generate = Callable[[ModuleOp, Sequence[relay.FuncOp]], Sequence[tir.PrimFuncOp]]


@dataclass(frozen=True)
class ExternalCodegen:
    """The code generator of one external-codegen kind."""

    kind: str
    generate: Generate
    available: Callable[[], str | None] = lambda: None
    doc: str = ""


BUILTIN_CODEGENS: dict[str, str] = {
    "blas": "hetero.lowering.external.blas:CODEGEN",
    "cublas": "hetero.lowering.external.cublas:CODEGEN",
    "cudnn": "hetero.lowering.external.cudnn:CODEGEN",
    "dnnl": "hetero.lowering.external.dnnl:CODEGEN",
}
"""Kind → `module:attribute` of its built-in hook, imported on first use."""


class CodegenRegistry:
    """Kind name → hook; built-ins and entry points are loaded lazily."""

    def __init__(self, group: str = ENTRY_POINT_GROUP) -> None:
        self._hooks: dict[str, ExternalCodegen] = {}
        self._group = group
        self._loaded = False

    def register(self, codegen: ExternalCodegen) -> ExternalCodegen:
        kind = lookup_target_kind(codegen.kind)
        if kind is None or not (kind.is_external_codegen or kind.relay_to_tir):
            raise ValueError(
                f"codegen for '{codegen.kind}', which is not a registered "
                "external-codegen target kind"
            )
        if self._hooks.get(codegen.kind, codegen) is not codegen:
            raise ValueError(f"a codegen for '{codegen.kind}' is already registered")
        self._hooks[codegen.kind] = codegen
        return codegen

    def get(self, kind: str) -> ExternalCodegen | None:
        self._load()
        if kind not in self._hooks and kind in BUILTIN_CODEGENS:
            self.register(_load_object(BUILTIN_CODEGENS[kind]))
        return self._hooks.get(kind)

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        load_entry_points(self._group, self._register_entry)

    def _register_entry(self, name: str, loaded: Any) -> None:
        codegen = loaded if isinstance(loaded, ExternalCodegen) else loaded()
        if codegen.kind != name:
            raise ValueError(
                f"it gives the codegen of '{codegen.kind}'; the entry's name must be its kind"
            )
        self.register(codegen)


def _load_object(reference: str) -> ExternalCodegen:
    module, _, attribute = reference.partition(":")
    return getattr(import_module(module), attribute)


REGISTRY = CodegenRegistry()


def register_codegen(codegen: ExternalCodegen) -> ExternalCodegen:
    """Register the hook of an external-codegen kind (error if it has one)."""
    REGISTRY.get(codegen.kind)  # built-ins and entry points first
    return REGISTRY.register(codegen)


def codegen_for(kind: str) -> ExternalCodegen | None:
    """The hook of `kind`, or None if it has none."""
    return REGISTRY.get(kind)


def unavailable_reason(kind: str) -> str | None:
    """Why `kind`'s partitions cannot be compiled here (None: they can)."""
    codegen = codegen_for(kind)
    if codegen is None:
        return f"no codegen is registered for the external kind '{kind}'"
    return codegen.available()
