"""JIT compilation of `llvm`-dialect modules for the host CPU, callable on NumPy arrays.

    module = CpuModule(lower_to_llvm(parse(text)))   # optimised at O3 for the host
    saxpy = module.function("saxpy")
    saxpy(2.0, x, y)                                  # x, y: float32 arrays

`CpuModule` translates the module (`hetero.runtime.llvmir`), optimises it with
LLVM's new pass manager (`default<O3>` by default) for the host CPU or the
given `mcpu`/`mattr`, generates an object file and loads it with MCJIT
(`CpuTarget.compile`, then `CpuModule.load`: the object files of several
modules, compiled in other processes, load as one).  `function(name)` returns a
`CpuFunction` that follows the memref ABI of `convert-memref-to-llvm`: a
memref parameter takes a C-contiguous array of the element's dtype, whose
rank and static dimensions are checked before the call and whose dynamic
dimensions are passed as sizes.  Scalars are Python numbers (range-checked
integers); results come back as Python scalars, several as a tuple.  Every
wrong argument raises `ArgumentError` (a `ValueError` and a `TypeError`)
before any native code runs; a heap allocation that failed in the native
code raises `MemoryError` after it (`hetero.runtime.buffers`).
"""

from __future__ import annotations

import ctypes
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

import llvmlite.binding as llvm
import numpy as np
from hetero.runtime import buffers
from hetero.runtime.llvmir import to_llvmlite
from hetero.utils.diagnostics import HeteroError
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


CODEGEN_FLAGS: dict[str, tuple[str, str]] = {
    "-disable-lsr": ("true", "false"),
    "-enable-misched": ("false", "true"),
}
"""LLVM command-line options set while CPU machine code is generated, each
with hetero's value and LLVM's default.  Loop strength reduction took half
the code generator's time on ONNX networks (0.22 of 0.45 s CPU for resnet50)
to turn hetero's `base + i*stride` addresses, which x86 addressing modes
take as they are, into pointer increments: the networks ran no slower
without it (kernel by kernel, interleaved: squeezenet 7.45 vs 7.64 ms,
resnet50 77.8 vs 78.3 ms).  The machine scheduler before register
allocation hoisted every broadcast of a channel-lanes register tile to the
top of the reduction step, which with 28 accumulators made LLVM spill and
rotate registers inside the loop (stores and reloads of the stack whose
cost varied from process to process: a 3x3 conv of blocked 14x14x256
data took 2.1 ms in one, 5.2 in another);
without it (SelectionDAG's order kept) resnet50 ran 4 % faster (interleaved
in one process, 5 rounds each order: 0.92-0.99x the time), squeezenet 1 %
slower (0.98-1.04x)."""


@contextmanager
def codegen_flags() -> Iterator[None]:
    """`CODEGEN_FLAGS` in force for the block, LLVM's defaults after it:
    the options are global to the process, which other llvmlite users
    (Numba) share."""
    for flag, (ours, _) in CODEGEN_FLAGS.items():
        llvm.set_option("hetero", f"{flag}={ours}")
    try:
        yield
    finally:
        for flag, (_, default) in CODEGEN_FLAGS.items():
            llvm.set_option("hetero", f"{flag}={default}")


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


class FunctionInfo(NamedTuple):
    """What calling a function from Python needs to know of it: plain,
    picklable data, so that a compile worker can send it with the object code."""

    name: str
    signature: FunctionType
    """Before lowering (`hetero.signature`), or the LLVM one if it had no memrefs."""
    llvm_type: llvm_dialect.LLVMFunctionType
    linkage: str
    defined: bool
    symbol: str
    """The symbol ctypes calls: the function, or its `_add_results_wrapper`."""

    @property
    def problem(self) -> str | None:
        """Why Python cannot call it, or None."""
        if not self.defined:
            return "is only declared"
        if self.linkage != "external":
            return f"has {self.linkage} linkage (it is private)"
        return None


class CpuFunction:
    """A compiled function, called with NumPy arrays and Python scalars."""

    def __init__(self, info: FunctionInfo, address: int, owner: CpuModule):
        self.name = info.name
        self.signature = info.signature
        lowered = iter(info.llvm_type.inputs.data)
        self._params = [
            self._parameter(i, t, lowered)
            for i, t in enumerate(self.signature.inputs.data)
        ]
        if next(lowered, None) is not None:
            raise self._mismatch(info)
        output = info.llvm_type.output
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
        self._checked = owner.allocates

    def _mismatch(self, info: FunctionInfo) -> ValueError:
        return ValueError(
            f"@{self.name}: its signature {self.signature} does not match its "
            f"LLVM type {info.llvm_type}"
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
        if not self._checked:
            return self._call(raw)
        record = buffers.thread_record()
        result = self._call(raw)
        buffers.raise_failure(record, self.name)
        return result

    def _call(self, raw: list[object]) -> object:
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


def _function_info(op: llvm_dialect.FuncOp, module: ir.Module) -> FunctionInfo:
    """`op`'s `FunctionInfo`; adds its results wrapper to `module` if it needs one."""
    name = op.sym_name.data
    info = FunctionInfo(
        name,
        _signature(op),
        op.function_type,
        op.linkage.linkage.data,
        bool(op.body.blocks),
        name,
    )
    if info.problem is None and len(info.signature.outputs.data) > 1:
        return info._replace(symbol=_add_results_wrapper(module, name))
    return info


@dataclass(frozen=True)
class ObjectCode:
    """An `llvm`-dialect module compiled by `CpuTarget.compile`: picklable, so
    that compile workers can send it (`hetero.lowering.parallel_compile`)."""

    object: bytes
    """The machine code, an object file for MCJIT."""
    bitcode: bytes
    """The optimised LLVM IR, as bitcode (for `llvm_ir()` and `assembly()`)."""
    functions: dict[str, FunctionInfo]
    timings: dict[str, float]


class CpuTarget:
    """The CPU code is generated for, and LLVM's stages for it.

    `mcpu`/`mattr` default to the host's (`llvm.get_host_cpu_name()` and its
    features); `mattr` is LLVM's `"+avx2,-avx512f"` or a list of such items
    (an `mcpu` without `mattr` gets that CPU's default features).
    `opt_level` (0-3) picks the `default<On>` pipeline and the code
    generator's level."""

    def __init__(
        self,
        mcpu: str | None = None,
        mattr: str | Sequence[str] | None = None,
        opt_level: int = 3,
    ):
        if opt_level not in (0, 1, 2, 3):
            raise ValueError(f"opt_level must be 0, 1, 2 or 3, got {opt_level}")
        _initialize()
        self.mcpu = mcpu or llvm.get_host_cpu_name()
        if mattr is None:
            mattr = llvm.get_host_cpu_features().flatten() if mcpu is None else ""
        self.mattr = mattr if isinstance(mattr, str) else ",".join(mattr)
        self.opt_level = opt_level
        self._target = llvm.Target.from_triple(llvm.get_process_triple())
        self.machine = self.jit_machine()
        """Generates the code MCJIT loads."""
        self.object_machine = self._target.create_target_machine(
            cpu=self.mcpu, features=self.mattr, opt=opt_level, reloc="pic"
        )
        """Generates position-independent code, to write out."""

    def jit_machine(self) -> llvm.TargetMachine:
        """A new target machine for MCJIT: an engine owns (and frees) its own."""
        return self._target.create_target_machine(
            cpu=self.mcpu,
            features=self.mattr,
            opt=self.opt_level,
            codemodel="jitdefault",
            jit=True,
        )

    def compile(self, module: ModuleOp, link: Sequence[str] = ()) -> ObjectCode:
        """Translate the `llvm`-dialect `module`, link `link` (LLVM IR text)
        in, optimise and generate its machine code."""
        for op in module.walk():
            if op is not module and op.dialect_name() != "llvm":
                raise HeteroError(
                    f"CpuModule takes llvm-dialect modules (run lower_to_llvm): found '{op.name}'",
                    op,
                )
        timings: dict[str, float] = {}
        start = time.perf_counter()
        translated = to_llvmlite(
            module,
            triple=self.machine.triple,
            data_layout=str(self.machine.target_data),
        )
        functions = {
            op.sym_name.data: _function_info(op, translated)
            for op in module.ops
            if isinstance(op, llvm_dialect.FuncOp)
        }
        try:
            parsed = llvm.parse_assembly(str(translated))
            for text in link:
                parsed.link_in(llvm.parse_assembly(text))
            parsed.verify()
        except RuntimeError as e:
            raise HeteroError(f"LLVM rejected the translated module: {e}") from e
        timings["llvm-translate"] = time.perf_counter() - start
        start = time.perf_counter()
        self._optimize(parsed)
        timings["llvm-optimize"] = time.perf_counter() - start
        start = time.perf_counter()
        with codegen_flags():
            code = self.machine.emit_object(parsed)
        timings["llvm-codegen"] = time.perf_counter() - start
        return ObjectCode(code, parsed.as_bitcode(), functions, timings)

    def _optimize(self, module: llvm.ModuleRef) -> None:
        """LLVM's `default<On>` pipeline, its loop unroller restricted to
        the loops that ask for it (`llvm.loop.unroll.*` metadata: hetero's
        `unrolled` loops and register tiles, docs/lowering.md): unrolling
        every other loop only added code, a third of the code generator's
        time on ONNX networks, for no measurable speed.  Without the SLP
        vectorizer: hetero's vectorizer (`convert-tir-to-scf`) writes the
        vector code, and SLP changed no instruction of squeezenet's or
        resnet50's code, for a fifth of the optimiser's time.

        Then GVN and dead store elimination once more, for the parallel
        bodies that are simplified once, inlined into their tasks first
        (`hetero.runtime.parallel`): a register tile's accumulators are
        promoted to registers by LICM late in the pipeline, after GVN, so
        the zeroing of their buffer (made a `memset` by loop idiom
        recognition) and the loads of a tile's shared operand in each of its
        rows would stay (strided 3x3 convolutions of ResNet-50 a third
        slower)."""
        options = llvm.create_pipeline_tuning_options(speed_level=self.opt_level)
        options.loop_vectorization = self.opt_level >= 2
        options.slp_vectorization = False
        options.loop_unrolling = False
        builder = llvm.create_pass_builder(self.machine, options)
        builder.getModulePassManager().run(module, builder)
        if self.opt_level:
            cleanup = llvm.create_new_module_pass_manager()
            cleanup.add_new_gvn_pass()
            cleanup.add_dead_store_elimination_pass()
            cleanup.run(module, builder)


class CpuModule:
    """An `llvm`-dialect module, optimised and JIT-compiled for a CPU.

    `mcpu`, `mattr` and `opt_level` are `CpuTarget`'s.  `link` is LLVM IR
    (text) linked in before optimising: runtime support such as
    `hetero.runtime.cuda`'s launch stubs.  `CpuModule.load` makes one of
    several modules compiled apart (`hetero.lowering.parallel_compile`)."""

    def __init__(
        self,
        module: ModuleOp,
        *,
        mcpu: str | None = None,
        mattr: str | Sequence[str] | None = None,
        opt_level: int = 3,
        link: Sequence[str] = (),
    ):
        target = CpuTarget(mcpu, mattr, opt_level)
        self._load(target, [target.compile(module, link)])

    @classmethod
    def load(cls, target: CpuTarget, objects: Sequence[ObjectCode]) -> CpuModule:
        """The module of the `objects` compiled for `target`, whose calls of
        one another's functions resolve as if they were one module."""
        native = cls.__new__(cls)
        native._load(target, objects)
        return native

    def _load(self, target: CpuTarget, objects: Sequence[ObjectCode]) -> None:
        self._target = target
        self.mcpu, self.mattr, self.opt_level = (
            target.mcpu,
            target.mattr,
            target.opt_level,
        )
        self._bitcode = [o.bitcode for o in objects]
        self._functions: dict[str, FunctionInfo] = {}
        for o in objects:  # a function defined in one is declared in others
            for name, info in o.functions.items():
                if info.defined or name not in self._functions:
                    self._functions[name] = info
        self.timings: dict[str, float] = {}
        """Seconds of each stage: translation to LLVM IR, optimisation, machine
        code (summed over the `objects`; loading them counts as machine code)."""
        self.allocates = any(name in self._functions for name in buffers.SYMBOLS)
        """Whether its code takes heap buffers (`hetero.runtime.buffers`): its
        calls then report failed allocations as `MemoryError`."""
        if self.allocates:
            buffers.load_runtime()  # before the objects' calls are bound
        for o in objects:
            for stage, seconds in o.timings.items():
                self.timings[stage] = self.timings.get(stage, 0.0) + seconds
        start = time.perf_counter()
        empty = llvm.parse_assembly("")
        empty.triple = target.machine.triple
        self._engine = llvm.create_mcjit_compiler(empty, target.jit_machine())
        for o in objects:
            self._engine.add_object_file(llvm.ObjectFileRef.from_data(o.object))
        self._engine.finalize_object()
        self.timings["llvm-codegen"] = (
            self.timings.get("llvm-codegen", 0.0) + time.perf_counter() - start
        )
        self._compiled: dict[str, CpuFunction] = {}
        self.release = weakref.finalize(
            self, buffers.release_slots, self._slots(), self._engine
        )
        """Frees the buffers its functions keep between calls: when it is
        garbage-collected, or called (once; later calls allocate afresh)."""
        self.release.atexit = False  # the process's memory goes with it

    def _slots(self) -> list[int]:
        """The addresses of the functions' buffer slots, `@<function>.buffer.<k>`
        (`convert-memref-to-llvm`), numbered from 0 in each function."""
        slots: list[int] = []
        for name, info in self._functions.items():
            if info.defined and self.allocates:
                k = 0
                while address := self._engine.get_global_value_address(f"{name}.buffer.{k}"):
                    slots.append(address)
                    k += 1
        return slots

    def function(self, name: str) -> CpuFunction:
        """The public function `name`, callable from Python."""
        if name in self._compiled:
            return self._compiled[name]
        info = self._functions.get(name)
        if info is None:
            known = ", ".join(
                f"@{n}" for n, i in self._functions.items() if i.problem is None
            )
            raise ValueError(
                f"no function @{name} in the module (callable: {known or 'none'})"
            )
        if (problem := info.problem) is not None:
            raise ValueError(f"@{name} {problem}: it cannot be called from Python")
        address = self._engine.get_function_address(info.symbol)
        self._compiled[name] = CpuFunction(info, address, self)
        return self._compiled[name]

    def global_address(self, name: str) -> int:
        """The address of the global variable `name` (a runtime fills some in)."""
        return self._engine.get_global_value_address(name)

    def _linked(self) -> llvm.ModuleRef:
        """The optimised LLVM IR, as one module."""
        first, *rest = (llvm.parse_bitcode(b) for b in self._bitcode)
        for module in rest:
            first.link_in(module)
        return first

    def llvm_ir(self) -> str:
        """The optimised LLVM IR, as text."""
        return str(self._linked())

    def assembly(self) -> str:
        """The machine code, as assembly text."""
        with codegen_flags():
            return self._target.object_machine.emit_assembly(self._linked())

    def emit_object(self) -> bytes:
        """The machine code as a relocatable (position-independent) object file."""
        with codegen_flags():
            return self._target.object_machine.emit_object(self._linked())
