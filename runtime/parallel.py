"""Parallel loops on the CPU: `hetero_parallel_for` and the launchers that call it.

`convert-tir-to-scf` outlines the body of a parallel `tir.for` into a private
function `@f(begin, end, captures...)` (marked `hetero.parallel_body`) and calls
the declaration `@f.launch(threads, trips, captures...)`.  After `lower-to-llvm`,
`define_launchers` gives each such declaration a body in the `llvm` dialect:

    @f.launch: store the captures in a stack struct (the context), then
               hetero_parallel_for(@f.task, &context, trips, threads)
    @f.task(ctx, begin, end): load the captures back, call @f(begin, end, ...)

and declares `hetero_parallel_for`, which resolves to the process's one thread
pool (`POOL_IR`, in LLVM IR so that no C compiler is needed).  The pool is
JIT-compiled once per process, on the first `define_launchers` that needs it,
in an execution engine that is never disposed: its worker threads run its
code for the life of the process, whereas each `CpuModule` frees its code
when it is garbage-collected.  Its address is registered with
`llvm.add_symbol`, so every later module's calls bind to it.  A worker runs
only the task pointer handed to it during a loop, and the caller returns only
when every worker is done with it, so the task's code and context are alive
while it runs.  Each worker binds itself to one CPU when it starts
(`pinned_cpus`), leaving the first to the caller.

`@f` is marked `always_inline`: LLVM inlines it into its task before it
simplifies either, so a body is optimised once, in its task.  (Simplified
alone first and again once inlined, the bodies of ResNet-50's kernels took
LLVM's optimiser 0.2 s of CPU more, a quarter of its time.)  One round is
enough where GVN and dead store elimination run again after the pipeline
(`CpuTarget`) and static allocas have a constant count
(`convert-memref-to-llvm`).

A loop's thread count is read at run time, at each loop: the calling
thread's own (`using_threads`, for a block of calls), else the `threads`
its launcher passes (the target's `num_threads`; 0 where it sets none),
else the process's default (`@hetero_pool_threads`: `default_threads()`
when the pool loads, that is `HETERO_NUM_THREADS` or the CPUs the process
may use).  The schedules cut their tasks for the count known at compile
time, a hint: any count runs the code correctly.

A loop with `min(threads, trips) > 1` takes the pool (a lock word; if another
loop holds it, the loop runs serially on its own thread: a parallel loop
inside a task, or a second Python thread calling compiled code), starts the
workers it lacks (created once, up to `MAX_THREADS - 1`, then kept parked),
tells `min(threads, trips) - 1` of them to go and works itself; all take
chunks of `parallel_chunk(trips, threads)` iterations from a shared atomic
counter until none is left, so a thread on a busy core does less (the cores
are shared: a static split waits for the slowest).  When the caller finds no
chunk left it retracts the go of every worker that has not claimed it yet
and waits only for those that did: a worker that is slow to wake (its core
is busy) costs the loop nothing.  A parked worker spins `SPINS` pauses
(~0.1 ms), then sleeps on a futex; the caller waits for the last worker the
same way.  A worker that cannot be created is simply not there.

Fork: after `os.fork` the child starts with no workers (they are not copied)
and creates its own on its first parallel loop; a `fork` from C (not
through `os.fork`) after the first parallel loop leaves a child whose
parallel loops wait forever for workers that are not there.  Linux only
(futexes), on the machines of `MACHINES`.  Captured memrefs are passed as
their lowered pointer and sizes, so this works at the LLVM level only, after
the memref ABI is fixed.

The launchers are made by `hetero.lowering.parallel_launchers`; this module,
the pool, imports no xDSL: a deployed model loads it
(`hetero.runtime.artifact`).
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import llvmlite.binding as llvm_binding

from hetero.runtime.buffers import RUNTIME_IR, SLOTS, load_runtime
from hetero.runtime.native import initialize as _initialize
from hetero.targets.cpu import CHUNKS_PER_THREAD
from hetero.utils.cpus import default_threads, triple_arch

PARALLEL_FOR = "hetero_parallel_for"
"""`void hetero_parallel_for(ptr task, ptr ctx, i64 trips, i32 threads)`."""


MAX_THREADS = 64
"""Threads of one loop at most, the caller included (more `num_threads` are capped)."""

PIN_VARIABLE = "HETERO_PIN_THREADS"
"""`0` leaves the pool's workers free to run on any CPU (see `pinned_cpus`)."""

SPINS = 4096
"""Pauses a parked thread spins before it sleeps: ~0.1 ms (25 ns a pause on
the AMD EPYC hetero is developed on), longer than Python takes between two ops of a model,
so a network's consecutive loops find the workers awake."""


class Machine(NamedTuple):
    """What the pool's IR needs to know of a Linux machine."""

    futex: int
    """The number of the `futex` system call."""
    hint: str
    """The spin-wait hint (`pause`, `yield`): an intrinsic call."""
    hint_declaration: str


MACHINES = {
    "x86_64": Machine(202, "llvm.x86.sse2.pause()", "llvm.x86.sse2.pause()"),
    "aarch64": Machine(98, "llvm.aarch64.hint(i32 1)", "llvm.aarch64.hint(i32)"),
}
"""`platform.machine()` → its `Machine`; the pool runs on these, Linux only."""

POOL_IR = r"""
%slot = type { i32, [60 x i8] }
%loop = type { ptr, ptr, i64, i64 }

@hetero_pool_busy = internal global i32 0, align 64
@hetero_pool_workers = global i64 0, align 64
@hetero_pool_limit = internal global i64 {workers}, align 8
@hetero_pool_loop = internal global %loop zeroinitializer, align 64
@hetero_pool_next = internal global i64 0, align 64
@hetero_pool_pending = internal global i32 0, align 64
@hetero_pool_waiting = internal global i32 0, align 64
@hetero_pool_go = internal global [{workers} x %slot] zeroinitializer, align 64
@hetero_pool_cpus = global [{max_threads} x i32] zeroinitializer, align 4
@hetero_pool_ncpus = global i64 0, align 8
@hetero_pool_threads = global i64 1, align 8
@hetero_pool_key = internal global i32 -1, align 4

declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i64 @syscall(i64, ...)
declare void @{hint_declaration}
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare i32 @sched_setaffinity(i32, i64, ptr)
declare i32 @pthread_key_create(ptr, ptr)
declare ptr @pthread_getspecific(i32)
declare i32 @pthread_setspecific(i32, ptr)
declare void @hetero_adopt_failures()

; Makes the key of each thread's own thread count (-1 until then: no
; thread has one); returns pthread_key_create's status.
define i32 @hetero_pool_init() {
  %key = alloca i32
  %r = call i32 @pthread_key_create(ptr %key, ptr null)
  %failed = icmp ne i32 %r, 0
  br i1 %failed, label %done, label %made
made:
  %k = load i32, ptr %key
  store i32 %k, ptr @hetero_pool_key
  br label %done
done:
  ret i32 %r
}

; The calling thread's own thread count (0: none), set by hetero_set_threads.
define i64 @hetero_get_threads() {
entry:
  %key = load i32, ptr @hetero_pool_key
  %none = icmp eq i32 %key, -1
  br i1 %none, label %unset, label %read
read:
  %p = call ptr @pthread_getspecific(i32 %key)
  %n = ptrtoint ptr %p to i64
  ret i64 %n
unset:
  ret i64 0
}

define void @hetero_set_threads(i64 %n) {
entry:
  %key = load i32, ptr @hetero_pool_key
  %none = icmp eq i32 %key, -1
  br i1 %none, label %done, label %set
set:
  %p = inttoptr i64 %n to ptr
  %r = call i32 @pthread_setspecific(i32 %key, ptr %p)
  br label %done
done:
  ret void
}

define internal void @hetero_pool_futex(ptr %word, i64 %op, i32 %value) {
  %v = zext i32 %value to i64
  %r = call i64 (i64, ...) @syscall(i64 {futex}, ptr %word, i64 %op, i64 %v, ptr null, ptr null, i64 0)
  ret void
}

; Returns once this worker has claimed a loop: turned its %go from 1 (told to
; go) to 0 (idle); 2 means asleep on the futex.  The caller may retract a 1.
define internal void @hetero_pool_park(ptr %go) {
entry:
  br label %spin
spin:
  %k = phi i32 [ 0, %entry ], [ %k1, %pause ]
  %v = load atomic i32, ptr %go monotonic, align 4
  %set = icmp eq i32 %v, 1
  br i1 %set, label %claim, label %pause
claim:
  %c = cmpxchg ptr %go, i32 1, i32 0 acquire monotonic
  %claimed = extractvalue { i32, i1 } %c, 1
  br i1 %claimed, label %done, label %pause
pause:
  call void @{hint}
  %k1 = add i32 %k, 1
  %more = icmp ult i32 %k1, {spins}
  br i1 %more, label %spin, label %sleep
sleep:
  %s = load atomic i32, ptr %go monotonic, align 4
  switch i32 %s, label %block [ i32 0, label %announce
                                i32 1, label %take ]
announce:
  %a = cmpxchg ptr %go, i32 0, i32 2 seq_cst seq_cst
  br label %sleep
block:
  call void @hetero_pool_futex(ptr %go, i64 128, i32 2)
  br label %sleep
take:
  %t = cmpxchg ptr %go, i32 1, i32 0 acquire monotonic
  %taken = extractvalue { i32, i1 } %t, 1
  br i1 %taken, label %done, label %sleep
done:
  ret void
}

; Binds worker #i to CPU @hetero_pool_cpus[(i + 1) mod n] (the first is left
; to the caller), unless n = @hetero_pool_ncpus < 2.  A failure leaves it free.
define internal void @hetero_pool_pin(i64 %i) {
entry:
  %n = load i64, ptr @hetero_pool_ncpus
  %free = icmp slt i64 %n, 2
  br i1 %free, label %done, label %pin
pin:
  %mask = alloca [16 x i64], align 8
  call void @llvm.memset.p0.i64(ptr %mask, i8 0, i64 128, i1 false)
  %k = add i64 %i, 1
  %slot = urem i64 %k, %n
  %cpup = getelementptr [{max_threads} x i32], ptr @hetero_pool_cpus, i64 0, i64 %slot
  %cpu32 = load i32, ptr %cpup
  %cpu = zext i32 %cpu32 to i64
  %word = lshr i64 %cpu, 6
  %bit = and i64 %cpu, 63
  %one = shl i64 1, %bit
  %wordp = getelementptr [16 x i64], ptr %mask, i64 0, i64 %word
  store i64 %one, ptr %wordp
  %r = call i32 @sched_setaffinity(i32 0, i64 128, ptr %mask)
  br label %done
done:
  ret void
}

; Takes chunks of the current loop until none is left.
define internal void @hetero_pool_run() {
entry:
  %task = load ptr, ptr @hetero_pool_loop
  %ctxp = getelementptr %loop, ptr @hetero_pool_loop, i32 0, i32 1
  %ctx = load ptr, ptr %ctxp
  %np = getelementptr %loop, ptr @hetero_pool_loop, i32 0, i32 2
  %n = load i64, ptr %np
  %cp = getelementptr %loop, ptr @hetero_pool_loop, i32 0, i32 3
  %chunk = load i64, ptr %cp
  br label %grab
grab:
  %b = atomicrmw add ptr @hetero_pool_next, i64 %chunk monotonic
  %more = icmp slt i64 %b, %n
  br i1 %more, label %work, label %done
work:
  %e0 = add i64 %b, %chunk
  %over = icmp sgt i64 %e0, %n
  %e = select i1 %over, i64 %n, i64 %e0
  call void %task(ptr %ctx, i64 %b, i64 %e)
  br label %grab
done:
  ret void
}

; Worker #i: parked on its slot of @hetero_pool_go between loops, forever.
define internal ptr @hetero_pool_worker(ptr %arg) {
entry:
  %i = ptrtoint ptr %arg to i64
  %go = getelementptr [{workers} x %slot], ptr @hetero_pool_go, i64 0, i64 %i
  call void @hetero_pool_pin(i64 %i)
  br label %loop
loop:
  call void @hetero_pool_park(ptr %go)
  call void @hetero_pool_run()
  %left = atomicrmw sub ptr @hetero_pool_pending, i32 1 seq_cst
  %last = icmp eq i32 %left, 1
  br i1 %last, label %tell, label %loop
tell:
  %waiting = load atomic i32, ptr @hetero_pool_waiting seq_cst, align 4
  %asleep = icmp ne i32 %waiting, 0
  br i1 %asleep, label %wake, label %loop
wake:
  call void @hetero_pool_futex(ptr @hetero_pool_pending, i64 129, i32 1)
  br label %loop
}

; The caller's completion barrier: returns once no worker is in the loop.
define internal void @hetero_pool_finish() {
entry:
  br label %spin
spin:
  %k = phi i32 [ 0, %entry ], [ %k1, %pause ]
  %v = load atomic i32, ptr @hetero_pool_pending acquire, align 4
  %done = icmp eq i32 %v, 0
  br i1 %done, label %exit, label %pause
pause:
  call void @{hint}
  %k1 = add i32 %k, 1
  %more = icmp ult i32 %k1, {spins}
  br i1 %more, label %spin, label %sleep
sleep:
  store atomic i32 1, ptr @hetero_pool_waiting seq_cst, align 4
  br label %block
block:
  %p = load atomic i32, ptr @hetero_pool_pending seq_cst, align 4
  %none = icmp eq i32 %p, 0
  br i1 %none, label %awake, label %wait
wait:
  call void @hetero_pool_futex(ptr @hetero_pool_pending, i64 128, i32 %p)
  br label %block
awake:
  store atomic i32 0, ptr @hetero_pool_waiting monotonic, align 4
  br label %exit
exit:
  ret void
}

; Starts workers until there are %want (the pool's lock held); returns how many there are.
define internal i64 @hetero_pool_grow(i64 %want) {
entry:
  %tid = alloca i64
  %have = load i64, ptr @hetero_pool_workers
  br label %check
check:
  %k = phi i64 [ %have, %entry ], [ %k1, %started ]
  %enough = icmp sge i64 %k, %want
  br i1 %enough, label %done, label %start
start:
  %arg = inttoptr i64 %k to ptr
  %rc = call i32 @pthread_create(ptr %tid, ptr null, ptr @hetero_pool_worker, ptr %arg)
  %failed = icmp ne i32 %rc, 0
  br i1 %failed, label %give_up, label %started
started:
  %k1 = add i64 %k, 1
  store i64 %k1, ptr @hetero_pool_workers
  br label %check
give_up:
  store i64 %k, ptr @hetero_pool_limit
  br label %done
done:
  ret i64 %k
}

; %threads is the function's own count (its target's num_threads), 0 if none:
; the calling thread's count comes first, then it, then @hetero_pool_threads.
define void @hetero_parallel_for(ptr %task, ptr %ctx, i64 %n, i32 %threads) {
entry:
  %own = call i64 @hetero_get_threads()
  %asked = sext i32 %threads to i64
  %default = load i64, ptr @hetero_pool_threads
  %unasked = icmp slt i64 %asked, 1
  %function = select i1 %unasked, i64 %default, i64 %asked
  %unowned = icmp slt i64 %own, 1
  %t0 = select i1 %unowned, i64 %function, i64 %own
  %fewer = icmp slt i64 %n, %t0
  %t = select i1 %fewer, i64 %n, i64 %t0
  %alone = icmp sle i64 %t, 1
  br i1 %alone, label %serial, label %lock
lock:
  %r = cmpxchg ptr @hetero_pool_busy, i32 0, i32 1 acquire monotonic
  %mine = extractvalue { i32, i1 } %r, 1
  br i1 %mine, label %grow, label %serial
grow:
  %t1 = sub i64 %t, 1
  %limit = load i64, ptr @hetero_pool_limit
  %capped = icmp slt i64 %limit, %t1
  %want = select i1 %capped, i64 %limit, i64 %t1
  %have = call i64 @hetero_pool_grow(i64 %want)
  %short = icmp slt i64 %have, %want
  %helpers = select i1 %short, i64 %have, i64 %want
  %none = icmp eq i64 %helpers, 0
  br i1 %none, label %unlock, label %share
unlock:
  store atomic i32 0, ptr @hetero_pool_busy release, align 4
  br label %serial
share:
  store ptr %task, ptr @hetero_pool_loop
  %ctxp = getelementptr %loop, ptr @hetero_pool_loop, i32 0, i32 1
  store ptr %ctx, ptr %ctxp
  %np = getelementptr %loop, ptr @hetero_pool_loop, i32 0, i32 2
  store i64 %n, ptr %np
  %p = add i64 %helpers, 1
  %grains = mul i64 %p, {chunks_per_thread}
  %c0 = sdiv i64 %n, %grains
  %tiny = icmp slt i64 %c0, 1
  %c = select i1 %tiny, i64 1, i64 %c0
  %cp = getelementptr %loop, ptr @hetero_pool_loop, i32 0, i32 3
  store i64 %c, ptr %cp
  store atomic i64 0, ptr @hetero_pool_next monotonic, align 8
  %pending = trunc i64 %helpers to i32
  store atomic i32 %pending, ptr @hetero_pool_pending monotonic, align 4
  br label %wake
wake:
  %i = phi i64 [ 0, %share ], [ %i1, %woken ]
  %go = getelementptr [{workers} x %slot], ptr @hetero_pool_go, i64 0, i64 %i
  %old = atomicrmw xchg ptr %go, i32 1 seq_cst
  %asleep = icmp eq i32 %old, 2
  br i1 %asleep, label %futex, label %woken
futex:
  call void @hetero_pool_futex(ptr %go, i64 129, i32 1)
  br label %woken
woken:
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %helpers
  br i1 %more, label %wake, label %work
work:
  call void @hetero_pool_run()
  br label %retract
retract:
  %j = phi i64 [ 0, %work ], [ %j1, %retract ]
  %late = phi i32 [ 0, %work ], [ %late1, %retract ]
  %told = getelementptr [{workers} x %slot], ptr @hetero_pool_go, i64 0, i64 %j
  %rc = cmpxchg ptr %told, i32 1, i32 0 monotonic monotonic
  %unclaimed = extractvalue { i32, i1 } %rc, 1
  %count = zext i1 %unclaimed to i32
  %late1 = add i32 %late, %count
  %j1 = add i64 %j, 1
  %again = icmp slt i64 %j1, %helpers
  br i1 %again, label %retract, label %finish
finish:
  %gone = atomicrmw sub ptr @hetero_pool_pending, i32 %late1 monotonic
  call void @hetero_pool_finish()
  call void @hetero_adopt_failures()
  store atomic i32 0, ptr @hetero_pool_busy release, align 4
  ret void
serial:
  call void %task(ptr %ctx, i64 0, i64 %n)
  ret void
}

; A forked child has none of the workers: it starts with an empty, free pool.
define void @hetero_pool_forked() {
  store i32 0, ptr @hetero_pool_busy
  store i64 0, ptr @hetero_pool_workers
  store i32 0, ptr @hetero_pool_pending
  store i32 0, ptr @hetero_pool_waiting
  call void @llvm.memset.p0.i64(ptr @hetero_pool_go, i8 0, i64 {go_bytes}, i1 false)
  ret void
}
"""
"""The thread pool, in LLVM IR (`{...}` filled in by `pool_ir`).  Futex words:
a worker's slot of `@hetero_pool_go` (0 idle, 1 go, 2 asleep) and
`@hetero_pool_pending` (workers told to go that have neither finished nor
been retracted; the caller sleeps on it with `@hetero_pool_waiting` set).
A loop's state is written before its workers are told to go and read only by
those that claimed it, and the next loop starts only when `pending` is 0, so
no thread ever reads a half-written loop."""


class _Pool(NamedTuple):
    """The loaded pool's globals and functions that Python reads and calls."""

    workers: ctypes.c_int64
    """`@hetero_pool_workers`: the worker threads started."""
    threads: ctypes.c_int64
    """`@hetero_pool_threads`: the process's default thread count."""
    get_threads: Callable[[], int]
    """`@hetero_get_threads`: the calling thread's own count, 0 if none."""
    set_threads: Callable[[int], None]


_pool_lock = threading.Lock()
_pool: _Pool | None = None


def pool_ir(machine: str = platform.machine()) -> str:
    """`POOL_IR` for `machine` (a `platform.machine()` name)."""
    if sys.platform != "linux" or machine not in MACHINES:
        from hetero.utils.diagnostics import HeteroError

        raise HeteroError(
            f"parallel loops need Linux on {' or '.join(MACHINES)}, "
            f"not {sys.platform} on {machine}"
        )
    fields = {
        "workers": MAX_THREADS - 1,
        "max_threads": MAX_THREADS,
        "go_bytes": 64 * (MAX_THREADS - 1),
        "spins": SPINS,
        "chunks_per_thread": CHUNKS_PER_THREAD,
        **MACHINES[machine]._asdict(),
    }
    text = POOL_IR
    for key, value in fields.items():
        text = text.replace("{" + key + "}", str(value))
    return text


STANDALONE_INIT_IR = r"""
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 65535, ptr @hetero_runtime_init, ptr null }]

declare i32 @hetero_pool_init()
declare i32 @hetero_buffers_init()

define internal void @hetero_runtime_init() {
  %pool = call i32 @hetero_pool_init()
  %buffers = call i32 @hetero_buffers_init()
  ret void
}
"""
"""What Python does when it loads the runtime, as a constructor that runs
before the program's `main`: the thread-specific keys of the pool and of
the failure records."""


def runtime_object(machine: llvm_binding.TargetMachine) -> bytes:
    """The runtime that compiled code calls, the thread pool
    (`hetero_parallel_for`) and heap buffers (`hetero.runtime.buffers`), as
    an object file for `machine` (its triple's architecture, Linux) that
    initialises itself: what an object that `CpuModule.emit_object` writes
    (`hetero-translate --emit=obj`) links with to run outside Python, on
    this host or another architecture.  Its parallel loops take the
    target's `num_threads`, else the caller's thread only (no Python sets
    a default count); its workers are not bound to CPUs."""
    module = llvm_binding.parse_assembly(pool_ir(triple_arch(machine.triple)))
    for text in (RUNTIME_IR.replace("{slots}", str(SLOTS)), STANDALONE_INIT_IR):
        module.link_in(llvm_binding.parse_assembly(text))
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    module.verify()
    return machine.emit_object(module)


def pinned_cpus() -> list[int]:
    """The CPUs that the pool binds its workers to: worker `i` to the
    `(i + 1)`-th (modulo their count), the first being left to the caller.
    Unbound, a worker woken by a futex is often put on the caller's CPU
    (Linux's wake-affine placement), where the two take turns for
    milliseconds while the other core idles: a cold 2-thread SqueezeNet
    call took 10.4 ms unbound, 5.6 ms bound.  The process's allowed CPUs
    (`os.sched_getaffinity` when the pool is loaded) in order; none (free
    workers) when there is only one, or when `HETERO_PIN_THREADS=0`
    (processes that share the CPUs and each run parallel loops)."""
    if os.environ.get(PIN_VARIABLE, "1") == "0":
        return []
    cpus = sorted(c for c in os.sched_getaffinity(0) if c < 1024)[:MAX_THREADS]
    return cpus if len(cpus) > 1 else []


def load_pool() -> _Pool:
    """Compile the pool once per process and bind `hetero_parallel_for` to it.

    Its engine is detached, never disposed: the workers run its code until
    the process exits.  No thread starts here; the first parallel loop starts
    them.  The default thread count is read here: `default_threads()`
    (`HETERO_NUM_THREADS`, else the CPUs this process may use)."""
    global _pool
    if _pool is not None:  # each call with a thread count of its own asks
        return _pool
    with _pool_lock:
        if _pool is None:
            _pool = _compile_pool(default_threads())
        return _pool


def _compile_pool(threads: int) -> _Pool:
    _initialize()
    load_runtime()  # the workers' failed allocations: hetero_adopt_failures
    target = llvm_binding.Target.from_triple(llvm_binding.get_process_triple())
    machine = target.create_target_machine(
        cpu=llvm_binding.get_host_cpu_name(), opt=2, codemodel="jitdefault", jit=True
    )
    module = llvm_binding.parse_assembly(pool_ir())
    module.verify()
    engine = llvm_binding.create_mcjit_compiler(module, machine)
    engine.finalize_object()

    def function(name: str, restype: object, *argtypes: object) -> Callable[..., Any]:
        return ctypes.CFUNCTYPE(restype, *argtypes)(engine.get_function_address(name))

    def variable(name: str, ctype: Any) -> Any:
        return ctype.from_address(engine.get_global_value_address(name))

    if function("hetero_pool_init", ctypes.c_int32)() != 0:
        from hetero.utils.diagnostics import HeteroError

        raise HeteroError(
            "parallel loops: no thread-specific key left for the thread pool"
        )
    llvm_binding.add_symbol(PARALLEL_FOR, engine.get_function_address(PARALLEL_FOR))
    os.register_at_fork(after_in_child=function("hetero_pool_forked", None))
    cpus = pinned_cpus()
    variable("hetero_pool_cpus", ctypes.c_int32 * len(cpus))[:] = cpus
    variable("hetero_pool_ncpus", ctypes.c_int64).value = len(cpus)
    pool = _Pool(
        variable("hetero_pool_workers", ctypes.c_int64),
        variable("hetero_pool_threads", ctypes.c_int64),
        function("hetero_get_threads", ctypes.c_int64),
        function("hetero_set_threads", None, ctypes.c_int64),
    )
    pool.threads.value = threads
    engine.detach()
    return pool


def pool_workers() -> int:
    """How many worker threads the pool has started (0 before the first parallel loop)."""
    return load_pool().workers.value


def pool_threads() -> int:
    """The process's default thread count of parallel loops (read when the
    pool was loaded: `default_threads()`)."""
    return load_pool().threads.value


@contextmanager
def using_threads(count: int) -> Iterator[None]:
    """Every parallel loop that this thread runs in the block takes `count`
    threads (the caller included, at most `MAX_THREADS`), whatever its
    target's `num_threads` and `HETERO_NUM_THREADS` say; other threads keep
    their own.  The block's compiled code need not be compiled again: the
    pool reads the count at each loop.  (A target of `num_threads = 1`
    compiled its parallel loops as serial ones: they stay serial.)"""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"a thread count must be a positive integer, got {count!r}")
    pool = load_pool()
    before = pool.get_threads()
    pool.set_threads(count)
    try:
        yield
    finally:
        pool.set_threads(before)
