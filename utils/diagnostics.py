"""Diagnostics with source locations.

Every user-facing error in hetero is a `HeteroError` naming the operation it
is about.  The parser used by hetero's tools (`LocatedParser`) gives every op
a `FileLineColLoc`, so an error prints as `file:line:col: error: message`
followed by the op, like MLIR's diagnostics.  `verify_module` is the
per-op verifier walk that turns xDSL's `VerifyException` into such an error.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from io import StringIO

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException

import hetero.utils.xdsl_fixes  # noqa: F401  (fixes the string lexer's backtracking)


@dataclass(frozen=True)
class Location:
    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


def location_of(op: Operation | None) -> Location | None:
    """The source location of `op` or of its closest located ancestor."""
    while op is not None:
        loc = op.location
        if isinstance(loc, FileLineColLoc):
            return Location(loc.filename.data, loc.line.data, loc.column.data)
        op = op.parent_op()
    return None


@dataclass(frozen=True)
class Note:
    message: str
    op: Operation | None = None


class HeteroError(DiagnosticException):
    """An error about an operation (or about no op, for whole-input problems)."""

    def __init__(
        self,
        message: str,
        op: Operation | None = None,
        notes: Iterable[Note] = (),
        location: Location | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.op = op
        self.notes = tuple(notes)
        self._location = location

    @property
    def location(self) -> Location | None:
        return self._location or location_of(self.op)

    def __str__(self) -> str:
        loc = self.location
        return f"{loc}: {self.message}" if loc is not None else self.message

    def render(self, fallback_file: str = "<input>") -> str:
        """`file:line:col: error: message`, the op, then `note:` lines."""
        out = [_header(self.location, fallback_file, "error", self.message)]
        if self.op is not None:
            out.append(_indent(_print_op(self.op)))
        for note in self.notes:
            out.append(_header(location_of(note.op), fallback_file, "note", note.message))
        return "\n".join(out)


def _header(loc: Location | None, fallback_file: str, severity: str, message: str) -> str:
    where = str(loc) if loc is not None else fallback_file
    return f"{where}: {severity}: {message}"


def _print_op(op: Operation) -> str:
    """The op in generic form, without its regions (they can be huge)."""
    text = StringIO()
    Printer(stream=text, print_generic_format=True).print_op(op)
    lines = text.getvalue().splitlines()
    return lines[0] + (" ..." if len(lines) > 1 else "")


def _indent(text: str) -> str:
    return "  " + text


def parse_error_to_hetero(e: ParseError, line_offset: int = 0) -> tuple[Location, str]:
    """The location and message of an xDSL parse error."""
    loc = e.span.get_location()
    return Location(loc.file, loc.line + line_offset, loc.col), e.msg


def verify_module(module: ModuleOp) -> None:
    """Verify every op; raise a `HeteroError` at the first op that fails."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            raise HeteroError(str(e), op) from e


class LocatedParser(Parser):
    """A parser that records each op's `file:line:col` as its location."""

    def __init__(self, ctx: Context, text: str, name: str, line_offset: int = 0):
        super().__init__(ctx, text, name)
        self.line_offset = line_offset

    def parse_operation(self) -> Operation:
        start = self._current_token.span.get_location()
        op = super().parse_operation()
        if not isinstance(op.location, FileLineColLoc):
            op.location = FileLineColLoc(
                StringAttr(start.file), IntAttr(start.line + self.line_offset), IntAttr(start.col)
            )
        return op
