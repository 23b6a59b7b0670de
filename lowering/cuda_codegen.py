"""`compile_cuda`: a module of `tir` functions, some for a GPU, to a `GpuProgram`.

    program = compile_cuda(parse_module(text))
    program.function("main")(x, y)          # NumPy in; launches on the GPU

`compile_cpu` for modules with GPU kernels: the GPU functions are split
into kernels (the TIR target passes, `SPLIT_PASSES`), the kernels compiled to
PTX (`hetero.lowering.gpu_codegen`, in worker processes while this one
compiles the host code), and the host functions, whose calls of kernels
become launches (`lower-gpu-launch`), to a `CpuModule` that links in the
launch stubs written here, the CUDA driver shim and the stubs of the cuBLAS
and cuDNN calls (`hetero.runtime.cuda`, `hetero.runtime.cublas`,
`hetero.runtime.cudnn`).  No GPU is needed to
compile: the program touches the GPU at its first call.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.backend.llvm.convert_type import convert_type
from xdsl.context import Context
from xdsl.dialects import func as func_dialect
from xdsl.dialects import gpu
from xdsl.dialects import llvm as llvm_dialect
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr, UnitAttr
from xdsl.traits import SymbolTable

from hetero.dialects import tir
from hetero.lowering.convert_tir_to_gpu import is_gpu
from hetero.lowering.convert_tir_to_scf import ConvertTirToScfPass
from hetero.lowering.cpu_codegen import codegen_options
from hetero.lowering.gpu_codegen import start_compile_gpu
from hetero.lowering.llvm_codegen import compile_llvm
from hetero.lowering.lower_gpu_launch import (
    LAUNCH_STUB,
    LAUNCH_SUFFIX,
    LAUNCHES,
    LowerGpuLaunchPass,
)
from hetero.lowering.parallel_launchers import define_launchers
from hetero.lowering.pipeline import lower_to_llvm
from hetero.runtime import cublas, cudnn
from hetero.runtime.cuda import MANAGED_ALLOCATION, GpuProgram, shim_ir
from hetero.transforms.annotate_device_regions import AnnotateDeviceRegionsPass
from hetero.transforms.inline_private_functions import InlinePrivateFunctionsPass
from hetero.transforms.lower_device_kernel_launch import LowerDeviceKernelLaunchPass
from hetero.transforms.split_host_device import SplitHostDevicePass


def _is_library_stub(name: str) -> bool:
    """Whether `name` is a stub of a GPU library's call (cuBLAS, cuDNN)."""
    return cublas.is_stub(name) or cudnn.is_stub(name)


def _calls_library(function: tir.PrimFuncOp) -> bool:
    return any(
        isinstance(op, tir.CallExternOp) and _is_library_stub(op.callee.data)
        for op in function.walk()
    )


def has_gpu_functions(module: ModuleOp) -> bool:
    """Whether `module` has functions for a GPU target, or host functions
    calling cuBLAS or cuDNN on managed buffers (then `compile_cuda`)."""
    return any(
        isinstance(op, tir.PrimFuncOp) and (is_gpu(op.target) or _calls_library(op))
        for op in module.ops
    )


def mark_library_stubs(module: ModuleOp) -> None:
    """Mark `LAUNCHES` the declarations of the cuBLAS and cuDNN stubs: a call
    of one queues GPU work, as a launch does.  `lower-gpu-launch` then marks
    their callers, whose buffers become managed memory, and waits after them."""
    for op in module.ops:
        if isinstance(op, func_dialect.FuncOp) and _is_library_stub(op.sym_name.data):
            op.attributes[LAUNCHES] = UnitAttr()


SPLIT_PASSES = (
    InlinePrivateFunctionsPass(),
    AnnotateDeviceRegionsPass(),
    SplitHostDevicePass(),
    LowerDeviceKernelLaunchPass(),
    InlinePrivateFunctionsPass(),
)
"""The TIR target passes after `bind-target` (docs/passes/tir-target-passes.md):
each thread-bound nest of a GPU function with a host becomes a kernel of its
own, launched by what is left of the function; private helpers are inlined
where GPU code calls them, before (thread loops, and helpers whose results
the host part needs) and after the split (calls the new kernels inherit)."""


def compile_cuda(module: ModuleOp, ctx: Context | None = None) -> GpuProgram:
    """`compile_cpu` for modules with GPU kernels: the GPU functions split into
    kernels (`SPLIT_PASSES`; every function needs its target, `bind-target`),
    the kernels to PTX, the host functions (their calls of kernels become
    launches) to a `CpuModule`."""
    ctx = ctx or Context()
    options = codegen_options(module)
    for split in SPLIT_PASSES:
        split.apply(ctx, module)
    # The kernels compile in workers while this process compiles the host
    # code, without the `gpu.module`s (`lower-gpu-launch` would erase them).
    kernels = start_compile_gpu(module, ctx)
    for device in [op for op in module.ops if isinstance(op, gpu.ModuleOp)]:
        module.body.block.detach_op(device)
    ConvertTirToScfPass().apply(ctx, module)
    mark_library_stubs(module)
    LowerGpuLaunchPass().apply(ctx, module)
    lower_to_llvm(module, ctx=ctx)
    define_launchers(module)
    link = [launch_stubs(module)]
    return GpuProgram(compile_llvm(module, link=link, **options), kernels())


def _launch_stub(declaration: llvm_dialect.FuncOp) -> str:
    """The definition of `@k.launch(gx, gy, gz, bx, by, bz, params...)`: the
    parameters stored to stack slots, `cuLaunchKernel` of `@k.function`'s
    handle on the default stream; the stub returns at once, noting that work
    is queued (the host waits where it touches memory next: `WAIT`)."""
    name = declaration.sym_name.data
    kernel = name.removesuffix(LAUNCH_SUFFIX)
    types = [str(convert_type(t)) for t in declaration.function_type.inputs.data]
    sizes, params = types[:6], types[6:]
    args = ", ".join(f"{t} %a{i}" for i, t in enumerate(types))
    lines = [
        f'@"{kernel}.function" = global ptr null',
        f'define void @"{name}"({args}) {{',
        f"  %params = alloca [{len(params)} x ptr]",
    ]
    for i, t in enumerate(params):
        lines += [
            f"  %s{i} = alloca {t}",
            f"  store {t} %a{i + 6}, ptr %s{i}",
            f"  %p{i} = getelementptr [{len(params)} x ptr], ptr %params, i64 0, i64 {i}",
            f"  store ptr %s{i}, ptr %p{i}",
        ]
    lines += [f"  %n{i} = trunc {t} %a{i} to i32" for i, t in enumerate(sizes)]
    dims = ", ".join(f"i32 %n{i}" for i in range(6))
    lines += [
        f'  %function = load ptr, ptr @"{kernel}.function"',
        "  %launch = load ptr, ptr @hetero.cuda.cuLaunchKernel",
        (
            f"  %rc = call i32 %launch(ptr %function, {dims}, i32 0, ptr null, "
            "ptr %params, ptr null)"
        ),
        "  call void @hetero.cuda.check(i32 %rc)",
        "  call void @hetero.cuda.queued()",
        "  ret void",
        "}",
    ]
    return "\n".join(lines)


def launch_stubs(module: ModuleOp) -> str:
    """LLVM IR defining the launch stubs `lower-gpu-launch` declared in the
    (`llvm`-dialect) host `module`, and the driver shim; the allocations of
    launching functions are switched to managed memory here."""
    stubs = [
        op
        for op in module.ops
        if isinstance(op, llvm_dialect.FuncOp) and LAUNCH_STUB in op.attributes
    ]
    for function in module.ops:
        if (
            isinstance(function, llvm_dialect.FuncOp)
            and LAUNCHES in function.attributes
        ):
            _use_managed_memory(module, function)
    return "\n\n".join([
        shim_ir(),
        *(_launch_stub(op) for op in stubs),
        *_cublas_stubs(module),
        *cudnn.stubs_ir(_stub_names(module, cudnn.is_stub)),
    ])  # fmt: skip


def _use_managed_memory(module: ModuleOp, function: llvm_dialect.FuncOp) -> None:
    """The allocator `function` takes its heap buffers with (`aligned_alloc`
    and `free`, passed to `hetero_buffer_take`) → their managed stubs."""
    for op in function.walk():
        if not isinstance(op, llvm_dialect.AddressOfOp):
            continue
        replacement = MANAGED_ALLOCATION.get(op.global_name.string_value())
        if replacement is None:
            continue
        declaration = SymbolTable.lookup_symbol(module, op.global_name)
        assert isinstance(declaration, llvm_dialect.FuncOp)
        if SymbolTable.lookup_symbol(module, replacement) is None:
            module.body.block.add_op(
                llvm_dialect.FuncOp(
                    replacement,
                    declaration.function_type,
                    linkage=llvm_dialect.LinkageAttr("external"),
                )
            )
        op.global_name = SymbolRefAttr(replacement)


def _cublas_stub(function: str) -> str:
    """`@hetero_<function>`: scalars to stack slots, integers to pointers, the
    call through `@hetero.cublas.<function>`, status, work noted as queued."""
    scalar, signature = cublas.FUNCTIONS[function]
    kinds = signature.split()
    params, body, args = [], [], ["ptr %handle"]
    for i, kind in enumerate(kinds):
        if kind in ("alpha", "beta"):
            params.append(f"{scalar} %a{i}")
            body += [f"  %s{i} = alloca {scalar}", f"  store {scalar} %a{i}, ptr %s{i}"]
            args.append(f"ptr %s{i}")
        elif kind == "ptr":
            params.append(f"i64 %a{i}")
            body.append(f"  %s{i} = inttoptr i64 %a{i} to ptr")
            args.append(f"ptr %s{i}")
        else:
            params.append(f"{kind} %a{i}")
            args.append(f"{kind} %a{i}")
    return "\n".join([
        f'@"hetero.cublas.{function}" = global ptr null',
        f'define void @{cublas.stub_name(function)}({", ".join(params)}) {{',
        *body,
        f"  %handle = load ptr, ptr @{cublas.HANDLE}",
        f'  %function = load ptr, ptr @"hetero.cublas.{function}"',
        f"  %rc = call i32 %function({', '.join(args)})",
        "  call void @hetero.cublas.check(i32 %rc)",
        "  call void @hetero.cuda.queued()",
        "  ret void",
        "}",
    ])  # fmt: skip


def _stub_names(module: ModuleOp, is_stub: Callable[[str], bool]) -> list[str]:
    """The stubs of one library the (`llvm`-dialect) host `module` declares."""
    return [
        op.sym_name.data
        for op in module.ops
        if isinstance(op, llvm_dialect.FuncOp) and is_stub(op.sym_name.data)
    ]


def _cublas_stubs(module: ModuleOp) -> list[str]:
    """LLVM IR defining the cuBLAS stubs `module` calls (none: nothing)."""
    functions = [
        name.removeprefix(cublas.STUB_PREFIX)
        for name in _stub_names(module, cublas.is_stub)
    ]
    unknown = sorted(set(functions) - set(cublas.FUNCTIONS))
    if unknown:
        raise ValueError(f"no cuBLAS stub for {', '.join(unknown)}")
    return [cublas.state_ir(), *map(_cublas_stub, functions)] if functions else []
