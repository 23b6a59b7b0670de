"""A compiled function: native code, its constants and its signature, called on arrays.

    y = f(x, w)                      # positional NumPy arrays
    y = f(data=x, w=w)               # by the relay function's parameter names
    y = f({"data": x, "w": w})       # a dict, as onnxruntime's run(None, {...})
    f(x, w, out=y)                   # the result written into given arrays

An input may be anything with `__dlpack__` (a CPU torch tensor, a JAX
array): it is read through `np.from_dlpack`, without a copy where it is
C-contiguous.  `hetero.compile` (`hetero.driver`) makes a `CompiledFunction`;
`hetero.load` reads one from a `.hetero` file (`hetero.runtime.artifact`).
Nothing here imports xDSL, so that a deployed model needs neither it nor the
compiler.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from hetero.runtime.cuda import ResidentArray
    from hetero.runtime.native import NativeModule
    from hetero.runtime.profiler import HostPlan, Profile


class CompiledFunctionError(ValueError):
    """Inputs that do not match the compiled function's signature."""


def as_array(label: str, value: object) -> object:
    """`value`, or the NumPy array of a DLPack tensor (`__dlpack__`) read in
    place; anything else is left for the signature's check."""
    if isinstance(value, np.ndarray) or not hasattr(value, "__dlpack__"):
        return value
    try:
        return np.from_dlpack(value)
    except (BufferError, RuntimeError, TypeError, ValueError) as error:
        raise CompiledFunctionError(
            f"{label}: NumPy cannot read this {type(value).__name__} "
            f"through DLPack ({error}); a GPU tensor must be copied to the CPU first"
        ) from None


def by_position(
    function: str,
    params: Sequence[tuple[str, str | None]],
    inputs: Sequence[object],
    named: Mapping[str, object],
) -> list[object]:
    """The arguments of a call in parameter order: `inputs` by position (or
    one dict of them by name), then `named` by name; `params` are each
    parameter's label and name."""
    if len(inputs) == 1 and isinstance(inputs[0], Mapping):
        if named:
            raise CompiledFunctionError(
                f"{function}: give the inputs as one dict or as keywords, not both"
            )
        inputs, named = (), inputs[0]
    if len(inputs) > len(params) or (not named and len(inputs) < len(params)):
        raise CompiledFunctionError(
            f"{function} takes {len(params)} input(s), {len(inputs)} given"
        )
    names = {name: i for i, (_, name) in enumerate(params) if name is not None}
    arguments: list[object] = list(inputs) + [_MISSING] * (len(params) - len(inputs))
    for name, value in named.items():
        if name not in names:
            known = ", ".join(repr(n) for n in names) or "none: pass them by position"
            raise CompiledFunctionError(
                f"{function} has no input named {name!r} (its inputs: {known})"
            )
        if arguments[names[name]] is not _MISSING:
            raise CompiledFunctionError(f"{function}: input {name!r} is given twice")
        arguments[names[name]] = value
    missing = [label for (label, _), a in zip(params, arguments) if a is _MISSING]
    if missing:
        raise CompiledFunctionError(f"{function}: missing {', '.join(missing)}")
    return [as_array(label, a) for (label, _), a in zip(params, arguments)]


_MISSING = object()


@dataclass(frozen=True)
class Signature:
    """Shape and dtype of one input or of the output."""

    label: str
    shape: tuple[int, ...]
    """-1 where the size is known at each call only (a dynamic dimension)."""
    dtype: np.dtype[Any]
    name: str | None = None
    """An input's name: the relay function's parameter name (an ONNX
    model's input name, as the importer wrote it)."""

    def check(self, value: object) -> np.ndarray:
        """`value` as a C-contiguous array, or a clear error."""
        if not isinstance(value, np.ndarray):
            raise CompiledFunctionError(
                f"{self.label} must be a NumPy array (or have __dlpack__), "
                f"got {type(value).__name__}"
            )
        self._check_type(value)
        return np.require(value, requirements="C")  # keeps rank 0 (`_decode_constants`)

    def check_out(self, value: object) -> np.ndarray:
        """`value` as an array the result is written into, or a clear error:
        it must already be C-contiguous and writeable (a copy would not be
        the caller's array)."""
        if not isinstance(value, np.ndarray):
            raise CompiledFunctionError(
                f"out for {self.label} must be a NumPy array, got {type(value).__name__}"
            )
        self._check_type(value, "out for ")
        if not value.flags.c_contiguous or not value.flags.writeable:
            raise CompiledFunctionError(
                f"out for {self.label} must be a C-contiguous, writeable array"
            )
        return value

    def _check_type(self, value: np.ndarray, prefix: str = "") -> None:
        fits = len(value.shape) == len(self.shape) and all(
            d < 0 or d == n for d, n in zip(self.shape, value.shape)
        )
        if not fits or value.dtype != self.dtype:
            shape = str(self.shape).replace("-1", "?")
            raise CompiledFunctionError(
                f"{prefix}{self.label} must have shape {shape} and dtype "
                f"{self.dtype}, got shape {value.shape} and dtype {value.dtype}"
            )


Structure = int | tuple["Structure", ...]


@dataclass
class CompiledFunction:
    """The native entry function: `f(*inputs) -> output` in NumPy; a tuple
    result is returned as a (nested) tuple of arrays."""

    native: NativeModule
    symbol: str
    inputs: tuple[Signature, ...]
    outputs: tuple[Signature, ...]
    """The result's tensors, a tuple result flattened in order."""
    structure: Structure
    """Where each output goes: its index, or a tuple of structures."""
    constants: tuple[np.ndarray | ResidentArray, ...]
    """Decoded once; for a `GpuProgram`, uploaded to managed memory once."""
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds spent in each compilation stage (or in loading, `hetero.load`)."""
    memory: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per device, the intermediates' planned bytes and the bytes they would
    take without reuse (`plan-memory`)."""
    plan: HostPlan | Exception | None = None
    """The host function's steps, for `profile` (or why it cannot be replayed)."""
    num_threads: int | None = None
    """The threads of its parallel loops at each call that sets none; None:
    the targets' `num_threads`, else `HETERO_NUM_THREADS`, else the CPUs
    this process may use (docs/lowering.md)."""

    def __call__(
        self,
        *inputs: object,
        out: np.ndarray | Sequence[np.ndarray] | None = None,
        num_threads: int | None = None,
        **named: object,
    ) -> Any:
        """The inputs by position, by name or as one dict (module docstring);
        `out`: the output array (a sequence of them for a tuple result,
        flattened in order) to write the result into, which is returned, and
        which may share no memory with the inputs or one another;
        `num_threads`: this call's parallel loops' threads (see the field)."""
        arrays, outs = self._arguments(inputs, named, out)
        return self.run(arrays, outs, num_threads)

    def run(
        self,
        arrays: Sequence[np.ndarray],
        outs: Sequence[np.ndarray],
        num_threads: int | None = None,
    ) -> Any:
        """The native call on inputs and outputs already checked (by
        `__call__`, or by a function compiled once for dynamic shapes,
        `hetero.runtime.dynamic.DynamicCalls`, which also checks the sizes
        fit): the result."""
        with _threads(num_threads, self.num_threads):
            function = self.native.function(self.symbol, results=len(outs))
            function(*arrays, *self.constants, *outs)
        return _regroup(self.structure, outs)

    @property
    def dynamic(self) -> bool:
        """Compiled once for dynamic shapes (`?` sizes, -1 in the
        signatures): only its `DynamicFunction` knows the sizes that fit."""
        return any(d < 0 for s in (*self.inputs, *self.outputs) for d in s.shape)

    def _refuse_dynamic(self) -> None:
        if self.dynamic:
            raise CompiledFunctionError(
                f"@{self.symbol} is compiled once for dynamic shapes: call the "
                "DynamicFunction that hetero.compile returned, which checks that "
                "the sizes fit and sizes the outputs, and save that one (without "
                "those rules it is not saved)"
            )

    def profile(
        self, *inputs: object, num_threads: int | None = None, **named: object
    ) -> Profile:
        """The call run kernel by kernel from Python (`runtime/profiler.py`,
        a debug executor): its result and each kernel call's time, in order."""
        arrays, outs = self._arguments(inputs, named, None)
        return self.replay(arrays, outs, num_threads)

    def replay(
        self,
        arrays: Sequence[np.ndarray],
        outs: Sequence[np.ndarray],
        num_threads: int | None = None,
    ) -> Profile:
        """`profile` of inputs and outputs already checked, as `run` calls."""
        from hetero.runtime.profiler import Profile

        if self.plan is None or isinstance(self.plan, Exception):
            raise self.plan or CompiledFunctionError("no host plan to profile")
        with _threads(num_threads, self.num_threads):
            calls = self.plan.run(self.native, [*arrays, *self.constants, *outs])
        return Profile(_regroup(self.structure, outs), calls)

    def save(self, path: str | Path) -> None:
        """Write this function to `path` as a `.hetero` file, which
        `hetero.load` runs without the compiler (docs/deployment.md)."""
        from hetero.runtime.artifact import save

        self._refuse_dynamic()
        save(self, Path(path))

    @property
    def parameters(self) -> tuple[tuple[str, str | None], ...]:
        """Each input's label and name."""
        return tuple((s.label, s.name) for s in self.inputs)

    def _arguments(
        self,
        inputs: Sequence[object],
        named: Mapping[str, object],
        out: np.ndarray | Sequence[np.ndarray] | None,
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """`arguments` of a call of this function itself: static shapes only."""
        self._refuse_dynamic()
        return self.arguments(inputs, named, out)

    def arguments(
        self,
        inputs: Sequence[object],
        named: Mapping[str, object],
        out: np.ndarray | Sequence[np.ndarray] | None,
        shapes: Callable[[list[np.ndarray]], Sequence[tuple[int, ...]]] | None = None,
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """The checked inputs and the output arrays of a call: `out`, checked,
        else fresh ones, of `shapes(inputs)` (by default the outputs' own)."""
        values = by_position(f"@{self.symbol}", self.parameters, inputs, named)
        arrays = [s.check(v) for s, v in zip(self.inputs, values)]
        sizes = [o.shape for o in self.outputs] if shapes is None else shapes(arrays)
        outs = output_arrays(self.symbol, self.outputs, sizes, out)
        if out is not None:
            self._refuse_overlaps(arrays, outs)
        return arrays, outs

    def _refuse_overlaps(
        self, arrays: Sequence[np.ndarray], outs: Sequence[np.ndarray]
    ) -> None:
        """`out` arrays must share no memory with the inputs or one another:
        a kernel reads its inputs while it writes its outputs (and a tile may
        write an element twice), so an output over an input would be read
        after it was written."""
        named = [*zip(self.inputs, arrays), *zip(self.outputs, outs)]
        for i, o in enumerate(outs):
            for signature, other in named[: len(arrays) + i]:
                if np.may_share_memory(o, other):
                    raise CompiledFunctionError(
                        f"out for {self.outputs[i].label} shares memory with "
                        f"{signature.label}: give outputs of their own"
                    )


def output_arrays(
    symbol: str,
    signatures: Sequence[Signature],
    shapes: Sequence[tuple[int, ...]],
    out: np.ndarray | Sequence[np.ndarray] | None,
) -> list[np.ndarray]:
    """A call's output arrays: fresh ones of `shapes` (this call's sizes of
    `signatures`), else `out` (a sequence for a tuple result, flattened),
    checked to fit."""
    if out is None:
        return [np.empty(shape, o.dtype) for shape, o in zip(shapes, signatures)]
    given = [out] if isinstance(out, np.ndarray) else list(out)
    if len(given) != len(signatures):
        raise CompiledFunctionError(
            f"@{symbol} has {len(signatures)} output(s), out gives {len(given)}"
        )
    outs = [o.check_out(g) for o, g in zip(signatures, given)]
    for o, shape, array in zip(signatures, shapes, outs):
        if array.shape != tuple(shape):
            raise CompiledFunctionError(
                f"out for {o.label} must have shape {shape} for these "
                f"inputs, got {array.shape}"
            )
    return outs


def _threads(call: int | None, function: int | None) -> AbstractContextManager[None]:
    """`using_threads` of a call's thread count, else of its function's;
    nothing to set where neither sets one."""
    count = function if call is None else call
    if count is None:
        return nullcontext()
    from hetero.runtime.parallel import using_threads

    return using_threads(count)


def _regroup(structure: Structure, outs: list[np.ndarray]) -> Any:
    if isinstance(structure, int):
        return outs[structure]
    return tuple(_regroup(s, outs) for s in structure)
