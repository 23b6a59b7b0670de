"""Diagnostics with source locations.

Every user-facing error in hetero is a `HeteroError` naming the operation it
is about.  The parser used by hetero's tools (`LocatedParser`) gives every op
a `FileLineColLoc`, so an error prints as `file:line:col: error: message`
followed by the op, like MLIR's diagnostics.  `verify_module` is the
per-op verifier walk that turns xDSL's `VerifyException` into such an error,
and checks what xDSL's verifier does not: that every value is defined before
its uses (`Dominance`).
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from io import StringIO

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.irdl.dominance import DominanceInfo
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import SymbolTable
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
            out.append(
                _header(location_of(note.op), fallback_file, "note", note.message)
            )
        return "\n".join(out)


def _header(
    loc: Location | None, fallback_file: str, severity: str, message: str
) -> str:
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
    """Verify every op and the dominance of its operands; raise a
    `HeteroError` at the first op that fails."""
    dominance = Dominance()
    for op in module.walk():  # first: op verifiers read their operands' owners
        dominance.verify_operands(op)
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except Exception as e:  # xDSL's verifiers raise a few plain exceptions too
            raise HeteroError(str(e) or type(e).__name__, op) from e


@dataclass
class Dominance:
    """MLIR's rule that a value is defined before every use, which xDSL's
    verifier leaves out: its parser accepts forward references, and every
    interpreter and lowering after it assumes definitions come first.

    A use is valid where its value's block holds an ancestor of the user
    (the user itself or an op enclosing it) after the definition, or where
    the value's block dominates the block holding that ancestor.  Regions of
    symbol tables (`builtin.module`) are graph regions, ordered freely as in
    MLIR; uses in unreachable blocks are not checked, as in MLIR.
    """

    positions: dict[Block, dict[Operation, int]] = field(default_factory=dict)
    blocks: dict[Region, DominanceInfo] = field(default_factory=dict)

    def verify_operands(self, op: Operation) -> None:
        for index, operand in enumerate(op.operands):
            if not isinstance(operand, OpResult | BlockArgument):  # a forward reference
                raise HeteroError(f"operand #{index} is never defined", op)
            problem = self.problem(operand, op)
            if problem is not None:
                raise HeteroError(
                    f"operand #{index} does not dominate this use",
                    op,
                    [Note(f"operand defined here ({problem})", _defining_op(operand))],
                )

    def problem(self, value: SSAValue, user: Operation) -> str | None:
        """Why `value` is not defined before `user`, None where it is."""
        block = _defining_block(value)
        region = block.parent if block is not None else None
        ancestor: Operation | None = user
        while ancestor is not None and ancestor.parent_region() is not region:
            ancestor = ancestor.parent_op()
        if ancestor is None or region is None:
            return "in a region that does not hold the use"
        if region.parent is not None and region.parent.has_trait(SymbolTable):
            return None
        use_block = ancestor.parent_block()
        assert use_block is not None
        if use_block is not block:
            info = self._block_dominance(region)
            reachable = info.dominates(region.blocks.first, use_block)  # type: ignore[arg-type]
            if reachable and not info.strictly_dominates(block, use_block):  # type: ignore[arg-type]
                return "in a block that does not dominate the use"
            return None
        if isinstance(value, BlockArgument):
            return None
        if value.owner is ancestor:
            return "by an op that holds the use in its regions"
        order = self._positions(block)
        return "after the use" if order[value.owner] > order[ancestor] else None

    def _positions(self, block: Block) -> dict[Operation, int]:
        if block not in self.positions:
            self.positions[block] = {op: i for i, op in enumerate(block.ops)}
        return self.positions[block]

    def _block_dominance(self, region: Region) -> DominanceInfo:
        if region not in self.blocks:
            self.blocks[region] = DominanceInfo(region)
        return self.blocks[region]


def _defining_block(value: SSAValue) -> Block | None:
    return (
        value.owner if isinstance(value, BlockArgument) else value.owner.parent_block()
    )  # type: ignore[union-attr]


def _defining_op(value: SSAValue) -> Operation | None:
    """The op that defines `value`, or that holds the block it is an argument of."""
    owner = value.owner
    return owner.parent_op() if isinstance(owner, Block) else owner


class LocatedParser(Parser):
    """A parser that records each op's `file:line:col` as its location."""

    def __init__(self, ctx: Context, text: str, name: str, line_offset: int = 0):
        super().__init__(ctx, text, name)
        self.line_offset = line_offset

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """xDSL's, with every failure a `ParseError` at the current token:
        xDSL raises a `VerifyException` for an attribute that fails its own
        checks, and a few plain exceptions on odd input.  Blobs in a weights
        file (`hetero.weights`) are read as the file's own."""
        try:
            module = super().parse_module(allow_implicit_module)
        except (ParseError, HeteroError):
            raise
        except VerifyException as e:
            self.raise_error(str(e))
        except Exception as e:  # noqa: BLE001  (xDSL raises plain exceptions on odd input)
            self.raise_error(f"malformed input: {e}")
        # Imported here: hetero.utils.dense_resources imports this module.
        from hetero.utils.dense_resources import load_weights

        names = self.__dict__.get("_resource_names", {})  # xdsl_fixes' key map
        load_weights(module, self.lexer.input.name, names)
        return module

    def parse_operation(self) -> Operation:
        start = self._current_token.span.get_location()
        op = super().parse_operation()
        if not isinstance(op.location, FileLineColLoc):
            op.location = FileLineColLoc(
                StringAttr(start.file),
                IntAttr(start.line + self.line_offset),
                IntAttr(start.col),
            )
        return op


class HeteroWarning(UserWarning):
    """A warning of hetero's: shown as one `file:line: warning: message` line."""


class HeteroRuntimeWarning(HeteroWarning, RuntimeWarning):
    """A problem of this run (a cache or database that cannot be used)."""


def warn(
    message: str, stacklevel: int = 1, category: type[HeteroWarning] = HeteroWarning
) -> None:
    """Warn with `message` on one line (a library's multi-line reason folded
    into it), shown without Python's source line (`_format_warning`)."""
    warnings.warn(" ".join(message.split()), category, stacklevel=stacklevel + 1)


_python_format_warning = warnings.formatwarning


def _format_warning(message, category, filename, lineno, line=None) -> str:  # type: ignore[no-untyped-def]
    if issubclass(category, HeteroWarning):
        return f"{filename}:{lineno}: warning: {message}\n"
    return _python_format_warning(message, category, filename, lineno, line)


warnings.formatwarning = _format_warning


def run_tool(
    prog: str,
    file: str,
    body: Callable[[], int],
    user_errors: tuple[type[Exception], ...] = (),
) -> int:
    """`body()`'s exit status, with every error it raises printed as a
    diagnostic: the one place where hetero's tools decide what a user sees.

    A `HeteroError` is located (`file:line:col: error: ...`, `file: error:`
    without a location), `user_errors` and memory running out are
    `prog: error: ...`; all exit with status 1.  Anything else is a bug in
    hetero, not in the input: `prog: internal error: ...` and status 2, or
    the traceback itself with `HETERO_DEBUG=1`.
    """
    try:
        return body()
    except HeteroError as e:
        print(e.render(file), file=sys.stderr)
    except MemoryError as e:
        print(
            f"{prog}: error: out of memory ({str(e) or 'an allocation failed'})",
            file=sys.stderr,
        )
    except user_errors as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
    except Exception as e:
        if os.environ.get("HETERO_DEBUG"):
            raise
        print(
            f"{prog}: internal error: {type(e).__name__}: {e}\n"
            "(set HETERO_DEBUG=1 for a traceback; please report this)",
            file=sys.stderr,
        )
        return 2
    return 1
