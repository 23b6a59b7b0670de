"""Parallel loops on the CPU: `hetero_parallel_for` and the launchers that call it.

`convert-tir-to-scf` outlines the body of a parallel `tir.for` into a private
function `@f(begin, end, captures...)` (marked `hetero.parallel_body`) and calls
the declaration `@f.launch(threads, trips, least, captures...)`; `least`
is the fewest trips worth the pool for the body's work, counted at compile
time or computed before the launch from run-time extents
(`hetero.lowering.outline_parallel_loops.least_trips`: a loop of constant
trip count below a constant `least` is not outlined at all).  After `lower-to-llvm`,
`define_launchers` gives each such declaration a body in the `llvm` dialect:

    @f.launch: store the captures in a stack struct (the context), then
               @f.task(&context, 0, trips) if trips < least, else
               hetero_parallel_for(@f.task, &context, trips, threads)
    @f.task(ctx, begin, end): load the captures back, call @f(begin, end, ...)

and declares `hetero_parallel_for`, which resolves to the process's one thread
pool (`parallel_pool.ll`, in LLVM IR so that no C compiler is needed).  The pool is
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
simplifies either, so a body is optimised once, in its task (simplified
alone first and again once inlined, it cost the optimiser much more time).  One round is
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

from hetero.runtime.buffers import buffers_ir, load_runtime
from hetero.runtime.native import initialize as _initialize
from hetero.runtime.native import runtime_ir
from hetero.utils.cpus import default_threads, triple_arch

PARALLEL_FOR = "hetero_parallel_for"
"""`void hetero_parallel_for(ptr task, ptr ctx, i64 trips, i32 threads)`."""


CHUNKS_PER_THREAD = 8
"""How finely `hetero_parallel_for` cuts a parallel loop: into this many
chunks a thread (`hetero.targets.cpu.parallel_chunk` asks it too)."""

MAX_THREADS = 64
"""Threads of one loop at most, the caller included (more `num_threads` are capped)."""

PIN_VARIABLE = "HETERO_PIN_THREADS"
"""`0` leaves the pool's workers free to run on any CPU (see `pinned_cpus`)."""

SPINS = 4096
"""Pauses a parked thread spins before it sleeps: ~0.1 ms on x86-64, longer
than Python takes between two ops of a model, so a network's consecutive
loops find the workers awake."""


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


class _Pool(NamedTuple):
    """The loaded pool's globals and functions that Python reads and calls."""

    workers: ctypes.c_int64
    """`@hetero_pool_workers`: the worker threads started."""
    loops: ctypes.c_int64
    """`@hetero_pool_loops`: the loops handed to workers."""
    threads: ctypes.c_int64
    """`@hetero_pool_threads`: the process's default thread count."""
    get_threads: Callable[[], int]
    """`@hetero_get_threads`: the calling thread's own count, 0 if none."""
    set_threads: Callable[[int], None]


_pool_lock = threading.Lock()
_pool: _Pool | None = None


def pool_ir(machine: str = platform.machine()) -> str:
    """The thread pool's LLVM IR (`parallel_pool.ll`, a template) for
    `machine` (a `platform.machine()` name)."""
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
    text = runtime_ir("parallel_pool.ll")
    for key, value in fields.items():
        text = text.replace("{" + key + "}", str(value))
    return text


def runtime_object(machine: llvm_binding.TargetMachine) -> bytes:
    """The runtime that compiled code calls, the thread pool
    (`hetero_parallel_for`) and heap buffers (`hetero.runtime.buffers`), as
    an object file for `machine` (its triple's architecture, Linux) that
    initialises itself (`standalone_init.ll`): what an object that `CpuModule.emit_object` writes
    (`hetero-translate --emit=obj`) links with to run outside Python, on
    this host or another architecture.  Its parallel loops take the
    target's `num_threads`, else the caller's thread only (no Python sets
    a default count); its workers are not bound to CPUs."""
    module = llvm_binding.parse_assembly(pool_ir(triple_arch(machine.triple)))
    for text in (buffers_ir(), runtime_ir("standalone_init.ll")):
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
    milliseconds while the other core idles.  The process's allowed CPUs
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
        variable("hetero_pool_loops", ctypes.c_int64),
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


def pool_loops() -> int:
    """How many parallel loops the pool has handed to its workers: a loop
    run on its caller alone (too few trips for its work, one thread, the
    pool taken) counts nothing."""
    return load_pool().loops.value


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
