"""`hetero.utils.background`: jobs on one thread, in order; the switch
interval lowered only while jobs are queued; a fork waits for them, except
in `forking_unsettled`."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32

from hetero.utils.background import SWITCH_INTERVAL, forking_unsettled, later, settle
from hetero.utils.dense_resources import (
    dense_resource,
    dense_resource_later,
    resource_bytes,
)
from hetero.utils.diagnostics import HeteroError


@pytest.fixture(autouse=True)
def default_interval() -> Iterator[None]:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    yield
    settle()
    sys.setswitchinterval(previous)


def test_jobs_run_in_order_on_one_other_thread() -> None:
    gate = threading.Event()
    ran: list[tuple[int, int]] = []

    def job(n: int) -> int:
        gate.wait(5)
        ran.append((n, threading.get_ident()))
        return n * n

    futures = [later(lambda n=n: job(n)) for n in range(5)]
    assert not ran  # queued, not run on the caller's thread
    gate.set()
    assert [f.result(5) for f in futures] == [0, 1, 4, 9, 16]
    assert [n for n, _ in ran] == list(range(5))
    assert {ident for _, ident in ran} != {threading.get_ident()}
    assert len({ident for _, ident in ran}) == 1
    settle()
    assert not _running_threads()  # the thread ends with the queue


def _running_threads() -> list[threading.Thread]:
    """The background threads still running, given a second to end."""
    ours = [t for t in threading.enumerate() if t.name.startswith("hetero-background")]
    for thread in ours:
        thread.join(1)
    return [t for t in ours if t.is_alive()]


def test_a_job_may_wait_for_one_queued_before_it() -> None:
    gate = threading.Event()
    first = later(lambda: gate.wait(5) and 3)
    second = later(lambda: first.result() + 1)
    gate.set()
    assert second.result(5) == 4


def test_an_error_stays_with_its_future() -> None:
    def fail() -> None:
        raise ValueError("no weight")

    failed = later(fail)
    settle()  # does not raise
    with pytest.raises(ValueError, match="no weight"):
        failed.result()
    assert later(lambda: 1).result(5) == 1  # the thread goes on


def _as_kept(interval: float) -> float:
    """The switch-interval setting Python keeps for `interval` (it rounds to
    whole microseconds): set it and read it back (the setting before must
    be one that survives that, as the fixture's 5 ms does)."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    kept = sys.getswitchinterval()
    sys.setswitchinterval(previous)
    return kept


def test_the_switch_interval_is_lowered_only_while_jobs_are_queued() -> None:
    gate = threading.Event()
    later(lambda: gate.wait(5))
    assert sys.getswitchinterval() == _as_kept(SWITCH_INTERVAL)
    gate.set()
    settle()
    assert sys.getswitchinterval() == _as_kept(0.005)
    sys.setswitchinterval(SWITCH_INTERVAL / 2)  # lower already: left as it is
    lower = sys.getswitchinterval()
    later(lambda: None)
    assert sys.getswitchinterval() == lower
    settle()
    assert sys.getswitchinterval() == lower


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_fork_waits_for_the_queue_and_the_child_has_its_own() -> None:
    done, gate = threading.Event(), threading.Event()
    later(lambda: (gate.wait(5), done.set()))
    # Our own before-fork hook runs before hetero's (Python calls them in the
    # reverse order of registration): it opens the gate, then hetero's waits
    # for the job.  Without that wait the child would find `done` unset.
    os.register_at_fork(before=gate.set)
    pid = os.fork()
    if (
        pid == 0
    ):  # the child: the job was done before the fork, and it can queue its own
        code = 1
        try:
            code = 0 if done.is_set() and later(lambda: 7).result(5) == 7 else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_an_unsettled_fork_does_not_wait_and_its_child_cannot_read_the_jobs() -> None:
    """In `forking_unsettled` (code generation's workers) the fork goes on
    while a job runs; in the child, a blob the parent is still making is an
    error to read (it would wait forever for a thread the child lacks),
    and so is one it had made (its future's lock may have been held at the
    fork), while other blobs read as ever."""
    gate = threading.Event()
    t = TensorType(f32, [2])
    pending = dense_resource_later(
        lambda: (gate.wait(5), np.ones(2, np.float32))[1], t, "p"
    )
    made = dense_resource_later(lambda: np.zeros(2, np.float32), t, "m")
    resource_bytes(made)
    plain = dense_resource(np.full(2, 3, np.float32), t, "plain")
    with forking_unsettled():
        pid = os.fork()
    if pid == 0:
        code = 1
        try:
            for attr in (pending, made):
                with pytest.raises(HeteroError, match="forked while it was being made"):
                    resource_bytes(attr)
            code = (
                0
                if bytes(resource_bytes(plain)) == np.full(2, 3, "<f4").tobytes()
                else 1
            )
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert not gate.is_set()  # the child ran while the job was still waiting
    gate.set()
    assert os.waitstatus_to_exitcode(status) == 0
    assert bytes(resource_bytes(pending)) == np.ones(2, "<f4").tobytes()
