"""The TIR reference interpreter, on xDSL's interpreter framework.

`TirFunctions` gives each `tir` op its meaning; `make_interpreter` adds
xDSL's own `arith`, `math`, `memref`, `scf` and `builtin` functions, and
`run_prim_func` calls a prim_func on NumPy arrays and Python scalars.

Semantics the interpreter fixes (and later compiled code must agree with):

* every loop kind runs serially, in order: a parallel, vectorized, unrolled
  or thread-bound loop means the same as a serial one, only the schedule
  differs, so a program whose result depends on the order is racy;
* a target region runs its body where it is, a launch calls its kernel
  once (the kernel's thread-bound loops enumerate the threads);
* memref parameters are the caller's NumPy arrays, shared, so stores are
  visible to the caller as with real buffers; `tir.alloc` buffers are
  zero-filled (their contents are unspecified in compiled code);
* `tir.call_packed` and `tir.call_extern` call the Python function given
  for the callee's name in `functions`, with NumPy views for buffers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from math import erf, prod, tanh
from typing import Any

import numpy as np
from xdsl.dialects import arith, math, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
)
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_callable,
    impl_terminator,
    register_impls,
)
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.builtin import BuiltinFunctions, xtype_for_el_type
from xdsl.interpreters.math import MathFunctions
from xdsl.interpreters.memref import MemRefFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import RawPtr, TypedPtr
from xdsl.ir import Attribute
from xdsl.traits import SymbolTable

from hetero.dialects.memref_ops import PrefetchOp
from hetero.dialects.tir import (
    AllocOp,
    CallExternOp,
    CallOp,
    CallPackedOp,
    ForOp,
    LaunchOp,
    PrimFuncOp,
    ReturnOp,
    TargetRegionOp,
    YieldOp,
)

PythonFunction = Callable[..., Any]
"""A Python implementation of a packed or extern function."""

_FUNCTIONS_KEY = "functions"

_INT_DTYPES: Mapping[int, type[np.generic]] = {
    1: np.bool_,
    8: np.int8,
    16: np.int16,
    32: np.int32,
    64: np.int64,
}
_FLOAT_DTYPES: Mapping[type[Attribute], type[np.generic]] = {
    Float16Type: np.float16,
    Float32Type: np.float32,
    Float64Type: np.float64,
}


def numpy_dtype(element_type: Attribute) -> np.dtype[Any]:
    """The NumPy dtype of a buffer element type (`index` is 64-bit)."""
    match element_type:
        case IndexType():
            return np.dtype(np.int64)
        case IntegerType() if element_type.width.data in _INT_DTYPES:
            return np.dtype(_INT_DTYPES[element_type.width.data])
        case _ if type(element_type) in _FLOAT_DTYPES:
            return np.dtype(_FLOAT_DTYPES[type(element_type)])
    raise NotImplementedError(f"no NumPy dtype for buffers of {element_type}")


def as_numpy(buffer: ShapedArray[Any], element_type: Attribute) -> np.ndarray:
    """A NumPy view of an interpreter buffer; writes go to the buffer."""
    raw = buffer.data_ptr.raw
    flat = np.frombuffer(
        raw.memory, numpy_dtype(element_type), count=buffer.size, offset=raw.offset
    )
    return flat.reshape(buffer.shape)


def _buffer_of(array: Any, type: MemRefType, what: str) -> ShapedArray[Any]:
    """The interpreter buffer sharing `array`'s memory (no copy)."""
    dtype = numpy_dtype(type.element_type)
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{what}: expected a NumPy array for {type}, got {array!r}")
    static = all(d == e or d < 0 for d, e in zip(type.get_shape(), array.shape))
    if array.dtype != dtype or array.ndim != type.get_num_dims() or not static:
        raise TypeError(
            f"{what}: expected a {dtype} array matching {type}, "
            f"got {array.dtype} with shape {array.shape}"
        )
    if not isinstance(type.layout, NoneAttr):
        raise NotImplementedError(
            f"{what}: buffers with a layout ({type}) are not supported"
        )
    if not array.flags.c_contiguous:
        raise ValueError(f"{what}: the array must be C-contiguous (a dense buffer)")
    raw = RawPtr(array.reshape(-1).view(np.uint8))  # type: ignore[arg-type]
    xtype = xtype_for_el_type(type.element_type, 64)
    return ShapedArray(TypedPtr(raw, xtype=xtype), list(array.shape))


def _scalar_of(value: Any, type: Attribute, what: str) -> int | float:
    if isinstance(type, AnyFloat) and isinstance(value, (int, float, np.number)):
        return float(value)
    if isinstance(type, IntegerType | IndexType) and isinstance(
        value, (int, np.integer)
    ):
        return int(value)
    raise TypeError(f"{what}: expected a {type} scalar, got {value!r}")


@register_impls
class TirFunctions(InterpreterFunctions):
    """The meaning of each `tir` op (see the module docstring)."""

    @impl_callable(PrimFuncOp)
    def call_prim_func(
        self, interpreter: Interpreter, op: PrimFuncOp, args: PythonValues
    ) -> PythonValues:
        return interpreter.run_ssacfg_region(op.body, args, op.sym_name.data)

    @impl_terminator(ReturnOp)
    def run_return(
        self, interpreter: Interpreter, op: ReturnOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl_terminator(YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(()), ()

    @impl(ForOp)
    def run_for(
        self, interpreter: Interpreter, op: ForOp, args: PythonValues
    ) -> PythonValues:
        lb, ub, step = args
        interpreter.interpreter_assert(
            step > 0, f"tir.for step must be positive, not {step}"
        )
        for i in range(lb, ub, step):
            interpreter.run_ssacfg_region(op.body, (i,), f"tir.for {op.kind.data}")
        return ()

    # xDSL's ArithFunctions lacks the integer min/max the schedules emit
    # for the bounds of a last block.
    @impl(arith.MinSIOp)
    def run_minsi(
        self, interpreter: Interpreter, op: arith.MinSIOp, args: PythonValues
    ) -> PythonValues:
        return (min(args),)

    @impl(arith.MaxSIOp)
    def run_maxsi(
        self, interpreter: Interpreter, op: arith.MaxSIOp, args: PythonValues
    ) -> PythonValues:
        return (max(args),)

    # xDSL's MathFunctions has exp, log and sqrt only (relay's tanh on the
    # CPU is `math.tanh`, its erf `math.erf`).
    @impl(math.TanhOp)
    def run_tanh(
        self, interpreter: Interpreter, op: math.TanhOp, args: PythonValues
    ) -> PythonValues:
        return (tanh(args[0]),)

    @impl(math.ErfOp)
    def run_erf(
        self, interpreter: Interpreter, op: math.ErfOp, args: PythonValues
    ) -> PythonValues:
        return (erf(args[0]),)

    @impl(PrefetchOp)
    def run_prefetch(
        self, interpreter: Interpreter, op: PrefetchOp, args: PythonValues
    ) -> PythonValues:
        """A cache hint: no effect on any value."""
        return ()

    @impl(TargetRegionOp)
    def run_target_region(
        self, interpreter: Interpreter, op: TargetRegionOp, args: PythonValues
    ) -> PythonValues:
        interpreter.run_ssacfg_region(op.body, (), f"tir.target_region {op.target}")
        return ()

    @impl(AllocOp)
    def run_alloc(
        self, interpreter: Interpreter, op: AllocOp, args: PythonValues
    ) -> PythonValues:
        type = op.buffer.type
        assert isinstance(type, MemRefType)
        sizes = iter(args)
        shape = [next(sizes) if d < 0 else d for d in type.get_shape()]
        xtype = xtype_for_el_type(type.element_type, interpreter.index_bitwidth)
        return (ShapedArray(TypedPtr.zeros(prod(shape), xtype=xtype), shape),)

    @impl(memref.CastOp)
    def run_cast(
        self, interpreter: Interpreter, op: memref.CastOp, args: PythonValues
    ) -> PythonValues:
        """The same buffer: a cast only changes which sizes are static."""
        return args

    @impl(CallOp)
    def run_call(
        self, interpreter: Interpreter, op: CallOp, args: PythonValues
    ) -> PythonValues:
        return interpreter.call_op(op.callee, args)

    @impl(LaunchOp)
    def run_launch(
        self, interpreter: Interpreter, op: LaunchOp, args: PythonValues
    ) -> PythonValues:
        interpreter.call_op(op.kernel, args[: len(op.args)])
        return ()

    @impl(CallPackedOp)
    def run_call_packed(
        self, interpreter: Interpreter, op: CallPackedOp, args: PythonValues
    ) -> PythonValues:
        return self._call_python(interpreter, op, args)

    @impl(CallExternOp)
    def run_call_extern(
        self, interpreter: Interpreter, op: CallExternOp, args: PythonValues
    ) -> PythonValues:
        return self._call_python(interpreter, op, args)

    def _call_python(
        self,
        interpreter: Interpreter,
        op: CallPackedOp | CallExternOp,
        args: PythonValues,
    ) -> PythonValues:
        functions: Mapping[str, PythonFunction] = interpreter.get_data(
            TirFunctions, _FUNCTIONS_KEY, dict
        )
        name = op.callee.data
        if name not in functions:
            interpreter.raise_error(
                f'{op.name} "{name}": no Python implementation given in `functions`'
            )
        views = [
            as_numpy(a, t.element_type) if isinstance(t, MemRefType) else a
            for a, t in zip(args, op.args.types)
        ]
        result = functions[name](*views)
        return (result,) if op.res else ()


def make_interpreter(
    module: ModuleOp, functions: Mapping[str, PythonFunction] | None = None
) -> Interpreter:
    """An interpreter for TIR modules (`tir` plus the upstream dialects it uses).

    `functions` implements the names called by `tir.call_packed` and
    `tir.call_extern`.
    """
    interpreter = Interpreter(module, index_bitwidth=64)
    for impls in (
        TirFunctions(),
        ArithFunctions(),
        MathFunctions(),
        MemRefFunctions(),
        ScfFunctions(),
        BuiltinFunctions(),
    ):
        interpreter.register_implementations(impls)
    interpreter.set_data(TirFunctions, _FUNCTIONS_KEY, dict(functions or {}))
    return interpreter


def run_prim_func(
    module: ModuleOp,
    name: str,
    *args: Any,
    functions: Mapping[str, PythonFunction] | None = None,
) -> tuple[Any, ...]:
    """Call the prim_func `@name` of `module`; return its results as a tuple.

    Memref parameters take C-contiguous NumPy arrays of the exact dtype
    (`index` = int64), which the call reads and writes in place; scalar
    parameters take Python or NumPy numbers.
    """
    func = SymbolTable.lookup_symbol(module, name)
    if not isinstance(func, PrimFuncOp):
        raise ValueError(f"the module has no tir.prim_func named @{name}")  # noqa: TRY004  (a missing name)
    module.verify()
    inputs: Sequence[Attribute] = func.function_type.inputs.data
    if len(args) != len(inputs):
        raise TypeError(f"@{name} takes {len(inputs)} argument(s), {len(args)} given")
    values = [
        _buffer_of(a, t, f"argument #{i} of @{name}")
        if isinstance(t, MemRefType)
        else _scalar_of(a, t, f"argument #{i} of @{name}")
        for i, (a, t) in enumerate(zip(args, inputs))
    ]
    return make_interpreter(module, functions).call_op(func, tuple(values))
