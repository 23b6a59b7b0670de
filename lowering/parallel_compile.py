"""Compiling the functions of a module in parallel: one forked process per chunk.

`compile_cpu` spends its time in xDSL's lowering and in LLVM, on one core,
for functions that are independent of one another: the host function only
calls the kernels.  So a module of enough functions is split into chunks of
about equal size (`split`: by op count), each chunk is lowered and compiled
to an object file (`hetero.runtime.cpu.ObjectCode`) in a forked worker
process (`run_forked`), and the parent loads the object files into one
engine (`CpuModule.load`), where calls from one chunk to another resolve.

A chunk keeps every symbol of the module (`restrict`): the public functions
of other chunks become private declarations of the same type, so its calls
of them lower as they would in the whole module, and the names that the
lowering makes up (`@f_parallel0`) are those it would make there.  Private
functions are kept whole in every chunk: any of them may call one, and the
copies are internal symbols, which do not clash.

The workers are forked, so they start with the parent's module and send
back only the object code.  They run Python, xDSL and llvmlite only, never
compiled code: whatever threads the parent has (OpenBLAS, onnxruntime,
`hetero.runtime.parallel`'s pool, which a fork resets) play no part.  Nor do
they read a weight's values, only its shape: they are forked while the
parent's background thread may still be making them
(`hetero.utils.background.forking_unsettled`).  Each chunk gets a fresh
process, as a worker lowers its copy of the module in place.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import traceback
import warnings
from collections.abc import Callable, Collection, Iterable
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from hetero.dialects import tir
from hetero.lowering.allocation_checks import is_entry
from hetero.lowering.conversion import nested_ops
from hetero.runtime.cpu import ObjectCode
from hetero.targets.cpu import outlines_parallel_loops
from hetero.utils.background import forking_unsettled
from hetero.utils.cpus import available_cpus
from hetero.utils.diagnostics import HeteroError

JOBS_VARIABLE = "HETERO_COMPILE_JOBS"
"""The most processes `compile_cpu` compiles a module in (1: in this one)."""

MIN_CHUNK_OPS = 300
"""Work a chunk must have at least (`compile_cost`, in `tir` ops): a worker
costs time to fork and to send its code back, and LLVM cannot inline across
chunks."""

PARALLEL_LOOP_OPS = 42
"""What a `parallel` loop costs to compile beyond its ops, in ops: its body
is outlined and gets a task and a launcher (`convert-tir-to-scf`,
`hetero.runtime.parallel`), which LLVM optimises and generates code for
(fitted on the kernels of ResNet-50, Inception v1 and SqueezeNet, below)."""

VECTOR_OP_EXTRA = 0.7
"""What an op in a `vectorized` loop costs beyond an op elsewhere, in ops:
the vectorizer builds its vector body, which lowers to wider code."""

DYNAMIC_VECTOR_OP_EXTRA = 9.5
"""What an op in a `vectorized` loop of run-time extent (in a kernel that
`merge-kernels` shares) costs beyond one in a `vectorized` loop: LLVM keeps
the loop, masks and all, where a constant extent folds to straight code
(fitted with the above, least squares over those networks' kernels, each
compiled alone)."""

FUNCTION_OPS = 10
"""What a function costs to compile beyond its ops, in ops (its signature,
its entry, LLVM's per-function work)."""

TAIL_SHARE = 0.1
"""The share of a module's `compile_cost` that `split` keeps out of the
first chunks, in its cheapest functions, for `TAIL_CHUNKS` chunks a
process each, which start as the first answer (`run_forked`'s `at_once`):
the cost model is wrong by up to a fifth of a chunk on some networks
(EfficientNet-B1: 2.4 against 1.9 s of CPU for chunks of equal cost), and
the worker that is done first then takes on more of the tail."""

TAIL_CHUNKS = 2
"""Tail chunks per process (`TAIL_SHARE`): a chunk costs a worker a few
milliseconds of its own (its process, an LLVM module made and loaded)."""

CHECKED_CALL_OPS = 3.0
"""What a call in a host function costs beyond its op, in ops: the check
after it (`hetero.lowering.allocation_checks`: a call of `hetero_failed`, a
branch, a block that gives the function's buffers back and returns).
Fitted on ViT-B/32, whose host function makes 185 calls: without it, the
chunk that held it took 0.74-0.88 s of CPU against 0.60 s for the other."""


def compile_jobs() -> int:
    """`HETERO_COMPILE_JOBS`, else the number of CPUs this process may run on
    (`available_cpus`: more workers than a cgroup quota allows only wait)."""
    text = os.environ.get(JOBS_VARIABLE)
    if text is None:
        return available_cpus()
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{JOBS_VARIABLE} must be a positive integer, got {text!r}")
    return int(text)


def compile_cost(function: tir.PrimFuncOp) -> float:
    """About how long `function` takes to lower and compile, in `tir` ops:
    its ops, more for those in `vectorized` loops (`VECTOR_OP_EXTRA`,
    `DYNAMIC_VECTOR_OP_EXTRA`), `PARALLEL_LOOP_OPS` for each parallel loop
    (where the target has more than one thread: else it is a serial loop),
    `CHECKED_CALL_OPS` for each call of a host function and `FUNCTION_OPS`.  Op counts alone left ResNet-50's two chunks unequal,
    the one with its Winograd kernels (three parallel loops each) the
    longer."""
    cost = float(FUNCTION_OPS)
    outlines = outlines_parallel_loops(function.target)
    call_extra = CHECKED_CALL_OPS if is_entry(function) else 0.0
    for op in function.walk():
        cost += 1
        if isinstance(op, tir.CallOp):
            cost += call_extra
        if not isinstance(op, tir.ForOp):
            continue
        if op.kind.data == tir.ForKind.PARALLEL:
            cost += PARALLEL_LOOP_OPS * outlines
        elif op.kind.data == tir.ForKind.VECTORIZED:
            constant = all(
                const_evaluate_operand(v) is not None for v in (op.lb, op.ub)
            )
            extra = VECTOR_OP_EXTRA + (0 if constant else DYNAMIC_VECTOR_OP_EXTRA)
            cost += extra * len(nested_ops(op))
    return cost


def split(
    module: ModuleOp, jobs: int | None = None, tail: float = 0.0
) -> list[list[str]]:
    """The public functions of `module` in chunks of about equal `compile_cost`:
    `jobs` chunks (at most one a function), or by default as many as
    `compile_jobs()` and `MIN_CHUNK_OPS` allow, and after them the `tail`
    share of the cost in chunks of its own (`balance`).  One chunk means no
    split, as for a module with anything but `tir.prim_func`s (which could
    not be shared out), or in a daemonic process (a `multiprocessing`
    pool's worker), which may not start any."""
    functions = list(module.ops)
    if not all(isinstance(f, tir.PrimFuncOp) for f in functions):
        return [[]]
    sizes = {
        f.sym_name.data: compile_cost(f)
        for f in functions
        if isinstance(f, tir.PrimFuncOp) and not f.is_private
    }
    return balance(sizes, jobs, tail)


def balance(
    sizes: dict[str, float], jobs: int | None = None, tail: float = 0.0
) -> list[list[str]]:
    """The names of `sizes` (their costs, in `tir` ops) in chunks of about
    equal cost, the largest first, each to the lightest chunk: `jobs`
    chunks (at most one a name), or by default as many as `compile_jobs()`
    and `MIN_CHUNK_OPS` allow; one in a daemonic process (a
    `multiprocessing` pool's worker), which may not start any.  With
    several, the cheapest names making up the `tail` share of the cost are
    left out of them, for `TAIL_CHUNKS` chunks a job after them (as many as
    have `MIN_CHUNK_OPS` each)."""
    if multiprocessing.current_process().daemon:
        return [list(sizes)]
    total = sum(sizes.values())
    if jobs is None:
        jobs = min(compile_jobs(), int(total // MIN_CHUNK_OPS))
    rest, kept = dict(sizes), 0.0
    for name in sorted(sizes, key=sizes.__getitem__):
        if kept + sizes[name] > tail * total:
            break
        kept += rest.pop(name)
    tails = min(TAIL_CHUNKS * jobs, int(kept // MIN_CHUNK_OPS))
    if jobs < 2 or tails < 2 or not rest:
        return _balanced(sizes, jobs)
    return _balanced(rest, jobs) + _balanced(
        {n: sizes[n] for n in sizes if n not in rest}, tails
    )


def _balanced(sizes: dict[str, float], count: int) -> list[list[str]]:
    """The names of `sizes` in `count` chunks (at most one a name, at least
    one chunk), the largest first, each to the lightest chunk."""
    chunks: list[list[str]] = [[] for _ in range(max(1, min(count, len(sizes))))]
    loads = [0.0] * len(chunks)
    for name in sorted(sizes, key=sizes.__getitem__, reverse=True):
        lightest = loads.index(min(loads))
        chunks[lightest].append(name)
        loads[lightest] += sizes[name]
    return chunks


def restrict(module: ModuleOp, chunk: Collection[str]) -> ModuleOp:
    """`module` with only the public functions of `chunk` defined, those of
    the others that its functions call declared (the rest dropped: an
    EfficientNet-B1 chunk lowered its 92 declarations in 25 ms); private
    functions stay.  Changes `module`: for a worker's copy."""
    block = module.body.block
    others = {
        op.sym_name.data: op
        for op in block.ops
        if isinstance(op, tir.PrimFuncOp)
        and not op.is_private
        and op.sym_name.data not in chunk
    }
    dropped = set(others.values())
    kept = [op for op in block.ops if op not in dropped]
    called = {
        call.callee.string_value()
        for op in kept
        for call in op.walk()
        if isinstance(call, tir.CallOp)
    }
    for name, op in others.items():
        if name in called:
            signature = op.function_type
            declaration = func.FuncOp.external(
                name, signature.inputs.data, signature.outputs.data
            )
            block.insert_op_before(declaration, op)
        block.detach_op(op)  # not erased: the whole copy dies with the worker
    return module


WorkerResult = ObjectCode | list[Any] | str | None
"""A worker's answer: its code (object code, or PTX modules), None for a
`HeteroError`, or a traceback."""

Code = TypeVar("Code", ObjectCode, list[Any])


def run_forked(
    work: Callable[[int], Code],
    count: int,
    done: Callable[[int], None] | None = None,
    at_once: int | None = None,
) -> list[Code] | None:
    """`work(i)` for each `i < count`, each in a forked process of its own,
    at most `at_once` at a time (by default all), in order: the next starts
    as one answers; `done(i)` as each answers, in the order they finish
    (for progress).

    None if one raised a `HeteroError`: the caller reproduces it in this
    process, where the error's op is one of its own.  Any other failure is
    a `RuntimeError` with the worker's traceback."""
    return start_forked(work, count, done, at_once)()


def start_forked(
    work: Callable[[int], Code],
    count: int,
    done: Callable[[int], None] | None = None,
    at_once: int | None = None,
) -> Callable[[], list[Code] | None]:
    """`run_forked`, returning once the first workers are started: calling
    what it returns starts the others and waits for their answers.  This
    process may work meanwhile."""
    workers: list[tuple[BaseProcess, Connection]] = []
    _fork(work, range(min(count, at_once or count)), workers)

    def answers() -> list[Code] | None:
        answered: dict[int, WorkerResult] = {}
        waiting = {receiver: index for index, (_, receiver) in enumerate(workers)}
        while waiting:  # in the order they finish, for `done`
            for receiver in wait(list(waiting)):
                index = waiting.pop(receiver)  # type: ignore[call-overload]
                answered[index] = _receive(*workers[index])
                if len(workers) < count:
                    _fork(work, [len(workers)], workers)
                    waiting[workers[-1][1]] = len(workers) - 1
                if done is not None:
                    done(index)
        for process, _ in workers:
            process.join()
        results = [answered[i] for i in range(count)]
        if failures := [r for r in results if isinstance(r, str)]:
            raise RuntimeError(f"a compile worker failed:\n{failures[0]}")
        return None if None in results else results  # type: ignore[return-value]

    return answers


def _fork(
    work: Callable[[int], Code],
    indices: Iterable[int],
    workers: list[tuple[BaseProcess, Connection]],
) -> None:
    """Start a worker for each of `indices`, appending it to `workers`."""
    context = multiprocessing.get_context("fork")
    thaw = gc.get_freeze_count() == 0
    # Frozen, the objects the workers inherit are left alone by their garbage
    # collections, which would otherwise write to (and so copy) every page.
    gc.freeze()
    try:
        with warnings.catch_warnings(), forking_unsettled():
            # Python >= 3.12 warns of fork in a process with threads: see above.
            warnings.filterwarnings("ignore", ".*fork", DeprecationWarning)
            for index in indices:
                receiver, sender = context.Pipe(duplex=False)
                process = context.Process(
                    target=_worker, args=(work, index, sender), daemon=True
                )
                process.start()
                sender.close()
                workers.append((process, receiver))
    finally:
        if thaw:
            gc.unfreeze()


def _worker(work: Callable[[int], Code], index: int, sender: Connection) -> None:
    result: WorkerResult
    try:
        result = work(index)
    except HeteroError:
        result = None
    except Exception:  # noqa: BLE001 (any bug: its traceback goes to the parent)
        result = traceback.format_exc()
    sender.send(result)


def _receive(process: BaseProcess, receiver: Connection) -> WorkerResult:
    """A worker's answer, not waiting for it to exit (`answers` joins the
    workers at the end: a worker's exit took 15-20 ms, which the next one
    to start would wait for)."""
    try:
        return receiver.recv()
    except EOFError:
        process.join()  # for its exit code
        return f"it exited with code {process.exitcode} before it answered"
    finally:
        receiver.close()
