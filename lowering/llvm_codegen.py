"""The CPU's code generator: an `llvm`-dialect module to object code.

    module = compile_llvm(lower_to_llvm(parse(text)))   # optimised at O3 for the host
    module.function("saxpy")(2.0, x, y)

`CpuTarget.compile` translates the module (`hetero.lowering.llvmir`),
optimises it with LLVM's new pass manager (`default<O3>` by default) for the
host CPU or the given `mcpu`/`mattr`, and generates an object file: an
`ObjectCode`, plain data that `CpuModule.load` loads
(`hetero.runtime.cpu`; the object files of several modules, compiled in
other processes, load as one).  Each function's `Abi` is derived here from
its types, so that loading and calling need no xDSL.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
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

from hetero.lowering.llvmir import to_llvmlite
from hetero.runtime.cpu import (
    CpuMachine,
    CpuModule,
    FunctionInfo,
    ObjectCode,
    codegen_flags,
)
from hetero.runtime.native import Abi, Param
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


def type_key(t: Attribute) -> int | type[Attribute]:
    """A scalar type's key in tables of them: an integer's width (`index`'s
    is 64), else the type's class."""
    if isinstance(t, IndexType):
        return 64
    return t.width.data if isinstance(t, IntegerType) else type(t)


def abi_of(
    name: str,
    symbol: str,
    signature: FunctionType,
    llvm_type: llvm_dialect.LLVMFunctionType,
) -> Abi:
    """How Python calls `@name` through `symbol`: its parameters and results
    as written (`signature`), each passed as its LLVM arguments say;
    ValueError if Python cannot pass them."""
    lowered = iter(llvm_type.inputs.data)
    params = tuple(
        _parameter(name, i, t, lowered) for i, t in enumerate(signature.inputs.data)
    )
    if next(lowered, None) is not None:
        raise ValueError(
            f"@{name}: its signature {signature} does not match its "
            f"LLVM type {llvm_type}"
        )
    output = llvm_type.output
    outputs = (
        output.types.data
        if isinstance(output, llvm_dialect.LLVMStructType)
        else [output]
    )
    results = tuple(
        _scalar(f"@{name}: values of type {t}", lowered_type)
        for t, lowered_type in zip(signature.outputs, outputs)
    )
    return Abi(name, symbol, str(signature), params, results)


def _parameter(name: str, i: int, t: Attribute, lowered: Iterator[Attribute]) -> Param:
    """Parameter #i of `@name`, of type `t`, taking its LLVM arguments from `lowered`."""
    label = f"@{name}: argument #{i} ({t})"
    if not isinstance(t, MemRefType):
        return Param(
            label, _scalar(f"@{name}: values of type {t}", next(lowered, None))
        )
    dtype = _DTYPES.get(type_key(t.element_type))
    if dtype is None:
        raise ValueError(f"@{name}: no NumPy dtype for the elements of {t}")
    pointer = next(lowered, None)
    shape = tuple(-1 if d == DYNAMIC_INDEX else d for d in t.get_shape())
    sizes = [next(lowered, None) for _ in range(shape.count(-1))]
    integers = [s for s in sizes if isinstance(s, IntegerType)]
    if not isinstance(pointer, llvm_dialect.LLVMPointerType) or integers != sizes:
        raise ValueError(f"@{name}: {t} is not passed as a pointer and sizes")
    size_ctype = _CTYPES[type_key(integers[0])] if integers else "i64"
    return Param(label, size_ctype, dtype.name, shape)


def _scalar(what: str, lowered: Attribute | None) -> str:
    """The `CTYPES` name of a scalar passed as `lowered` in LLVM."""
    ctype = _CTYPES.get(type_key(lowered)) if lowered is not None else None
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
    info = FunctionInfo(name, op.linkage.linkage.data, bool(op.body.blocks), name)
    if info.problem is not None:
        return info
    signature = _signature(op)
    if len(signature.outputs.data) > 1:
        info = info._replace(symbol=_add_results_wrapper(module, name))
    try:
        abi = abi_of(name, info.symbol, signature, op.function_type)
    except ValueError as error:
        return info._replace(unpassable=str(error))
    return info._replace(abi=abi)


class CpuTarget(CpuMachine):
    """A `CpuMachine` and LLVM's stages for it: translation, optimisation,
    machine code."""

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
        every other loop only added code, and code generator time, for no
        measurable speed.  Without the SLP vectorizer: hetero's vectorizer
        (`convert-tir-to-scf`) writes the vector code, and SLP changed no
        instruction of SqueezeNet's or ResNet-50's code, and took optimiser
        time.

        Then GVN and dead store elimination once more, for the parallel
        bodies that are simplified once, inlined into their tasks first
        (`hetero.runtime.parallel`): a register tile's accumulators are
        promoted to registers by LICM late in the pipeline, after GVN, so
        the zeroing of their buffer (made a `memset` by loop idiom
        recognition) and the loads of a tile's shared operand in each of its
        rows would stay (strided 3x3 convolutions of ResNet-50 ran markedly
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


def compile_llvm(
    module: ModuleOp,
    *,
    mcpu: str | None = None,
    mattr: str | Sequence[str] | None = None,
    opt_level: int = 3,
    link: Sequence[str] = (),
) -> CpuModule:
    """An `llvm`-dialect module, optimised and JIT-compiled for a CPU.

    `mcpu`, `mattr` and `opt_level` are `CpuMachine`'s.  `link` is LLVM IR
    (text) linked in before optimising: runtime support such as the CUDA
    launch stubs (`hetero.lowering.cuda_codegen`)."""
    target = CpuTarget(mcpu, mattr, opt_level)
    return CpuModule.load(target, [target.compile(module, link)])
