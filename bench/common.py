"""Timing helpers shared by the benchmarks."""

import statistics
import time
from collections.abc import Callable


def median_time(fn: Callable[[], object], rounds: int = 5, setup: Callable[[], object] | None = None) -> float:
    """Median wall time of `fn()` over `rounds` runs (each after a fresh `setup()`)."""
    times = []
    for _ in range(rounds):
        state = setup() if setup is not None else None
        start = time.perf_counter()
        fn() if state is None else fn(state)  # type: ignore[call-arg]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


SETTLE_SECONDS = 0.3
"""Pause before each timed call: thread pools keep their idle threads spinning
for a while after a call (OpenBLAS about 0.1 s, hetero's pool 0.1 ms), and a
pool still spinning on the other core would slow whichever runs next."""


def interleaved(
    fns: list[Callable[[], object]], rounds: int = 5, settle: float = SETTLE_SECONDS
) -> list[float]:
    """Median wall time of each of `fns`, timed in alternation (one warm-up
    call each first), so that machine noise hits them alike; `settle` seconds
    of quiet before each timed call."""
    for fn in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for fn, samples in zip(fns, times):
            time.sleep(settle)
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
    return [statistics.median(samples) for samples in times]
