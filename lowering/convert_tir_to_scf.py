"""`convert-tir-to-scf`: CPU `tir` functions to `func`/`scf`/`memref`/`vector`.

Runs before `lower-to-llvm`, for functions whose target is a CPU
(`#target.target<"llvm", ...>`, or none: the host).  Loops go first, inner
before outer, because their lowering reads the enclosing function's target:

* `serial` → `scf.for`; `unrolled` → `scf.for` too, annotated for LLVM to
  unroll it completely when its trip count is a small constant
  (`hetero.lowering.scf_loops`);
* `vectorized` → `vector` ops, with the remainder as a narrower or masked
  vector, when the body is straight-line element-wise code; else `scf.for`
  (`hetero.lowering.vectorize`);
* `parallel` → its body outlined into a private function over an iteration
  range and launched on the thread pool; serial where no second thread
  would take part (`hetero.lowering.outline_parallel_loops`).

A resulting loop of one constant trip is then its body, one of none nothing
(xDSL's `SimplifyTrivialLoops`).

Then the rest, one pattern per op: functions, returns, calls, extern calls
(declared as bodiless private `func.func`s), allocations and CPU target
regions (inlined).  Storage scopes are dropped from memref types last: on a
CPU every scope is ordinary memory.  GPU targets, launches, packed calls and
thread-bound loops are errors at the op: they belong to the GPU path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp, NoneAttr
from xdsl.ir import Attribute, Block, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    TypeConversionPattern,
    attr_type_rewrite_pattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.canonicalization_patterns.scf import SimplifyTrivialLoops

from hetero.dialects import tir
from hetero.lowering.conversion import (
    apply_lowerings,
    erase_dead_ops,
    lookup_symbol,
    lowering,
    mentions,
    nested_ops,
)
from hetero.lowering.outline_parallel_loops import lower_parallel
from hetero.lowering.scf_loops import lower_serial, lower_unrolled
from hetero.lowering.vectorize import element_bits, lower_vectorized
from hetero.targets.cpu import STACK_BYTES, is_cpu
from hetero.utils.diagnostics import HeteroError

CPU_SCOPES = ("global", "local")
"""Storage scopes that mean something on a CPU (both are ordinary memory)."""


# ----------------------------------------------------------------------------
# Loops
# ----------------------------------------------------------------------------


class ForLowering(RewritePattern):
    """Lowers each `tir.for` by its kind (see the module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tir.ForOp, rewriter: PatternRewriter, /):
        kind = op.kind.data
        if kind == tir.ForKind.THREAD_BINDING:
            raise HeteroError(
                f"convert-tir-to-scf: a loop bound to '{op.thread_tag.data}' in a CPU "
                "function (thread bindings are for GPU targets)",
                op,
            )
        LOOP_LOWERINGS[kind](op, rewriter)


LOOP_LOWERINGS: dict[str, Callable[[tir.ForOp, PatternRewriter], None]] = {
    tir.ForKind.SERIAL: lower_serial,
    tir.ForKind.UNROLLED: lower_unrolled,
    tir.ForKind.VECTORIZED: lower_vectorized,
    tir.ForKind.PARALLEL: lower_parallel,
}
"""Loop kind → its lowering (thread-bound loops are rejected)."""


# ----------------------------------------------------------------------------
# Functions, calls, buffers
# ----------------------------------------------------------------------------


class PrimFuncLowering(RewritePattern):
    """Lowers a CPU `tir.prim_func` to a `func.func` of the same visibility."""

    @lowering
    def match_and_rewrite(self, op: tir.PrimFuncOp, rewriter: PatternRewriter, /):
        new = func.FuncOp(
            op.sym_name.data,
            op.function_type,
            op.detach_region(op.body),
            "private" if op.is_private else None,
        )
        new.attributes |= op.attributes
        rewriter.replace(op, new)


class ReturnLowering(RewritePattern):
    """Lowers `tir.return` to `func.return`."""

    @lowering
    def match_and_rewrite(self, op: tir.ReturnOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, func.ReturnOp(*op.operands))


class CallLowering(RewritePattern):
    """Lowers `tir.call` to `func.call` (the callee is lowered too)."""

    @lowering
    def match_and_rewrite(self, op: tir.CallOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, func.CallOp(op.callee, op.args, op.res.types))


class CallExternLowering(RewritePattern):
    """Lowers `tir.call_extern` to a `func.call` of a bodiless private declaration."""

    @lowering
    def match_and_rewrite(self, op: tir.CallExternOp, rewriter: PatternRewriter, /):
        name = op.callee.data
        signature = (op.args.types, op.res.types)
        module = op.get_toplevel_object()
        assert isinstance(module, ModuleOp)
        existing = lookup_symbol(module, name)
        if existing is None:
            declaration = func.FuncOp.external(name, *signature)
            rewriter.insert(declaration, InsertPoint.at_end(module.body.block))
        elif not (
            isinstance(existing, func.FuncOp)
            and existing.function_type.inputs.data == signature[0]
            and existing.function_type.outputs.data == signature[1]
        ):
            raise HeteroError(
                f"convert-tir-to-scf: extern '{name}' is called with "
                f"({', '.join(map(str, signature[0]))}) -> "
                f"({', '.join(map(str, signature[1]))}), which clashes with "
                f"the symbol @{name} of the module",
                op,
            )
        rewriter.replace(op, func.CallOp(name, op.args, op.res.types))


class AllocLowering(RewritePattern):
    """Lowers `tir.alloc`: `local` and small static buffers on the stack, others
    on the heap, freed when the enclosing region ends (as TIR's lifetime says)."""

    @lowering
    def match_and_rewrite(self, op: tir.AllocOp, rewriter: PatternRewriter, /):
        t = op.buffer.type
        assert isinstance(t, MemRefType)
        if on_stack(op):
            alloca = memref.AllocaOp.get(
                t.element_type, shape=t.get_shape(), memory_space=t.memory_space
            )
            # At the function's entry, where LLVM sees a fixed stack slot
            # (an alloca in a loop would grow the stack at each iteration).
            rewriter.insert(alloca, InsertPoint.at_start(_entry(op)))
            rewriter.replace(op, [], alloca.results)
            return
        buffer = memref.AllocOp(op.dynamic_sizes, [], t)
        rewriter.replace(op, buffer)
        block = buffer.parent_block()
        assert block is not None and block.last_op is not None
        rewriter.insert(memref.DeallocOp.get(buffer), InsertPoint.before(block.last_op))


def on_stack(op: tir.AllocOp) -> bool:
    """Whether `op`'s buffer goes on the stack: `local` and small static
    buffers (`STACK_BYTES`)."""
    t = op.buffer.type
    assert isinstance(t, MemRefType)
    if not t.has_static_shape():
        return False
    return (
        op.scope == "local"
        or prod(t.get_shape()) * (element_bits(t.element_type) // 8) <= STACK_BYTES
    )


def _entry(op: Operation) -> Block:
    """The entry block of the function around `op`."""
    while not isinstance(op.parent_op(), ModuleOp):
        op = op.parent_op()  # type: ignore[assignment]
    return op.regions[0].block


class TargetRegionInlining(RewritePattern):
    """Inlines the body of a CPU `tir.target_region` where it stands."""

    @lowering
    def match_and_rewrite(self, op: tir.TargetRegionOp, rewriter: PatternRewriter, /):
        block = op.body.block
        assert block.last_op is not None
        rewriter.erase(block.last_op)
        rewriter.inline_block(block, InsertPoint.before(op))
        rewriter.erase(op)


def _scoped(attr: Attribute) -> bool:
    return isinstance(attr, MemRefType) and not isinstance(attr.memory_space, NoneAttr)


class ScopeErasure(TypeConversionPattern):
    """Drops the storage scope of memref types: on a CPU it is all one memory.
    For the ops that mention a scoped type (`erase_scopes`)."""

    @attr_type_rewrite_pattern
    def convert_type(self, typ: MemRefType, /) -> MemRefType | None:
        if isinstance(typ.memory_space, NoneAttr):
            return None
        return MemRefType(typ.element_type, typ.get_shape(), typ.layout, NoneAttr())


def erase_scopes(module: ModuleOp) -> None:
    """`ScopeErasure` on each op of `module` that mentions a scoped memref,
    in one sweep: each op's types are its own, so none is left after it (a
    walker would offer the pattern every op, and build a rewriter for each)."""
    pattern = ScopeErasure(recursive=True)
    for op in nested_ops(module):
        if op.parent is not None and mentions(op, _scoped):
            pattern.match_and_rewrite(op, PatternRewriter(op))


# ----------------------------------------------------------------------------
# What the CPU path rejects
# ----------------------------------------------------------------------------


def rejection(op: Operation) -> str | None:
    """Why `op` cannot be lowered for a CPU, or None."""
    match op:
        case tir.PrimFuncOp(target=target) if not is_cpu(target):
            return (
                f"@{op.sym_name.data} is for the non-CPU target '{target}' "
                "(the GPU path lowers it, after split-host-device)"
            )
        case tir.TargetRegionOp(target=target) if not is_cpu(target):
            return f"a target region for the non-CPU target '{target}'"
        case tir.LaunchOp():
            return "a kernel launch in a CPU function (the GPU path lowers launches)"
        case tir.CallPackedOp():
            return f"packed call '{op.callee.data}': the CPU runtime has no packed functions"
        case tir.AllocOp(scope=scope) if scope not in CPU_SCOPES:
            return (
                f"a '{scope}' buffer in a CPU function (only {', '.join(CPU_SCOPES)})"
            )
    return None


def _attached(op: Operation, module: ModuleOp) -> bool:
    """Whether `op` is still in `module` (not in a loop erased before it)."""
    while (parent := op.parent_op()) is not None:
        op = parent
    return op is module


@dataclass(frozen=True)
class ConvertTirToScfPass(ModulePass):
    """Lowers CPU `tir` functions to `func`/`scf`/`memref`/`vector`."""

    name = "convert-tir-to-scf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.walk():
            if (why := rejection(inner)) is not None:
                raise HeteroError(f"convert-tir-to-scf: {why}", inner)
        # Inner loops first; a lowering makes no `tir.for` (a walker would
        # offer the pattern every op, and the ops each lowering makes).
        loops = ForLowering()
        for loop in [o for o in op.walk(region_first=True) if isinstance(o, tir.ForOp)]:
            loops.match_and_rewrite(loop, PatternRewriter(loop))
        # A loop of one trip is its body, one of none nothing (a vectorized
        # loop's tail, a register tile's row of one): as loops, each would
        # cost every later pass a few ops and LLVM its per-loop passes.
        simplify = SimplifyTrivialLoops()
        for loop in nested_ops(op):
            if isinstance(loop, scf.ForOp) and _attached(loop, op):
                simplify.match_and_rewrite(loop, PatternRewriter(loop))
        apply_lowerings(
            op,
            [
                PrimFuncLowering(),
                ReturnLowering(),
                CallLowering(),
                CallExternLowering(),
                AllocLowering(),
                TargetRegionInlining(),
            ],
        )
        erase_dead_ops(op)
        erase_scopes(op)
