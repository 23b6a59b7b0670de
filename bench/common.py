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
