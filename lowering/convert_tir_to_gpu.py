"""`convert-tir-to-gpu`: GPU `tir` kernels to `gpu.module`/`gpu.func`, launches to
`gpu.launch_func`.

The GPU counterpart of `convert-tir-to-scf`, and what MLIR's
`gpu-kernel-outlining` produces from a `gpu.launch`: every `tir.prim_func`
whose target is a GPU (`#target.target<"cuda", ...>`) is a kernel, and
becomes `gpu.module @k { gpu.func @k(...) kernel }` in its place; except
the host half that `split-host-device` leaves (a GPU target with a host and
no thread-bound loop: only launches), which gets its host as target, as
TVM's MakePackedAPI does (docs/design.md §7.4), and stays for `convert-tir-to-scf`.  The
target travels as the module's `hetero.target` attribute, `tir.noalias`
on the function (xDSL's
`gpu.module` has no target list), read by the PTX code generator.

Inside the kernel:

* a loop bound to a thread axis is the axis' index: `threadIdx.x` becomes
  `gpu.thread_id x`, `blockIdx.y` `gpu.block_id y`, and the body is inlined.
  The launch extent of an axis is the largest constant extent of its loops
  (`gpu.known_block_size` / `gpu.known_grid_size` on the function); a loop
  with a smaller extent runs under `scf.if id < extent`;
* `serial`, `unrolled` and `vectorized` loops run serially in each thread
  (`scf.for`; small constant `unrolled` loops are annotated for LLVM to
  unroll, as on the CPU);
* `local` buffers are `memref.alloca`s, `shared` ones `memref.alloca`s in
  memory space 3 (NVVM's shared address space, as MLIR's `convert-gpu-to-nvvm`
  types workgroup memory), both at the kernel's entry;
* `gpu.barrier` (TVM's `__syncthreads`), written directly in TIR, stays.

Host functions keep their `tir.launch`es as `gpu.launch_func @k::@k` (the
module gets `gpu.container_module`); a plain `tir.call` of a kernel is
launched with the kernel's recorded sizes.  Rejected at the op: a kernel with a
`global` buffer or more than one top-level block-bound nest (both need a
grid-wide synchronisation: split the function with `split-host-device`
first), calls inside kernels (`inline-private-functions` inlines them),
`parallel` loops, `vthread` axes, thread extents that are not constants,
and kernels returning values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import (
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolTable
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from hetero.analysis.launch_axes import BLOCK_AXES, GRID_AXES, launch_loops
from hetero.dialects import tir
from hetero.dialects.target import TargetAttr
from hetero.dialects.target.kind import DeviceType
from hetero.lowering.scf_loops import lower_serial, lower_unrolled
from hetero.utils.diagnostics import HeteroError
from hetero.utils.symbols import enclosing

PASS = "convert-tir-to-gpu"

GPU_DEVICE_TYPES = (DeviceType.cuda,)
"""Device types whose functions this pass turns into kernels."""

TARGET = "hetero.target"
"""`gpu.module` attribute: the kernel's target (its `arch` picks the PTX target)."""

NOALIAS = "tir.noalias"
"""Kept on the kernel: its buffers do not alias (PTX may use the read-only cache)."""

SHARED_MEMORY_SPACE = IntegerAttr(3, i64)
"""NVVM's shared (workgroup) address space, the memory space of `shared` buffers."""

THREAD_AXES: dict[str, tuple[type[Operation], str]] = {
    **{axis: (gpu.BlockIdOp, axis[-1]) for axis in GRID_AXES},
    **{axis: (gpu.ThreadIdOp, axis[-1]) for axis in BLOCK_AXES},
}
"""Thread axis → the `gpu` op reading it and its dimension (no `vthread`s)."""


def is_gpu(target: TargetAttr | None) -> bool:
    return target is not None and target.device_type in GPU_DEVICE_TYPES


def is_thread_bound(op: Operation) -> bool:
    """A thread-bound `tir.for` (any op may be asked)."""
    return isinstance(op, tir.ForOp) and op.is_thread_bound


def is_host_part(function: tir.PrimFuncOp) -> bool:
    """A GPU function with a host and no thread-bound loop is the host half
    that `split-host-device` left: it runs on its host (docs/design.md §7.4)."""
    target = function.target
    return (
        target is not None
        and target.host is not None
        and not any(is_thread_bound(op) for op in function.walk())
    )


def launch_extents(kernel: tir.PrimFuncOp) -> dict[str, int]:
    """Thread axis → launch extent (`launch_loops`' rule; `check_kernel` made
    every extent a positive constant)."""
    extents: dict[str, int] = {}
    for tag, loop in launch_loops(kernel).items():
        extent = const_evaluate_operand(loop.ub)
        assert extent is not None
        extents[tag] = extent
    return extents


def dims(extents: dict[str, int], axes: tuple[str, ...]) -> list[int]:
    """The (x, y, z) launch sizes of `GRID_AXES` or `BLOCK_AXES`."""
    return [extents.get(axis, 1) for axis in axes]


def thread_loop_problem(loop: tir.ForOp) -> str | None:
    """Why a thread-bound loop is no launch dimension of a kernel, or None."""
    assert loop.thread_tag is not None
    tag = loop.thread_tag.data
    if tag not in THREAD_AXES:
        return f"the thread axis '{tag}' is not supported"
    extent = const_evaluate_operand(loop.ub)
    if extent is None or extent < 1:
        return (
            f"a loop bound to '{tag}' needs a constant positive extent "
            "(it is the launch size)"
        )
    return None


def kernel_problem(op: Operation) -> str | None:
    """Why `op`, inside a kernel, cannot be compiled for the GPU, or None."""
    match op:
        case tir.ForOp() if op.is_thread_bound:
            return thread_loop_problem(op)
        case tir.AllocOp(scope=scope) if scope not in ALLOC_SCOPES:
            return (
                f"a '{scope}' buffer inside a kernel (kernels allocate 'local' and "
                "'shared' buffers only; allocate it on the host: split-host-device)"
            )
        case tir.AllocOp() if op.dynamic_sizes:
            return "a buffer of dynamic size inside a kernel"
        case tir.ForOp(kind=kind) if kind.data == tir.ForKind.PARALLEL:
            return "a 'parallel' loop inside a kernel (bind it to a thread axis)"
        case tir.CallOp() | tir.LaunchOp() | tir.CallPackedOp() | tir.CallExternOp():
            return (
                f"'{op.name}' inside a kernel (GPU code cannot call; run "
                "inline-private-functions first)"
            )
        case tir.TargetRegionOp():
            return "a target region inside a kernel"
    return None


def check_kernel(kernel: tir.PrimFuncOp) -> None:
    """Located errors for what a kernel cannot contain (see the module docstring)."""
    if kernel.function_type.outputs.data:
        raise HeteroError(
            f"{PASS}: the kernel @{kernel.sym_name.data} returns values; "
            "kernels write their results to buffers",
            kernel,
        )
    for op in kernel.walk():
        if op is not kernel and (why := kernel_problem(op)) is not None:
            raise HeteroError(f"{PASS}: {why}", op)
    grids = [
        op
        for op in kernel.body.block.ops
        if isinstance(op, tir.ForOp)
        and op.thread_tag is not None
        and op.thread_tag.data in GRID_AXES
    ]
    if len(grids) > 1:
        raise HeteroError(
            f"{PASS}: @{kernel.sym_name.data} has {len(grids)} block-bound loop nests; "
            "one kernel runs one grid (split the function with split-host-device)",
            grids[1],
        )


# ----------------------------------------------------------------------------
# Inside kernels
# ----------------------------------------------------------------------------


def lower_thread_bound(op: tir.ForOp, rewriter: PatternRewriter) -> None:
    """The loop's index is the axis' id; a loop shorter than the launch is guarded."""
    assert op.thread_tag is not None
    id_op, dim = THREAD_AXES[op.thread_tag.data]
    ident = id_op(gpu.DimensionAttr(gpu.DimensionEnum(dim)))  # type: ignore[call-arg]
    rewriter.insert(ident, InsertPoint.before(op))
    kernel = enclosing(op, gpu.FuncOp)
    assert kernel is not None
    grid = op.thread_tag.data in GRID_AXES
    known = kernel.known_grid_size if grid else kernel.known_block_size
    assert known is not None
    launched = known.get_values()["xyz".index(dim)]
    block = op.body.block
    assert block.last_op is not None
    rewriter.erase(block.last_op)
    if const_evaluate_operand(op.ub) == launched:
        rewriter.inline_block(block, InsertPoint.before(op), [ident.results[0]])
        rewriter.erase(op)
        return
    inside = arith.CmpiOp(ident.results[0], op.ub, "slt")
    guarded = scf.IfOp(inside, [], Region(Block([scf.YieldOp()])))
    rewriter.insert(inside, InsertPoint.before(op))
    then = guarded.true_region.block
    rewriter.inline_block(block, InsertPoint.at_start(then), [ident.results[0]])
    rewriter.replace(op, guarded)


LOOP_LOWERINGS: dict[str, Callable[[tir.ForOp, PatternRewriter], None]] = {
    tir.ForKind.SERIAL: lower_serial,
    tir.ForKind.UNROLLED: lower_unrolled,
    tir.ForKind.VECTORIZED: lower_serial,
    tir.ForKind.THREAD_BINDING: lower_thread_bound,
}
"""Loop kind → its lowering inside a kernel (each thread runs the serial ones)."""


class KernelForLowering(RewritePattern):
    """Lowers each `tir.for` inside a `gpu.func` by its kind."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tir.ForOp, rewriter: PatternRewriter, /):
        if _in_kernel(op):
            LOOP_LOWERINGS[op.kind.data](op, rewriter)


ALLOC_SCOPES: dict[str, Attribute] = {
    "local": NoneAttr(),
    "shared": SHARED_MEMORY_SPACE,
}
"""Storage scope of a kernel buffer → the memory space of its `memref.alloca`."""


class KernelAllocLowering(RewritePattern):
    """`local`/`shared` buffers become `memref.alloca`s at the kernel's entry."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tir.AllocOp, rewriter: PatternRewriter, /):
        if not _in_kernel(op):
            return
        t = op.buffer.type
        assert isinstance(t, MemRefType)
        alloca = memref.AllocaOp.get(
            t.element_type, shape=t.get_shape(), memory_space=ALLOC_SCOPES[op.scope]
        )
        kernel = enclosing(op, gpu.FuncOp)
        assert kernel is not None
        rewriter.insert(alloca, InsertPoint.at_start(kernel.body.block))
        rewriter.replace(op, [], alloca.results)


def _in_kernel(op: Operation) -> bool:
    return enclosing(op, gpu.FuncOp) is not None


# ----------------------------------------------------------------------------
# Functions and launches
# ----------------------------------------------------------------------------


def outline_kernel(kernel: tir.PrimFuncOp) -> gpu.ModuleOp:
    """`gpu.module @k { gpu.func @k kernel }` holding `kernel`'s body."""
    check_kernel(kernel)
    extents = launch_extents(kernel)
    name = kernel.sym_name.data
    body = kernel.detach_region(kernel.body)
    terminator = body.block.last_op
    assert isinstance(terminator, tir.ReturnOp)
    terminator.detach()
    terminator.erase()
    body.block.add_op(gpu.ReturnOp([]))
    function = gpu.FuncOp(
        name,
        kernel.function_type,
        body,
        kernel=True,
        known_block_size=dims(extents, BLOCK_AXES),
        known_grid_size=dims(extents, GRID_AXES),
    )
    if NOALIAS in kernel.attributes:
        function.attributes[NOALIAS] = kernel.attributes[NOALIAS]
    body_region = Region(Block([function]))
    module = gpu.ModuleOp(StringAttr(name), body_region)  # type: ignore[arg-type]
    assert kernel.target is not None
    module.attributes[TARGET] = kernel.target.without_host()
    return module


class LaunchLowering(RewritePattern):
    """`tir.launch @k(args) grid(...) block(...)` → `gpu.launch_func @k::@k`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tir.LaunchOp, rewriter: PatternRewriter, /):
        if op.dynamic_shared_memory is not None:
            raise HeteroError(f"{PASS}: dynamic shared memory is not supported", op)
        ones: list[arith.ConstantOp] = []

        def padded(sizes: Sequence[SSAValue]) -> list[SSAValue]:
            """`sizes` with missing dimensions 1 (one constant made if needed)."""
            if len(sizes) < 3 and not ones:
                ones.append(arith.ConstantOp(IntegerAttr.from_index_int_value(1)))
            return [*sizes, *[ones[0].result] * (3 - len(sizes))] if ones else [*sizes]

        grid, block = padded(op.grid_size), padded(op.block_size)
        name = op.kernel.string_value()
        launch = gpu.LaunchFuncOp(
            SymbolRefAttr(name, [StringAttr(name)]),
            grid,
            block,
            kernelOperands=list(op.args),
        )
        rewriter.replace(op, [*ones, launch], [])


class KernelCallLowering(RewritePattern):
    """A host's `tir.call` of a kernel → `gpu.launch_func` with the kernel's
    recorded launch sizes (what `lower-device-kernel-launch` would write)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tir.CallOp, rewriter: PatternRewriter, /):
        module = op.get_toplevel_object()
        device = SymbolTable.lookup_symbol(module, op.callee)
        if not isinstance(device, gpu.ModuleOp):
            return
        kernel = SymbolTable.lookup_symbol(device, op.callee.string_value())
        assert isinstance(kernel, gpu.FuncOp)
        assert kernel.known_grid_size and kernel.known_block_size
        sizes = [
            arith.ConstantOp(IntegerAttr.from_index_int_value(int(n)))
            for n in (
                *kernel.known_grid_size.get_values(),
                *kernel.known_block_size.get_values(),
            )
        ]
        name = op.callee.string_value()
        launch = gpu.LaunchFuncOp(
            SymbolRefAttr(name, [StringAttr(name)]),
            sizes[:3],
            sizes[3:],
            kernelOperands=list(op.args),
        )
        rewriter.replace(op, [*sizes, launch], [])


@dataclass(frozen=True)
class ConvertTirToGpuPass(ModulePass):
    """GPU prim_funcs to `gpu.module`/`gpu.func`; launches to `gpu.launch_func`."""

    name = "convert-tir-to-gpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = [
            f for f in op.ops if isinstance(f, tir.PrimFuncOp) and is_gpu(f.target)
        ]
        kernels = [f for f in functions if not is_host_part(f)]
        for host in filter(is_host_part, functions):
            host.target = host.target.host  # type: ignore[union-attr]
        if not kernels:
            return
        for kernel in kernels:
            module = outline_kernel(kernel)
            op.body.block.insert_op_before(module, kernel)
            op.body.block.erase_op(kernel)
        op.attributes["gpu.container_module"] = UnitAttr()
        PatternRewriteWalker(
            KernelForLowering(), walk_regions_first=True, apply_recursively=False
        ).rewrite_module(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [KernelAllocLowering(), LaunchLowering(), KernelCallLowering()]
            ),
            apply_recursively=False,
        ).rewrite_module(op)
