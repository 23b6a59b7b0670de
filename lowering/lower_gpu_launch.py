"""`lower-gpu-launch`: host-side `gpu.launch_func` to calls of per-kernel launch stubs.

The host half of MLIR's `gpu-to-llvm`, for hetero's JIT: after
`convert-tir-to-scf` has made the host functions `func.func`s, each
`gpu.launch_func @k::@k` becomes

    func.call @k.launch(gx, gy, gz, bx, by, bz, operands...)

of a private declaration, so the ordinary CPU lowering gives the memref
operands the kernel ABI (pointer, then dynamic sizes) and the stub receives
exactly the kernel's parameters.  `hetero.runtime.cuda.launch_stubs` defines
the stubs (`cuLaunchKernel` through the CUDA driver, no Python in the loop).

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

from hetero.utils.diagnostics import HeteroError
from hetero.utils.symbols import enclosing
from xdsl.context import Context
from xdsl.dialects import func, gpu, memref
from xdsl.dialects.builtin import IndexType, ModuleOp, UnitAttr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolTable

LAUNCH_SUFFIX = ".launch"
"""`@k.launch` launches the kernel `@k`."""

LAUNCH_STUB = "hetero.launch_stub"
"""Marks a stub's declaration; its value is unit (the kernel is the name's stem)."""

LAUNCHES = "hetero.launches_kernels"
"""Marks a host function that launches kernels (its buffers are managed memory)."""


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
        PatternRewriteWalker(
            StackBufferToHeap(), apply_recursively=False
        ).rewrite_module(op)
        _erase_device_modules(op)
        op.attributes.pop("gpu.container_module", None)
