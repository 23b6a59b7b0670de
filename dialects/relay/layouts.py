"""The data and weight layouts of the relay operators, as patterns and block sizes.

A layout is a string a `LayoutParam` checks against one of these patterns;
the accessors give the block size it names (0: the plain layout), which the
shape inference, the interpreter and the schedules all read.
"""

from __future__ import annotations

import re

KERNEL_LAYOUT = re.compile(
    r"OIHW(?:([1-9][0-9]*)o)?|winograd(?P<tile>[24])_OI(?P<wblock>[1-9][0-9]*)o"
)
"""conv2d weight layouts: `OIHW`; `OIHW<b>o`: `[ceil(O / b), I, KH, KW, b]`,
element `[o // b, i, ky, kx, o % b]` holding `W[o, i, ky, kx]` (zero past
`O`); `winograd<m>_OI<b>o`: a 3x3 weight in the Winograd domain of F(m x m,
3 x 3), m = 2 or 4 (`hetero.utils.winograd`): `[(m + 2)^2, ceil(O / b), I,
b]`, element `[u * (m + 2) + v, o // b, i, o % b]` holding `(G W[o, i]
G^T)[u, v]` (zero past `O`).  Only such values mean a weight: the compiled
code multiplies by them as they are, the interpreter reads `W` back with a
left inverse of `G` (values outside the transform's range differ there)."""

DATA_LAYOUT = re.compile(r"NCHW(?:([1-9][0-9]*)c)?")
"""conv2d data and output layouts: `NCHW`, or `NCHW<b>c` (TVM's `NCHWc`):
`[N, C / b, H, W, b]`, element `[n, c // b, y, x, c % b]` holding `X[n, c,
y, x]`; the channels fill whole blocks."""


DENSE_WEIGHT_LAYOUT = re.compile(r"NK(?:([1-9][0-9]*)n)?")
"""dense weight layouts: `NK` (`[N, K]`), or `NK<b>n`: `[ceil(N / b), K,
b]`, element `[n // b, k, n % b]` holding `W[n, k]` (zero past `N`), panels
of `b` outputs contiguous per `k` (what a CPU GEMM schedule packs `b` into)."""


LAYOUT_FORMS: dict[re.Pattern[str], str] = {
    KERNEL_LAYOUT: '"OIHW", "OIHW<b>o" or "winograd<m>_OI<b>o" (b >= 1, m = 2 or 4)',
    DATA_LAYOUT: '"NCHW" or "NCHW<b>c" (b >= 1)',
    DENSE_WEIGHT_LAYOUT: '"NK" or "NK<b>n" (b >= 1)',
}
"""What a diagnostic says each layout pattern accepts."""


def _number(pattern: re.Pattern[str], layout: str, *groups: int | str) -> int:
    """The first of `groups` of `layout` (which `pattern` matches) that
    matched, as a number; 0 when none did."""
    match = pattern.fullmatch(layout)
    assert match is not None, layout
    return int(next((g for g in map(match.group, groups) if g), 0))


def kernel_block(layout: str) -> int:
    """The output-channel block `b` of a conv2d weight layout (0: `OIHW`)."""
    return _number(KERNEL_LAYOUT, layout, 1, "wblock")


def winograd_tile(layout: str) -> int:
    """The output tile `m` of a `winograd<m>_OI<b>o` weight layout (0: another)."""
    return _number(KERNEL_LAYOUT, layout, "tile")


def data_block(layout: str) -> int:
    """The channel block `b` of a data layout (0: `NCHW`)."""
    return _number(DATA_LAYOUT, layout, 1)


def dense_block(layout: str) -> int:
    """The output block `b` of a dense weight layout (0: `NK`)."""
    return _number(DENSE_WEIGHT_LAYOUT, layout, 1)
