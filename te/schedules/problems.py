"""What a schedule is asked to compute: target-independent problem descriptions.

The compute templates of `lower-te` (`te/templates/`) describe a
heavy op as one of these and hand it to the schedule registered for the
function's device type (`hetero.te.schedules.SCHEDULES`).  A problem
says *what* to compute through loaders (functions emitting the IR that reads
an operand element or writes an output element), so a schedule decides only
*how*: the loop order, tiling, packing, vectorization and parallelism.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Attribute, SSAValue

from hetero.analysis.shape_functions import Dim
from hetero.te.emit import Emitter, Index, Tensor

Store = Callable[[Emitter, list[Index], SSAValue], None]
"""Writes one output element (at the given indices) — with any fused epilogue."""


@dataclass(frozen=True)
class Gemm:
    """`out(b, m, n) = sum_k a(b, m, k) * b(b, k, n)` for each batch `b < batch`.

    `a` and `b` read one element at (batch, row, column); `store` writes
    output element `[b, m, n]`.  `b_along_k` says `b` is contiguous along
    `k` (dense's weight `[n, k]`), so packing reads it along `k`.
    `packed_b` is `b` as it is stored when the relay op's `weight_layout`
    is `NK<nr>n` (`[ceil(n / nr), k, nr]`, the same for every batch: the
    panels the schedule asked for, `schedules.DENSE_WEIGHT_BLOCKS`); `b`
    then reads through it.
    """

    batch: int | Dim
    m: int | Dim
    n: int | Dim
    k: int | Dim
    element_type: Attribute
    a: Callable[[Emitter, Index, Index, Index], SSAValue]
    b: Callable[[Emitter, Index, Index, Index], SSAValue]
    store: Store
    b_along_k: bool = False
    packed_b: Tensor | None = None
    a_in_place: bool = False
    """`a` reads a buffer as it is, each row contiguous along `k` (not a
    view whose elements are computed): the schedule may read its rows where
    they are rather than pack them."""


@dataclass(frozen=True)
class Conv2D:
    """NCHW `conv2d`: `data [N, C, H, W]`, `weight [O, C/groups, KH, KW]`,
    output `[N, O, OH, OW]` written through `store` at `[n, o, y, x]`.

    `packed` is the weight as it is stored when the relay op's
    `kernel_layout` is `OIHW<b>o` (`[ceil(O / b), C/groups, KH, KW, b]`,
    the layout the schedule asked for: `schedules.WEIGHT_BLOCKS`);
    `weight` then reads through it.  Likewise `blocked_data` is the data as
    stored in layout `NCHW<b>c` (`[N, C / b, H, W, b]`), and
    `blocked_store` writes the output in `NCHW<out_block>c`, at `[n, o // b,
    y, x, o % b]`
    (`alter-data-layout`); `data` and `store` stay the `NCHW` views.
    `winograd` is `m` when `packed` is a 3x3 weight in the Winograd domain
    of F(m x m, 3 x 3) (kernel layout `winograd<m>_OI<b>o`: `[(m + 2)^2,
    ceil(O / b), C, b]`, `hetero.utils.winograd`)."""

    data: Tensor
    weight: Tensor
    out_shape: tuple[int, ...]
    strides: tuple[int, int]
    dilation: tuple[int, int]
    padding: tuple[int, int, int, int]
    groups: int
    store: Store
    packed: Tensor | None = None
    blocked_data: Tensor | None = None
    blocked_store: Store | None = None
    out_block: int = 0
    winograd: int = 0
    flat_store: bool = False
    """`store` also takes `[n, o, 0, y * OW + x]` for `[n, o, y, x]`: the
    result is `NCHW` and its epilogue reads the same elements either way
    (`hetero.te.templates.Epilogue.flat_pixels`).  A schedule storing a run of
    pixels across rows then has no image width in its indices, so kernels
    for images of other sizes are alike (`merge-kernels`)."""

    @property
    def element_type(self) -> Attribute:
        """The element type of the data, the weight and the result."""
        return self.data.element_type


@dataclass(frozen=True)
class Pool2D:
    """NCHW max or average pooling of `data` into `out_shape` `[N, C, OH,
    OW]`, written through `store` at `[n, c, y, x]`.

    Output `(y, x)` reads the taps at input row `y * sh + ky * dh - top`
    and column `x * sw + kx * dw - left` that lie inside the input (padding
    and the rows `ceil_mode` adds are never read: `out_shape` already says
    how many windows there are).  An average divides by the taps inside the
    input or, with `count_include_pad`, inside the explicitly padded input;
    at least 1.
    """

    data: Tensor
    out_shape: tuple[int, ...]
    average: bool
    pool_size: tuple[int, int]
    strides: tuple[int, int]
    dilation: tuple[int, int]
    padding: tuple[int, int, int, int]
    count_include_pad: bool
    store: Store
