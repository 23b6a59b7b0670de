"""Heap buffers of compiled code: kept across calls, and failed allocations reported.

`convert-memref-to-llvm` lowers each `memref.alloc` to a call of
`hetero_buffer_take(slot, alignment, bytes, alloc, free, name)` and each
`memref.dealloc` to `hetero_buffer_give(slot, buffer)`, defined here in LLVM
IR (no C compiler needed), JIT-compiled once per process and bound by name
(`llvm.add_symbol`) for every module, like the thread pool
(`hetero.runtime.parallel`).

**Reuse.** A large buffer's allocation site has a slot of its own, a
pointer-sized global `@<function>.buffer.<k>`.  `take` exchanges the slot
with null: a buffer found there (left by the last call) is used again if it
is large enough; if the slot is empty (first call, or another thread holds
its buffer) a new one is allocated.  `give` puts the buffer back with a
compare-and-swap from null, or frees it if the slot is full (another
thread's call gave one back first).  Concurrent calls therefore never share
a buffer, and a function called again and again maps no fresh memory: the C
library maps an allocation over its `mmap` threshold afresh at each call and
unmaps it at `free` (glibc, over 32 MiB: a page fault per 4 KiB page of a
large arena at every call).  `CpuModule` frees its slots' buffers when it is
garbage-collected (`release_slots`).  Sites without a slot (buffers under
`REUSED_BYTES`, which the C library keeps in its heap) pass a null slot: the
buffer is allocated and freed at each call.

A buffer's header, the `alignment` bytes before it, records the base address
the allocator returned, the function that frees it and its capacity: `give`
and `release` free with the allocator that made the buffer (a GPU host
function's are managed memory: `hetero.runtime.cuda.MANAGED_ALLOCATION`),
and a site of run-time size (`merge-kernels`' shared kernels) keeps its
largest buffer.

**Failures.** When the allocator returns null, `take` records the failure
(`hetero_alloc_failed`: the buffer's name and size, the first failure of a
call wins) and returns null; the generated code then returns at once from
its function, and the host function returns after any call that failed
(`hetero.lowering.convert_memref_to_llvm.check_allocations`).  Each Python
thread that calls compiled code has its failure record (`thread_record`),
which `CpuFunction` reads after the call and turns into `MemoryError`.
Threads without one (the thread pool's workers) record in one shared record,
which the thread that ran the parallel loop moves to its own before it lets
go of the pool (`hetero_adopt_failures`): only that loop's tasks can have
written it meanwhile.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import llvmlite.binding as llvm_binding

TAKE = "hetero_buffer_take"
"""`ptr take(ptr slot, i64 alignment, i64 bytes, ptr alloc, ptr free, ptr name)`:
a buffer of at least `bytes`, or null (the failure recorded)."""

GIVE = "hetero_buffer_give"
"""`void give(ptr slot, ptr buffer)`: the buffer back to its slot, or freed."""

FAILED = "hetero_failed"
"""`i1 failed()`: whether an allocation of the calling thread's call failed."""

ADOPT = "hetero_adopt_failures"
"""`void adopt()`: the workers' failure moved to the calling thread's record."""

SYMBOLS = (TAKE, GIVE, FAILED, ADOPT, "hetero_alloc_failed")
"""The runtime's functions that compiled code calls."""

SLOTS = 64
"""Slots of an allocation site: buffers kept for as many calls at once, or
as many tasks of a parallel loop (`hetero.runtime.parallel.MAX_THREADS`)."""

REUSED_BYTES = 1 << 17
"""Buffers of at least this many bytes (and those of run-time size) keep
their slot's buffer across calls: glibc never maps a smaller allocation of
its own (128 KiB is its least `mmap` threshold)."""


def buffers_ir() -> str:
    """The runtime's LLVM IR (`buffers.ll`, a template: `SLOTS` filled in;
    the module docstring says what it does).  A header needs 24 bytes: the
    least alignment of a heap buffer (`convert_memref_to_llvm.ALIGNMENT`,
    64) leaves room for it."""
    from hetero.runtime.native import runtime_ir  # which imports this module

    return runtime_ir("buffers.ll").replace("{slots}", str(SLOTS))


class Record(ctypes.Structure):
    """A thread's failure record: the failed buffer's name (a C string in the
    compiled code), null if none, and its size in bytes."""

    _fields_ = [("name", ctypes.c_void_p), ("size", ctypes.c_int64)]


class _Runtime(NamedTuple):
    set_record: Callable[[int], None]
    release: Callable[[int], None]


_lock = threading.Lock()
_runtime: _Runtime | None = None
_threads = threading.local()


def load_runtime() -> _Runtime:
    """Compile the runtime once per process and bind its symbols for every
    module; its engine is never disposed (compiled code of any module calls it)."""
    global _runtime
    if _runtime is not None:
        return _runtime
    with _lock:
        if _runtime is None:
            _runtime = _compile_runtime()
        return _runtime


def _compile_runtime() -> _Runtime:
    from hetero.runtime.native import initialize as _initialize

    _initialize()
    target = llvm_binding.Target.from_triple(llvm_binding.get_process_triple())
    machine = target.create_target_machine(opt=2, codemodel="jitdefault", jit=True)
    module = llvm_binding.parse_assembly(buffers_ir())
    module.verify()
    engine = llvm_binding.create_mcjit_compiler(module, machine)
    engine.finalize_object()

    def function(name: str, restype: object, *argtypes: object) -> Callable[..., Any]:
        return ctypes.CFUNCTYPE(restype, *argtypes)(engine.get_function_address(name))

    if function("hetero_buffers_init", ctypes.c_int32)() != 0:
        raise MemoryError("no thread-specific key left for hetero's failure records")
    for name in SYMBOLS:
        llvm_binding.add_symbol(name, engine.get_function_address(name))
    runtime = _Runtime(
        function("hetero_set_failure_record", None, ctypes.c_void_p),
        function("hetero_buffer_release", None, ctypes.c_void_p),
    )
    engine.detach()
    return runtime


def thread_record() -> Record:
    """The calling thread's failure record, made and registered at its first call."""
    record = getattr(_threads, "record", None)
    if record is None:
        record = _threads.record = Record()
        load_runtime().set_record(ctypes.addressof(record))
    return record


def raise_failure(record: Record, function: str) -> None:
    """`MemoryError` for the failure in `record` (then cleared), if any."""
    if not record.name:
        return
    name = ctypes.string_at(record.name).decode()
    size = record.size
    record.name = None
    raise MemoryError(
        f"@{function}: could not allocate {size} bytes for the buffer {name}"
    )


def release_slots(slots: Sequence[int], engine: object) -> None:
    """Free the buffers kept in `slots` (addresses of slot globals of the
    code that `engine` holds, alive until this returns)."""
    for slot in slots:
        load_runtime().release(slot)
