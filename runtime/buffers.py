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
51 MB arena at every call).  `CpuModule` frees its slots' buffers when it is
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

RUNTIME_IR = r"""
%record = type { ptr, i64 }

@hetero_failure_key = internal global i32 0
@hetero_shared_failure = internal global %record zeroinitializer, align 64

declare i32 @pthread_key_create(ptr, ptr)
declare ptr @pthread_getspecific(i32)
declare i32 @pthread_setspecific(i32, ptr)

define i32 @hetero_buffers_init() {
  %r = call i32 @pthread_key_create(ptr @hetero_failure_key, ptr null)
  ret i32 %r
}

define void @hetero_set_failure_record(ptr %record) {
  %key = load i32, ptr @hetero_failure_key
  %r = call i32 @pthread_setspecific(i32 %key, ptr %record)
  ret void
}

; The calling thread's record, else the shared one (the pool's workers).
define internal ptr @hetero_failure_record() {
  %key = load i32, ptr @hetero_failure_key
  %own = call ptr @pthread_getspecific(i32 %key)
  %none = icmp eq ptr %own, null
  %record = select i1 %none, ptr @hetero_shared_failure, ptr %own
  ret ptr %record
}

; Records that %size bytes for the buffer named %name were not allocated,
; unless the record holds a failure already.
define void @hetero_alloc_failed(i64 %size, ptr %name) {
entry:
  %record = call ptr @hetero_failure_record()
  %r = cmpxchg ptr %record, ptr null, ptr %name monotonic monotonic
  %first = extractvalue { ptr, i1 } %r, 1
  br i1 %first, label %record_size, label %done
record_size:
  %sizep = getelementptr %record, ptr %record, i32 0, i32 1
  store i64 %size, ptr %sizep
  br label %done
done:
  ret void
}

define i1 @hetero_failed() {
  %record = call ptr @hetero_failure_record()
  %name = load atomic ptr, ptr %record monotonic, align 8
  %failed = icmp ne ptr %name, null
  ret i1 %failed
}

; Called by a parallel loop's thread once its workers are done, before it
; lets go of the pool.
define void @hetero_adopt_failures() {
entry:
  %name = atomicrmw xchg ptr @hetero_shared_failure, ptr null acquire
  %any = icmp ne ptr %name, null
  br i1 %any, label %adopt, label %done
adopt:
  %sizep = getelementptr %record, ptr @hetero_shared_failure, i32 0, i32 1
  %size = load i64, ptr %sizep
  call void @hetero_alloc_failed(i64 %size, ptr %name)
  br label %done
done:
  ret void
}

; Header fields, at these byte offsets from the buffer.
define internal void @hetero_buffer_free(ptr %buffer) {
  %basep = getelementptr i8, ptr %buffer, i64 -24
  %base = load ptr, ptr %basep
  %freep = getelementptr i8, ptr %buffer, i64 -16
  %free = load ptr, ptr %freep
  call void %free(ptr %base)
  ret void
}

define ptr @hetero_buffer_take(ptr %slots, i64 %align, i64 %size, ptr %alloc, ptr %free, ptr %name) {
entry:
  %reused = icmp ne ptr %slots, null
  br i1 %reused, label %scan, label %fresh
scan:
  %i = phi i64 [ 0, %entry ], [ %next, %skip ]
  %slot = getelementptr ptr, ptr %slots, i64 %i
  %seen = load atomic ptr, ptr %slot monotonic, align 8
  %empty = icmp eq ptr %seen, null
  br i1 %empty, label %skip, label %grab
grab:
  %cached = atomicrmw xchg ptr %slot, ptr null acquire
  %some = icmp ne ptr %cached, null
  br i1 %some, label %measure, label %skip
skip:
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, {slots}
  br i1 %more, label %scan, label %fresh
measure:
  %capacityp = getelementptr i8, ptr %cached, i64 -8
  %capacity = load i64, ptr %capacityp
  %fits = icmp uge i64 %capacity, %size
  br i1 %fits, label %found, label %drop
found:
  ret ptr %cached
drop:
  call void @hetero_buffer_free(ptr %cached)
  br label %fresh
fresh:
  %total = add i64 %size, %align
  %wraps = icmp ult i64 %total, %size
  br i1 %wraps, label %fail, label %allocate
allocate:
  %base = call ptr %alloc(i64 %align, i64 %total)
  %failed = icmp eq ptr %base, null
  br i1 %failed, label %fail, label %made
made:
  %buffer = getelementptr i8, ptr %base, i64 %align
  %basep = getelementptr i8, ptr %buffer, i64 -24
  store ptr %base, ptr %basep
  %freep = getelementptr i8, ptr %buffer, i64 -16
  store ptr %free, ptr %freep
  %sizep = getelementptr i8, ptr %buffer, i64 -8
  store i64 %size, ptr %sizep
  ret ptr %buffer
fail:
  call void @hetero_alloc_failed(i64 %size, ptr %name)
  ret ptr null
}

define void @hetero_buffer_give(ptr %slots, ptr %buffer) {
entry:
  %reused = icmp ne ptr %slots, null
  br i1 %reused, label %scan, label %free
scan:
  %i = phi i64 [ 0, %entry ], [ %next, %skip ]
  %slot = getelementptr ptr, ptr %slots, i64 %i
  %seen = load atomic ptr, ptr %slot monotonic, align 8
  %empty = icmp eq ptr %seen, null
  br i1 %empty, label %keep, label %skip
keep:
  %r = cmpxchg ptr %slot, ptr null, ptr %buffer release monotonic
  %kept = extractvalue { ptr, i1 } %r, 1
  br i1 %kept, label %done, label %skip
skip:
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, {slots}
  br i1 %more, label %scan, label %free
free:
  call void @hetero_buffer_free(ptr %buffer)
  br label %done
done:
  ret void
}

define void @hetero_buffer_release(ptr %slots) {
entry:
  br label %scan
scan:
  %i = phi i64 [ 0, %entry ], [ %next, %skip ]
  %slot = getelementptr ptr, ptr %slots, i64 %i
  %buffer = atomicrmw xchg ptr %slot, ptr null acquire
  %some = icmp ne ptr %buffer, null
  br i1 %some, label %free, label %skip
free:
  call void @hetero_buffer_free(ptr %buffer)
  br label %skip
skip:
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, {slots}
  br i1 %more, label %scan, label %done
done:
  ret void
}
"""
"""The runtime (see the module docstring).  A header needs 24 bytes: the
least alignment of a heap buffer (`convert_memref_to_llvm.ALIGNMENT`, 64)
leaves room for it."""


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
    module = llvm_binding.parse_assembly(RUNTIME_IR.replace("{slots}", str(SLOTS)))
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
