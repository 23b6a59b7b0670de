"""A function's `max_sizes`: the largest sizes its tables hold.

An imported program that slices a table by a run-time size (a position
embedding's first `sequence` rows) holds up to that many rows only; its
entry's `max_sizes` records the limit, which the interpreter, the
compiler's per-shape functions and a function compiled once (in memory or
loaded from a `.hetero` file, without xDSL) all check with `oversized`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def oversized(
    limits: Mapping[tuple[int, int], int], shapes: Sequence[Sequence[int]]
) -> str | None:
    """Why parameters of `shapes` exceed `limits` (`(parameter, axis)` →
    most), or None."""
    for (index, axis), most in limits.items():
        if shapes[index][axis] > most:
            return (
                f"parameter #{index} has {shapes[index][axis]} along axis {axis}, "
                f"at most {most} (the program holds up to that size only)"
            )
    return None
