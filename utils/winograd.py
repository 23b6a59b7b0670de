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
    i, o % block]` is `(G w[o, i] G^T)[u, v]`, zero past `O`.  Computed in
    float64, stored in the weight's type."""
    g = np.asarray(TRANSFORMS[m].g)
    o, i, kh, kw = w.shape
    assert (kh, kw) == (3, 3), w.shape
    u = np.einsum("uk,oikl,vl->uvoi", g, w.astype(np.float64), g)
    alpha, blocks = m + 2, -(-o // block)
    u = u.reshape(alpha * alpha, o, i)
    if o % block:
        u = np.concatenate([u, np.zeros((alpha * alpha, blocks * block - o, i))], 1)
    packed = u.reshape(alpha * alpha, blocks, block, i).transpose(0, 1, 3, 2)
    return np.ascontiguousarray(packed, dtype=w.dtype)


def spatial_weight(u: np.ndarray, m: int, channels: int) -> np.ndarray:
    """The `OIHW` weight of `channels` outputs that `transformed_weight`
    packed into `u`: `L U L^T` per channel pair."""
    alpha = m + 2
    left = np.asarray(TRANSFORMS[m].left)
    positions, blocks, i, block = u.shape
    assert positions == alpha * alpha, u.shape
    per_pair = u.transpose(0, 1, 3, 2).reshape(alpha, alpha, blocks * block, i)
    w = np.einsum("ku,uvoi,lv->oikl", left, per_pair.astype(np.float64), left)
    return np.ascontiguousarray(w[:channels], dtype=u.dtype)
