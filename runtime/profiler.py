"""Per-kernel times inside a whole call: a debug executor for the host function.

`hetero.compile` makes one native host function that calls every kernel in
turn, so a call's time says nothing of where it goes; timing each kernel
alone on random buffers (`bench onnx`'s first table) misses what the
network does to it: inputs just written by the kernel before (in cache),
weights read once per call, the arena's reuse of memory.  Like TVM's debug
executor, `HostPlan` replays the host function step by step from Python on
the real buffers: its arena and views as NumPy arrays over the same bytes,
each `tir.call` of a kernel a call of that kernel's native entry, timed.

The plan is plain data, which the compiler makes of the host function
(`hetero.lowering.host_plan`): only host functions made of what
`lower-aot-main` and `plan-memory` emit for CPU kernels are replayed.  A
function compiled once for dynamic shapes is too: its sizes are host values
(`Index`), computed from the inputs' shapes at each run as the host does.
"""

from __future__ import annotations

import json
import operator
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Value:
    """A value of the host function, by position: its arguments first, then
    the results of its steps (`HostPlan.steps`) in order."""

    position: int


Extent = int | Value
"""A size or byte offset: known when compiled, or an index value of the host
(a dynamic size, read from the inputs at each call)."""


@dataclass(frozen=True)
class Buffer:
    """A buffer the host allocates: `bytes` of arena, or a typed view of
    buffer `source` at `offset` bytes."""

    shape: tuple[Extent, ...]
    dtype: np.dtype[Any]
    source: int | None = None
    offset: Extent = 0


@dataclass(frozen=True)
class Index:
    """An index value the host computes: `INDEX_OPS[op]` of `operands`."""

    op: str
    operands: tuple[Extent, ...]


INDEX_OPS: dict[str, Callable[..., int]] = {
    "arith.muli": operator.mul,
    "memref.dim": lambda array, axis: array.shape[axis],
}
"""The index values a host function computes, by op name: the sizes of its
inputs (`memref.dim`) and their products (`lower-aot-main` sizes a buffer
by a product of the inputs' sizes, `te.emit.Emitter.index`)."""


@dataclass(frozen=True)
class KernelCall:
    """`kernel(*values)`: each operand an index into the host's values (its
    arguments first, then its buffers in order)."""

    kernel: str
    operands: tuple[int, ...]


@dataclass(frozen=True)
class KernelTime:
    """One kernel call of a profiled run, in call order: its kernel, time,
    start (`time.perf_counter()`) and device (a `tir.call` runs its kernel on
    the host function's device: a GPU launch is not replayed)."""

    kernel: str
    seconds: float
    start: float = 0.0
    device: str = "cpu"


@dataclass(frozen=True)
class KernelSummary:
    """A kernel's share of a call: its calls, and their seconds together."""

    kernel: str
    calls: int
    seconds: float


def summarize(runs: Sequence[Sequence[KernelTime]]) -> list[KernelSummary]:
    """Per kernel of several profiled runs of one call: the median of each of
    its calls over the runs, summed (`lower-te` makes one kernel serve every
    identical layer), the costliest first."""
    seconds: dict[str, float] = {}
    calls: dict[str, int] = {}
    for i, call in enumerate(runs[0]):
        median = float(np.median([run[i].seconds for run in runs]))
        seconds[call.kernel] = seconds.get(call.kernel, 0.0) + median
        calls[call.kernel] = calls.get(call.kernel, 0) + 1
    rows = [KernelSummary(k, calls[k], t) for k, t in seconds.items()]
    return sorted(rows, key=lambda r: -r.seconds)


@dataclass(frozen=True)
class Profile:
    """A replayed call: its result arrays (as the call returns them) and the
    time of each kernel call, in order."""

    outputs: Any
    calls: tuple[KernelTime, ...]

    def save_trace(self, path: str | Path) -> None:
        """Writes the run as a Chrome trace (`chrome_trace`)."""
        save_trace(self.calls, path)


def chrome_trace(calls: Sequence[KernelTime]) -> dict[str, Any]:
    """`calls` (of one or several profiled runs) as a Chrome trace-event
    document, which chrome://tracing and Perfetto open: one complete event
    (`"ph": "X"`) per kernel call on its device's track, in microseconds from
    the first call's start, with its device and position in `args`."""
    origin = min((c.start for c in calls), default=0.0)
    tracks = {
        device: i for i, device in enumerate(dict.fromkeys(c.device for c in calls))
    }
    names = [
        {
            "name": "thread_name",
            "ph": "M",
            "pid": 0,
            "tid": tid,
            "args": {"name": device},
        }
        for device, tid in tracks.items()
    ]
    slices = [
        {
            "name": c.kernel,
            "cat": "kernel",
            "ph": "X",
            "ts": (c.start - origin) * 1e6,
            "dur": c.seconds * 1e6,
            "pid": 0,
            "tid": tracks[c.device],
            "args": {"device": c.device, "call": i},
        }
        for i, c in enumerate(calls)
    ]
    process = {"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "hetero"}}
    return {"traceEvents": [process, *names, *slices], "displayTimeUnit": "ms"}


def save_trace(calls: Sequence[KernelTime], path: str | Path) -> None:
    """Writes `chrome_trace(calls)` to `path` as JSON."""
    Path(path).write_text(json.dumps(chrome_trace(calls), separators=(",", ":")))


@dataclass(frozen=True)
class HostPlan:
    """The steps of a host function (see the module docstring)."""

    arguments: int
    steps: tuple[Buffer | Index, ...]
    """Its buffers and index values, in order: each a host value after the arguments."""
    calls: tuple[KernelCall, ...]
    device: str = "cpu"
    """Where its kernels run: the host function's device type."""
    allocated: dict[int, np.ndarray] = field(
        default_factory=dict, compare=False, repr=False
    )
    """The buffers the host allocates, by step, made by the first run (aligned
    as the host's, `_aligned`) and reused by the next of the same sizes, as a
    call's arena is the buffer its function keeps between calls, already
    mapped (`hetero.runtime.buffers`): fresh arrays would charge the page
    faults of their first touch to whichever kernel writes a page first."""
    lock: threading.Lock = field(
        default_factory=threading.Lock, compare=False, repr=False
    )
    """Held by a run: runs of one plan share its buffers."""

    def run(
        self, native: Any, arguments: Sequence[np.ndarray]
    ) -> tuple[KernelTime, ...]:
        """Runs the calls on `arguments` (the host function's), timing each."""
        with self.lock:
            return self._run(native, arguments)

    def _run(
        self, native: Any, arguments: Sequence[np.ndarray]
    ) -> tuple[KernelTime, ...]:
        values: list[Any] = list(arguments)
        for position, step in enumerate(self.steps):
            values.append(self._value(position, step, values))
        # Arguments converted before any timing (`NativeFunction.bind`): a
        # small kernel's time would otherwise be mostly Python's.
        bound = [
            native.function(c.kernel).bind(*(values[i] for i in c.operands))
            for c in self.calls
        ]
        times = []
        for call, run in zip(self.calls, bound):
            start = time.perf_counter()
            run()
            seconds = time.perf_counter() - start
            times.append(KernelTime(call.kernel, seconds, start, self.device))
        return tuple(times)

    def _value(self, position: int, step: Buffer | Index, values: list[Any]) -> Any:
        """What `step` makes of the host values before it."""
        if isinstance(step, Index):
            return INDEX_OPS[step.op](*(_resolve(o, values) for o in step.operands))
        shape = tuple(_resolve(e, values) for e in step.shape)
        if step.source is not None:
            arena, offset = values[step.source], _resolve(step.offset, values)
            count = int(np.prod(shape))
            return np.frombuffer(arena, step.dtype, count, offset).reshape(shape)
        buffer = self.allocated.get(position)
        if buffer is None or buffer.shape != shape:
            buffer = self.allocated[position] = _aligned(shape, step.dtype)
        return buffer


def _resolve(extent: Extent, values: list[Any]) -> Any:
    """`extent`'s value in a run: itself, or the host value it names."""
    return values[extent.position] if isinstance(extent, Value) else extent


ALIGNMENT = 64
"""Bytes the host's buffers are aligned to (`memref.alloc`: `hetero_buffer_take(.., 64, ..)`)."""


def _aligned(shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    """An uninitialised array at an address that is a multiple of
    `ALIGNMENT`, as the host's (NumPy aligns to 16 bytes: a kernel's vector
    accesses would straddle cache lines that they do not in the call)."""
    size = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(size + ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    return raw[start : start + size].view(dtype).reshape(shape)
