"""`later`: NumPy work on a background thread, beside the main thread's passes.

The relay passes of `hetero.compile` fold and pack a network's weights
(ResNet-50: 0.1 GB, 0.15 s of NumPy) between stretches of pure-Python IR
rewriting, on one core while the machine's others idle: code generation,
which the passes lead to, needs the weights' shapes, not their values.
NumPy releases the GIL in its loops, so a thread can compute the values
while the main thread rewrites: a `dense_resource` made `later` is read
(`hetero.utils.dense_resources`) only once it is there.

* One thread, first in, first out: a job may wait for the result of a job
  queued before it (a weight folded, then packed), never after it.
* While jobs are queued, Python's switch interval is `SWITCH_INTERVAL`
  instead of its 5 ms: back from a NumPy loop, the thread waits for the
  GIL until the main thread gives it up, at the interval, and with a few
  NumPy calls a weight it got too little of its core to finish while the
  passes ran.  The interval is the process's: it is put back when the
  queue empties.
* A job is best without BLAS: OpenBLAS runs a product on a thread per core,
  the main thread's too (`hetero.utils.winograd` transforms weights by
  `einsum`'s own loop for that).
* The thread lives while jobs are queued.  A fork waits for the queue first
  (`os.register_at_fork`): a child starts with no half-done job, and a
  fresh queue.  Forks in `forking_unsettled` do not wait: children that
  read no job's result (code generation's workers need the weights'
  shapes, not their values) start while the jobs go on in the parent.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import Any, TypeVar

SWITCH_INTERVAL = 0.0002
"""Python's switch interval while jobs are queued, in seconds: short enough
that the weights are made by the time the relay passes end (each of a job's
NumPy calls waits for the GIL up to an interval when it ends; figures in
docs/performance.md).  The main thread pays a switch only when the
background thread asks for the GIL."""

_T = TypeVar("_T")


class _Queue:
    """The thread, the jobs not yet done, and the switch interval to restore."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.executor: ThreadPoolExecutor | None = None
        self.jobs: set[Future[object]] = set()
        self.interval: float | None = None  # set while the interval is ours

    def submit(self, job: Callable[[], _T]) -> Future[_T]:
        with self.lock:
            if self.executor is None:
                self.executor = ThreadPoolExecutor(1, "hetero-background")
            if self.interval is None and sys.getswitchinterval() > SWITCH_INTERVAL:
                # A lower setting is left untouched: written back, Python's
                # rounding to microseconds would move it.
                self.interval = sys.getswitchinterval()
                sys.setswitchinterval(SWITCH_INTERVAL)
            future = self.executor.submit(job)
            self.jobs.add(future)  # pyright: ignore[reportArgumentType]
        future.add_done_callback(lambda done: self._retire([done]))
        return future

    def settle(self) -> None:
        with self.lock:
            jobs = list(self.jobs)
        wait(jobs)
        self._retire(jobs)  # before their callbacks, which may come after `wait`

    def _retire(self, done: Iterable[Future[Any]]) -> None:
        """Forget the jobs `done`; once none is left, the interval goes back
        and the thread ends (a process that forks later has no thread of
        ours, which Python 3.12 warns of)."""
        with self.lock:
            self.jobs.difference_update(done)
            if self.jobs:
                return
            if self.interval is not None:
                sys.setswitchinterval(self.interval)
                self.interval = None
            if self.executor is not None:
                self.executor.shutdown(wait=False)
                self.executor = None


_QUEUE = _Queue()

_UNSETTLED_FORKS = threading.local()
"""`forking_unsettled`'s depth in each thread (its `depth`)."""


def _unsettled() -> int:
    return getattr(_UNSETTLED_FORKS, "depth", 0)


def _before_fork() -> None:
    if not _unsettled():
        _QUEUE.settle()


_ORPHAN_HOOKS: list[Callable[[], None]] = []
"""What runs in a child forked in `forking_unsettled` (`on_unsettled_fork`)."""


def _forget() -> None:
    """In a forked child: the thread is the parent's."""
    global _QUEUE
    _QUEUE = _Queue()
    if _unsettled():
        for hook in _ORPHAN_HOOKS:
            hook()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(before=_before_fork, after_in_child=_forget)


@contextmanager
def forking_unsettled() -> Iterator[None]:
    """Forks from this thread within the block do not wait for the queued
    jobs.  For children that read none of their results: a job still
    running at the fork never ends in the child, whose futures of it stay
    pending (`on_unsettled_fork`: `hetero.utils.dense_resources` fails a
    read of any).  ViT-B/32 packs 340 MB of weights in 0.3-0.5 s, which its
    compile workers no longer wait for (docs/performance.md)."""
    _UNSETTLED_FORKS.depth = _unsettled() + 1
    try:
        yield
    finally:
        _UNSETTLED_FORKS.depth -= 1


def on_unsettled_fork(hook: Callable[[], None]) -> None:
    """Run `hook()` in each child forked in `forking_unsettled`, first thing:
    it may drop the futures of the parent's jobs (unread: one whose job was
    running holds a lock no thread of the child will release)."""
    _ORPHAN_HOOKS.append(hook)


def later(job: Callable[[], _T]) -> Future[_T]:
    """`job()` on the background thread, after the jobs queued before it; its
    result, or its exception, comes with the future."""
    return _QUEUE.submit(job)


def settle() -> None:
    """Wait until every job queued so far is done (their errors stay with
    their futures)."""
    _QUEUE.settle()
