"""`external-codegen`: each external kind compiles its partitions, IRModule-at-a-time.

The BYOC flow of TVM #11474 (docs/design.md §4.4-§4.6): partitions are outlined to
global `Compiler = "<kind>"` functions, the external codegen turns them into
code, then `mark-compiler-functions-as-extern` leaves only `Extern`
declarations.  This pass is the middle step, so it runs between those two:

    ...,outline-compiler-functions,external-codegen,mark-compiler-functions-as-extern,...

For every kind that has such functions (in module order), its codegen hook
(`hetero.targets.codegen`) is called once with all of them, and the
host-callable `tir.prim_func`s it returns go into a nested module for the
kind, which has its own symbol table, so each is named by the symbol of the
relay function it implements (the name `lower-aot-main`'s `tir.call_extern`
uses), as TVM keeps external runtime modules beside the IRModule:

    builtin.module @blas attributes {hetero.external_codegen = "blas"} {
      tir.prim_func @blas_main_0(...) target #target.target<"llvm", ...> { ... }
    }

The relay functions themselves are untouched (the interpreter still runs
them).  A function whose symbol the kind's module already defines is not
generated again, so running the pass twice changes nothing.  A kind without a
codegen, or whose codegen cannot run here (its library is missing: the
message says what to install), is a diagnostic at the first function of it;
so is a function on a device the kind is not external codegen for.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from hetero.dialects import relay, tir
from hetero.dialects.target import TargetAttr
from hetero.targets.codegen import codegen_for
from hetero.transforms.byoc import check_compiler, serves
from hetero.utils.diagnostics import HeteroError

EXTERNAL_CODEGEN = "hetero.external_codegen"
"""Attribute of a nested module: the external kind whose generated code it holds."""


def external_modules(module: ModuleOp) -> dict[str, ModuleOp]:
    """Kind → the nested module of its generated code."""
    return {
        attr.data: op
        for op in module.ops
        if isinstance(op, ModuleOp)
        and isinstance(attr := op.attributes.get(EXTERNAL_CODEGEN), StringAttr)
    }


def _functions_by_kind(module: ModuleOp) -> dict[str, list[relay.FuncOp]]:
    found: dict[str, list[relay.FuncOp]] = {}
    for op in module.ops:
        if isinstance(op, relay.FuncOp) and op.compiler is not None:
            found.setdefault(check_compiler(op.compiler, op), []).append(op)
    return found


def _check_devices(kind: str, functions: list[relay.FuncOp]) -> None:
    """A kind compiles only partitions on a device whose target it is external
    codegen for (docs/design.md §4.1), as the BYOC passes only give it those."""
    external = TargetAttr(kind)
    for func in functions:
        for device in (func.result_vdevice, *func.param_vdevices):
            if (
                device is not None
                and device.target is not None
                and not serves(external, device.target)
            ):
                raise HeteroError(
                    f"external-codegen: '{kind}' cannot compile @{func.sym_name.data}: it "
                    f"runs on {device}, and '{kind}' is not external codegen for that "
                    "device's target",
                    func,
                )


def _kind_module(module: ModuleOp, kind: str) -> ModuleOp:
    """The nested module of `kind`, created at the end of `module` if missing."""
    if (existing := external_modules(module).get(kind)) is not None:
        return existing
    if SymbolTable.lookup_symbol(module, kind) is not None:
        raise HeteroError(
            f"external-codegen: the module already has a symbol @{kind}, the name "
            "of the nested module for that kind's code",
            module,
        )
    nested = ModuleOp([], {EXTERNAL_CODEGEN: StringAttr(kind)}, StringAttr(kind))
    module.body.block.add_op(nested)
    return nested


def _generate(module: ModuleOp, kind: str, functions: list[relay.FuncOp]) -> None:
    codegen = codegen_for(kind)
    if codegen is None:
        raise HeteroError(
            f"external-codegen: no codegen is registered for '{kind}'", functions[0]
        )
    if (why := codegen.available()) is not None:
        raise HeteroError(
            f"external-codegen: '{kind}' cannot compile here: {why}", functions[0]
        )
    _check_devices(kind, functions)
    target = _kind_module(module, kind)
    todo = [
        f for f in functions if SymbolTable.lookup_symbol(target, f.sym_name) is None
    ]
    if not todo:
        return
    generated = list(codegen.generate(module, todo))
    expected = [f.sym_name.data for f in todo]
    names = [
        p.sym_name.data if isinstance(p, tir.PrimFuncOp) else repr(p) for p in generated
    ]
    if names != expected:
        raise HeteroError(
            f"external-codegen: the '{kind}' codegen returned {names} for the functions "
            f"{expected}; it must return one tir.prim_func per function, named after it",
            todo[0],
        )
    target.body.block.add_ops(generated)


@dataclass(frozen=True)
class ExternalCodegenPass(ModulePass):
    """Run every external kind's codegen hook on all of its global functions."""

    name = "external-codegen"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kind, functions in _functions_by_kind(op).items():
            _generate(op, kind, functions)
