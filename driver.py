"""`hetero.compile`: a relay program to a native function callable on NumPy arrays.

    f = hetero.compile(text)          # or a parsed ModuleOp
    y = f(x, w)                       # NumPy in, NumPy out

Runs `plan-devices`, `fuse-ops`, `lower-te`, `lower-aot-main` and
`plan-memory`, then
JIT-compiles the `tir.prim_func`s (kernels and the host function
`@<entry>_host`) with `compile_cpu`.  The returned `CompiledFunction` checks
the inputs against the relay signature, allocates the output, passes the
constants (decoded once, here) and calls the host function.  CPU targets only
for now.

The compiler modules are imported when `compile` runs, not when this module
is, so that `import hetero` (which exports `compile`) stays cheap for tools.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.traits import SymbolTable

if TYPE_CHECKING:
    from hetero.runtime.cpu import CpuModule


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
        return np.ascontiguousarray(value)


@dataclass
class CompiledFunction:
    """The native entry function: `f(*inputs) -> output` in NumPy."""

    native: CpuModule
    symbol: str
    inputs: tuple[Signature, ...]
    output: Signature
    constants: tuple[np.ndarray, ...]
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds spent in each compilation stage."""
    memory: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per device, the intermediates' planned bytes and the bytes they would
    take without reuse (`plan-memory`)."""

    def __call__(self, *inputs: object) -> np.ndarray:
        if len(inputs) != len(self.inputs):
            raise CompiledFunctionError(
                f"{self.symbol} takes {len(self.inputs)} input(s), {len(inputs)} given"
            )
        arrays = [s.check(v) for s, v in zip(self.inputs, inputs)]
        out = np.empty(self.output.shape, self.output.dtype)
        self.native.function(self.symbol)(*arrays, *self.constants, out)
        return out


def _signature(type: object, label: str) -> Signature:
    from hetero.interpreter.relay import element_dtype

    assert isinstance(type, TensorType)  # lower-aot-main accepted it
    return Signature(label, tuple(type.get_shape()), element_dtype(type.element_type))


def _decode_constants(values: ArrayAttr) -> tuple[np.ndarray, ...]:
    """The host function's constant parameters, decoded as the interpreter does."""
    from hetero.dialects.relay import ConstantOp
    from hetero.interpreter.relay import constant_value

    return tuple(np.ascontiguousarray(constant_value(ConstantOp(v))) for v in values)


def _lower(module: ModuleOp, entry: str, timings: dict[str, float]) -> None:
    """The relay pipeline up to the host function, timed per pass."""
    from hetero.transforms.fuse_ops import FuseOpsPass
    from hetero.transforms.lower_aot_main import LowerAotMainPass
    from hetero.transforms.lower_te import LowerTEPass
    from hetero.transforms.plan_devices import PlanDevicesPass
    from hetero.transforms.plan_memory import PlanMemoryPass
    from xdsl.context import Context

    for stage in (
        PlanDevicesPass(),
        FuseOpsPass(),
        LowerTEPass(),
        LowerAotMainPass(entry),
        PlanMemoryPass(),
    ):
        start = time.perf_counter()
        stage.apply(Context(), module)
        timings[stage.name] = time.perf_counter() - start


def _memory_report(host: Operation) -> dict[str, tuple[int, int]]:
    from hetero.transforms.plan_memory import MEMORY

    report = host.attributes.get(MEMORY)
    if not isinstance(report, DictionaryAttr):
        return {}
    return {
        device: tuple(v.value.data for v in sizes.data)  # type: ignore[misc]
        for device, sizes in report.data.items()
    }


def _input_label(index: int, arg: SSAValue) -> str:
    return f"input #{index}" + (f" (%{arg.name_hint})" if arg.name_hint else "")


def compile(
    module_or_text: ModuleOp | str,
    targets: Sequence[str] = ("llvm",),
    entry: str = "main",
) -> CompiledFunction:
    """Compile relay `@entry` to native code; `targets` only fills a missing
    `target.config` (the module's own is never overridden).  A given module
    is not changed: a clone is compiled."""
    from hetero.context import parse_module
    from hetero.dialects import tir
    from hetero.dialects.relay import FuncOp
    from hetero.lowering.cpu_codegen import compile_cpu
    from hetero.targets.config import module_config
    from hetero.transforms.lower_aot_main import CONSTANTS

    timings: dict[str, float] = {}
    start = time.perf_counter()
    if isinstance(module_or_text, str):
        module = parse_module(module_or_text)
    else:
        module = module_or_text.clone()
    module_config(module, ",".join(targets), "hetero.compile")
    timings["parse"] = time.perf_counter() - start
    _lower(module, entry, timings)
    main = SymbolTable.lookup_symbol(module, entry)
    host = SymbolTable.lookup_symbol(module, f"{entry}_host")
    assert isinstance(main, FuncOp) and isinstance(host, tir.PrimFuncOp)
    constants = host.attributes[CONSTANTS]
    assert isinstance(constants, ArrayAttr)
    start = time.perf_counter()
    prim_funcs = [op.clone() for op in module.ops if isinstance(op, tir.PrimFuncOp)]
    native = compile_cpu(ModuleOp(prim_funcs))
    timings["compile_cpu"] = time.perf_counter() - start
    return CompiledFunction(
        native,
        host.sym_name.data,
        tuple(_signature(a.type, _input_label(i, a)) for i, a in enumerate(main.args)),
        _signature(main.result_type, "the output"),
        _decode_constants(constants),
        timings,
        _memory_report(host),
    )
