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
    i, o % block]` is `(G w[o, i] G^T)[u, v]`, zero past `O`."""
    o, i, kh, kw = w.shape
    assert (kh, kw) == (3, 3), w.shape
    alpha, blocks = m + 2, -(-o // block)
    if o % block:
        w = np.concatenate([w, np.zeros((blocks * block - o, i, 3, 3), w.dtype)])
    u = _sandwich(np.asarray(TRANSFORMS[m].g), w)  # [u, o, i, v]
    packed = np.empty((alpha, alpha, blocks, i, block), w.dtype)
    for v in range(alpha):
        packed[:, v] = u[..., v].reshape(alpha, blocks, block, i).transpose(0, 1, 3, 2)
    return packed.reshape(alpha * alpha, blocks, i, block)


def spatial_weight(u: np.ndarray, m: int, channels: int) -> np.ndarray:
    """The `OIHW` weight of `channels` outputs that `transformed_weight`
    packed into `u`: `L U L^T` per channel pair."""
    alpha = m + 2
    positions, blocks, i, block = u.shape
    assert positions == alpha * alpha, u.shape
    per_pair = u.transpose(1, 3, 2, 0).reshape(blocks * block, i, alpha, alpha)
    w = _sandwich(np.asarray(TRANSFORMS[m].left), per_pair)  # [k, o, i, l]
    return np.ascontiguousarray(w.transpose(1, 2, 0, 3)[:channels])


def _sandwich(left: np.ndarray, w: np.ndarray) -> np.ndarray:
    """`left · w[o, i] · left^T` for every `(o, i)` of `w` `[O, I, n, n]`, as
    `[p, O, I, p]`, in `w`'s type: two GEMMs (`tensordot`), where NumPy's
    batched small products (and float64) took 0.25-0.4 s for a 512x512 3x3
    weight, 0.06 s so."""
    left = left.astype(w.dtype)
    return np.tensordot(np.tensordot(left, w, ([1], [2])), left, ([3], [1]))
