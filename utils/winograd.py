"""Winograd's minimal filtering F(m x m, 3 x 3): the transforms, and the weights.

A 3x3 correlation of stride 1 computes an `m x m` output tile from an
`a x a` input patch (`a = m + 2`) as

    Y = A^T [ (G g G^T) * (B^T d B) ] A

(Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks"): the
element-wise product of the `a x a` transformed weight and patch replaces
the `9 m^2` multiply-adds of the direct form by `a^2` products, which a
convolution sums over input channels as `a^2` independent GEMMs.  F(2, 3)
multiplies 2.25 times less than the direct form, F(4, 3) 4 times less.  The
matrices below are those of the interpolation points 0, 1, -1, infinity
(F(2, 3)) and 0, 1, -1, 2, -2, infinity (F(4, 3)); their coefficients are
exact in binary floating point except the 1/6, 1/12 and 1/24 of F(4, 3)'s G,
whose rounding and larger transforms cost F(4, 3) about one decimal digit of
accuracy against the direct form (`docs/cpu-schedules.md`).

`L` is a left inverse of `G` (`L G = I`), sparse: it recovers the 3x3
weight from the transformed one, `g = L U L^T`, which is how the reference
interpreter and the generic `OIHW` view read a weight stored in the
Winograd domain (`relay`'s `winograd<m>_OI<b>o` kernel layout).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import combinations

import numpy as np


@dataclass(frozen=True)
class Transforms:
    """F(m x m, 3 x 3): `a = m + 2`; `bt` is B^T (a x a), `g` is G (a x 3),
    `at` is A^T (m x a), `left` a left inverse of G (3 x a)."""

    m: int
    bt: tuple[tuple[float, ...], ...]
    g: tuple[tuple[float, ...], ...]
    at: tuple[tuple[float, ...], ...]
    left: tuple[tuple[float, ...], ...]

    @property
    def alpha(self) -> int:
        """The side of the transformed tiles, `m + 2`."""
        return self.m + 2


TRANSFORMS: dict[int, Transforms] = {
    2: Transforms(
        2,
        bt=((1, 0, -1, 0), (0, 1, 1, 0), (0, -1, 1, 0), (0, 1, 0, -1)),
        g=((1, 0, 0), (0.5, 0.5, 0.5), (0.5, -0.5, 0.5), (0, 0, 1)),
        at=((1, 1, 1, 0), (0, 1, -1, -1)),
        left=((1, 0, 0, 0), (0, 1, -1, 0), (0, 0, 0, 1)),
    ),
    4: Transforms(
        4,
        bt=(
            (4, 0, -5, 0, 1, 0),
            (0, -4, -4, 1, 1, 0),
            (0, 4, -4, -1, 1, 0),
            (0, -2, -1, 2, 1, 0),
            (0, 2, -1, -2, 1, 0),
            (0, 4, 0, -5, 0, 1),
        ),
        g=(
            (1 / 4, 0, 0),
            (-1 / 6, -1 / 6, -1 / 6),
            (-1 / 6, 1 / 6, -1 / 6),
            (1 / 24, 1 / 12, 1 / 6),
            (1 / 24, -1 / 12, 1 / 6),
            (0, 0, 1),
        ),
        at=(
            (1, 1, 1, 1, 1, 0),
            (0, 1, -1, 2, -2, 0),
            (0, 1, 1, 4, 4, 0),
            (0, 1, -1, 8, -8, 1),
        ),
        left=((4, 0, 0, 0, 0, 0), (0, -3, 3, 0, 0, 0), (0, 0, 0, 0, 0, 1)),
    ),
}
"""The output tile sizes `m` hetero has transforms for."""


def transformed_weight(w: np.ndarray, m: int, block: int) -> np.ndarray:
    """An `OIHW` 3x3 weight in the Winograd domain of F(m x m, 3 x 3), packed
    `[a * a, ceil(O / block), I, block]`: element `[u * a + v, o // block,
    i, o % block]` is `(G w[o, i] G^T)[u, v]`, zero past `O`."""
    o, i, kh, kw = w.shape
    assert (kh, kw) == (3, 3), w.shape
    blocks = -(-o // block)
    if o % block:
        w = np.concatenate([w, np.zeros((blocks * block - o, i, 3, 3), w.dtype)])
    # The taps outermost, then the packed order: the transform of every
    # (o, i) is then one product, (G ⊗ G) [9, blocks * I * block], written in
    # the packed layout (two tensordots and a strided repacking were slower:
    # docs/performance.md).  By `einsum`'s own loop, not BLAS:
    # `alter-op-layout` packs on a background thread beside the passes, and
    # OpenBLAS's threads, one a core, took the passes' core.
    taps = w.reshape(blocks, block, i, 9).transpose(3, 0, 2, 1).reshape(9, -1)
    g = np.asarray(TRANSFORMS[m].g, w.dtype)
    product = np.einsum("pt,tk->pk", np.kron(g, g), taps, optimize=False)
    return product.reshape((m + 2) ** 2, blocks, i, block)


def spatial_weight(u: np.ndarray, m: int, channels: int) -> np.ndarray:
    """The `OIHW` weight of `channels` outputs that `transformed_weight`
    packed into `u`: `L U L^T` per channel pair, one GEMM as there."""
    positions, blocks, i, block = u.shape
    assert positions == (m + 2) ** 2, u.shape
    left = np.asarray(TRANSFORMS[m].left, u.dtype)
    taps = (np.kron(left, left) @ u.reshape(positions, -1)).reshape(9, blocks, i, block)
    w = taps.transpose(1, 3, 2, 0).reshape(blocks * block, i, 3, 3)
    return np.ascontiguousarray(w[:channels])


@dataclass(frozen=True)
class Program:
    """A straight-line program for `matrix · x`: the values are the inputs,
    then one per step, `(op, a, b)` being `values[a] + values[b]` ("add"),
    `values[a] - values[b]` ("sub") or `b * values[a]` ("scale");
    `outputs` are the values of the matrix's rows."""

    steps: tuple[tuple[str, int, float], ...]
    outputs: tuple[int, ...]


Row = dict[int, float]
"""A linear combination: value index → coefficient."""


@cache
def program(matrix: tuple[tuple[float, ...], ...]) -> Program:
    """A short program for `matrix · x` (a transform's rows): inputs that
    every row weighs equally or oppositely are summed and subtracted once
    (A^T's pairs of points +-p), and pairs of rows that are the sum and the
    difference of two shorter ones (B^T's) are computed so; F(4x4)'s B^T
    takes 19 steps instead of 28, its A^T 13 instead of 20."""
    builder = _Builder(len(matrix[0]))
    rows = builder.pair_inputs([_nonzero(dict(enumerate(row))) for row in matrix])
    outputs = tuple(builder.rows(rows))
    return Program(tuple(builder.steps), outputs)


class _Builder:
    """The steps of a `Program` as they are made."""

    def __init__(self, inputs: int) -> None:
        self.count = inputs
        self.steps: list[tuple[str, int, float]] = []

    def step(self, op: str, a: int, b: float) -> int:
        self.steps.append((op, a, b))
        self.count += 1
        return self.count - 1

    def pair_inputs(self, rows: list[Row]) -> list[Row]:
        """Rows rewritten over `a + b` and `a - b` where every row weighs
        inputs `a` and `b` equally or oppositely."""
        for a, b in combinations(range(self.count), 2):
            if not all(r.get(a, 0) in (r.get(b, 0), -r.get(b, 0)) for r in rows):
                continue
            if not any(r.get(a) for r in rows):
                continue
            made: dict[bool, int] = {}
            for r in rows:
                ca, cb = r.pop(a, 0), r.pop(b, 0)
                if ca:
                    same = ca == cb
                    if same not in made:
                        made[same] = self.step("add" if same else "sub", a, b)
                    r[made[same]] = ca
        return rows

    def rows(self, rows: list[Row]) -> list[int]:
        """The value of each row, pairs of rows `E + O`, `E - O` where that
        is shorter."""
        values: dict[int, int] = {}
        for i, j in combinations(range(len(rows)), 2):
            if i in values or j in values:
                continue
            keys = rows[i].keys() | rows[j].keys()
            even = {k: (rows[i].get(k, 0) + rows[j].get(k, 0)) / 2 for k in keys}
            odd = {k: (rows[i].get(k, 0) - rows[j].get(k, 0)) / 2 for k in keys}
            even, odd = _nonzero(even), _nonzero(odd)
            if not even or not odd:
                continue
            if _cost(even) + _cost(odd) + 2 < _cost(rows[i]) + _cost(rows[j]):
                e, o = self.combine(even), self.combine(odd)
                values[i], values[j] = self.step("add", e, o), self.step("sub", e, o)
        for i, row in enumerate(rows):
            if i not in values:
                values[i] = self.combine(row)
        return [values[i] for i in range(len(rows))]

    def combine(self, row: Row) -> int:
        """The value `sum c * values[k]`: a common factor applied once, a
        positive term first, subtractions for negative ones."""
        scales = {abs(c) for c in row.values()}
        if len(scales) == 1 and (factor := scales.pop()) != 1 and len(row) > 1:
            unit = self.combine({k: c / factor for k, c in row.items()})
            return self.step("scale", unit, factor)
        terms = sorted(row.items(), key=lambda kc: kc[1] < 0)
        k, c = terms[0]
        total = k if c == 1 else self.step("scale", k, c)
        for k, c in terms[1:]:
            value = k if abs(c) == 1 else self.step("scale", k, abs(c))
            total = self.step("add" if c > 0 else "sub", total, value)
        return total


def _nonzero(row: Row) -> Row:
    return {k: c for k, c in row.items() if c}


def _cost(row: Row) -> int:
    """Steps `_Builder.combine` takes for `row` (about)."""
    return len(row) - 1 + sum(1 for c in row.values() if abs(c) != 1)
