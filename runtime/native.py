"""Native code loaded into this process and called on NumPy arrays, without the compiler.

The part of the CPU runtime that a deployed model needs (`hetero.runtime.artifact`):
object files loaded by MCJIT as one module (`NativeModule`) and functions
called through ctypes by a plain description of their ABI (`Abi`,
`NativeFunction`).  Nothing here imports xDSL: `hetero.runtime.cpu` compiles
the objects and derives each function's `Abi` from its types; a `.hetero` file
stores both, and loads with llvmlite and NumPy alone.

A memref parameter takes a C-contiguous array of its dtype, whose rank and
static dimensions are checked before the call and whose dynamic dimensions
are passed as sizes; scalars are Python numbers (range-checked integers).
Every wrong argument raises `ArgumentError` before any native code runs; a
heap allocation that failed in the native code raises `MemoryError` after it
(`hetero.runtime.buffers`).
"""

from __future__ import annotations

import ctypes
import weakref
from collections.abc import Callable, Mapping, Sequence
from functools import cache, partial
from importlib import resources
from typing import Any, NamedTuple

import llvmlite.binding as llvm
import numpy as np

from hetero.runtime import buffers

CTYPES: dict[str, Any] = {
    "i1": ctypes.c_bool,
    "i8": ctypes.c_int8,
    "i16": ctypes.c_int16,
    "i32": ctypes.c_int32,
    "i64": ctypes.c_int64,
    "f32": ctypes.c_float,
    "f64": ctypes.c_double,
}
"""The scalar types a Python caller can pass, by name (no f16: ctypes lacks it)."""


class ArgumentError(ValueError, TypeError):
    """An argument that does not fit the signature, found before the call."""


@cache
def initialize() -> None:
    """LLVM's native target, once a process."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


class Param(NamedTuple):
    """A parameter: a scalar (`dtype` None) or a memref, whose pointer is
    followed by the sizes of its dynamic (-1) dimensions."""

    label: str
    """For messages: `@f: argument #0 (f32)`."""
    ctype: str
    """A `CTYPES` name: the scalar's, or the sizes' of a memref."""
    dtype: str | None = None
    shape: tuple[int, ...] = ()


class Abi(NamedTuple):
    """How Python calls a native function: plain data, kept as JSON."""

    name: str
    symbol: str
    """What ctypes calls: the function, or a wrapper returning its results
    through a pointer (a struct return does not follow the C ABI)."""
    text: str
    """Its signature as written, for messages."""
    params: tuple[Param, ...]
    results: tuple[str, ...]
    """`CTYPES` names."""

    @classmethod
    def of_json(cls, row: Mapping[str, Any]) -> Abi:
        """The `Abi` whose `_asdict()` JSON read back as `row`."""
        params = tuple(Param(p[0], p[1], p[2], tuple(p[3])) for p in row["params"])
        return cls(
            row["name"], row["symbol"], row["text"], params, tuple(row["results"])
        )


class _Scalar:
    """A scalar parameter, passed as the C type `ctype`."""

    def __init__(self, label: str, ctype: Any):
        self.label = label
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

    def __init__(self, param: Param):
        self.label = param.label
        self.dtype = np.dtype(param.dtype)
        self.rank = len(param.shape)
        self.static = [(d, size) for d, size in enumerate(param.shape) if size >= 0]
        self.dynamic = [d for d, size in enumerate(param.shape) if size < 0]
        self.ctypes = [ctypes.c_void_p] + [CTYPES[param.ctype]] * len(self.dynamic)
        self.kept: tuple[np.ndarray, tuple[int, ...], object, list[object]] | None = (
            None
        )
        """The last read-only array converted, its shape, dtype and raw
        values (one tuple, replaced whole: threads may convert at once)."""

    def convert(self, value: object) -> list[object]:
        """`value`'s address and dynamic sizes, or an `ArgumentError`.

        A read-only array (a compiled function's constants) is kept with
        its raw values, which are reused while the same array comes with
        the same shape and dtype, still C-contiguous: finding its address
        costs a microsecond and more, a model's hundreds of weights a
        tenth of a millisecond and more each call.  Kept alive here, it
        cannot be resized, so its address cannot change."""
        kept = self.kept
        if (
            kept is not None
            and value is kept[0]
            and value.shape == kept[1]
            and value.dtype is kept[2]
            and value.flags.c_contiguous
        ):
            return kept[3]
        raw = self._convert(value)
        if not value.flags.writeable:  # an ndarray now
            self.kept = (value, value.shape, value.dtype, raw)  # type: ignore[union-attr]
        return raw

    def _convert(self, value: object) -> list[object]:
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


class NativeFunction:
    """A loaded function, called with NumPy arrays and Python scalars."""

    def __init__(self, abi: Abi, address: int, owner: NativeModule):
        self.name = abi.name
        self.abi = abi
        self._params = [
            _MemRef(p) if p.dtype else _Scalar(p.label, CTYPES[p.ctype])
            for p in abi.params
        ]
        results = [CTYPES[r] for r in abi.results]
        argtypes = [c for p in self._params for c in p.ctypes]
        restype = results[0] if len(results) == 1 else None
        self._struct: type[ctypes.Structure] | None = None
        if len(results) > 1:  # returned through a pointer
            fields = [(f"r{i}", r) for i, r in enumerate(results)]
            self._struct = type("Results", (ctypes.Structure,), {"_fields_": fields})
            argtypes.append(ctypes.c_void_p)
        self._results = len(results)
        self._owner = owner  # keeps the machine code alive
        self._cfunc = ctypes.CFUNCTYPE(restype, *argtypes)(address)
        self._checked = owner.allocates

    def __call__(self, *args: object) -> object:
        return self._run(self._convert(args))

    def bind(self, *args: object) -> Callable[[], object]:
        """The call of `args`, checked and converted now, made by calling
        the result (as often as asked): what the profiler times, since the
        conversion costs Python microseconds a call (over ten for a
        kernel's few arrays) that the host function's own call of a kernel
        does not."""
        return partial(self._run, self._convert(args))

    def _convert(self, args: Sequence[object]) -> list[object]:
        """`args` as the raw values ctypes passes, or an `ArgumentError`."""
        if len(args) != len(self._params):
            raise ArgumentError(
                f"@{self.name} {self.abi.text} takes {len(self._params)} arguments, "
                f"got {len(args)}"
            )
        raw: list[object] = []
        for param, arg in zip(self._params, args):
            raw += param.convert(arg)
        return raw

    def _run(self, raw: list[object]) -> object:
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
        return tuple(getattr(out, f"r{i}") for i in range(self._results))

    def __repr__(self) -> str:
        return f"<CpuFunction @{self.name} {self.abi.text}>"


class NativeModule:
    """Object files loaded by MCJIT as one module (calls of one another's
    functions resolve), with the process's runtimes they call bound first:
    heap buffers (`hetero.runtime.buffers`) and the thread pool
    (`hetero.runtime.parallel`).  `functions`: every function the objects
    define (True) or declare (False), by name; `abis`: those Python calls."""

    def __init__(
        self,
        objects: Sequence[bytes],
        machine: llvm.TargetMachine,
        functions: Mapping[str, bool],
        abis: Mapping[str, Abi],
    ):
        from hetero.runtime.parallel import PARALLEL_FOR, load_pool

        initialize()
        self._abis = dict(abis)
        self.allocates = any(name in functions for name in buffers.SYMBOLS)
        """Whether its code takes heap buffers: its calls then report failed
        allocations as `MemoryError`."""
        if self.allocates:
            buffers.load_runtime()  # before the objects' calls are bound
        if PARALLEL_FOR in functions:
            load_pool()
        empty = llvm.parse_assembly("")
        empty.triple = machine.triple
        self._engine = llvm.create_mcjit_compiler(empty, machine)
        for code in objects:
            self._engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        self._engine.finalize_object()
        self._compiled: dict[str, NativeFunction] = {}
        defined = [name for name, is_defined in functions.items() if is_defined]
        self.release = weakref.finalize(
            self, buffers.release_slots, self._slots(defined), self._engine
        )
        """Frees the buffers its functions keep between calls: when it is
        garbage-collected, or called (once; later calls allocate afresh)."""
        self.release.atexit = False  # the process's memory goes with it

    def _slots(self, defined: Sequence[str]) -> list[int]:
        """The addresses of the functions' buffer slots, `@<function>.buffer.<k>`
        (`convert-memref-to-llvm`), numbered from 0 in each function."""
        slots: list[int] = []
        for name in defined if self.allocates else ():
            k = 0
            while address := self._engine.get_global_value_address(
                f"{name}.buffer.{k}"
            ):
                slots.append(address)
                k += 1
        return slots

    def function(self, name: str, results: int | None = None) -> NativeFunction:
        """The public function `name`, callable from Python.  `results` (how
        many of the last arguments are results) matters to a `GpuProgram`
        only: CPU code writes the caller's arrays themselves."""
        if name not in self._compiled:
            abi = self._abi(name)
            address = self._engine.get_function_address(abi.symbol)
            self._compiled[name] = NativeFunction(abi, address, self)
        return self._compiled[name]

    def _abi(self, name: str) -> Abi:
        if name not in self._abis:
            known = ", ".join(f"@{n}" for n in self._abis)
            raise ValueError(
                f"no function @{name} in the module (callable: {known or 'none'})"
            )
        return self._abis[name]

    def global_address(self, name: str) -> int:
        """The address of the global variable `name` (a runtime fills some in)."""
        return self._engine.get_global_value_address(name)


def jit_machine(
    triple: str, mcpu: str, mattr: str, opt_level: int
) -> llvm.TargetMachine:
    """A new target machine for MCJIT: an engine owns (and frees) its own."""
    initialize()
    return llvm.Target.from_triple(triple).create_target_machine(
        cpu=mcpu, features=mattr, opt=opt_level, codemodel="jitdefault", jit=True
    )


def runtime_ir(name: str) -> str:
    """The LLVM IR of the runtime's file `name` (`cuda_shim.ll`, ...): kept
    in `.ll` files beside this module, so that they read as LLVM IR."""
    return resources.files(__package__).joinpath(name).read_text()
