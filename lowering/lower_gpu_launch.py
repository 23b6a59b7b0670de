"""`lower-gpu-launch`: host-side `gpu.launch_func` to calls of per-kernel launch stubs.

The host half of MLIR's `gpu-to-llvm`, for hetero's JIT: after
`convert-tir-to-scf` has made the host functions `func.func`s, each
`gpu.launch_func @k::@k` becomes

    func.call @k.launch(gx, gy, gz, bx, by, bz, operands...)

of a private declaration, so the ordinary CPU lowering gives the memref
operands the kernel ABI (pointer, then dynamic sizes) and the stub receives
exactly the kernel's parameters.  `hetero.lowering.cuda_codegen.launch_stubs` defines
the stubs (`cuLaunchKernel` through the CUDA driver, no Python in the loop).

Launches are asynchronous: a stub queues its kernel and returns, and the host
waits only where it is about to touch memory.  In every launching function,
`func.call @hetero_cuda_wait()` (`WAIT`) goes before the first op after a
launch that may read, write or free memory on the host (an op whose memory
effects say so or are unknown: a host loop, a call of CPU code, a
`memref.dealloc`); the runtime's wait synchronises the GPU only if work is
pending.  A call of a launching function may leave work pending too, so the
callers of launching functions are launching functions themselves
(`hetero.launches_kernels`, transitively), and a block starts as if work were
pending: the pass never needs to know what came before it.  A wait already
in place counts as one, so running the pass again adds none.

Buffers of a function that launches kernels must be reachable from the GPU:
its stack buffers (`memref.alloca`) become `memref.alloc`s, freed at the end
of their block, and the runtime allocates that function's heap buffers as
CUDA managed memory (`hetero.runtime.cuda.MANAGED_ALLOCATION`), which the
host's own loops (device copies) can read and write too.  The `gpu.module`s
are dropped from the module: compile them to PTX first
(`hetero.lowering.gpu_codegen`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, gpu, memref
from xdsl.dialects.builtin import IndexType, ModuleOp, UnitAttr
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import MemoryEffectKind, ReturnLike, SymbolTable, get_effects

from hetero.utils.diagnostics import HeteroError
from hetero.utils.symbols import enclosing

LAUNCH_SUFFIX = ".launch"
"""`@k.launch` launches the kernel `@k`."""

LAUNCH_STUB = "hetero.launch_stub"
"""Marks a stub's declaration; its value is unit (the kernel is the name's stem)."""

LAUNCHES = "hetero.launches_kernels"
"""Marks a host function that launches kernels, or calls one that does (its
buffers are managed memory, and it may return with GPU work pending); a
declaration so marked is an external function queuing GPU work (cuBLAS)."""

WAIT = "hetero_cuda_wait"
"""`func.call @hetero_cuda_wait()`: the host waits for the GPU work queued so far."""


class LaunchLowering(RewritePattern):
    """`gpu.launch_func` → a call of the kernel's launch stub."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: gpu.LaunchFuncOp, rewriter: PatternRewriter, /):
        if op.asyncDependencies or op.dynamicSharedMemorySize or op.clusterSizeX:
            raise HeteroError(
                "lower-gpu-launch: async, cluster and dynamic shared memory launches "
                "are not supported",
                op,
            )
        caller = enclosing(op, func.FuncOp)
        if caller is None:
            raise HeteroError(
                "lower-gpu-launch: 'gpu.launch_func' outside a 'func.func'; "
                "run convert-tir-to-scf first",
                op,
            )
        kernel = op.kernel.nested_references.data[-1].data
        sizes = [
            op.gridSizeX,
            op.gridSizeY,
            op.gridSizeZ,
            op.blockSizeX,
            op.blockSizeY,
            op.blockSizeZ,
        ]
        if any(not isinstance(s.type, IndexType) for s in sizes):
            raise HeteroError("lower-gpu-launch: launch sizes must be 'index'", op)
        operands = list(op.kernelOperands)
        name = kernel + LAUNCH_SUFFIX
        module = op.get_toplevel_object()
        assert isinstance(module, ModuleOp)
        inputs = [IndexType()] * 6 + [v.type for v in operands]
        if SymbolTable.lookup_symbol(module, name) is None:
            declaration = func.FuncOp.external(name, inputs, [])
            declaration.attributes[LAUNCH_STUB] = UnitAttr()
            rewriter.insert(declaration, InsertPoint.at_end(module.body.block))
        caller.attributes[LAUNCHES] = UnitAttr()
        rewriter.replace(op, func.CallOp(name, [*sizes, *operands], []))


class StackBufferToHeap(RewritePattern):
    """A launching function's `memref.alloca` → `memref.alloc` + `memref.dealloc`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocaOp, rewriter: PatternRewriter, /):
        function = enclosing(op, func.FuncOp)
        if function is None or LAUNCHES not in function.attributes:
            return
        heap = memref.AllocOp(op.dynamic_sizes, op.symbol_operands, op.memref.type)
        rewriter.replace(op, heap)
        block = heap.parent_block()
        assert block is not None and block.last_op is not None
        rewriter.insert(memref.DeallocOp.get(heap), InsertPoint.before(block.last_op))


def _mark_callers(module: ModuleOp) -> set[str]:
    """Mark `LAUNCHES` the callers of functions queuing GPU work, transitively;
    the names of all functions that queue GPU work, stubs included."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    callees = {
        f: {op.callee.string_value() for op in f.walk() if isinstance(op, func.CallOp)}
        for f in functions
    }
    marked = {f.sym_name.data for f in functions if _queues_gpu_work(f)}
    while grown := {
        f.sym_name.data
        for f in functions
        if f.sym_name.data not in marked and callees[f] & marked
    }:
        marked |= grown
        for f in functions:
            if f.sym_name.data in grown:
                f.attributes[LAUNCHES] = UnitAttr()
    return marked


def _queues_gpu_work(function: func.FuncOp) -> bool:
    return LAUNCHES in function.attributes or LAUNCH_STUB in function.attributes


def _touches_host_memory(op: Operation) -> bool:
    """Whether the host may read, write or free memory in `op` (what the GPU
    may still be using); only allocation and effect-free ops may not."""
    if op.has_trait(ReturnLike):
        return False
    effects = get_effects(op)
    return effects is None or any(e.kind != MemoryEffectKind.ALLOC for e in effects)


def _wait_before_host_accesses(block: Block, asynchronous: set[str]) -> bool:
    """A wait before each op of `block` that touches host memory with GPU work
    possibly pending (after a call of an `asynchronous` function, or from the
    block's start); regions that queue work get their own.  Whether a wait went in."""
    pending, waited = True, False
    for op in list(block.ops):
        if isinstance(op, func.CallOp) and op.callee.string_value() == WAIT:
            pending = False  # waited already (the pass ran before)
            continue
        if any(
            isinstance(o, func.CallOp) and o.callee.string_value() in asynchronous
            for o in op.walk()
        ):
            for region in op.regions:
                for inner in region.blocks:
                    waited |= _wait_before_host_accesses(inner, asynchronous)
            pending = True
        elif pending and _touches_host_memory(op):
            block.insert_op_before(func.CallOp(WAIT, [], []), op)
            pending, waited = False, True
    return waited


def _erase_device_modules(module: ModuleOp) -> None:
    """Drop the `gpu.module`s: they are compiled to PTX on their own, and the
    host module is then plain CPU code for `lower-to-llvm`."""
    for op in [op for op in module.ops if isinstance(op, gpu.ModuleOp)]:
        module.body.block.erase_op(op)


@dataclass(frozen=True)
class LowerGpuLaunchPass(ModulePass):
    """Host launches to launch-stub calls; kernel modules leave the host module."""

    name = "lower-gpu-launch"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(LaunchLowering(), apply_recursively=False).rewrite_module(
            op
        )
        asynchronous = _mark_callers(op)
        PatternRewriteWalker(
            StackBufferToHeap(), apply_recursively=False
        ).rewrite_module(op)
        waits = [
            _wait_before_host_accesses(block, asynchronous)
            for f in op.ops
            if isinstance(f, func.FuncOp) and f.sym_name.data in asynchronous
            for block in f.body.blocks
        ]
        if any(waits) and SymbolTable.lookup_symbol(op, WAIT) is None:
            op.body.block.add_op(func.FuncOp.external(WAIT, [], []))
        _erase_device_modules(op)
        op.attributes.pop("gpu.container_module", None)
