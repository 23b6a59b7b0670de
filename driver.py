"""`hetero.compile`: a relay program to a native function callable on NumPy arrays.

    f = hetero.compile(text)          # or a parsed ModuleOp
    y = f(x, w)                       # NumPy in, NumPy out

Runs `inline` (calls of `Inline` functions as their bodies), the graph
simplifications (`simplify-inference`, `trim-conv-taps`, `fold-constant`,
`fold-scale-axis`), `plan-devices`, the BYOC passes and `external-codegen` when the
configuration has external kinds whose codegen can run here
(docs/external-codegens.md: `targets=("llvm", "blas")` gives dense/matmul
to OpenBLAS), `fuse-ops`, `lower-te`, `lower-aot-main`,
`inplace-concatenate` and `plan-memory`, then
JIT-compiles the `tir.prim_func`s (kernels and the host function
`@<entry>_host`) with `compile_cpu`, or, when some are for a GPU, with
`hetero.lowering.cuda_codegen.compile_cuda` (kernels to PTX, launched by the host
function; docs/gpu.md).  The returned `CompiledFunction` checks
the inputs against the relay signature, allocates the output, passes the
constants (decoded once, here; for a GPU program uploaded to managed memory
at the first call and kept there) and calls the host function.

The compiler modules are imported when `compile` runs, not when this module
is, so that `import hetero` (which exports `compile`) stays cheap for tools.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    ModuleOp,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from hetero.runtime.compiled import (
    CompiledFunction,
    CompiledFunctionError,
    Signature,
    by_position,
)
from hetero.runtime.dynamic import DynamicCalls, SizeRules
from hetero.utils import progress
from hetero.utils.diagnostics import HeteroError, warn
from hetero.utils.gc_pause import gc_paused

if TYPE_CHECKING:
    from hetero.dialects.tir import PrimFuncOp
    from hetero.runtime.cpu import CpuModule
    from hetero.runtime.cuda import GpuProgram
    from hetero.runtime.profiler import HostPlan, Profile


def _signature(type: object, label: str, name: str | None = None) -> Signature:
    from hetero.interpreter.relay import element_dtype

    assert isinstance(type, TensorType)  # lower-aot-main accepted it
    shape = tuple(-1 if d < 0 else d for d in type.get_shape())
    return Signature(label, shape, element_dtype(type.element_type), name)


def _decode_constants(values: ArrayAttr) -> tuple[np.ndarray, ...]:
    """The host function's constant parameters, decoded as the interpreter does."""
    from hetero.dialects.relay import ConstantOp
    from hetero.interpreter.relay import constant_value

    # np.require, not np.ascontiguousarray: that one turns rank 0 into shape (1,)
    return tuple(
        np.require(constant_value(ConstantOp(v)), requirements="C") for v in values
    )


def lower_to_tir(
    module: ModuleOp, entry: str = "main", timings: dict[str, float] | None = None
) -> None:
    """`hetero.compile`'s relay pipeline, in place: `module` (with a
    `target.config`) ends with the kernels and the host function
    `@<entry>_host` as `tir.prim_func`s, before any code generation (for
    tools and benchmarks that look at the kernels).  `timings` receives the
    seconds of each pass."""
    timings = {} if timings is None else timings
    from xdsl.context import Context

    from hetero.lowering.merge_kernels import MergeKernelsPass
    from hetero.transforms.alter_data_layout import AlterDataLayoutPass
    from hetero.transforms.alter_op_layout import AlterOpLayoutPass
    from hetero.transforms.fold_constant import FoldConstantPass
    from hetero.transforms.fold_scale_axis import FoldScaleAxisPass
    from hetero.transforms.fuse_ops import FuseOpsPass
    from hetero.transforms.inline import InlinePass
    from hetero.transforms.inplace_concatenate import InplaceConcatenatePass
    from hetero.transforms.lower_aot_main import LowerAotMainPass
    from hetero.transforms.lower_te import LowerTEPass
    from hetero.transforms.matmul_to_dense import MatmulToDensePass
    from hetero.transforms.plan_devices import PlanDevicesPass
    from hetero.transforms.plan_memory import PlanMemoryPass
    from hetero.transforms.simplify_activations import SimplifyActivationsPass
    from hetero.transforms.simplify_inference import SimplifyInferencePass
    from hetero.transforms.trim_conv_taps import TrimConvTapsPass

    for stage in (
        InlinePass(),
        SimplifyInferencePass(),
        TrimConvTapsPass(),
        FoldConstantPass(),
        MatmulToDensePass(),
        FoldScaleAxisPass(),
        FoldConstantPass(),
        SimplifyActivationsPass(),
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
        progress.stage(f"relay passes: {stage.name}")
        start = time.perf_counter()
        stage.apply(Context(), module)
        timings[stage.name] = timings.get(stage.name, 0.0) + time.perf_counter() - start


COLLAGE_ATTR = "hetero.collage"
"""Module attribute set by `compile(..., collage=True)`: `collage-partition`
places the external kinds."""


def _partition_stages(module: ModuleOp) -> list[ModulePass]:
    """The BYOC passes (docs/external-codegens.md) for the configured external
    kinds whose codegen can run here; a kind that cannot (its library is
    missing) is not offered, with a warning saying what to install."""
    from hetero.dialects.target.config import module_config
    from hetero.targets.codegen import unavailable_reason
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

    collage = module.attributes.pop(COLLAGE_ATTR, None) is not None
    config = module_config(module, None, "hetero.compile")
    offered: list[str] = []
    for target in config.primitive_targets:
        if not target.is_external_codegen():
            continue
        kind = target.kind_name.data
        if (why := unavailable_reason(kind)) is None:
            offered.append(kind)
        else:
            warn(f"hetero.compile: '{kind}' is not offered: {why}", stacklevel=4)
    if not offered:
        return []
    from hetero.transforms.collage_partition import (
        PLACED_ATTR,
        CollagePartitionPass,
    )

    if collage:
        partition: list[ModulePass] = [
            CollagePartitionPass(tuple(offered), print_plan=True)
        ]
    elif module.attributes.pop(PLACED_ATTR, None) is not None:
        # placed by collage-partition (the programs it measures whole)
        partition = [MergeCompilerRegionsPass(), PartitionGraphPass()]
    else:
        partition = [
            MergeCompositePass(tuple(offered)),
            AnnotateTargetPass(tuple(offered)),
            MergeCompilerRegionsPass(),
            PartitionGraphPass(),
        ]
    return [
        *partition,
        OutlineCompilerFunctionsPass(),
        ExternalCodegenPass(),
        MarkCompilerFunctionsAsExternPass(),
    ]


def _called_from(host: PrimFuncOp, functions: Sequence[PrimFuncOp]) -> list[PrimFuncOp]:
    """The `functions` that `host` calls, launches or calls as externs,
    directly or through one another, and `host`: the passes leave kernels
    that nothing calls (a concatenation written in place,
    `inplace-concatenate`; docs/performance.md),
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
    names: tuple[str | None, ...]
    """Per input: its name (`Signature.name`)."""
    compiled: dict[tuple[tuple[int, ...], ...], CompiledFunction] = field(
        default_factory=dict
    )
    """The specializations so far, by input shapes."""
    num_threads: int | None = None
    """`CompiledFunction.num_threads`, for every specialization."""

    def __call__(
        self,
        *inputs: object,
        out: np.ndarray | Sequence[np.ndarray] | None = None,
        num_threads: int | None = None,
        **named: object,
    ) -> Any:
        """`CompiledFunction.__call__` of the specialization for these inputs."""
        count = self.num_threads if num_threads is None else num_threads
        arrays = self._positional(inputs, named)
        return self.specialized(arrays)(*arrays, out=out, num_threads=count)

    def profile(
        self, *inputs: object, num_threads: int | None = None, **named: object
    ) -> Profile:
        """`CompiledFunction.profile` of the specialization for these inputs."""
        count = self.num_threads if num_threads is None else num_threads
        arrays = self._positional(inputs, named)
        return self.specialized(arrays).profile(*arrays, num_threads=count)

    def _positional(
        self, inputs: Sequence[object], named: Mapping[str, object]
    ) -> list[object]:
        params = [(label, name) for (label, _), name in zip(self.ranks, self.names)]
        return by_position(f"@{self.entry}", params, inputs, named)

    def specialized(self, inputs: Sequence[object]) -> CompiledFunction:
        """The function compiled for the shapes of `inputs` (at the first call with them)."""
        inputs = self._positional(inputs, {})
        shapes = tuple(
            _dynamic_shape(label, t, v) for (label, t), v in zip(self.ranks, inputs)
        )
        if shapes not in self.compiled:
            from hetero.transforms.specialize_shapes import specialize
            from hetero.utils.max_sizes import oversized

            entry = SymbolTable.lookup_symbol(self.module, self.entry)
            if (why := oversized(entry.max_sizes, shapes)) is not None:  # type: ignore[union-attr]
                raise CompiledFunctionError(f"@{self.entry}: {why}")
            module = self.module.clone()
            main = SymbolTable.lookup_symbol(module, self.entry)
            specialize(main, shapes)  # type: ignore[arg-type]
            compiled = compile(module, self.targets, self.entry)
            assert isinstance(compiled, CompiledFunction)
            self.compiled[shapes] = compiled
        return self.compiled[shapes]


def _dynamic_shape(
    label: str, type: TensorType[Attribute], value: object
) -> tuple[int, ...]:
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
        'hetero.compile: targets must be a target string ("llvm", '
        '"cuda -arch=sm_80") or a non-empty list of them, not ' + repr(targets)
    )


@dataclass
class DynamicFunction(DynamicCalls):
    """`f(*inputs)` for an entry function with dynamic (`?`) input
    dimensions compiled once (`compile(..., dynamic="once")`): at each call
    the guards the code was compiled under are checked and the outputs
    sized from the shape functions (`hetero.analysis.shape_functions`),
    then the one native function runs (docs/dynamic-shapes.md).  `save`
    writes it, with those rules, to a `.hetero` file (docs/deployment.md)."""

    compiled: CompiledFunction
    """The native function; `?` sizes are -1 in its signatures."""
    symbols: tuple[tuple[int, int], ...]
    """The dynamic dimensions, (input, axis): the symbols of the shapes."""
    outputs: tuple[tuple[Any, ...], ...]
    """Each output's shape: ints and `Dim`s over the symbols."""
    guards: tuple[Any, ...]
    """The `Guard`s every call's sizes must pass."""
    max_sizes: Mapping[tuple[int, int], int]
    """The entry's `max_sizes`: larger inputs are refused."""
    num_threads: int | None = None

    @cached_property
    def rules(self) -> SizeRules:  # type: ignore[override]
        """What a call evaluates of the fields, as the runtime (and a loaded
        `.hetero` file) does: one implementation of the checks."""
        return SizeRules.of(self.symbols, self.outputs, self.guards, self.max_sizes)


def _dynamic(
    module: ModuleOp, entry: str, timings: dict[str, float]
) -> DynamicFunction:
    """`compile(..., dynamic="once")`: the module compiled once, with the
    shape functions of its entry function."""
    from hetero.analysis.shape_functions import function_shapes
    from hetero.dialects.relay import FuncOp
    from hetero.transforms.lower_aot_main import returned_leaves

    compiled = _compile_static(module, entry, timings)
    main = SymbolTable.lookup_symbol(module, entry)
    assert isinstance(main, FuncOp)
    analysis = function_shapes(main, module)  # what lower-aot-main compiled for
    terminator = main.body.block.last_op
    assert terminator is not None
    outputs = tuple(
        analysis.shape(leaf) for leaf in returned_leaves(terminator.operands[0])
    )
    symbols = tuple(
        (i, axis)
        for i, s in enumerate(compiled.inputs)
        for axis, d in enumerate(s.shape)
        if d < 0
    )
    return DynamicFunction(
        compiled, symbols, outputs, tuple(analysis.guards), main.max_sizes
    )


DYNAMIC_MODES = ("specialize", "once")
"""`compile`'s ways with an entry function of dynamic input dimensions."""


def compile(
    module_or_text: ModuleOp | str,
    targets: str | Sequence[str] | None = ("llvm",),
    entry: str = "main",
    collage: bool = False,
    dynamic: str = "specialize",
) -> CompiledFunction | ShapeSpecializedFunction | DynamicFunction:
    """Compile relay `@entry` to native code; `targets` (one target string,
    a list of them, or None for `llvm`) only fills a missing `target.config`
    (the module's own is never overridden).  A given module is not changed: a
    clone is compiled.  An entry function with dynamic input dimensions
    gives, by `dynamic`, a `ShapeSpecializedFunction` (`"specialize"`, the
    default: compiled per input shapes at the first call with them, every
    kernel with its full schedule) or a `DynamicFunction` (`"once"`: one
    compile for every size, docs/dynamic-shapes.md; what cannot be compiled
    so is a located error).  `collage`: the external kinds take what is
    measured faster there (`collage-partition`, docs/passes/collage.md; its
    plan on stderr) rather than all their patterns match."""
    # Python's collector is off for the whole compile: a collection goes
    # through every object of the model's IR and weights, which live all
    # along (a first compile, importing the passes, made three that took
    # 0.06 s for ResNet-18 and 0.14 s for EfficientNet-B1).
    with gc_paused():
        return _compile(module_or_text, targets, entry, collage, dynamic)


def _compile(
    module_or_text: ModuleOp | str,
    targets: str | Sequence[str] | None,
    entry: str,
    collage: bool,
    dynamic: str,
) -> CompiledFunction | ShapeSpecializedFunction | DynamicFunction:
    """`compile`, with the garbage collector paused."""
    from hetero.context import parse_module
    from hetero.dialects.relay import FuncOp
    from hetero.dialects.target.config import module_config
    from hetero.utils.dense_resources import BlobScope
    from hetero.utils.diagnostics import verify_module

    targets = _target_strings(targets)
    if dynamic not in DYNAMIC_MODES:
        raise ValueError(
            f"hetero.compile: dynamic must be one of {DYNAMIC_MODES}, not {dynamic!r}"
        )

    timings: dict[str, float] = {}
    start = time.perf_counter()
    # The weights folded and packed (and parsed) here live on as the compiled
    # function's arrays: the process-wide blob table lets them go.
    with BlobScope() as blobs:
        if isinstance(module_or_text, str):
            module = parse_module(module_or_text)
        else:
            verify_module(module_or_text)  # text is verified as it is parsed
            module = module_or_text.clone()
        module_config(module, targets, "hetero.compile")
        if collage:
            module.attributes[COLLAGE_ATTR] = UnitAttr()
        timings["parse"] = time.perf_counter() - start
        main = SymbolTable.lookup_symbol(module, entry)
        if isinstance(main, FuncOp) and any(
            isinstance(a.type, TensorType) and not a.type.has_static_shape()
            for a in main.args
        ):
            if dynamic == "once":
                return _dynamic(module, entry, timings)
            blobs.keep()  # the module is compiled again for each input shape
            labels = (_input_label(i, a) for i, a in enumerate(main.args))
            return ShapeSpecializedFunction(
                module,
                targets,
                entry,
                tuple(zip(labels, (a.type for a in main.args))),
                tuple(a.name_hint for a in main.args),
            )
        return _compile_static(module, entry, timings)


def _code_generation(
    module: ModuleOp, host: PrimFuncOp, timings: dict[str, float]
) -> CpuModule | GpuProgram:
    """The native code of the functions the host function `host` calls,
    which are moved out of `module` (code generation may lower them in
    place); `host` stays, as the host plan reads it afterwards."""
    from hetero.dialects import tir
    from hetero.lowering.cpu_codegen import compile_cpu
    from hetero.lowering.cuda_codegen import compile_cuda, has_gpu_functions
    from hetero.transforms.external_codegen import external_modules

    start = time.perf_counter()
    # The external codegens' functions first: convert-tir-to-scf lowers them
    # before the host function's `tir.call_extern`s of them, which then call
    # the lowered definitions.
    sources = [*(m.ops for m in external_modules(module).values()), module.ops]
    prim_funcs = _called_from(
        host, [op for ops in sources for op in ops if isinstance(op, tir.PrimFuncOp)]
    )
    for op in prim_funcs:
        if op is not host:
            op.detach()
    kernels = ModuleOp([_code_of(host) if op is host else op for op in prim_funcs])
    native = (
        compile_cuda(kernels)
        if has_gpu_functions(kernels)
        else compile_cpu(kernels, timings=timings, cached=True)
    )
    timings["compile_cpu"] = time.perf_counter() - start
    return native


@progress.reporting()
def _compile_static(
    module: ModuleOp, entry: str, timings: dict[str, float]
) -> CompiledFunction:
    """`compile` of a module whose entry function has static input shapes
    (its progress on stderr: `hetero.utils.progress`)."""
    from hetero.dialects import tir
    from hetero.dialects.relay import FuncOp
    from hetero.dialects.relay.functions import tensor_types, unflatten
    from hetero.lowering.host_plan import host_plan
    from hetero.runtime.cuda import GpuProgram, ResidentArray
    from hetero.transforms.lower_aot_main import CONSTANTS
    from hetero.transforms.plan_memory import memory_report
    from hetero.utils.background import settle
    from hetero.utils.dense_resources import make_in_background
    from hetero.utils.huge_pages import small_pages

    with small_pages():  # the weights are folded and packed here ...
        lower_to_tir(module, entry, timings)
        host = SymbolTable.lookup_symbol(module, f"{entry}_host")
        assert isinstance(host, tir.PrimFuncOp)
        make_in_background(host.attributes[CONSTANTS])
        native = _code_generation(module, host, timings)
        start = time.perf_counter()
        settle()  # ... on the background thread, meanwhile
        timings["weights"] = time.perf_counter() - start
    main = SymbolTable.lookup_symbol(module, entry)
    assert isinstance(main, FuncOp)
    constants = host.attributes[CONSTANTS]
    assert isinstance(constants, ArrayAttr)
    decoded = _decode_constants(constants)
    try:
        plan: HostPlan | HeteroError = host_plan(host)
    except HeteroError as error:
        plan = error
    return CompiledFunction(
        native,
        host.sym_name.data,
        tuple(
            _signature(a.type, _input_label(i, a), a.name_hint)
            for i, a in enumerate(main.args)
        ),
        tuple(
            _signature(t, f"output #{i}")
            for i, t in enumerate(tensor_types(main.result_type))
        ),
        unflatten(main.result_type, itertools.count()),
        tuple(map(ResidentArray, decoded))
        if isinstance(native, GpuProgram)
        else decoded,
        timings,
        memory_report(host),
        plan,
    )
