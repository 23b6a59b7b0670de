"""`hetero-translate`: a `.mlir` module to LLVM IR, assembly or an object file.

    hetero-translate model.mlir --emit=llvm-ir [-o model.ll]
    hetero-translate model.mlir --emit=asm [--entry main] [--targets llvm]
    hetero-translate kernels.mlir --emit=obj -o kernels.o
    hetero-translate gpu.mlir --emit=ptx -o kernels.ptx
    hetero-translate model.mlir --targets 'llvm -mtriple=aarch64-linux-gnu' --emit=obj -o model.o
    hetero-translate model.mlir --targets 'llvm -mtriple=aarch64-linux-gnu' --emit=runtime-obj -o runtime.o

A module with a relay entry function (`--entry`, default `main`) goes through
the whole `hetero.compile` pipeline (the host function and its kernels); a
module of `tir.prim_func`s (or of already lowered `func`/`llvm` functions)
through `compile_cpu` (`compile_cuda` where some are for a GPU, which runs
the TIR target passes), functions without a target given the default
device's (`--targets cuda`: `cuda` with host `llvm`).  The text or
object is what the JIT would run, for the functions' own `mtriple`, `mcpu`
and `mattr` (default: this host's; another architecture's code, such as
`aarch64-linux-gnu`'s, is written out, not run); `runtime-obj` is the
runtime that such an object calls (thread pool, heap buffers), to link it
with outside Python (docs/tools.md); for a program with GPU kernels, `llvm-ir`, `asm`
and `obj` are its host code and `ptx` its kernels (one PTX module per GPU
target, concatenated).  Errors are located diagnostics and exit status 1; the
output file is written only on success.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.traits import SymbolTable

from hetero.context import parse_module
from hetero.dialects.relay import FuncOp
from hetero.runtime.cpu import CpuModule
from hetero.runtime.cuda import GpuProgram
from hetero.utils.diagnostics import run_tool
from hetero.utils.files import write_output

Native = CpuModule | GpuProgram


class TranslateError(Exception):
    """A module that cannot be translated as asked."""


USER_ERRORS = (TranslateError, OSError, ValueError)
"""Errors of the input or the invocation (`ConfigError`, `PatternError`,
... are `ValueError`s)."""


def _host(native: Native) -> CpuModule:
    return native.host if isinstance(native, GpuProgram) else native


def _ptx(native: Native) -> str:
    if not isinstance(native, GpuProgram):
        raise TranslateError("--emit=ptx: the module has no GPU functions")
    return "\n".join(kernels.ptx for kernels in native.kernels)


EMITTERS: dict[str, Callable[[Native], str | bytes]] = {
    "llvm-ir": lambda native: _host(native).llvm_ir(),
    "asm": lambda native: _host(native).assembly(),
    "obj": lambda native: _host(native).emit_object(),
    "runtime-obj": lambda native: _host(native).runtime_object(),
    "ptx": _ptx,
}
"""`--emit` value → what is written."""


def native_module(module: ModuleOp, entry: str, targets: Sequence[str]) -> Native:
    """The module compiled the way `hetero.compile` or `compile_cpu` would."""
    if isinstance(SymbolTable.lookup_symbol(module, entry), FuncOp):
        import hetero

        compiled = hetero.compile(module, targets=targets, entry=entry)
        if not isinstance(compiled, hetero.CompiledFunction):
            raise TranslateError(
                f"@{entry} has dynamic input shapes; give them sizes first "
                "(hetero-opt -p 'specialize-shapes{shapes=...}')"
            )
        return compiled.native
    from hetero.lowering.cpu_codegen import compile_cpu
    from hetero.lowering.cuda_codegen import compile_cuda, has_gpu_functions

    _bind_missing_targets(module, targets)
    return compile_cuda(module) if has_gpu_functions(module) else compile_cpu(module)


def _bind_missing_targets(module: ModuleOp, targets: Sequence[str]) -> None:
    """`bind-target` with the default device's target (`--targets cuda`: cuda
    with host llvm) where a prim_func has none, as TVM's build does."""
    from hetero.dialects.target.config import module_config
    from hetero.dialects.tir import prim_funcs
    from hetero.transforms.bind_target import bind_target

    if all(func.target is not None for func in prim_funcs(module)):
        return
    config = module_config(module, targets, "hetero-translate")
    target = config.default_primitive_virtual_device.target
    assert target is not None
    bind_target(module, target)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="hetero-translate", description=__doc__.splitlines()[0]
    )
    parser.add_argument("file")
    parser.add_argument("--emit", choices=tuple(EMITTERS), required=True)
    parser.add_argument("-o", "--output", help="output file (default: stdout)")
    parser.add_argument("--entry", default="main")
    parser.add_argument(
        "--targets", default="llvm", help="targets of a module without target.config"
    )
    args = parser.parse_args(argv)
    if args.emit.endswith("obj") and args.output in (None, "-") and sys.stdout.isatty():
        print(
            f"hetero-translate: error: --emit={args.emit} writes binary; give -o FILE",
            file=sys.stderr,
        )
        return 1
    return run_tool(
        "hetero-translate", args.file, lambda: _translate(args), USER_ERRORS
    )


def _translate(args: argparse.Namespace) -> int:
    with open(args.file, encoding="utf-8") as f:
        module = parse_module(f.read(), args.file)
    native = native_module(module, args.entry, args.targets.split(","))
    write_output(args.output, EMITTERS[args.emit](native))
    return 0


if __name__ == "__main__":
    sys.exit(main())
