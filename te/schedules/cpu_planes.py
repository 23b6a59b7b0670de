"""Where a CPU conv2d's window taps read its input.

The direct, channel-lanes and Winograd conv2d schedules read the input
through a zero-padded copy split into planes by stride phase (`Planes`):
it removes the bounds checks and makes each window tap one contiguous run
of input for consecutive output pixels.  Where the windows allow it
(`flat_windows`) they read the flattened image in place instead, and write
the output as one run of the flattened image too (`output_pixel`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.ir import SSAValue

from hetero.dialects.tir import ForKind
from hetero.te.emit import Emitter, Index
from hetero.te.schedules.problems import Conv2D


@dataclass(frozen=True)
class Planes:
    """The zero-padded input of a conv2d, split by stride phase: padded pixel
    `(row, col)` is element `(row // sh) * wq + col // sw` of plane
    `(row % sh) * sw + col % sw`.  In a plane, the pixels that output pixels
    `(y, x)` and `(y, x + 1)` read for one window tap are neighbours, and so
    are `(y, wq - 1)` and `(y + 1, 0)`: the *wide* output domain `y * wq + x`
    (`x < wq`, columns `x >= out_w` are garbage) reads every tap as one
    contiguous run, so a panel of `nr` wide pixels is `nr` consecutive lanes
    whatever the image width."""

    wq: int
    """Columns of a plane row."""
    length: int
    """Elements of a plane: its rows, and the tail the last panel overreads."""

    @classmethod
    def of(cls, c: Conv2D, panels_end: int) -> Planes:
        """The plane geometry for panels that read wide pixels below `panels_end`."""
        _, _, height, width = c.data.shape
        _, _, kh, kw = c.weight.shape
        _, _, out_h, out_w = c.out_shape
        (sh, sw), (dh, dw) = c.strides, c.dilation
        rows = max((out_h - 1) * sh + (kh - 1) * dh + 1, c.padding[0] + height)
        cols = max((out_w - 1) * sw + (kw - 1) * dw + 1, c.padding[1] + width)
        wq = math.ceil(cols / sw)
        last_tap = ((kh - 1) * dh // sh) * wq + (kw - 1) * dw // sw
        return cls(wq, max(math.ceil(rows / sh) * wq, panels_end + last_tap))


def pad_input(e: Emitter, c: Conv2D, planes: Planes) -> SSAValue:
    """The input, zero-padded and split into stride-phase planes (`Planes`),
    one parallel task per input channel (per block of channels of blocked
    data, whose planes keep the block: `[N, C / b, phases, length * b]`,
    element `pixel * b + c % b`).  Only the planes some window tap reads are
    filled (a 1x1 stride-2 conv reads one of four), and only their padding
    and tail are zeroed."""
    block = data_block(c)
    batch, channels, _, _ = c.data.shape
    sh, sw = c.strides
    blocks = channels // block
    padded = e.alloc(
        [batch, blocks, sh * sw, planes.length * block], c.data.element_type
    )
    body, flat = e.loop(batch * blocks, ForKind.PARALLEL)
    n, ch = body.div(flat, blocks), body.rem(flat, blocks)
    for rp, cp in used_phases(c):
        fill_plane(body, c, planes, padded, [n, ch, rp * sw + cp], rp, cp)
    return padded


def data_block(c: Conv2D) -> int:
    """The channel block of the data as stored (1: `NCHW`)."""
    return 1 if c.blocked_data is None else c.blocked_data.shape[-1]


def tap(
    e: Emitter, c: Conv2D, planes: Planes, ky: Index, kx: Index
) -> tuple[Index, Index]:
    """Where tap `(ky, kx)` reads: its stride-phase plane, and the shift of
    its whole rows and columns of that plane from the output pixel's own
    element (`Planes`)."""
    (sh, sw), (dh, dw) = c.strides, c.dilation
    row, col = e.mul(ky, dh), e.mul(kx, dw)
    plane = e.add(e.mul(e.rem(row, sh), sw), e.rem(col, sw))
    shift = e.add(e.mul(e.div(row, sh), planes.wq), e.div(col, sw))
    return plane, shift


def used_phases(c: Conv2D) -> list[tuple[int, int]]:
    """The (row, column) stride phases that the window taps read."""
    _, _, kh, kw = c.weight.shape
    (sh, sw), (dh, dw) = c.strides, c.dilation
    rows = sorted({ky * dh % sh for ky in range(kh)})
    cols = sorted({kx * dw % sw for kx in range(kw)})
    return [(rp, cp) for rp in rows for cp in cols]


def _interior(pad: int, size: int, stride: int, phase: int) -> tuple[int, int]:
    """The plane rows (columns) `q` whose padded index `q * stride + phase`
    is an input one, `pad <= . < pad + size`: [start, end)."""
    start = max(0, -(-(pad - phase) // stride))
    return start, max(start, -(-(pad + size - phase) // stride))


def fill_plane(
    e: Emitter,
    c: Conv2D,
    planes: Planes,
    padded: SSAValue,
    at: list[Index],
    rp: int,
    cp: int,
    source: list[Index] | None = None,
) -> None:
    """Plane (`rp`, `cp`) of `padded` at indices `at`: its rows and columns
    that hold input pixels (padded row `rq * sh + rp`, column `cq * sw +
    cp`) copied from image and channel `source` (`at[:2]` when not given),
    the rest zero (blocked data: a block of channels per pixel,
    `pad_input`)."""
    source = at[:2] if source is None else source
    _, _, height, width = c.data.shape
    (sh, sw), (top, left) = c.strides, c.padding[:2]
    wq = planes.wq
    block = data_block(c)
    r0, r1 = _interior(top, height, sh, rp)
    q0, q1 = _interior(left, width, sw, cp)
    zero = e.constant(0.0, c.data.element_type)

    def zeros(em: Emitter, start: Index, count: int) -> None:
        if count > 0:
            lane, i = em.loop(count * block, ForKind.VECTORIZED)
            lane.store(zero, padded, [*at, lane.add(lane.mul(start, block), i)])

    zeros(e, 0, r0 * wq)
    rows, rq = e.range(r0, r1)
    start = rows.mul(rq, wq)
    zeros(rows, start, q0)
    y = rows.sub(rows.add(rows.mul(rq, sh), rp), top)
    if c.blocked_data is None:
        lane, cq = rows.range(q0, q1, kind=ForKind.VECTORIZED)
        x = lane.sub(lane.add(lane.mul(cq, sw), cp), left)
        value = c.data.load(lane, [*source, y, x])
        lane.store(value, padded, [*at, lane.add(start, cq)])
    else:
        column, cq = rows.range(q0, q1)
        x = column.sub(column.add(column.mul(cq, sw), cp), left)
        lane, ci = column.loop(block, ForKind.VECTORIZED)
        value = c.blocked_data.load(lane, [*source, y, x, ci])
        at_pixel = lane.mul(lane.add(start, cq), block)
        lane.store(value, padded, [*at, lane.add(at_pixel, ci)])
    zeros(rows, rows.add(start, q1), wq - q1)
    zeros(e, r1 * wq, planes.length - r1 * wq)


def flat_windows(c: Conv2D) -> bool:
    """Stride 1, no padding, windows one column wide: output pixel `p` of
    the flattened image reads input pixel `p + ky * dh * W` for tap `ky`."""
    return c.strides == (1, 1) and not any(c.padding) and c.weight.shape[3] == 1


def row_major(e: Emitter, pixel: Index, width: int) -> list[Index]:
    """Row and column of element `pixel` of a flattened image `width` wide
    (the vectorizer addresses consecutive pixels as one run across rows)."""
    return [e.div(pixel, width), e.rem(pixel, width)]


def output_pixel(e: Emitter, c: Conv2D, pixel: Index) -> list[Index]:
    """The last two indices of output pixel `pixel` of the flattened image:
    `[0, pixel]` where the store takes it (`Conv2D.flat_store`: no image
    width in the kernel, which `merge-kernels` can then share between
    layers of other sizes), else its row and column."""
    return [0, pixel] if c.flat_store else row_major(e, pixel, c.out_shape[3])
