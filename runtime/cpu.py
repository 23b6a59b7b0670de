"""JIT compilation of `llvm`-dialect modules for the host CPU, callable on NumPy arrays.

    module = CpuModule(lower_to_llvm(parse(text)))   # optimised at O3 for the host
    saxpy = module.function("saxpy")
    saxpy(2.0, x, y)                                  # x, y: float32 arrays

`CpuModule` translates the module (`hetero.runtime.llvmir`), optimises it with
LLVM's new pass manager (`default<O3>` by default) for the host CPU or the
given `mcpu`/`mattr`, and loads it with MCJIT.  `function(name)` returns a
`CpuFunction` that follows the memref ABI of `convert-memref-to-llvm`: a
memref parameter takes a C-contiguous array of the element's dtype, whose
rank and static dimensions are checked before the call and whose dynamic
dimensions are passed as sizes.  Scalars are Python numbers (range-checked
integers); results come back as Python scalars, several as a tuple.  Every
wrong argument raises `ArgumentError` (a `ValueError` and a `TypeError`)
before any native code runs.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from xdsl.dialects import llvm as llvm_dialect
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float16Type,
    Float32Type,
    Float64Type,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute

from hetero.runtime.llvmir import to_llvmlite
from hetero.utils.diagnostics import HeteroError

_CTYPES: dict[int | type[Attribute], Any] = {
    1: ctypes.c_bool,
    8: ctypes.c_int8,
    16: ctypes.c_int16,
    32: ctypes.c_int32,
    64: ctypes.c_int64,
    Float32Type: ctypes.c_float,
    Float64Type: ctypes.c_double,
}
"""ctypes of the LLVM scalar types a Python caller can pass (no f16: ctypes lacks it)."""

_DTYPES: dict[int | type[Attribute], np.dtype[Any]] = {
    1: np.dtype(np.bool_),
    8: np.dtype(np.int8),
    16: np.dtype(np.int16),
    32: np.dtype(np.int32),
    64: np.dtype(np.int64),
    Float16Type: np.dtype(np.float16),
    Float32Type: np.dtype(np.float32),
    Float64Type: np.dtype(np.float64),
}
"""NumPy dtypes of memref elements (`index` elements are int64)."""


def _key(t: Attribute) -> int | type[Attribute]:
    if isinstance(t, IndexType):
        return 64
    return t.width.data if isinstance(t, IntegerType) else type(t)


class ArgumentError(ValueError, TypeError):
    """An argument that does not fit the signature, found before the call."""


@cache
def _initialize() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


class _Scalar:
    """A scalar parameter or result, passed as the C type `ctype`."""

    def __init__(self, label: str, ctype: Any):
        self.label = label  # for messages: "@f: argument #0 (f32)"
        self.ctype = ctype
        self.ctypes = [ctype]
        self.is_float = ctype in (ctypes.c_float, ctypes.c_double)
        self.bits = 1 if ctype is ctypes.c_bool else 8 * ctypes.sizeof(ctype)

    def convert(self, value: object) -> list[object]:
        if self.is_float:
            if not isinstance(value, int | float | np.integer | np.floating):
                raise ArgumentError(
                    f"{self.label} must be a number, got {type(value).__name__}"
                )
            return [float(value)]
        if not isinstance(value, int | np.integer | np.bool_):
            raise ArgumentError(
                f"{self.label} must be an integer, got {type(value).__name__}"
            )
        value, half = int(value), 2 ** (self.bits - 1)
        if not -half <= value < 2 * half:
            raise ArgumentError(
                f"{self.label}: {value} does not fit in {self.bits} bits"
            )
        return [
            value % 2 == 1 if self.bits == 1 else (value + half) % (2 * half) - half
        ]


class _MemRef:
    """A memref parameter: a pointer, then the sizes of its dynamic dimensions."""

    def __init__(
        self, label: str, t: MemRefType, dtype: np.dtype[Any], size_ctype: Any
    ):
        self.label = label
        self.dtype = dtype
        shape = t.get_shape()
        self.rank = len(shape)
        self.static = [
            (d, size) for d, size in enumerate(shape) if size != DYNAMIC_INDEX
        ]
        self.dynamic = [d for d, size in enumerate(shape) if size == DYNAMIC_INDEX]
        self.ctypes = [ctypes.c_void_p] + [size_ctype] * len(self.dynamic)

    def convert(self, value: object) -> list[object]:
        if not isinstance(value, np.ndarray):
            raise ArgumentError(
                f"{self.label} must be a NumPy array, got {type(value).__name__}"
            )
        if value.dtype != self.dtype:
            raise ArgumentError(
                f"{self.label} must have dtype {self.dtype}, got {value.dtype}"
            )
        shape = value.shape
        if len(shape) != self.rank:
            raise ArgumentError(
                f"{self.label} must have rank {self.rank}, got shape {shape}"
            )
        for dim, size in self.static:
            if shape[dim] != size:
                raise ArgumentError(
                    f"{self.label} must have size {size} in dimension {dim}, "
                    f"got shape {shape}"
                )
        if not value.flags.c_contiguous:
            raise ArgumentError(
                f"{self.label} must be C-contiguous (see np.ascontiguousarray)"
            )
        address = value.__array_interface__["data"][0]
        return [address, *(shape[d] for d in self.dynamic)]


class CpuFunction:
    """A compiled function, called with NumPy arrays and Python scalars."""

    def __init__(self, op: llvm_dialect.FuncOp, address: int, owner: CpuModule):
        self.name = op.sym_name.data
        self.signature = _signature(op)
        lowered = iter(op.function_type.inputs.data)
        self._params = [
            self._parameter(i, t, lowered)
            for i, t in enumerate(self.signature.inputs.data)
        ]
        if next(lowered, None) is not None:
            raise self._mismatch(op)
        output = op.function_type.output
        outputs = (
            output.types.data
            if isinstance(output, llvm_dialect.LLVMStructType)
            else [output]
        )
        self._results = [
            self._scalar(f"result #{i} ({t})", t, llvm_type)
            for i, (t, llvm_type) in enumerate(zip(self.signature.outputs, outputs))
        ]
        argtypes = [c for p in self._params for c in p.ctypes]
        restype = self._results[0].ctype if len(self._results) == 1 else None
        self._struct: type[ctypes.Structure] | None = None
        if len(self._results) > 1:  # returned through a pointer: _add_results_wrapper
            fields = [(f"r{i}", r.ctype) for i, r in enumerate(self._results)]
            self._struct = type("Results", (ctypes.Structure,), {"_fields_": fields})
            argtypes.append(ctypes.c_void_p)
        self._owner = owner  # keeps the machine code alive
        self._cfunc = ctypes.CFUNCTYPE(restype, *argtypes)(address)

    def _mismatch(self, op: llvm_dialect.FuncOp) -> ValueError:
        return ValueError(
            f"@{self.name}: its signature {self.signature} does not match its "
            f"LLVM type {op.function_type}"
        )

    def _parameter(
        self, i: int, t: Attribute, lowered: Iterator[Attribute]
    ) -> _Scalar | _MemRef:
        """Parameter #i of type `t`, taking its LLVM arguments from `lowered`."""
        label = f"@{self.name}: argument #{i} ({t})"
        if not isinstance(t, MemRefType):
            return self._scalar(label, t, next(lowered, None))
        dtype = _DTYPES.get(_key(t.element_type))
        if dtype is None:
            raise ValueError(f"@{self.name}: no NumPy dtype for the elements of {t}")
        pointer = next(lowered, None)
        dynamic = sum(1 for d in t.get_shape() if d == DYNAMIC_INDEX)
        sizes = [next(lowered, None) for _ in range(dynamic)]
        integers = [s for s in sizes if isinstance(s, IntegerType)]
        if not isinstance(pointer, llvm_dialect.LLVMPointerType) or integers != sizes:
            raise ValueError(f"@{self.name}: {t} is not passed as a pointer and sizes")
        size_ctype = _CTYPES[_key(integers[0])] if integers else ctypes.c_int64
        return _MemRef(label, t, dtype, size_ctype)

    def _scalar(self, label: str, t: Attribute, lowered: Attribute | None) -> _Scalar:
        """A scalar of type `t` as written, passed as `lowered` in LLVM."""
        ctype = _CTYPES.get(_key(lowered)) if lowered is not None else None
        if ctype is None:
            raise ValueError(
                f"@{self.name}: values of type {t} cannot be passed from Python"
            )
        return _Scalar(label, ctype)

    def __call__(self, *args: object) -> object:
        if len(args) != len(self._params):
            raise ArgumentError(
                f"@{self.name} {self.signature} takes {len(self._params)} arguments, "
                f"got {len(args)}"
            )
        raw: list[object] = []
        for param, arg in zip(self._params, args):
            raw += param.convert(arg)
        if self._struct is None:
            result = self._cfunc(*raw)
            return result if self._results else None
        out = self._struct()
        self._cfunc(*raw, ctypes.addressof(out))
        return tuple(getattr(out, f"r{i}") for i in range(len(self._results)))

    def __repr__(self) -> str:
        return f"<CpuFunction @{self.name} {self.signature}>"


def _signature(op: llvm_dialect.FuncOp) -> FunctionType:
    """The function's signature before lowering, or its LLVM one if it had no memrefs."""
    signature = op.attributes.get("hetero.signature")
    if isinstance(signature, FunctionType):
        return signature
    output = op.function_type.output
    if isinstance(output, llvm_dialect.LLVMStructType):
        outputs: Sequence[Attribute] = output.types.data
    else:
        outputs = [] if isinstance(output, llvm_dialect.LLVMVoidType) else [output]
    return FunctionType.from_lists(op.function_type.inputs.data, outputs)


def _add_results_wrapper(module: ir.Module, name: str) -> str:
    """Add `void name.results(args..., ptr out)` storing the struct `@name` returns.

    An LLVM function returning a struct does not follow the C ABI of a C
    function returning the same struct, so ctypes calls this wrapper instead."""
    function = module.get_global(name)
    inputs = [*function.function_type.args, ir.PointerType()]
    wrapper = ir.Function(
        module, ir.FunctionType(ir.VoidType(), inputs), f"{name}.results"
    )
    builder = ir.IRBuilder(wrapper.append_basic_block())
    builder.store(builder.call(function, wrapper.args[:-1]), wrapper.args[-1])
    builder.ret_void()
    return wrapper.name


class CpuModule:
    """An `llvm`-dialect module, optimised and JIT-compiled for a CPU.

    `mcpu`/`mattr` default to the host's (`llvm.get_host_cpu_name()` and its
    features); `mattr` is LLVM's `"+avx2,-avx512f"` or a list of such items
    (an `mcpu` without `mattr` gets that CPU's default features).
    `opt_level` (0-3) picks the `default<On>` pipeline and the code
    generator's level.  `link` is LLVM IR (text) linked in before optimising:
    runtime support such as `hetero.runtime.cuda`'s launch stubs."""

    def __init__(
        self,
        module: ModuleOp,
        *,
        mcpu: str | None = None,
        mattr: str | Sequence[str] | None = None,
        opt_level: int = 3,
        link: Sequence[str] = (),
    ):
        if opt_level not in (0, 1, 2, 3):
            raise ValueError(f"opt_level must be 0, 1, 2 or 3, got {opt_level}")
        for op in module.walk():
            if op is not module and op.dialect_name() != "llvm":
                raise HeteroError(
                    f"CpuModule takes llvm-dialect modules (run lower_to_llvm): found '{op.name}'",
                    op,
                )
        _initialize()
        self.mcpu = mcpu or llvm.get_host_cpu_name()
        if mattr is None:
            mattr = llvm.get_host_cpu_features().flatten() if mcpu is None else ""
        self.mattr = mattr if isinstance(mattr, str) else ",".join(mattr)
        self.opt_level = opt_level
        self._target = llvm.Target.from_triple(llvm.get_process_triple())
        self._machine = self._target.create_target_machine(
            cpu=self.mcpu,
            features=self.mattr,
            opt=opt_level,
            codemodel="jitdefault",
            jit=True,
        )
        self._object_machine = self._target.create_target_machine(
            cpu=self.mcpu, features=self.mattr, opt=opt_level, reloc="pic"
        )
        self._functions = {
            op.sym_name.data: op
            for op in module.ops
            if isinstance(op, llvm_dialect.FuncOp)
        }
        self.timings: dict[str, float] = {}
        """Seconds of each stage: translation to LLVM IR, optimisation, machine code."""
        start = time.perf_counter()
        translated = to_llvmlite(
            module,
            triple=self._machine.triple,
            data_layout=str(self._machine.target_data),
        )
        self._entry_points: dict[str, str] = {}
        for name, op in self._functions.items():
            if self._callable_problem(op) is None:
                several = len(_signature(op).outputs.data) > 1
                self._entry_points[name] = (
                    _add_results_wrapper(translated, name) if several else name
                )
        try:
            parsed = llvm.parse_assembly(str(translated))
            for text in link:
                parsed.link_in(llvm.parse_assembly(text))
            parsed.verify()
        except RuntimeError as e:
            raise HeteroError(f"LLVM rejected the translated module: {e}") from e
        self.timings["llvm-translate"] = time.perf_counter() - start
        start = time.perf_counter()
        self._optimize(parsed)
        self._llvm_ir = str(parsed)
        self.timings["llvm-optimize"] = time.perf_counter() - start
        start = time.perf_counter()
        self._engine = llvm.create_mcjit_compiler(parsed, self._machine)
        self._engine.finalize_object()
        self.timings["llvm-codegen"] = time.perf_counter() - start
        self._compiled: dict[str, CpuFunction] = {}

    def _optimize(self, module: llvm.ModuleRef) -> None:
        options = llvm.create_pipeline_tuning_options(speed_level=self.opt_level)
        options.loop_vectorization = options.slp_vectorization = self.opt_level >= 2
        builder = llvm.create_pass_builder(self._machine, options)
        builder.getModulePassManager().run(module, builder)

    @staticmethod
    def _callable_problem(op: llvm_dialect.FuncOp) -> str | None:
        if not op.body.blocks:
            return "is only declared"
        if op.linkage.linkage.data != "external":
            return f"has {op.linkage.linkage.data} linkage (it is private)"
        return None

    def function(self, name: str) -> CpuFunction:
        """The public function `name`, callable from Python."""
        if name in self._compiled:
            return self._compiled[name]
        op = self._functions.get(name)
        if op is None:
            known = ", ".join(f"@{n}" for n in self._entry_points) or "none"
            raise ValueError(f"no function @{name} in the module (callable: {known})")
        if (problem := self._callable_problem(op)) is not None:
            raise ValueError(f"@{name} {problem}: it cannot be called from Python")
        address = self._engine.get_function_address(self._entry_points[name])
        self._compiled[name] = CpuFunction(op, address, self)
        return self._compiled[name]

    def global_address(self, name: str) -> int:
        """The address of the global variable `name` (a runtime fills some in)."""
        return self._engine.get_global_value_address(name)

    def llvm_ir(self) -> str:
        """The optimised LLVM IR, as text."""
        return self._llvm_ir

    def assembly(self) -> str:
        """The machine code, as assembly text."""
        return self._object_machine.emit_assembly(llvm.parse_assembly(self._llvm_ir))

    def emit_object(self) -> bytes:
        """The machine code as a relocatable (position-independent) object file."""
        return self._object_machine.emit_object(llvm.parse_assembly(self._llvm_ir))
