"""Progress of a long compile on stderr: its stage, and kernels compiled of N.

    with reporting():               # hetero.compile's, around one compile
        stage("relay passes: fuse-ops")
        stage("code generation", total=40)
        advance(12)                 # 12 of the 40 kernels compiled

A compile of SqueezeNet takes seconds and printed nothing until it was
done.  Now, once a compile has run for `DELAY` seconds, each event writes
the current state: on a terminal one line rewritten in place (`\\r`),
elsewhere one plain line an event, so that a log stays readable.  Compiles
shorter than `DELAY` print nothing at all.

Whether it reports at all: `HETERO_PROGRESS=1` forces it on, `=0` off;
otherwise only where stderr is a terminal.  Tools' `--progress` passes
`reporting(True)`; a `reporting()` inside another one is the outer one, so
that the tool's choice holds for the compile it wraps.  The calls are no-ops
outside `reporting` and in processes forked from the one reporting (the
compile workers of `hetero.lowering.parallel_compile`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO

VARIABLE = "HETERO_PROGRESS"
"""`1` reports progress wherever stderr goes, `0` never; unset: on a terminal."""

DELAY = 1.0
"""Seconds a compile runs before its progress shows: shorter ones stay silent."""


def wanted(stream: IO[str], forced: bool | None = None) -> bool:
    """Whether to report on `stream`: `forced`, else `VARIABLE`, else a terminal."""
    if forced is not None:
        return forced
    setting = os.environ.get(VARIABLE, "")
    if setting in ("0", "1"):
        return setting == "1"
    return stream.isatty()


@dataclass
class Progress:
    """The state of one compile and the line that shows it on `stream`."""

    stream: IO[str]
    in_place: bool
    """Rewrite one line with `\\r` (a terminal) rather than write a line an event."""
    delay: float = field(default_factory=lambda: DELAY)
    clock: Callable[[], float] = time.perf_counter
    start: float = field(init=False)
    pid: int = field(default_factory=os.getpid, init=False)
    name: str = field(default="", init=False)
    done: int = field(default=0, init=False)
    total: int | None = field(default=None, init=False)
    width: int = field(default=0, init=False)
    """Characters of the line last written in place (0: nothing shown)."""
    shown: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.start = self.clock()

    def stage(self, name: str, total: int | None = None) -> None:
        """A new stage, of `total` items when it counts them."""
        self.name, self.done, self.total = name, 0, total
        self._show()

    def advance(self, count: int = 1) -> None:
        """`count` more items of the stage are done."""
        self.done += count
        self._show()

    def line(self) -> str:
        counted = f" {self.done}/{self.total} kernels" if self.total else ""
        return f"hetero: {self.name}{counted} [{self.clock() - self.start:.1f} s]"

    def finish(self) -> None:
        """End the line shown in place, with the compile's total time."""
        if self.shown and self.in_place:
            self.name, self.total = "compiled", None
            self._write(self.line())
            self.stream.write("\n")
            self.stream.flush()

    def _show(self) -> None:
        if os.getpid() != self.pid or self.clock() - self.start < self.delay:
            return
        self.shown = True
        self._write(self.line())

    def _write(self, text: str) -> None:
        if self.in_place:
            self.stream.write("\r" + text.ljust(self.width))
            self.width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


_active: Progress | None = None


@contextmanager
def reporting(forced: bool | None = None) -> Iterator[Progress | None]:
    """Report the progress of the compile in this block on stderr (see
    `wanted`); inside another `reporting`, that one goes on."""
    global _active
    if _active is not None:
        yield _active
        return
    stream = sys.stderr
    if not wanted(stream, forced):
        yield None
        return
    _active = Progress(stream, in_place=stream.isatty())
    try:
        yield _active
    finally:
        _active.finish()
        _active = None


def stage(name: str, total: int | None = None) -> None:
    """`Progress.stage` of the compile being reported, if any."""
    if _active is not None:
        _active.stage(name, total)


def advance(count: int = 1) -> None:
    """`Progress.advance` of the compile being reported, if any."""
    if _active is not None:
        _active.advance(count)
