"""Parsing and building IR with every dialect hetero knows.

`make_context()` gives a `Context` that sees xDSL's dialects and every dialect
registered through the `xdsl.universe` entry points (hetero's own and any
extension's), loaded lazily on first use, exactly as `hetero-opt` does.
`parse_module()` parses text the way `hetero-opt` does: ops carry their
`file:line:col`, and the module is verified; errors are `HeteroError`s.
"""

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.universe import Universe
from xdsl.utils.exceptions import ParseError

from hetero.dialects import llvm_ops, memref_ops
from hetero.dialects.llvm_attrs import LoopAnnotationAttr, load_loop_attrs
from hetero.universe import HETERO_UNIVERSE
from hetero.utils.diagnostics import (
    HeteroError,
    LocatedParser,
    parse_error_to_hetero,
    verify_module,
)


def make_context(allow_unregistered: bool = False) -> Context:
    ctx = Context(allow_unregistered=allow_unregistered)
    dialects = dict(HETERO_UNIVERSE.all_dialects)  # also when run from a bare checkout
    dialects.update(Universe.get_multiverse().all_dialects)
    for name, factory in dialects.items():
        ctx.register_dialect(name, factory)
    load_upstream_extras(ctx)
    return ctx


def load_upstream_extras(ctx: Context) -> None:
    """Make `ctx` parse the upstream MLIR attributes and ops that hetero
    emits and xDSL's dialects lack (loop annotations, `memref.prefetch`,
    `llvm.fptosi`, `llvm.intr.prefetch`, ...); those it has already stay."""
    loaded = set(ctx.loaded_ops)
    if LoopAnnotationAttr not in set(ctx.loaded_attrs):
        load_loop_attrs(ctx)
    for op in (memref_ops.PrefetchOp, *llvm_ops.ABSENT_OPS):
        if op not in loaded:
            ctx.load_op(op)


def parse_module(
    text: str, filename: str = "<string>", ctx: Context | None = None
) -> ModuleOp:
    """Parse and verify `text`; a syntax or verifier error raises `HeteroError`."""
    try:  # the parser lexes its first token as it is made
        module = LocatedParser(ctx or make_context(), text, filename).parse_module()
    except ParseError as e:
        loc, msg = parse_error_to_hetero(e)
        raise HeteroError(msg, location=loc) from e
    verify_module(module)
    return module
