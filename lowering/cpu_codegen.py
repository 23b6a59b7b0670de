"""`compile_cpu`: a module of CPU `tir` functions to a callable `CpuModule`.

    module = compile_cpu(parse_module(text))
    module.function("vadd")(a, b, c)

Runs `convert-tir-to-scf` and `lower-to-llvm`, defines the launchers of
parallel loops (`hetero.runtime.parallel`) and JIT-compiles the result with
the code generation options of the functions' targets: `mtriple`, `mcpu`,
`mattr` and `opt_level` of `#target.target<"llvm", {...}>` (`num_threads` is
read by `convert-tir-to-scf`).  One module is compiled for one CPU, so its
functions must agree on these options; functions without a target get the
host's.  A module for another architecture (`mtriple = "aarch64-linux-gnu"`
on an x86-64 host) compiles to a `CpuModule` whose code is written out
(`assembly()`, `emit_object()`), not called.

A module of many functions is compiled in several processes at once
(`hetero.lowering.parallel_compile`; `HETERO_COMPILE_JOBS=1` or `jobs=1`
keeps it in this one); the code computes the same results.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from hetero.dialects import tir
from hetero.lowering.approximate_math import math_isa
from hetero.lowering.compile_cache import Cache, compile_cached, open_cache
from hetero.lowering.convert_tir_to_scf import ConvertTirToScfPass
from hetero.lowering.llvm_codegen import CpuTarget
from hetero.lowering.parallel_compile import (
    TAIL_SHARE,
    compile_jobs,
    restrict,
    run_forked,
    split,
)
from hetero.lowering.parallel_launchers import define_launchers
from hetero.lowering.pipeline import lower_to_llvm
from hetero.runtime.cpu import CpuModule, ObjectCode
from hetero.runtime.parallel import PARALLEL_FOR, load_pool
from hetero.utils import progress
from hetero.utils.diagnostics import HeteroError

CODEGEN_OPTIONS = ("mtriple", "mcpu", "mattr", "opt_level")
"""Target options that become `CpuTarget` arguments (same names)."""


def codegen_options(module: ModuleOp) -> dict[str, Any]:
    """The `CpuTarget` arguments the functions' targets set; they must agree
    (the functions are the module's ops: their bodies are not searched)."""
    options: dict[str, Any] = {}
    for function in module.ops:
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
    jobs: int | None = None,
    cached: bool = False,
) -> CpuModule:
    """Lower the CPU `tir` functions of `module` and JIT-compile them;
    `timings` receives the seconds of each pass and of LLVM's stages (with
    several processes, summed over them, and `compile-workers`: their wall
    time).  `jobs` is how many processes share the work (by default, see
    `parallel_compile.split`).  `cached`: take code compiled before from the
    compile cache, and keep new code there (`hetero.lowering.compile_cache`).
    `module` is lowered in place when this process compiles it, and left as
    it was when workers do or the cache has its code."""
    timings = {} if timings is None else timings
    target = CpuTarget(**codegen_options(module))
    cache = open_cache() if cached else None
    chunks = split(module, jobs, TAIL_SHARE)
    kernels = sum(map(len, chunks)) or len(module.ops)
    progress.stage("code generation", kernels)
    if len(chunks) > 1:
        start = time.perf_counter()
        load_pool()  # before the fork: the workers then need not compile it
        objects = run_forked(
            lambda i: _compile(restrict(module, chunks[i]), target, ctx, cache),
            len(chunks),
            lambda i: progress.advance(len(chunks[i])),
            at_once=jobs or compile_jobs(),
        )
        timings["compile-workers"] = time.perf_counter() - start
        if objects is not None:
            native = CpuModule.load(target, objects)
            timings.update(native.timings)
            return native
        # A worker's HeteroError: lowering the module here raises it again.
    native = CpuModule.load(target, [_compile(module, target, ctx, cache)])
    progress.advance(kernels)
    timings.update(native.timings)
    return native


def _compile(
    module: ModuleOp, target: CpuTarget, ctx: Context | None, cache: Cache | None
) -> ObjectCode:
    """`module`'s code: from the compile `cache`, else `_lower_and_compile`."""
    if cache is None:
        return _lower_and_compile(module, target, ctx)
    code = compile_cached(
        cache, module, target, lambda m: _lower_and_compile(m, target, ctx)
    )
    if PARALLEL_FOR in code.functions:
        load_pool()  # as `define_launchers` does, which a hit skips
    return code


def _lower_and_compile(
    module: ModuleOp, target: CpuTarget, ctx: Context | None
) -> ObjectCode:
    """Lower `module` in place and compile it, with the seconds of each pass."""
    timings: dict[str, float] = {}
    start = time.perf_counter()
    ConvertTirToScfPass().apply(ctx or Context(), module)
    timings[ConvertTirToScfPass.name] = time.perf_counter() - start
    lower_to_llvm(module, ctx=ctx, timings=timings, isa=math_isa(target))
    define_launchers(module)
    code = target.compile(module)
    return replace(code, timings=timings | code.timings)
