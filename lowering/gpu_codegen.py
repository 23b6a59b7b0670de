"""`compile_gpu`: the GPU kernels of a module to PTX, one `PtxModule` per `gpu.module`.

    for ptx in compile_gpu(parse_module(text)):
        print(ptx.arch, [k.name for k in ptx.kernels])
        open(f"{ptx.name}.ptx", "w").write(ptx.ptx)

Runs `convert-tir-to-gpu` (GPU `tir.prim_func`s → `gpu.module`s) and
`convert-gpu-to-nvvm`, then, per `gpu.module` (what MLIR's
`gpu-module-to-binary` does with `format=isa`): translates its `llvm` ops
with `hetero.lowering.llvmir`, makes the functions marked `nvvm.kernel` PTX
kernels (the `ptx_kernel` calling convention: `.entry`; with `tir.noalias`
their pointers are `noalias`, so loads may use the read-only cache), optimises them with
LLVM's `default<O3>` for the NVPTX target of the module's `arch` (default
`sm_90`) and emits PTX.  No GPU is needed: the result is text, which `ptxas`
assembles and `hetero.runtime.cuda` loads (a `PtxModule`, with each kernel's
parameters and launch sizes as plain data).  The host functions of the module
are left as they are (lowered to `gpu.launch_func`s).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import llvmlite.binding as llvm_binding
from llvmlite import ir
from xdsl.context import Context
from xdsl.dialects import gpu, llvm
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BoolAttr,
    DenseArrayBase,
    Float32Type,
    Float64Type,
    FunctionType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute

from hetero.dialects.target import TargetAttr
from hetero.lowering.conversion import nested_ops
from hetero.lowering.convert_gpu_to_nvvm import lower_device_module
from hetero.lowering.convert_tir_to_gpu import NOALIAS, TARGET, ConvertTirToGpuPass
from hetero.lowering.llvm_codegen import type_key
from hetero.lowering.llvmir import to_llvmlite
from hetero.lowering.parallel_compile import balance, start_forked
from hetero.runtime.cuda import DYNAMIC, KernelInfo, KernelParam, PtxModule
from hetero.utils.diagnostics import HeteroError

TRIPLE = "nvptx64-nvidia-cuda"

DEFAULT_ARCH = "sm_90"
"""The `arch` of a `cuda` target that names none (the kind's default)."""

KERNEL_CONVENTION = "ptx_kernel"
"""LLVM's calling convention of a PTX `.entry` (xDSL's `llvm.cconv` lacks it)."""


_SCALARS: dict[type[Attribute] | int, str] = {
    Float32Type: "float32",
    Float64Type: "float64",
    8: "int8",
    16: "int16",
    32: "int32",
    64: "int64",
}
"""Scalar parameter type → the dtype its value is passed as (`index` is i64)."""


def _kernel_param(t: Attribute) -> KernelParam:
    """How a kernel parameter of type `t` is passed (`hetero.runtime.cuda`)."""
    if isinstance(t, MemRefType):
        shape = tuple(DYNAMIC if d == DYNAMIC_INDEX else d for d in t.get_shape())
        return KernelParam(str(t), shape)
    return KernelParam(str(t), dtype=_SCALARS.get(type_key(t)))


@cache
def _initialize() -> None:
    llvm_binding.initialize_all_targets()
    llvm_binding.initialize_all_asmprinters()


def _machine(arch: str) -> llvm_binding.TargetMachine:
    _initialize()
    target = llvm_binding.Target.from_triple(TRIPLE)
    return target.create_target_machine(cpu=arch, opt=3)


def _sizes(op: llvm.FuncOp, key: str) -> tuple[int, int, int]:
    attr = op.attributes.get(key)
    if not isinstance(attr, DenseArrayBase):
        return (1, 1, 1)
    x, y, z = attr.get_values()
    return (int(x), int(y), int(z))


def _kernel_info(op: llvm.FuncOp) -> KernelInfo:
    signature = op.attributes.get("hetero.signature")
    if not isinstance(signature, FunctionType):  # no memref parameter
        signature = FunctionType.from_lists(op.function_type.inputs.data, [])
    return KernelInfo(
        op.sym_name.data,
        tuple(map(_kernel_param, signature.inputs.data)),
        _sizes(op, "gpu.known_grid_size"),
        _sizes(op, "gpu.known_block_size"),
    )


def emit_ptx(device: gpu.ModuleOp) -> PtxModule:
    """The PTX of a `gpu.module` lowered by `convert-gpu-to-nvvm`."""
    target = device.attributes.get(TARGET)
    arch = (
        target.option("arch") if isinstance(target, TargetAttr) else None
    ) or DEFAULT_ARCH
    ops = [op.clone() for op in device.body.block.ops]
    functions = [op for op in ops if isinstance(op, llvm.FuncOp)]
    kernels = [op for op in functions if "nvvm.kernel" in op.attributes]
    machine = _machine(arch)
    translated = to_llvmlite(
        ModuleOp(ops), triple=TRIPLE, data_layout=str(machine.target_data)
    )
    for op in kernels:
        function = translated.get_global(op.sym_name.data)
        function.calling_convention = KERNEL_CONVENTION
        if op.attributes.get(NOALIAS) == BoolAttr.from_bool(True):
            for arg in function.args:
                if isinstance(arg.type, ir.PointerType):
                    arg.add_attribute("noalias")
    try:
        parsed = llvm_binding.parse_assembly(str(translated))
        parsed.verify()
    except RuntimeError as e:
        raise HeteroError(f"LLVM rejected the GPU module: {e}", device) from e
    options = llvm_binding.create_pipeline_tuning_options(speed_level=3)
    builder = llvm_binding.create_pass_builder(machine, options)
    builder.getModulePassManager().run(parsed, builder)
    return PtxModule(
        device.sym_name.data,
        arch,
        machine.emit_assembly(parsed),
        tuple(_kernel_info(op) for op in kernels),
    )


def compile_gpu(
    module: ModuleOp, ctx: Context | None = None, jobs: int | None = None
) -> list[PtxModule]:
    """Lower the GPU kernels of `module` and emit PTX for each `gpu.module`.

    `jobs` processes share the `gpu.module`s out by size, as `compile_cpu`
    shares functions (by default as many as
    `parallel_compile.compile_jobs()` and `MIN_CHUNK_OPS` allow).  The
    `gpu.module`s are lowered in place when this process emits them, and
    left as `convert-tir-to-gpu` made them when workers do."""
    return start_compile_gpu(module, ctx, jobs)()


def start_compile_gpu(
    module: ModuleOp, ctx: Context | None = None, jobs: int | None = None
) -> Callable[[], list[PtxModule]]:
    """`compile_gpu`, returning once its workers are started: calling what
    it returns waits for their PTX, or emits it in this process (without
    workers, or to raise a worker's error again here).  Meanwhile this
    process may compile the host code, and may take the `gpu.module`s out
    of `module`; it must leave them whole."""
    ctx = ctx or Context()
    ConvertTirToGpuPass().apply(ctx, module)
    devices = {
        op.sym_name.data: op for op in module.ops if isinstance(op, gpu.ModuleOp)
    }
    chunks = balance(
        {name: float(len(nested_ops(op))) for name, op in devices.items()}, jobs
    )
    pending = None
    if len(chunks) > 1:
        pending = start_forked(
            lambda i: [_lower_and_emit(devices[name], ctx) for name in chunks[i]],
            len(chunks),
        )

    def finish() -> list[PtxModule]:
        results = pending() if pending is not None else None
        if results is not None:
            emitted = {ptx.name: ptx for chunk in results for ptx in chunk}
            return [emitted[name] for name in devices]
        # Here: no workers, or a worker's HeteroError, which this raises again.
        return [_lower_and_emit(op, ctx) for op in devices.values()]

    return finish


def _lower_and_emit(device: gpu.ModuleOp, ctx: Context) -> PtxModule:
    lower_device_module(device, ctx)
    return emit_ptx(device)
