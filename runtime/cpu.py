"""JIT compilation of `llvm`-dialect modules for the host CPU, callable on NumPy arrays.

    module = CpuModule(lower_to_llvm(parse(text)))   # optimised at O3 for the host
    saxpy = module.function("saxpy")
    saxpy(2.0, x, y)                                  # x, y: float32 arrays

`CpuModule` translates the module (`hetero.runtime.llvmir`), optimises it with
LLVM's new pass manager (`default<O3>` by default) for the host CPU or the
given `mcpu`/`mattr`, generates an object file and loads it with MCJIT
(`CpuTarget.compile`, then `CpuModule.load`: the object files of several
modules, compiled in other processes, load as one).  `function(name)` returns a
`CpuFunction` (`hetero.runtime.native`: loading and calling need no xDSL) that follows the memref ABI of `convert-memref-to-llvm`: a
memref parameter takes a C-contiguous array of the element's dtype, whose
rank and static dimensions are checked before the call and whose dynamic
dimensions are passed as sizes.  Scalars are Python numbers (range-checked
integers); results come back as Python scalars, several as a tuple.  Every
wrong argument raises `ArgumentError` (a `ValueError` and a `TypeError`)
before any native code runs; a heap allocation that failed in the native
code raises `MemoryError` after it (`hetero.runtime.buffers`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

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
from hetero.runtime.native import (
    Abi,
    NativeFunction,
    NativeModule,
    Param,
)
from hetero.runtime.native import initialize as _initialize
from hetero.utils.cpus import triple_arch
from hetero.utils.diagnostics import HeteroError

_CTYPES: dict[int | type[Attribute], str] = {
    1: "i1",
    8: "i8",
    16: "i16",
    32: "i32",
    64: "i64",
    Float32Type: "f32",
    Float64Type: "f64",
}
"""`native.CTYPES` names of the LLVM scalar types a Python caller can pass."""

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


@cache
def _initialize_cross() -> None:
    """LLVM's other targets (AArch64 on an x86-64 host, ...), for `mtriple`."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


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


CpuFunction = NativeFunction
"""A compiled function, called with NumPy arrays and Python scalars."""


def abi_of(info: FunctionInfo) -> Abi:
    """How Python calls the function of `info`: its parameters and results
    as written (`signature`), each passed as its LLVM arguments say."""
    name = info.name
    lowered = iter(info.llvm_type.inputs.data)
    params = tuple(
        _parameter(name, i, t, lowered)
        for i, t in enumerate(info.signature.inputs.data)
    )
    if next(lowered, None) is not None:
        raise ValueError(
            f"@{name}: its signature {info.signature} does not match its "
            f"LLVM type {info.llvm_type}"
        )
    output = info.llvm_type.output
    outputs = (
        output.types.data
        if isinstance(output, llvm_dialect.LLVMStructType)
        else [output]
    )
    results = tuple(
        _scalar(f"@{name}: values of type {t}", llvm_type)
        for t, llvm_type in zip(info.signature.outputs, outputs)
    )
    return Abi(name, info.symbol, str(info.signature), params, results)


def _parameter(name: str, i: int, t: Attribute, lowered: Iterator[Attribute]) -> Param:
    """Parameter #i of `@name`, of type `t`, taking its LLVM arguments from `lowered`."""
    label = f"@{name}: argument #{i} ({t})"
    if not isinstance(t, MemRefType):
        return Param(
            label, _scalar(f"@{name}: values of type {t}", next(lowered, None))
        )
    dtype = _DTYPES.get(_key(t.element_type))
    if dtype is None:
        raise ValueError(f"@{name}: no NumPy dtype for the elements of {t}")
    pointer = next(lowered, None)
    shape = tuple(-1 if d == DYNAMIC_INDEX else d for d in t.get_shape())
    sizes = [next(lowered, None) for _ in range(shape.count(-1))]
    integers = [s for s in sizes if isinstance(s, IntegerType)]
    if not isinstance(pointer, llvm_dialect.LLVMPointerType) or integers != sizes:
        raise ValueError(f"@{name}: {t} is not passed as a pointer and sizes")
    size_ctype = _CTYPES[_key(integers[0])] if integers else "i64"
    return Param(label, size_ctype, dtype.name, shape)


def _scalar(what: str, lowered: Attribute | None) -> str:
    """The `CTYPES` name of a scalar passed as `lowered` in LLVM."""
    ctype = _CTYPES.get(_key(lowered)) if lowered is not None else None
    if ctype is None:
        raise ValueError(f"{what} cannot be passed from Python")
    return ctype


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
    generator's level.  `mtriple` (default: the host's) may name another
    architecture (`aarch64-linux-gnu` on an x86-64 host): its code is then
    written out, not run (`native`), and `mcpu` defaults to `generic`."""

    def __init__(
        self,
        mcpu: str | None = None,
        mattr: str | Sequence[str] | None = None,
        opt_level: int = 3,
        mtriple: str | None = None,
    ):
        if opt_level not in (0, 1, 2, 3):
            raise ValueError(f"opt_level must be 0, 1, 2 or 3, got {opt_level}")
        _initialize()
        host = llvm.get_process_triple()
        self.native = mtriple is None or triple_arch(mtriple) == triple_arch(host)
        """Whether this host runs the code (`CpuModule` loads it)."""
        if not self.native:
            _initialize_cross()
        self.mcpu = mcpu or (llvm.get_host_cpu_name() if self.native else "generic")
        if mattr is None:
            host_cpu = mcpu is None and self.native
            mattr = llvm.get_host_cpu_features().flatten() if host_cpu else ""
        self.mattr = mattr if isinstance(mattr, str) else ",".join(mattr)
        self.opt_level = opt_level
        try:
            self._target = llvm.Target.from_triple(mtriple or host)
        except RuntimeError as e:
            raise HeteroError(f"LLVM has no target for mtriple {mtriple!r}: {e}") from e
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


class CpuModule(NativeModule):
    """An `llvm`-dialect module, optimised and JIT-compiled for a CPU.

    `mcpu`, `mattr` and `opt_level` are `CpuTarget`'s.  `link` is LLVM IR
    (text) linked in before optimising: runtime support such as
    `hetero.runtime.cuda`'s launch stubs.  `CpuModule.load` makes one of
    several modules compiled apart (`hetero.lowering.parallel_compile`).
    `objects` keeps their code, for `hetero.runtime.artifact` to write out."""

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
        self.objects = tuple(objects)
        self._bitcode = [o.bitcode for o in objects]
        self._functions: dict[str, FunctionInfo] = {}
        for o in objects:  # a function defined in one is declared in others
            for name, info in o.functions.items():
                if info.defined or name not in self._functions:
                    self._functions[name] = info
        self.timings: dict[str, float] = {}
        """Seconds of each stage: translation to LLVM IR, optimisation, machine
        code (summed over the `objects`; loading them counts as machine code)."""
        for o in objects:
            for stage, seconds in o.timings.items():
                self.timings[stage] = self.timings.get(stage, 0.0) + seconds
        self._compiled: dict[str, CpuFunction] = {}
        if not target.native:  # another architecture's code: written out only
            return
        start = time.perf_counter()
        defined = {name: info.defined for name, info in self._functions.items()}
        code = [o.object for o in objects]
        NativeModule.__init__(self, code, target.jit_machine(), defined, {})
        self.timings["llvm-codegen"] = (
            self.timings.get("llvm-codegen", 0.0) + time.perf_counter() - start
        )

    def _abi(self, name: str) -> Abi:
        """The `Abi` of the public function `name`, or why Python cannot call it."""
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
        if not self._target.native:
            raise ValueError(
                f"@{name} is compiled for {self._target.machine.triple}, which this "
                f"host ({llvm.get_process_triple()}) does not run: write it out "
                "(assembly(), emit_object(); hetero-translate --emit=asm/obj)"
            )
        return abi_of(info)

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

    def runtime_object(self) -> bytes:
        """The runtime that `emit_object`'s code calls (thread pool, heap
        buffers), an object file for the same target to link it with
        outside Python (`hetero.runtime.parallel.runtime_object`)."""
        from hetero.runtime.parallel import runtime_object

        return runtime_object(self._target.object_machine)
