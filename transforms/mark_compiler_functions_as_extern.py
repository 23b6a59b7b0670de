"""`mark-compiler-functions-as-extern`: outlined `Compiler` globals become `Extern` (docs/design.md §4.5).

Once the external codegen has produced its code for a global `Compiler`
function, the function is only a declaration of that code: every function
attribute is dropped (`Compiler`, `Primitive`, `global_symbol`, `Inline`, ...)
and `Extern` is set.  Signature, devices and body stay as they are (the body
keeps its meaning for the reference interpreter, nothing else reads it), and
calls are left unchanged (as TVM does since #11619: lowering turns them into
calls of the external symbol).  `compiler="blas"` only marks functions of that
kind; function literals are never marked (outline them first).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.passes import ModulePass

from hetero.dialects.relay import FuncOp
from hetero.transforms.byoc import check_compiler, compiler_names


@dataclass(frozen=True)
class MarkCompilerFunctionsAsExternPass(ModulePass):
    """Replace the attributes of global `Compiler` functions by `Extern`."""

    name = "mark-compiler-functions-as-extern"
    compiler: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        only = compiler_names([self.compiler] if self.compiler else [], op)
        for func in op.ops:
            if not isinstance(func, FuncOp) or func.compiler is None:
                continue
            kind = check_compiler(func.compiler, func)
            if not only or kind in only:
                func.attributes.clear()
                func.attributes["Extern"] = UnitAttr()
