"""`compile_cpu`: a module of CPU `tir` functions to a callable `CpuModule`.

    module = compile_cpu(parse_module(text))
    module.function("vadd")(a, b, c)

Runs `convert-tir-to-scf` and `lower-to-llvm`, defines the launchers of
parallel loops (`hetero.runtime.parallel`) and JIT-compiles the result with
the code generation options of the functions' targets: `mcpu`, `mattr` and
`opt_level` of `#target.target<"llvm", {...}>` (`num_threads` is read by
`convert-tir-to-scf`).  One module is one LLVM module, so its functions must
agree on these options; functions without a target get the host's.
"""

from __future__ import annotations

import time
from typing import Any

from hetero.dialects import tir
from hetero.lowering.convert_tir_to_scf import ConvertTirToScfPass
from hetero.lowering.pipeline import lower_to_llvm
from hetero.runtime.cpu import CpuModule
from hetero.runtime.parallel import define_launchers
from hetero.utils.diagnostics import HeteroError
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

CODEGEN_OPTIONS = ("mcpu", "mattr", "opt_level")
"""Target options that become `CpuModule` arguments (same names)."""


def codegen_options(module: ModuleOp) -> dict[str, Any]:
    """The `CpuModule` arguments the functions' targets set; they must agree."""
    options: dict[str, Any] = {}
    for function in module.walk():
        if not isinstance(function, tir.PrimFuncOp) or function.target is None:
            continue
        for key in CODEGEN_OPTIONS:
            value = function.target.option(key)
            if value is None:
                continue
            if options.setdefault(key, value) != value:
                raise HeteroError(
                    f"compile_cpu: @{function.sym_name.data} wants {key} = {value!r}, "
                    f"another function {options[key]!r}; one module is compiled "
                    "with one set of options",
                    function,
                )
    return options


def compile_cpu(
    module: ModuleOp,
    ctx: Context | None = None,
    timings: dict[str, float] | None = None,
) -> CpuModule:
    """Lower the CPU `tir` functions of `module` (in place) and JIT-compile
    them; `timings` receives the seconds of each pass and of LLVM's stages."""
    timings = {} if timings is None else timings
    options = codegen_options(module)
    start = time.perf_counter()
    ConvertTirToScfPass().apply(ctx or Context(), module)
    timings[ConvertTirToScfPass.name] = time.perf_counter() - start
    lower_to_llvm(module, ctx=ctx, timings=timings)
    define_launchers(module)
    native = CpuModule(module, **options)
    timings.update(native.timings)
    return native
