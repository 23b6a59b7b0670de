"""The process-wide thread pool behind parallel loops (`hetero.runtime.parallel`).

Each scenario runs in a fresh Python process with a timeout, so that a pool
that deadlocks fails the test instead of hanging the suite, and so that the
process's thread count is the pool's alone.  Results are compared with NumPy;
the programs accumulate (`y[i] += x[i]`), so an iteration run twice or not at
all shows.
"""

import os
import subprocess
import sys
import textwrap

import pytest

from hetero.runtime.parallel import MACHINES, MAX_THREADS, pool_ir, using_threads
from hetero.utils.cpus import THREADS_VARIABLE
from hetero.utils.diagnostics import HeteroError

ACCUMULATE = """
tir.prim_func @acc(%x: memref<?xf32>, %y: memref<?xf32>) target #target.target<"llvm"OPTIONS> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  tir.for %i = %c0 to %n step %c1 parallel {
    %a = memref.load %x[%i] : memref<?xf32>
    %b = memref.load %y[%i] : memref<?xf32>
    %s = arith.addf %a, %b : f32
    memref.store %s, %y[%i] : memref<?xf32>
  }
}
"""

NESTED = """
tir.prim_func @inner(%ids: memref<?x?xi64>, %i: index) target #target.target<"llvm", {num_threads = 2 : i64}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %ids, %c1 : memref<?x?xi64>
  tir.for %j = %c0 to %m step %c1 parallel {
    %me = tir.call_extern "pthread_self"() : () -> i64
    memref.store %me, %ids[%i, %j] : memref<?x?xi64>
  }
}
tir.prim_func @outer(%ids: memref<?x?xi64>, %rows: memref<?xi64>) target #target.target<"llvm", {num_threads = 2 : i64}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %rows, %c0 : memref<?xi64>
  tir.for %i = %c0 to %n step %c1 parallel {
    %me = tir.call_extern "pthread_self"() : () -> i64
    memref.store %me, %rows[%i] : memref<?xi64>
    tir.call @inner(%ids, %i) : (memref<?x?xi64>, index) -> ()
  }
}
"""

DENSE = """
relay.func @main(%x: tensor<64x96xf32>, %w: tensor<128x96xf32>) -> tensor<64x128xf32> {
  %y = relay.nn.dense %x, %w : (tensor<64x96xf32>, tensor<128x96xf32>) -> tensor<64x128xf32>
  relay.return %y : tensor<64x128xf32>
}
"""

PRELUDE = f"""
import gc, os, threading
import numpy as np
from hetero.context import parse_module
from hetero.lowering.cpu_codegen import compile_cpu
from hetero.runtime.parallel import (
    load_pool, pool_loops, pool_threads, pool_workers, using_threads)
from hetero.utils.cpus import available_cpus

ACCUMULATE = {ACCUMULATE!r}
NESTED = {NESTED!r}

def accumulate(threads=None, min_ops=0):
    # threads None: a target that sets no count; min_ops 0: every loop of two
    # or more trips takes the pool, whatever its work (None: the default)
    counts = [("num_threads", threads), ("parallel_min_ops", min_ops)]
    options = ", ".join("%s = %d : i64" % c for c in counts if c[1] is not None)
    text = ACCUMULATE.replace("OPTIONS", options and ", {{" + options + "}}")
    return compile_cpu(parse_module(text)).function("acc")

def check(f, n, launches=1):
    x = np.arange(n, dtype=np.float32) - 7
    y = np.zeros(n, np.float32)
    for _ in range(launches):
        f(x, y)
    np.testing.assert_array_equal(y, launches * x)

def threads_now():
    return len(os.listdir("/proc/self/task"))

def dense():  # `hetero.compile` of DENSE, and a runner that checks its result
    import hetero
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 96)).astype(np.float32)
    w = rng.standard_normal((128, 96)).astype(np.float32)
    f = hetero.compile({DENSE!r})

    def run(profile=False, **count):  # a call, or one kernel by kernel (`profile`)
        y = f.profile(x, w, **count).outputs if profile else f(x, w, **count)
        np.testing.assert_allclose(y, x @ w.T, rtol=1e-4, atol=1e-4)
        return y
    return f, run
"""


def isolated(script: str, timeout: float = 240, threads: str | None = None) -> None:
    """Run `script` after `PRELUDE` in a new interpreter, with
    `HETERO_NUM_THREADS` set to `threads` (None: unset); it fails by raising."""
    code = PRELUDE + textwrap.dedent(script)
    env = {k: v for k, v in os.environ.items() if k != THREADS_VARIABLE}
    done = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env if threads is None else {**env, THREADS_VARIABLE: threads},
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_many_consecutive_loops_reuse_the_same_workers():
    isolated("""
        f = accumulate(2)
        before = threads_now()
        assert pool_workers() == 0  # compiled, no thread started yet
        check(f, 1001)
        assert pool_workers() == 1 and threads_now() == before + 1
        check(f, 1001, launches=1000)
        check(f, 3, launches=1000)
        assert pool_workers() == 1 and threads_now() == before + 1
    """)


def test_a_loop_with_too_little_work_runs_on_its_caller_alone():
    """The default `parallel_min_ops` (262144) over the body's 5 ops: 52429
    trips at least.  Fewer run serially on the calling thread, decided at run
    time (the trip count is the array's): the pool hands out no loop and
    starts no worker; more take the pool."""
    isolated("""
        f = accumulate(2, min_ops=None)
        for n in [0, 1, 2, 1000, 52428]:
            check(f, n, launches=20)
        assert pool_loops() == 0 and pool_workers() == 0
        check(f, 52429, launches=3)
        assert pool_loops() == 3 and pool_workers() == 1
    """)


ROWS = """
tir.prim_func @rows(%x: memref<64x?xf32>, %y: memref<64x?xf32>) target #target.target<"llvm", {num_threads = 2 : i64}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %m = memref.dim %x, %c1 : memref<64x?xf32>
  tir.for %i = %c0 to %c64 step %c1 parallel {
    tir.for %j = %c0 to %m step %c1 {
      %a = memref.load %x[%i, %j] : memref<64x?xf32>
      %b = memref.load %y[%i, %j] : memref<64x?xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %y[%i, %j] : memref<64x?xf32>
    }
  }
}
"""


def test_a_loop_whose_rows_are_short_at_run_time_runs_on_its_caller_alone():
    """64 rows of `m` elements, `m` known at run time (as merge-kernels'
    shared kernels take their extents): a trip runs 2 + 5m ops, so under the
    default 262144 ops the 64 trips are shared from m = 819 on."""
    isolated(f"""
        f = compile_cpu(parse_module({ROWS!r})).function("rows")
        for m, loops in [(1, 0), (818, 0), (819, 1), (2000, 2)]:
            x = np.arange(64 * m, dtype=np.float32).reshape(64, m)
            y = np.ones_like(x)
            f(x, y)
            np.testing.assert_array_equal(y, x + 1)
            assert pool_loops() == loops, (m, pool_loops())
    """)


def test_a_tiny_kernel_does_not_wake_the_pool():
    """`hetero.compile` of a small elementwise op: its parallel loop (8 rows
    of 16) is serial at compile time; the same on 2 threads as on 1, and
    no loop is handed to the pool, whose workers a dense layer then wakes."""
    isolated("""
        import hetero
        f = hetero.compile(
            "relay.func @main(%x: T) -> T { %y = relay.negative %x : (T) -> T "
            "relay.return %y : T }".replace("T", "tensor<8x16xf32>")
        )
        x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
        for threads in (1, 2):
            np.testing.assert_array_equal(f(x, num_threads=threads), -x)
        assert pool_loops() == 0
        _, run = dense()
        run(num_threads=2)
        assert pool_loops() > 0
    """)


@pytest.mark.parametrize("threads", [3, 4])
def test_fewer_iterations_than_threads_and_none(threads):
    isolated(f"""
        f = accumulate({threads})
        for n in [0, 1, 2, 3, 5, 0, 1, 64]:
            check(f, n, launches=50)
        assert pool_workers() == {threads} - 1
    """)


def test_thread_count_is_capped():
    isolated(f"""
        check(accumulate(1000), 5000, launches=20)
        assert pool_workers() == {MAX_THREADS} - 1
    """)


def test_nested_parallel_loops_run_serially_in_the_calling_thread():
    isolated("""
        outer = compile_cpu(parse_module(NESTED)).function("outer")
        for _ in range(200):
            ids, rows = np.zeros((16, 37), np.int64), np.zeros(16, np.int64)
            outer(ids, rows)
            assert np.all(rows != 0)
            np.testing.assert_array_equal(ids, np.repeat(rows[:, None], 37, axis=1))
    """)


def test_modules_come_and_go_while_the_pool_lives_on():
    isolated("""
        check(accumulate(2), 999, launches=10)
        gc.collect()
        workers = threads_now()
        for round in range(4):
            f = accumulate(2) if round % 2 else compile_cpu(
                parse_module(NESTED)).function("outer")
            if round % 2:
                check(f, 999, launches=200)
            else:
                rows = np.zeros(9, np.int64)
                f(np.zeros((9, 5), np.int64), rows)
                assert np.all(rows != 0)
            del f
            gc.collect()
            assert pool_workers() == 1 and threads_now() == workers
    """)


def test_python_threads_call_compiled_code_concurrently():
    isolated("""
        f = accumulate(2)
        errors = []

        def work(seed):
            try:
                for n in [1, 2, 513, 4099]:
                    check(f, n + seed, launches=150)
            except Exception as e:
                errors.append(e)

        threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert pool_workers() == 1
    """)


def test_a_forked_child_starts_its_own_workers():
    isolated("""
        f = accumulate(2)
        check(f, 777, launches=5)
        pid = os.fork()
        if pid == 0:
            try:
                assert pool_workers() == 0
                check(f, 777, launches=100)
                assert pool_workers() == 1
            except BaseException:
                os._exit(1)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        check(f, 777, launches=5)
    """)


WORKER_CPUS = """
    def worker_cpus(threads):
        before = set(os.listdir("/proc/self/task"))
        check(accumulate(threads), 1001)
        new = set(os.listdir("/proc/self/task")) - before
        assert len(new) == threads - 1
        return sorted(sorted(os.sched_getaffinity(int(t))) for t in new)
"""


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU: nothing to pin")
@pytest.mark.parametrize("threads", [2, 3])
def test_each_worker_is_bound_to_a_cpu_not_the_first(threads):
    isolated(
        WORKER_CPUS
        + f"""
        from hetero.runtime.parallel import pinned_cpus
        cpus = sorted(os.sched_getaffinity(0))
        assert pinned_cpus() == cpus
        expected = sorted([cpus[(i + 1) % len(cpus)]] for i in range({threads} - 1))
        assert worker_cpus({threads}) == expected
    """
    )


def test_workers_are_left_free_when_pinning_is_off():
    isolated(
        WORKER_CPUS
        + """
        os.environ["HETERO_PIN_THREADS"] = "0"
        assert worker_cpus(2) == [sorted(os.sched_getaffinity(0))]
    """
    )


@pytest.mark.parametrize("machine", sorted(MACHINES))
def test_pool_ir_parses_for_each_machine(machine):
    import llvmlite.binding as llvm

    llvm.parse_assembly(pool_ir(machine)).verify()


def test_unsupported_machine_is_a_clear_error():
    with pytest.raises(HeteroError, match="parallel loops need Linux"):
        pool_ir("riscv64")


def test_a_parallel_body_is_inlined_into_its_task_before_it_is_optimised() -> None:
    """`define_launchers` marks each outlined body `always_inline`, so LLVM
    simplifies it once, inside its task (not alone and again once inlined)."""
    import llvmlite.binding as llvm
    from xdsl.context import Context

    from hetero.context import parse_module
    from hetero.lowering.convert_tir_to_scf import ConvertTirToScfPass
    from hetero.lowering.llvmir import to_llvmlite
    from hetero.lowering.outline_parallel_loops import PARALLEL_BODY
    from hetero.lowering.parallel_launchers import define_launchers
    from hetero.lowering.pipeline import lower_to_llvm

    module = parse_module(ACCUMULATE.replace("OPTIONS", ", {num_threads = 2 : i64}"))
    ConvertTirToScfPass().apply(Context(), module)
    lower_to_llvm(module)
    assert define_launchers(module)
    bodies = [f for f in module.ops if PARALLEL_BODY in f.attributes]
    assert len(bodies) == 1
    text = str(to_llvmlite(module, triple=llvm.get_process_triple()))
    (header,) = [
        line
        for line in text.splitlines()
        if line.startswith("define") and f'@"{bodies[0].sym_name.data}"(' in line
    ]
    assert header.endswith("alwaysinline")


def test_the_default_count_is_the_cpus_this_process_may_use():
    """Read when the pool starts: here after the process bound itself to one
    CPU, so a loop of a target that sets no count starts no worker."""
    isolated("""
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        f = accumulate()
        assert pool_threads() == available_cpus() == 1
        check(f, 1001, launches=3)
        assert pool_workers() == 0
    """)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_the_environment_sets_the_default_count(threads):
    isolated(
        f"""
        f = accumulate()
        assert pool_threads() == {threads}
        check(f, 1001, launches=3)
        assert pool_workers() == {threads} - 1
    """,
        threads=str(threads),
    )


def test_a_call_beats_its_target_which_beats_the_environment():
    """`using_threads` over the target's `num_threads` over
    `HETERO_NUM_THREADS` (3 here); a target pinned to one thread was compiled
    serial, and stays so."""
    isolated(
        """
        one, two = accumulate(1), accumulate(2)
        with using_threads(3):
            check(one, 1001)
        assert pool_workers() == 0
        check(two, 1001)
        assert pool_workers() == 1
        with using_threads(3):
            check(two, 1001)
        assert pool_workers() == 2
    """,
        threads="3",
    )


def test_a_thread_count_is_the_calling_threads_own():
    """Set for one Python thread, for the block: another thread, and the
    same one after the block, keep theirs."""
    isolated("""
        own = load_pool().get_threads
        seen = []
        with using_threads(3):
            helper = threading.Thread(target=lambda: seen.append(own()))
            helper.start()
            helper.join()
            with using_threads(2):
                assert own() == 2
            assert own() == 3
        assert own() == 0 and seen == [0]
    """)


@pytest.mark.parametrize("count", [0, -1, True, 2.0, "2"])
def test_a_bad_thread_count_is_a_clear_error(count):
    with pytest.raises(ValueError, match="a thread count must be a positive integer"):
        using_threads(count).__enter__()


@pytest.mark.parametrize("threads", [1, 3])
def test_a_compiled_function_takes_the_environments_count(threads):
    isolated(
        f"""
        f, run = dense()
        run()
        assert pool_workers() == {threads} - 1
    """,
        threads=str(threads),
    )


def test_a_compiled_function_takes_a_count_per_call_and_per_function():
    """One compile, run with 1, 2 (profiled) and 3 threads: the same
    results, bit for bit (the tasks are cut at compile time, whichever
    thread runs them)."""
    isolated(
        """
        f, run = dense()
        results = []
        for threads in (1, 2, 3):
            results.append(run(profile=threads == 2, num_threads=threads))
            assert pool_workers() == threads - 1
        f.num_threads = 4
        results.append(run())
        assert pool_workers() == 3
        for y in results[1:]:
            np.testing.assert_array_equal(y, results[0])
    """,
        threads="1",
    )


def test_no_thread_has_a_count_of_its_own_before_the_pool_is_initialised():
    """A program linking `pool_ir()` itself: before `hetero_pool_init` the
    pool reads no thread-specific key (one never made may be another
    library's)."""
    import ctypes

    import llvmlite.binding as llvm

    from hetero.runtime.cpu import _initialize

    _initialize()
    machine = llvm.Target.from_triple(llvm.get_process_triple()).create_target_machine(
        codemodel="jitdefault", jit=True
    )
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(pool_ir()), machine)
    engine.finalize_object()

    def function(name, restype, *argtypes):
        return ctypes.CFUNCTYPE(restype, *argtypes)(engine.get_function_address(name))

    get = function("hetero_get_threads", ctypes.c_int64)
    put = function("hetero_set_threads", None, ctypes.c_int64)
    put(3)
    assert get() == 0
    assert function("hetero_pool_init", ctypes.c_int32)() == 0
    put(3)
    assert get() == 3
    put(0)
