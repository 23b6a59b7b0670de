"""`convert-gpu-to-nvvm`: the contents of each `gpu.module` to NVVM-flavoured `llvm`.

Mirrors MLIR's `gpu.module(convert-gpu-to-nvvm)`
(`mlir/lib/Conversion/GPUToNVVM/LowerGpuOpsToNVVMOps.cpp`) on xDSL, which has
no `nvvm` dialect: NVVM operations are `llvm.call_intrinsic`s of the NVVM
intrinsics, which is what MLIR's `nvvm` ops translate to anyway.

1. The GPU ops:
   * `gpu.thread_id`/`block_id`/`block_dim`/`grid_dim` → the special registers
     `llvm.nvvm.read.ptx.sreg.{tid,ctaid,ntid,nctaid}.{x,y,z}` (`i32`,
     widened to `index`);
   * `gpu.barrier` → `llvm.nvvm.barrier0` (`bar.sync 0`, `__syncthreads`);
   * a `memref.alloca` in memory space 3 (a `shared` buffer) → an internal
     `llvm.mlir.global` in address space 3 of the module, aligned to 16
     bytes, whose address (`!llvm.ptr<3>`) the memref's loads and stores
     use as they are, as MLIR's conversions do.  (Through a generic pointer,
     LLVM infers the shared accesses only after it infers alignments, and
     then reads shared memory 32 bits at a time where `ld.shared.v4` reads
     128);
   * `gpu.func` → a public `func.func` marked `gpu.kernel` and `nvvm.kernel`
     (MLIR's markers; the PTX generator makes these `.entry` kernels) with
     `nvvm.reqntid` from `gpu.known_block_size` (both launch sizes and
     `tir.noalias` are kept, for the runtime and the PTX generator); `gpu.return` → `func.return`.
2. Everything else with hetero's own conversions, exactly as for the CPU
   (`lower_to_llvm_passes`: scf, memref with the same pointer-and-sizes ABI,
   index, arith, math, cf, func), on the module's contents.
3. Math for the NVPTX backend, which has no libm (LLVM aborts on `llvm.exp`):
   `INTRINSIC_REWRITES` turns `exp`, `log`, `log2`, `log10`, `sin`, `cos`
   on `f32` into PTX's approximate `ex2`/`lg2`/`sin`/`cos` with a scale
   (TVM's CUDA fast-math does the same), and `pow` into `ex2` and `lg2` with
   C's signs and special cases (`_pow`); `SUPPORTED` lists the intrinsics
   NVPTX lowers natively.  `erf` on f32, a C library function, is expanded
   first into `approximate-math`'s polynomial (`LIBM_EXPANSIONS`).  A `math`
   op needing any other intrinsic or a C library function is an error at the
   op (checked first, `math_problem`), never an LLVM abort later.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, llvm, memref
from xdsl.dialects.builtin import (
    IndexType,
    IntAttr,
    MemRefType,
    ModuleOp,
    UnitAttr,
    i32,
)
from xdsl.ir import Operation, SSAValue
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
from xdsl.utils.type import get_element_type_or_self

from hetero.dialects import llvm_ops
from hetero.lowering.approximate_math import APPROXIMATIONS, ApproximateF32
from hetero.lowering.conversion import constant, intrinsic
from hetero.lowering.convert_math_to_llvm import INTRINSICS, LIBM
from hetero.lowering.convert_memref_to_llvm import materialize
from hetero.lowering.convert_tir_to_gpu import NOALIAS, SHARED_MEMORY_SPACE
from hetero.lowering.pipeline import lower_to_llvm_passes
from hetero.utils.diagnostics import HeteroError
from hetero.utils.symbols import enclosing, fresh_symbol

PASS = "convert-gpu-to-nvvm"

SPECIAL_REGISTERS: dict[type[Operation], str] = {
    gpu.ThreadIdOp: "tid",
    gpu.BlockIdOp: "ctaid",
    gpu.BlockDimOp: "ntid",
    gpu.GridDimOp: "nctaid",
}
"""GPU id op → the PTX special register it reads (`%tid.x`, ...)."""

KERNEL_MARKERS = ("gpu.kernel", "nvvm.kernel")
"""Unit attributes of a lowered kernel function (MLIR's)."""

LAUNCH_SIZES = ("gpu.known_block_size", "gpu.known_grid_size")
"""The launch sizes `convert-tir-to-gpu` found, kept on the kernel for the runtime."""

REQNTID = "nvvm.reqntid"
"""The kernel's exact block size, from `gpu.known_block_size` (MLIR's name)."""


def read_register(register: str, dim: str) -> llvm.CallIntrinsicOp:
    return llvm.CallIntrinsicOp(f"llvm.nvvm.read.ptx.sreg.{register}.{dim}", [], [i32])


class IdLowering(RewritePattern):
    """`gpu.thread_id x` → `%tid.x`, as an `index`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self,
        op: gpu.ThreadIdOp | gpu.BlockIdOp | gpu.BlockDimOp | gpu.GridDimOp,
        rewriter: PatternRewriter,
        /,
    ):
        read = read_register(SPECIAL_REGISTERS[type(op)], op.dimension.data.value)
        widen = arith.IndexCastOp(read.results[0], IndexType())
        rewriter.replace(op, [read, widen])


class BarrierLowering(RewritePattern):
    """`gpu.barrier` → `llvm.nvvm.barrier0` (`bar.sync 0`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: gpu.BarrierOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, llvm.CallIntrinsicOp("llvm.nvvm.barrier0", [], []))


class SharedAllocLowering(RewritePattern):
    """A shared `memref.alloca` → an address-space-3 global of the module."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocaOp, rewriter: PatternRewriter, /):
        t = op.memref.type
        assert isinstance(t, MemRefType)
        if t.memory_space != SHARED_MEMORY_SPACE:
            return
        if not t.has_static_shape():
            raise HeteroError(
                f"{PASS}: a shared buffer of dynamic size ({t}); shared memory is "
                "a global of the module, its size must be static",
                op,
            )
        module = enclosing(op, gpu.ModuleOp)
        assert module is not None, "lowered inside gpu.modules only"
        count = math.prod(t.get_shape())
        name = fresh_symbol(module, "__shared", bare=False, separator="")
        space = SHARED_MEMORY_SPACE.value.data
        storage = llvm.GlobalOp(
            llvm.LLVMArrayType(count, t.element_type),
            name,
            "internal",
            addr_space=space,
            alignment=16,
        )
        rewriter.insert(storage, InsertPoint.at_start(module.body.block))
        address = llvm.AddressOfOp(name, llvm.LLVMPointerType(IntAttr(space)))
        rewriter.replace(op, [address, materialize(address.result, [], t)])


class KernelLowering(RewritePattern):
    """`gpu.func` → public `func.func` with MLIR's kernel markers."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: gpu.FuncOp, rewriter: PatternRewriter, /):
        new = func.FuncOp(op.sym_name.data, op.function_type, op.detach_region(op.body))
        if op.kernel is not None:
            new.attributes |= {marker: UnitAttr() for marker in KERNEL_MARKERS}
        for size in (*LAUNCH_SIZES, NOALIAS):
            if size in op.attributes:
                new.attributes[size] = op.attributes[size]
        if op.known_block_size is not None:
            new.attributes[REQNTID] = op.known_block_size
        rewriter.replace(op, new)


class ReturnLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: gpu.ReturnOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, func.ReturnOp(*op.args))


# ----------------------------------------------------------------------------
# Math on the NVPTX backend
# ----------------------------------------------------------------------------

Rewrite = Callable[[llvm.CallIntrinsicOp, PatternRewriter], None]


def _scaled(before: str | None, after: str | None, scale: float) -> Rewrite:
    """`after(before(x) * scale)`, each step optional: exp(x) = ex2(x * log2 e)."""

    def rewrite(op: llvm.CallIntrinsicOp, rewriter: PatternRewriter) -> None:
        value: SSAValue = op.args[0]
        ops: list[Operation] = []
        if before is not None:
            ops.append(first := llvm.CallIntrinsicOp(before, [value], [value.type]))
            value = first.results[0]
        if scale != 1.0:
            factor = constant(scale, value.type)
            ops += [factor, product := llvm.FMulOp(value, factor.result)]
            value = product.res
        if after is not None:
            ops.append(last := llvm.CallIntrinsicOp(after, [value], [value.type]))
            value = last.results[0]
        rewriter.replace(op, ops, [value])

    return rewrite


def _pow(op: llvm.CallIntrinsicOp, rewriter: PatternRewriter) -> None:
    """`pow(x, y)` = `ex2(y · lg2 b)`, libdevice-free as `exp` and `log` are:
    `b = |x|` for an integer `y` (`trunc(y) == y`), an odd one (`trunc(y/2)
    != y/2`) giving the result `x`'s sign; `b = x` otherwise, so that a
    negative base gives `lg2`'s NaN.  1 where `y` is 0 or `x` is 1, NaN or
    not, as C's `powf`."""
    x, y = op.args
    ops: list[Operation] = []

    def emit(new: Operation) -> SSAValue:
        ops.append(new)
        return new.results[0]

    def call(name: str, *args: SSAValue) -> SSAValue:
        return emit(llvm.CallIntrinsicOp(name, args, [x.type]))

    def compare(a: SSAValue, b: SSAValue, predicate: str) -> SSAValue:
        return emit(llvm_ops.FCmpOp(a, b, predicate, llvm.FastMathAttr(None)))

    half = emit(llvm.FMulOp(y, emit(constant(0.5, x.type))))
    integer = compare(call("llvm.trunc.f32", y), y, "oeq")
    odd = emit(llvm.AndOp(integer, compare(call("llvm.trunc.f32", half), half, "one")))
    base = emit(llvm.SelectOp(integer, call("llvm.fabs.f32", x), x))
    power = call(
        "llvm.exp2.f32", emit(llvm.FMulOp(y, call("llvm.nvvm.lg2.approx.f", base)))
    )
    signed = emit(llvm.SelectOp(odd, call("llvm.copysign.f32", power, x), power))
    one = emit(constant(1.0, x.type))
    exact = emit(
        llvm.OrOp(
            compare(y, emit(constant(0.0, x.type)), "oeq"), compare(x, one, "oeq")
        )
    )
    rewriter.replace(
        op, [*ops, result := llvm.SelectOp(exact, one, signed)], [result.res]
    )


INTRINSIC_REWRITES: dict[str, Rewrite] = {
    "llvm.pow.f32": _pow,
    "llvm.exp.f32": _scaled(None, "llvm.exp2.f32", math.log2(math.e)),
    "llvm.log.f32": _scaled("llvm.nvvm.lg2.approx.f", None, math.log(2.0)),
    "llvm.log2.f32": _scaled("llvm.nvvm.lg2.approx.f", None, 1.0),
    "llvm.log10.f32": _scaled("llvm.nvvm.lg2.approx.f", None, math.log10(2.0)),
    "llvm.sin.f32": _scaled(None, "llvm.nvvm.sin.approx.f", 1.0),
    "llvm.cos.f32": _scaled(None, "llvm.nvvm.cos.approx.f", 1.0),
}
"""f32 math intrinsics without a libm-free NVPTX lowering → PTX approximations."""

SUPPORTED: tuple[str, ...] = (
    "llvm.nvvm.",
    "llvm.exp2.f32",
    *(
        f"llvm.{name}."
        for name in [
            "fabs",
            "ceil",
            "floor",
            "round",
            "roundeven",
            "trunc",
            "sqrt",
            "fma",
            "maximum",
            "minimum",
            "maxnum",
            "minnum",
            "copysign",
            "smax",
            "smin",
            "umax",
            "umin",
            "abs",
            "ctpop",
            "ctlz",
            "cttz",
        ]
    ),
)
"""Prefixes of the intrinsics the NVPTX backend lowers without library calls."""


class MathIntrinsicLowering(RewritePattern):
    """Rewrites the math intrinsics in `INTRINSIC_REWRITES`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: llvm.CallIntrinsicOp, rewriter: PatternRewriter, /):
        if (rewrite := INTRINSIC_REWRITES.get(op.intrin.data)) is not None:
            rewrite(op, rewriter)


LIBM_EXPANSIONS = {op: f for op, f in APPROXIMATIONS.items() if op in LIBM}
"""C library functions that `approximate-math` expands on f32 into plain
arithmetic, which runs on the GPU as it does on the CPU (the same code and
error bound): `erf`, so that GELU runs there.  The other math ops keep PTX's
approximate intrinsics (`INTRINSIC_REWRITES`), faster on the GPU."""


def _supported(name: str) -> bool:
    return name in INTRINSIC_REWRITES or name.startswith(SUPPORTED)


def math_problem(op: Operation) -> str | None:
    """Why `convert-math-to-llvm`'s lowering of `op` would not run on the GPU."""
    if op.dialect_name() != "math" or not op.results:
        return None
    element = get_element_type_or_self(op.results[0].type)
    if type(op) in LIBM:
        return f"'{op.name}' is a C library function (no libdevice on the GPU)"
    # Expansions (tanh, expm1, log1p) compute with exp and log.
    needed = (
        [INTRINSICS[type(op)]] if type(op) in INTRINSICS else ["llvm.exp", "llvm.log"]
    )
    for name in (intrinsic(n, element) for n in needed):
        if not _supported(name):
            return f"'{op.name}' on {element} needs '{name}', which has no GPU lowering"
    return None


def call_problem(op: Operation) -> str | None:
    """Why a call in GPU code cannot be linked: its callee has no body here."""
    if not isinstance(op, func.CallOp | llvm.CallOp):
        return None
    callee = SymbolTable.lookup_symbol(op, op.callee)
    if callee is None or not callee.regions or not callee.regions[0].blocks:
        return f"call of the external function @{op.callee.string_value()} in GPU code"
    return None


def reject_unsupported(device: gpu.ModuleOp) -> None:
    """A located error at an op of the lowered module that would need a
    library on the GPU (e.g. `malloc` for a `memref.alloc`) or that no
    conversion handled."""
    for op in device.walk():
        if isinstance(op, llvm.CallIntrinsicOp) and not _supported(op.intrin.data):
            raise HeteroError(
                f"{PASS}: '{op.intrin.data}' has no GPU lowering (no libdevice)", op
            )
        if (why := call_problem(op)) is not None:
            raise HeteroError(f"{PASS}: {why}", op)
        if op is not device and op.dialect_name() != "llvm":
            raise HeteroError(f"{PASS}: '{op.name}' is left after lowering", op)


# ----------------------------------------------------------------------------
# The pass
# ----------------------------------------------------------------------------


def lower_device_module(device: gpu.ModuleOp, ctx: Context) -> None:
    """Lower the contents of one `gpu.module` in place to the `llvm` dialect."""
    PatternRewriteWalker(
        ApproximateF32(LIBM_EXPANSIONS), apply_recursively=False
    ).rewrite_module(device)  # type: ignore[arg-type]
    for op in device.walk():
        if (why := math_problem(op) or call_problem(op)) is not None:
            raise HeteroError(f"{PASS}: {why}", op)
    PatternRewriteWalker(
        GreedyRewritePatternApplier(
            [
                IdLowering(),
                BarrierLowering(),
                SharedAllocLowering(),
                KernelLowering(),
                ReturnLowering(),
            ]
        ),
        apply_recursively=False,
    ).rewrite_module(device)  # type: ignore[arg-type]
    # The CPU conversions work on a builtin.module: lend them the contents.
    block = device.body.block
    scratch = ModuleOp([block.detach_op(op) for op in list(block.ops)])
    for conversion in lower_to_llvm_passes():
        conversion.apply(ctx, scratch)
    PatternRewriteWalker(MathIntrinsicLowering()).rewrite_module(scratch)
    for op in list(scratch.ops):
        block.add_op(scratch.body.block.detach_op(op))
    reject_unsupported(device)  # back in place: errors are located


@dataclass(frozen=True)
class ConvertGpuToNVVMPass(ModulePass):
    """Lowers every `gpu.module` to NVVM-flavoured `llvm` (see the module docstring)."""

    name = "convert-gpu-to-nvvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for device in [o for o in op.walk() if isinstance(o, gpu.ModuleOp)]:
            lower_device_module(device, ctx)
