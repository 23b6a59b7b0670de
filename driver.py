"""`hetero.compile`: a relay program to a native function callable on NumPy arrays.

    f = hetero.compile(text)          # or a parsed ModuleOp
    y = f(x, w)                       # NumPy in, NumPy out

Runs `inline` (calls of `Inline` functions as their bodies), the graph
simplifications (`simplify-inference`, `fold-constant`,
`fold-scale-axis`), `plan-devices`, the BYOC passes and `external-codegen` when the
configuration has external kinds whose codegen can run here
(docs/external-codegens.md: `targets=("llvm", "blas")` gives dense/matmul
to OpenBLAS), `fuse-ops`, `lower-te`, `lower-aot-main`,
`inplace-concatenate` and `plan-memory`, then
JIT-compiles the `tir.prim_func`s (kernels and the host function
`@<entry>_host`) with `compile_cpu`, or, when some are for a GPU, with
`hetero.runtime.cuda.compile_cuda` (kernels to PTX, launched by the host
function; docs/gpu.md).  The returned `CompiledFunction` checks
the inputs against the relay signature, allocates the output, passes the
constants (decoded once, here; for a GPU program uploaded to managed memory
at the first call and kept there) and calls the host function.

The compiler modules are imported when `compile` runs, not when this module
is, so that `import hetero` (which exports `compile`) stays cheap for tools.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    ModuleOp,
    SymbolRefAttr,
    TensorType,
    TupleType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from hetero.utils.diagnostics import HeteroError

if TYPE_CHECKING:
    from hetero.dialects.tir import PrimFuncOp
    from hetero.runtime.cpu import CpuModule
    from hetero.runtime.profiler import HostPlan, Profile
    from hetero.runtime.cuda import ResidentArray


class CompiledFunctionError(ValueError):
    """Inputs that do not match the compiled function's signature."""


@dataclass(frozen=True)
class Signature:
    """Shape and dtype of one input or of the output."""

    label: str
    shape: tuple[int, ...]
    dtype: np.dtype[Any]

    def check(self, value: object) -> np.ndarray:
        """`value` as a C-contiguous array, or a clear error."""
        if not isinstance(value, np.ndarray):
            raise CompiledFunctionError(
                f"{self.label} must be a NumPy array, got {type(value).__name__}"
            )
        if value.shape != self.shape or value.dtype != self.dtype:
            raise CompiledFunctionError(
                f"{self.label} must have shape {self.shape} and dtype {self.dtype}, "
                f"got shape {value.shape} and dtype {value.dtype}"
            )
        return np.require(value, requirements="C")  # keeps rank 0 (`_decode_constants`)


@dataclass
class CompiledFunction:
    """The native entry function: `f(*inputs) -> output` in NumPy; a tuple
    result is returned as a (nested) tuple of arrays."""

    native: CpuModule
    symbol: str
    inputs: tuple[Signature, ...]
    outputs: tuple[Signature, ...]
    """The result's tensors, a tuple result flattened in order."""
    structure: Structure
    """Where each output goes: its index, or a tuple of structures."""
    constants: tuple[np.ndarray | ResidentArray, ...]
    """Decoded once; for a `GpuProgram`, uploaded to managed memory once."""
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds spent in each compilation stage."""
    memory: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per device, the intermediates' planned bytes and the bytes they would
    take without reuse (`plan-memory`)."""
    plan: HostPlan | HeteroError | None = None
    """The host function's steps, for `profile` (or why it cannot be replayed)."""
    num_threads: int | None = None
    """The threads of its parallel loops at each call that sets none; None:
    the targets' `num_threads`, else `HETERO_NUM_THREADS`, else the CPUs
    this process may use (docs/lowering.md)."""

    def __call__(self, *inputs: object, num_threads: int | None = None) -> Any:
        """`num_threads`: this call's parallel loops' threads (see the field)."""
        arrays, outs = self._arguments(inputs)
        with _threads(num_threads, self.num_threads):
            self.native.function(self.symbol)(*arrays, *self.constants, *outs)
        return _regroup(self.structure, outs)

    def profile(self, *inputs: object, num_threads: int | None = None) -> Profile:
        """The call run kernel by kernel from Python (`runtime/profiler.py`,
        a debug executor): its result and each kernel call's time, in order."""
        from hetero.runtime.profiler import Profile

        if self.plan is None or isinstance(self.plan, HeteroError):
            raise self.plan or CompiledFunctionError("no host plan to profile")
        arrays, outs = self._arguments(inputs)
        with _threads(num_threads, self.num_threads):
            calls = self.plan.run(self.native, [*arrays, *self.constants, *outs])
        return Profile(_regroup(self.structure, outs), calls)

    def _arguments(self, inputs: Sequence[object]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """The checked inputs and fresh output arrays of a call."""
        if len(inputs) != len(self.inputs):
            raise CompiledFunctionError(
                f"{self.symbol} takes {len(self.inputs)} input(s), {len(inputs)} given"
            )
        arrays = [s.check(v) for s, v in zip(self.inputs, inputs)]
        return arrays, [np.empty(o.shape, o.dtype) for o in self.outputs]


def _threads(call: int | None, function: int | None) -> AbstractContextManager[None]:
    """`using_threads` of a call's thread count, else of its function's;
    nothing to set where neither sets one."""
    count = function if call is None else call
    if count is None:
        return nullcontext()
    from hetero.runtime.parallel import using_threads

    return using_threads(count)


Structure = int | tuple["Structure", ...]


def _structure(type: Attribute, counter: list[int]) -> Structure:
    """The nesting of a result type, leaves numbered in order."""
    if isinstance(type, TupleType):
        return tuple(_structure(t, counter) for t in type.types.data)
    counter[0] += 1
    return counter[0] - 1


def _regroup(structure: Structure, outs: list[np.ndarray]) -> Any:
    if isinstance(structure, int):
        return outs[structure]
    return tuple(_regroup(s, outs) for s in structure)


def _signature(type: object, label: str) -> Signature:
    from hetero.interpreter.relay import element_dtype

    assert isinstance(type, TensorType)  # lower-aot-main accepted it
    return Signature(label, tuple(type.get_shape()), element_dtype(type.element_type))


def _decode_constants(values: ArrayAttr) -> tuple[np.ndarray, ...]:
    """The host function's constant parameters, decoded as the interpreter does."""
    from hetero.dialects.relay import ConstantOp
    from hetero.interpreter.relay import constant_value

    # np.require, not np.ascontiguousarray: that one turns rank 0 into shape (1,)
    return tuple(np.require(constant_value(ConstantOp(v)), requirements="C") for v in values)


def lower_to_tir(
    module: ModuleOp, entry: str = "main", timings: dict[str, float] | None = None
) -> None:
    """`hetero.compile`'s relay pipeline, in place: `module` (with a
    `target.config`) ends with the kernels and the host function
    `@<entry>_host` as `tir.prim_func`s, before any code generation (for
    tools and benchmarks that look at the kernels).  `timings` receives the
    seconds of each pass."""
    timings = {} if timings is None else timings
    from hetero.transforms.alter_data_layout import AlterDataLayoutPass
    from hetero.transforms.alter_op_layout import AlterOpLayoutPass
    from hetero.transforms.fuse_ops import FuseOpsPass
    from hetero.transforms.inline import InlinePass
    from hetero.transforms.inplace_concatenate import InplaceConcatenatePass
    from hetero.transforms.lower_aot_main import LowerAotMainPass
    from hetero.transforms.lower_te import LowerTEPass
    from hetero.transforms.matmul_to_dense import MatmulToDensePass
    from hetero.transforms.merge_kernels import MergeKernelsPass
    from hetero.transforms.plan_devices import PlanDevicesPass
    from hetero.transforms.fold_constant import FoldConstantPass
    from hetero.transforms.fold_scale_axis import FoldScaleAxisPass
    from hetero.transforms.plan_memory import PlanMemoryPass
    from hetero.transforms.simplify_inference import SimplifyInferencePass
    from xdsl.context import Context

    for stage in (
        InlinePass(),
        SimplifyInferencePass(),
        FoldConstantPass(),
        MatmulToDensePass(),
        FoldScaleAxisPass(),
        FoldConstantPass(),
        PlanDevicesPass(),
        *_partition_stages(module),
        AlterDataLayoutPass(),
        AlterOpLayoutPass(),
        FuseOpsPass(),
        LowerTEPass(),
        LowerAotMainPass(entry),
        InplaceConcatenatePass(),
        PlanMemoryPass(),
        MergeKernelsPass(),
    ):
        start = time.perf_counter()
        stage.apply(Context(), module)
        timings[stage.name] = timings.get(stage.name, 0.0) + time.perf_counter() - start


def _partition_stages(module: ModuleOp) -> list[ModulePass]:
    """The BYOC passes (docs/external-codegens.md) for the configured external
    kinds whose codegen can run here; a kind that cannot (its library is
    missing) is not offered, with a warning saying what to install."""
    from hetero.targets.codegen import unavailable_reason
    from hetero.targets.config import module_config
    from hetero.transforms.annotate_target import AnnotateTargetPass
    from hetero.transforms.external_codegen import ExternalCodegenPass
    from hetero.transforms.mark_compiler_functions_as_extern import (
        MarkCompilerFunctionsAsExternPass,
    )
    from hetero.transforms.merge_compiler_regions import MergeCompilerRegionsPass
    from hetero.transforms.merge_composite import MergeCompositePass
    from hetero.transforms.outline_compiler_functions import (
        OutlineCompilerFunctionsPass,
    )
    from hetero.transforms.partition_graph import PartitionGraphPass

    config = module_config(module, None, "hetero.compile")
    offered: list[str] = []
    for target in config.primitive_targets:
        if not target.is_external_codegen():
            continue
        kind = target.kind_name.data
        if (why := unavailable_reason(kind)) is None:
            offered.append(kind)
        else:
            warnings.warn(f"hetero.compile: '{kind}' is not offered: {why}", stacklevel=4)
    if not offered:
        return []
    return [
        MergeCompositePass(tuple(offered)),
        AnnotateTargetPass(tuple(offered)),
        MergeCompilerRegionsPass(),
        PartitionGraphPass(),
        OutlineCompilerFunctionsPass(),
        ExternalCodegenPass(),
        MarkCompilerFunctionsAsExternPass(),
    ]


def _called_from(host: PrimFuncOp, functions: Sequence[PrimFuncOp]) -> list[PrimFuncOp]:
    """The `functions` that `host` calls, launches or calls as externs,
    directly or through one another, and `host`: the passes leave kernels
    that nothing calls (a concatenation written in place,
    `inplace-concatenate`: SqueezeNet's four, 7 % of its code generation),
    and compiling them is time for nothing."""
    by_name = {f.sym_name.data: f for f in functions}
    reached = {host.sym_name.data}
    pending = [host]
    while pending:
        for op in pending.pop().walk():
            for name in _callees(op):
                if name in by_name and name not in reached:
                    reached.add(name)
                    pending.append(by_name[name])
    return [f for f in functions if f.sym_name.data in reached]


def _callees(op: Operation) -> Iterator[str]:
    """The names of the functions `op` refers to: symbols (a call's callee,
    a launch's kernel) and an extern call's callee."""
    from hetero.dialects import tir

    for value in op.properties.values():
        if isinstance(value, SymbolRefAttr):
            yield value.string_value()
    if isinstance(op, tir.CallExternOp):
        yield op.callee.data


def _code_of(host: Operation) -> Operation:
    """A copy of the host function for code generation, without the list of
    its constants (passed to it at run time): their blobs' handles are unique
    in a process, and would make the compile cache's key of a recompiled
    network differ from the first's."""
    from hetero.transforms.lower_aot_main import CONSTANTS

    code = host.clone()
    del code.attributes[CONSTANTS]
    return code


def _input_label(index: int, arg: SSAValue) -> str:
    return f"input #{index}" + (f" (%{arg.name_hint})" if arg.name_hint else "")


@dataclass
class ShapeSpecializedFunction:
    """`f(*inputs)` for an entry function with dynamic (`?`) input dimensions:
    each new combination of input shapes is specialized (`specialize-shapes`)
    and compiled once; later calls with the same shapes reuse it."""

    module: ModuleOp
    targets: Sequence[str]
    entry: str
    ranks: tuple[tuple[str, TensorType[Attribute]], ...]
    """Per input: its label and declared type."""
    compiled: dict[tuple[tuple[int, ...], ...], CompiledFunction] = field(default_factory=dict)
    """The specializations so far, by input shapes."""
    num_threads: int | None = None
    """`CompiledFunction.num_threads`, for every specialization."""

    def __call__(self, *inputs: object, num_threads: int | None = None) -> Any:
        count = self.num_threads if num_threads is None else num_threads
        return self.specialized(inputs)(*inputs, num_threads=count)

    def profile(self, *inputs: object, num_threads: int | None = None) -> Profile:
        """`CompiledFunction.profile` of the specialization for these inputs."""
        count = self.num_threads if num_threads is None else num_threads
        return self.specialized(inputs).profile(*inputs, num_threads=count)

    def specialized(self, inputs: Sequence[object]) -> CompiledFunction:
        """The function compiled for the shapes of `inputs` (at the first call with them)."""
        if len(inputs) != len(self.ranks):
            raise CompiledFunctionError(
                f"@{self.entry} takes {len(self.ranks)} input(s), {len(inputs)} given"
            )
        shapes = tuple(_dynamic_shape(label, t, v) for (label, t), v in zip(self.ranks, inputs))
        if shapes not in self.compiled:
            from hetero.transforms.specialize_shapes import specialize

            module = self.module.clone()
            main = SymbolTable.lookup_symbol(module, self.entry)
            specialize(main, shapes)  # type: ignore[arg-type]
            compiled = compile(module, self.targets, self.entry)
            assert isinstance(compiled, CompiledFunction)
            self.compiled[shapes] = compiled
        return self.compiled[shapes]


def _dynamic_shape(label: str, type: TensorType[Attribute], value: object) -> tuple[int, ...]:
    """The shape of `value`, checked against `type`'s rank and static sizes."""
    from hetero.interpreter.relay import element_dtype

    dims = type.get_shape()
    if (
        not isinstance(value, np.ndarray)
        or value.ndim != len(dims)
        or value.dtype != element_dtype(type.element_type)
        or any(d >= 0 and d != n for d, n in zip(dims, value.shape))
    ):
        got = (
            f"shape {value.shape} and dtype {value.dtype}"
            if isinstance(value, np.ndarray)
            else type(value).__name__
        )
        raise CompiledFunctionError(f"{label} must be a {type} array, got {got}")
    return value.shape


def _target_strings(targets: str | Sequence[str] | None) -> tuple[str, ...]:
    """`compile`'s `targets` as target strings: one string is one target
    (`"llvm -num_threads=2"`), None the default (`llvm`)."""
    if targets is None:
        return ("llvm",)
    if isinstance(targets, str):
        return (targets,)
    if (
        isinstance(targets, Sequence)
        and targets
        and all(isinstance(t, str) for t in targets)
    ):
        return tuple(targets)
    raise TypeError(
        "hetero.compile: targets must be a target string (\"llvm\", "
        "\"cuda -arch=sm_80\") or a non-empty list of them, not "
        + repr(targets)
    )


def compile(
    module_or_text: ModuleOp | str,
    targets: str | Sequence[str] | None = ("llvm",),
    entry: str = "main",
) -> CompiledFunction | ShapeSpecializedFunction:
    """Compile relay `@entry` to native code; `targets` (one target string,
    a list of them, or None for `llvm`) only fills a missing `target.config`
    (the module's own is never overridden).  A given module is not changed: a
    clone is compiled.  An entry function with dynamic input dimensions gives
    a `ShapeSpecializedFunction`, compiled per input shapes at the first call
    with them."""
    from hetero.context import parse_module
    from hetero.dialects.relay import FuncOp
    from hetero.targets.config import module_config
    from hetero.utils.dense_resources import BlobScope

    targets = _target_strings(targets)

    timings: dict[str, float] = {}
    start = time.perf_counter()
    # The weights folded and packed (and parsed) here live on as the compiled
    # function's arrays: the process-wide blob table lets them go.
    with BlobScope() as blobs:
        if isinstance(module_or_text, str):
            module = parse_module(module_or_text)
        else:
            module = module_or_text.clone()
        module_config(module, targets, "hetero.compile")
        timings["parse"] = time.perf_counter() - start
        main = SymbolTable.lookup_symbol(module, entry)
        if isinstance(main, FuncOp) and any(
            isinstance(a.type, TensorType) and not a.type.has_static_shape()
            for a in main.args
        ):
            blobs.keep()  # the module is compiled again for each input shape
            labels = (_input_label(i, a) for i, a in enumerate(main.args))
            return ShapeSpecializedFunction(
                module,
                targets,
                entry,
                tuple(zip(labels, (a.type for a in main.args))),
            )
        return _compile_static(module, entry, timings)


def _compile_static(
    module: ModuleOp, entry: str, timings: dict[str, float]
) -> CompiledFunction:
    """`compile` of a module whose entry function has static input shapes."""
    from hetero.dialects import tir
    from hetero.dialects.relay import FuncOp
    from hetero.lowering.cpu_codegen import compile_cpu
    from hetero.runtime.cuda import (
        GpuProgram,
        ResidentArray,
        compile_cuda,
        has_gpu_functions,
    )
    from hetero.transforms.external_codegen import external_modules
    from hetero.runtime.profiler import HostPlan
    from hetero.transforms.lower_aot_main import CONSTANTS, output_types
    from hetero.transforms.plan_memory import memory_report
    from hetero.utils.background import settle
    from hetero.utils.gc_pause import gc_paused
    from hetero.utils.huge_pages import small_pages

    with gc_paused(), small_pages():  # the weights are folded and packed here
        lower_to_tir(module, entry, timings)
        start = time.perf_counter()
        settle()  # the weights made in the background (before forking workers)
        timings["weights"] = time.perf_counter() - start
    main = SymbolTable.lookup_symbol(module, entry)
    host = SymbolTable.lookup_symbol(module, f"{entry}_host")
    assert isinstance(main, FuncOp) and isinstance(host, tir.PrimFuncOp)
    constants = host.attributes[CONSTANTS]
    assert isinstance(constants, ArrayAttr)
    start = time.perf_counter()
    # The external codegens' functions first: convert-tir-to-scf lowers them
    # before the host function's `tir.call_extern`s of them, which then call
    # the lowered definitions.
    sources = [*(m.ops for m in external_modules(module).values()), module.ops]
    prim_funcs = _called_from(
        host, [op for ops in sources for op in ops if isinstance(op, tir.PrimFuncOp)]
    )
    # Moved, not cloned (code generation may lower them in place), except
    # the host function, which the host plan reads afterwards.
    for op in prim_funcs:
        if op is not host:
            op.detach()
    kernels = ModuleOp([_code_of(host) if op is host else op for op in prim_funcs])
    with gc_paused():
        native = (
            compile_cuda(kernels)
            if has_gpu_functions(kernels)
            else compile_cpu(kernels, timings=timings, cached=True)
        )
    timings["compile_cpu"] = time.perf_counter() - start
    decoded = _decode_constants(constants)
    try:
        plan: HostPlan | HeteroError = HostPlan.of(host)
    except HeteroError as error:
        plan = error
    return CompiledFunction(
        native,
        host.sym_name.data,
        tuple(_signature(a.type, _input_label(i, a)) for i, a in enumerate(main.args)),
        tuple(
            _signature(t, f"output #{i}")
            for i, t in enumerate(output_types(main.result_type, main))
        ),
        _structure(main.result_type, [0]),
        tuple(map(ResidentArray, decoded)) if isinstance(native, GpuProgram) else decoded,
        timings,
        memory_report(host),
        plan,
    )
