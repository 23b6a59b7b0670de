"""LLVM dialect attributes that xDSL 0.74's `llvm` dialect lacks: loop annotations.

MLIR's `#llvm.loop_annotation` asks LLVM's loop passes for a transformation
(`!llvm.loop` metadata on the loop's back edge).  hetero sets one option, full
unrolling, so these carry only that field; they print in MLIR's syntax:

    #llvm.loop_annotation<unroll = #llvm.loop_unroll<full = true>>

An `scf.for` and the `cf` branches of its lowering carry the annotation as the
discardable attribute `llvm.loop_annotation` (as MLIR's `convert-scf-to-cf`
does); `llvm.br`/`llvm.cond_br` as `loop_annotation` (the name of MLIR's
inherent attribute), which `hetero.lowering.llvmir` translates to metadata.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialects.builtin import BoolAttr, IntegerAttr
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer

LOOP_ANNOTATION = "llvm.loop_annotation"
"""The annotation's name on `scf.for` and `cf` branches."""

BRANCH_LOOP_ANNOTATION = "loop_annotation"
"""The annotation's name on `llvm.br` and `llvm.cond_br`."""


T = TypeVar("T")


def _parse_field(parser: AttrParser, key: str, value: Callable[[], T]) -> T:
    """`<key = value>`: the one-field parameter list both attributes have."""
    parser.parse_punctuation("<")
    parser.parse_keyword(key)
    parser.parse_punctuation("=")
    parsed = value()
    parser.parse_punctuation(">")
    return parsed


@irdl_attr_definition
class LoopUnrollAttr(ParametrizedAttribute):
    """`#llvm.loop_unroll<full = true>`: MLIR's unroll options, `full` only."""

    name = "llvm.loop_unroll"

    full: BoolAttr

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<full = {str(bool(self.full.value.data)).lower()}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        return [
            IntegerAttr.from_bool(_parse_field(parser, "full", parser.parse_boolean))
        ]


@irdl_attr_definition
class LoopAnnotationAttr(ParametrizedAttribute):
    """`#llvm.loop_annotation<unroll = ...>`: MLIR's loop annotation, `unroll` only."""

    name = "llvm.loop_annotation"

    unroll: LoopUnrollAttr

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<unroll = ")
        printer.print_attribute(self.unroll)
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        return [_parse_field(parser, "unroll", parser.parse_attribute)]


FULL_UNROLL = LoopAnnotationAttr(LoopUnrollAttr(IntegerAttr.from_bool(True)))
"""The annotation of a loop that LLVM should unroll completely."""


def load_loop_attrs(ctx: Context) -> None:
    """Make `ctx` parse the loop attributes: they are named `llvm.*` but
    xDSL's `llvm` dialect does not define them."""
    for attr in (LoopUnrollAttr, LoopAnnotationAttr):
        ctx.load_attr_or_type(attr)
