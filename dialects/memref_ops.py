"""`memref` dialect ops that xDSL 0.74's `memref` dialect lacks: `memref.prefetch`.

A CPU schedule asks for a cache line it will read later (`Emitter.prefetch`)
as MLIR does, with `memref.prefetch`, which `convert-memref-to-llvm` lowers
to `llvm.intr.prefetch` (LLVM's `llvm.prefetch` intrinsic: a hint, which
never faults and has no effect on the values computed).  It prints and parses
in MLIR's syntax:

    memref.prefetch %w[%i, %j], read, locality<3>, data : memref<8x64xf32>

`hetero.context.load_upstream_extras` makes a `Context` parse it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import I32, BoolAttr, IndexType, IntegerAttr, MemRefType, i32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

LOCALITIES = range(4)
"""`locality<0>` (no temporal locality: keep it out of the caches) to
`locality<3>` (high: keep it in every level), as LLVM's `llvm.prefetch`."""


@irdl_op_definition
class PrefetchOp(IRDLOperation):
    """`memref.prefetch`: fetch the cache line holding `memref[indices]`."""

    name = "memref.prefetch"

    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    isDataCache = prop_def(BoolAttr)
    isWrite = prop_def(BoolAttr)
    localityHint = prop_def(IntegerAttr[I32])

    def __init__(
        self,
        memref: SSAValue,
        indices: Sequence[SSAValue],
        locality: int = 3,
        write: bool = False,
        data: bool = True,
        attributes: Mapping[str, Attribute] | None = None,
    ):
        super().__init__(
            operands=[memref, indices],
            properties={
                "isDataCache": IntegerAttr.from_bool(data),
                "isWrite": IntegerAttr.from_bool(write),
                "localityHint": IntegerAttr(locality, i32),
            },
            attributes=attributes,
        )

    @property
    def locality(self) -> int:
        return self.localityHint.value.data

    def verify_(self) -> None:
        t = self.memref.type
        assert isinstance(t, MemRefType)
        if len(self.indices) != t.get_num_dims():
            raise VerifyException(
                f"expected {t.get_num_dims()} indices for {t}, got {len(self.indices)}"
            )
        if self.locality not in LOCALITIES:
            raise VerifyException(f"locality must be 0 to 3, got {self.locality}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.memref)
        printer.print_string("[")
        printer.print_list(self.indices, printer.print_ssa_value)
        access = "write" if self.isWrite.value.data else "read"
        cache = "data" if self.isDataCache.value.data else "instr"
        printer.print_string(f"], {access}, locality<{self.locality}>, {cache}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.memref.type)

    @classmethod
    def parse(cls, parser: Parser) -> PrefetchOp:
        memref = parser.parse_unresolved_operand()
        indices = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(",")
        write = parser.parse_keyword_in(("read", "write")) == "write"
        parser.parse_punctuation(",")
        parser.parse_keyword("locality")
        parser.parse_punctuation("<")
        at = parser.pos
        locality = parser.parse_integer(allow_boolean=False, allow_negative=False)
        if locality not in LOCALITIES:
            parser.raise_error(
                f"locality must be 0 to 3, got {locality}", at, parser.pos
            )
        parser.parse_punctuation(">")
        parser.parse_punctuation(",")
        data = parser.parse_keyword_in(("data", "instr")) == "data"
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t: Attribute = parser.parse_type()
        return cls(
            parser.resolve_operand(memref, t),
            [parser.resolve_operand(i, IndexType()) for i in indices],
            locality,
            write,
            data,
            attributes,
        )
