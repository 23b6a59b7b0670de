"""`convert-func-to-llvm`: `func.func`/`return`/`call` to `llvm.func`/`return`/`call`.

Mirrors MLIR's `mlir/lib/Conversion/FuncToLLVM/FuncToLLVM.cpp`, without the
memref descriptors (hetero's memref ABI is set by `convert-memref-to-llvm`,
which must run first).  A function with several results returns them in an
`!llvm.struct`, as in MLIR.  Linkage: a declaration is `external`; a definition
is `external` when public and `internal` when private, unless the function
carries an explicit `llvm.linkage` attribute.  Other discardable attributes and
argument attributes are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import DenseArrayBase, MemRefType, ModuleOp, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter

from hetero.lowering.conversion import (
    ToLLVMPattern,
    apply_lowerings,
    lowering,
    reject_leftovers,
    retype_block_args,
)
from hetero.utils.diagnostics import HeteroError


class ResultsPattern(ToLLVMPattern):
    """Knows how function results are returned: void, one value, or a struct."""

    def result_type(self, types: Sequence[Attribute], op: Operation) -> Attribute:
        converted = [self.convert(t, op) for t in types]
        if not converted:
            return llvm.LLVMVoidType()
        if len(converted) == 1:
            return converted[0]
        return llvm.LLVMStructType.from_type_list(converted)


class FuncLowering(ResultsPattern):
    """Lowers `func.func` to `llvm.func`."""

    @lowering
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter, /):
        inputs = op.function_type.inputs.data
        for i, t in enumerate(inputs):
            if isinstance(t, MemRefType):
                raise HeteroError(
                    f"argument #{i} of @{op.sym_name.data} is a memref: "
                    "run convert-memref-to-llvm before convert-func-to-llvm",
                    op,
                )
        function_type = llvm.LLVMFunctionType(
            [self.convert(t, op) for t in inputs],
            self.result_type(op.function_type.outputs.data, op),
        )
        attributes = dict(op.attributes)
        linkage = attributes.pop("llvm.linkage", None)
        if not isinstance(linkage, llvm.LinkageAttr):
            private = (
                op.sym_visibility is not None and op.sym_visibility.data == "private"
            )
            linkage = llvm.LinkageAttr(
                "internal" if private and op.body.blocks else "external"
            )
        body = rewriter.move_region_contents_to_new_regions(op.body)
        if (entry := body.first_block) is not None:
            retype_block_args(
                entry, lambda t: self.convert(t, op), rewriter, self.materialize
            )
        properties: dict[str, Attribute | None] = {}
        if op.arg_attrs is not None:
            properties["arg_attrs"] = op.arg_attrs
        new = llvm.FuncOp(
            op.sym_name,
            function_type,
            linkage=linkage,
            body=body,
            other_props=properties,
            extra_attrs=attributes,
        )
        rewriter.replace(op, new)


class ReturnLowering(ResultsPattern):
    """Lowers `func.return` to `llvm.return`, packing several values in a struct."""

    @lowering
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter, /):
        values = self.operands(op, rewriter)
        if len(values) <= 1:
            rewriter.replace(op, llvm.ReturnOp(values[0] if values else None))
            return
        struct: SSAValue = rewriter.insert(
            llvm.UndefOp(self.result_type(op.arguments.types, op))
        ).res
        for i, value in enumerate(values):
            position = DenseArrayBase.from_list(i64, [i])
            struct = rewriter.insert(llvm.InsertValueOp(position, struct, value)).res
        rewriter.replace(op, llvm.ReturnOp(struct))


class CallLowering(ResultsPattern):
    """Lowers `func.call` to `llvm.call`, unpacking a struct of several results."""

    @lowering
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter, /):
        result_type = self.result_type(op.result_types, op)
        call = llvm.CallOp(
            op.callee,
            *self.operands(op, rewriter),
            return_type=None
            if isinstance(result_type, llvm.LLVMVoidType)
            else result_type,
        )
        if len(op.results) <= 1:
            self.replace(op, rewriter, [call])
            return
        assert isinstance(result_type, llvm.LLVMStructType)
        unpacked = [
            llvm.ExtractValueOp(DenseArrayBase.from_list(i64, [i]), call.results[0], t)
            for i, t in enumerate(result_type.types.data)
        ]
        self.replace(op, rewriter, [call, *unpacked], [u.res for u in unpacked])


PATTERNS: tuple[type[ToLLVMPattern], ...] = (
    FuncLowering,
    ReturnLowering,
    CallLowering,
)
"""The conversion patterns of this pass, in the order they are tried."""


@dataclass(frozen=True)
class ConvertFuncToLLVMPass(ModulePass):
    """Lowers `func` functions, returns and calls to the `llvm` dialect."""

    name = "convert-func-to-llvm"

    index_bitwidth: int = 64

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [p(self.index_bitwidth) for p in PATTERNS]
        apply_lowerings(op, patterns)
        reject_leftovers(op, ["func"], self.name)
