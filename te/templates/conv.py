"""The templates of the convolutions: conv2d as a `Conv2D` problem for the
target's schedule (its weight read as `OIHW` whatever its packed layout,
Winograd's included), conv2d_transpose as a conv2d of its spread input
where it can be, and the direct nest any of them falls back to."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import product

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from hetero.dialects import relay
from hetero.te.emit import Emitter, Index, Tensor, store_all
from hetero.te.schedules import problem_schedule, spreads_transposed
from hetero.te.schedules.problems import Conv2D
from hetero.te.templates.base import (
    NestTemplate,
    accumulate,
    require_float,
    result_shape,
)
from hetero.te.templates.epilogue import Epilogue, finish, store_into
from hetero.te.templates.injective import blocked_index, nchw, unblocked
from hetero.utils.winograd import TRANSFORMS, Transforms


def _window_tap(
    e: Emitter, out_pos: Index, tap: Index, stride: int, dilation: int, pad: int
) -> Index:
    """The input row (column) a window tap reads: out * stride + tap * dilation - pad."""
    return e.sub(e.add(e.mul(out_pos, stride), e.mul(tap, dilation)), pad)


def _oihw(op: relay.Conv2DOp, weight: Tensor) -> Tensor:
    """The weight as `OIHW` (`[O, I, KH, KW]`), whatever its `kernel_layout`."""
    block = relay.kernel_block(op.kernel_layout)
    if tile := relay.winograd_tile(op.kernel_layout):
        return _spatial_view(weight, TRANSFORMS[tile], op.channels, block)
    return unblocked(weight, op.channels, block) if block else weight


def _spatial_view(
    weight: Tensor, transforms: Transforms, channels: int, block: int
) -> Tensor:
    """A weight in the Winograd domain (`winograd<m>_OI<b>o`) read as `OIHW`:
    `w[o, i, ky, kx] = sum L[ky, u] L[kx, v] U[u, v, o, i]` over the nonzero
    terms of the left inverse `L` of `G`, each chosen by `(ky, kx)` with a
    select (folded away where the tap is a constant).  For schedules that
    read `OIHW`; the Winograd schedule reads the weight as it is."""
    alpha = transforms.alpha
    terms = [
        (k, u, coefficient)
        for k, row in enumerate(transforms.left)
        for u, coefficient in enumerate(row)
        if coefficient
    ]

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        o, i, ky, kx = idx
        element = weight.element_type
        zero = e.constant(0.0, element)
        total: SSAValue | None = None
        at = [e.div(o, block), i, e.rem(o, block)]
        for (row, u, cu), (col, v, cv) in product(terms, terms):
            if any(isinstance(t, int) and t != k for t, k in ((ky, row), (kx, col))):
                continue
            stored = weight.load(e, [u * alpha + v, *at])
            term = e.op(arith.MulfOp(stored, e.constant(cu * cv, element)))
            for tap, k in ((ky, row), (kx, col)):
                if not isinstance(tap, int):
                    hit = e.op(arith.CmpiOp(tap, e.index(k), "eq"))
                    term = e.op(arith.SelectOp(hit, term, zero))
            total = term if total is None else e.op(arith.AddfOp(total, term))
        return total if total is not None else zero

    return Tensor((channels, weight.shape[2], 3, 3), weight.element_type, load)


def _conv2d(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """The target's conv2d schedule, else `_direct_conv` (with an `OIHW`
    view of a packed weight, and an `NCHW` view of blocked data and result)."""
    assert isinstance(op, relay.Conv2DOp)
    stored, packed = inputs
    require_float(op, stored.element_type)
    weight = _oihw(op, packed)
    data = nchw(stored, op.data_layout)
    out_shape = relay.nchw_shape(result_shape(op), op.out_layout, "the result")
    store = store_into(out, epilogue)
    blocked = relay.data_block(op.out_layout)
    flat_store = not blocked and (epilogue is None or epilogue.flat_pixels)
    if (schedule := problem_schedule(e.target, Conv2D)) is not None:
        problem = Conv2D(
            data,
            weight,
            tuple(out_shape),
            op.strides,
            op.dilation,
            op.padding,
            op.groups,
            lambda e, idx, v: store(e, blocked_index(e, idx, op.out_layout), v),
            packed=packed if weight is not packed else None,
            blocked_data=stored if data is not stored else None,
            blocked_store=store if blocked else None,
            out_block=blocked,
            winograd=relay.winograd_tile(op.kernel_layout),
            flat_store=flat_store,
        )
        return schedule(e, problem, e.target)
    _direct_conv(
        e,
        op,
        data,
        weight,
        out,
        epilogue,
        out_shape,
        lambda e, idx: blocked_index(e, idx, op.out_layout),
    )


def _conv3d(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """conv2d's sum over one more spatial axis (no schedule: `_direct_conv`)."""
    assert isinstance(op, relay.Conv3DOp)
    data, weight = inputs
    require_float(op, data.element_type)
    _direct_conv(e, op, data, weight, out, epilogue)


def _direct_conv(
    e: Emitter,
    op: relay.Conv2DOp | relay.Conv3DOp,
    data: Tensor,
    weight: Tensor,
    out: SSAValue,
    epilogue: Epilogue | None,
    out_shape: Sequence[int] | None = None,
    place: Callable[[Emitter, list[Index]], list[Index]] = lambda e, idx: idx,
) -> None:
    """out[n, o, *p] = sum_{c, *k} in[n, g*C/G + c, *(p * s + k * d - pad)] *
    w[o, c, *k] over the taps inside the input (padding reads as 0), g = o //
    (O/G), for any number of spatial axes: one parallel nest over the output.
    `out_shape` is the `NCHW` shape of an output stored in another layout,
    `place` where its element `[n, o, *p]` lies."""
    out_channels, group_channels, *kernel = weight.shape
    sizes = data.shape[2:]
    body, (n, o, *position) = e.nest(out_shape or result_shape(op), parallel=True)
    at = place(body, [n, o, *position])
    body.store(body.constant(0.0, data.element_type), out, at)
    group = 0 if op.groups == 1 else body.div(o, out_channels // op.groups)
    base = body.mul(group, group_channels)
    c_body, (c, *taps) = body.nest([group_channels, *kernel])
    source = window_taps(c_body, op, position, taps)
    inside = c_body.all_of(
        [c_body.in_range(i, 0, size) for i, size in zip(source, sizes)]
    )
    if (tap := c_body.when(inside)) is not None:
        pixel = data.load(tap, [n, tap.add(base, c), *source])
        product = tap.op(arith.MulfOp(pixel, weight.load(tap, [o, c, *taps])))
        accumulate(tap, out, at, product, arith.AddfOp)
    finish(e, out, result_shape(op), epilogue)


def window_taps(
    e: Emitter, op: Operation, position: Sequence[Index], taps: Sequence[Index]
) -> list[Index]:
    """The input element each spatial axis of a window tap reads (`_window_tap`
    with the op's strides, dilation and starting padding)."""
    strides, dilation, padding = op.strides, op.dilation, op.padding  # type: ignore[attr-defined]
    return [
        _window_tap(e, p, k, s, d, pad)
        for p, k, s, d, pad in zip(position, taps, strides, dilation, padding)
    ]


def _conv2d_transpose(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """Through the target's conv2d schedule where it has one
    (`_transposed_as_conv2d`), else in gather form: out[n, o, y, x] =
    sum_{c, ky, kx} in[n, g*C/G + c, iy, ix] * w[g*C/G + c, o % (O/G), ky, kx]
    over the taps whose input pixel exists: `iy * sh = y + pt - ky * dh` (a
    whole multiple of the stride, inside the image), likewise `ix` (no two
    taps write one element at once, unlike the scatter)."""
    assert isinstance(op, relay.Conv2DTransposeOp)
    data, weight = inputs
    require_float(op, data.element_type)
    if _transposed_as_conv2d(e, op, data, weight, out, epilogue):
        return
    (sh, sw), (dh, dw), (pt, pl, _, _) = op.strides, op.dilation, op.padding
    channels, out_per_group, kh, kw = weight.shape
    group_channels = channels // op.groups
    height, width = data.shape[2:]
    body, (n, o, y, x) = e.nest(result_shape(op), parallel=True)
    body.store(body.constant(0.0, data.element_type), out, [n, o, y, x])
    group = 0 if op.groups == 1 else body.div(o, out_per_group)
    base = body.mul(group, group_channels)
    o_in_group = o if op.groups == 1 else body.rem(o, out_per_group)
    c_body, (c, ky, kx) = body.nest([group_channels, kh, kw])
    row = c_body.sub(c_body.add(y, pt), c_body.mul(ky, dh))
    col = c_body.sub(c_body.add(x, pl), c_body.mul(kx, dw))
    inside = c_body.all_of(
        [
            c_body.in_range(row, 0, (height - 1) * sh + 1),
            c_body.in_range(col, 0, (width - 1) * sw + 1),
            *(_multiple(c_body, v, s) for v, s in ((row, sh), (col, sw)) if s > 1),
        ]
    )
    if (tap := c_body.when(inside)) is not None:
        channel = tap.add(base, c)
        pixel = data.load(tap, [n, channel, tap.div(row, sh), tap.div(col, sw)])
        weighted = weight.load(tap, [channel, o_in_group, ky, kx])
        accumulate(
            tap, out, [n, o, y, x], tap.op(arith.MulfOp(pixel, weighted)), arith.AddfOp
        )
    finish(e, out, result_shape(op), epilogue)


def _transposed_as_conv2d(
    e: Emitter,
    op: relay.Conv2DTransposeOp,
    data: Tensor,
    weight: Tensor,
    out: SSAValue,
    epilogue: Epilogue | None,
) -> bool:
    """Runs `op` through the target's conv2d schedule, if it has one: a
    transposed convolution is the conv2d, stride 1 and the op's dilation,
    of its input spread out (`strides - 1` zeros between the pixels) and
    padded by `dilation * (kernel - 1) - padding` (plus `output_padding` at
    the end), with the weight flipped along both window axes and its input
    and output channels exchanged (TVM's generic `conv2d_transpose`).  The
    spread input is one buffer; the zeros cost multiply-adds (a stride of
    2 makes 4 of them per real one), which the register-tiled schedule
    still does faster than the direct nest.  False (nothing emitted) where
    there is no schedule, the padding exceeds the window's reach, or the op
    is strided and the target's schedule does not take spread inputs
    (`schedules.SPREADS_TRANSPOSED`)."""
    schedule = problem_schedule(e.target, Conv2D)
    (sh, sw), (dh, dw) = op.strides, op.dilation
    (pt, pl, pb, pr), (oph, opw) = op.padding, op.output_padding
    channels, out_per_group, kh, kw = weight.shape
    reach_h, reach_w = dh * (kh - 1), dw * (kw - 1)
    padding = (reach_h - pt, reach_w - pl, reach_h - pb + oph, reach_w - pr + opw)
    strided = (sh, sw) != (1, 1)
    if (
        schedule is None
        or min(padding) < 0
        or (strided and not spreads_transposed(e.target))
    ):
        return False
    element = data.element_type
    batch, _, height, width = data.shape
    if strided:
        spread_shape = (batch, channels, (height - 1) * sh + 1, (width - 1) * sw + 1)

        def spread_load(r: Emitter, idx: Sequence[Index]) -> SSAValue:
            n, c, y, x = idx
            value = data.load(r, [n, c, r.div(y, sh), r.div(x, sw)])
            on_grid = r.all_of(
                [_multiple(r, v, s) for v, s in ((y, sh), (x, sw)) if s > 1]
            )
            return r.op(arith.SelectOp(on_grid, value, r.constant(0.0, element)))

        spread = e.alloc(list(spread_shape), element)
        store_all(e, Tensor(spread_shape, element, spread_load), spread)
        data = Tensor.of_buffer(spread)
    group_channels = channels // op.groups

    def flipped(r: Emitter, idx: Sequence[Index]) -> SSAValue:
        o, c, ky, kx = idx
        group = 0 if op.groups == 1 else r.div(o, out_per_group)
        within = o if op.groups == 1 else r.rem(o, out_per_group)
        return weight.load(
            r,
            [
                r.add(r.mul(group, group_channels), c),
                within,
                r.sub(kh - 1, ky),
                r.sub(kw - 1, kx),
            ],
        )

    problem = Conv2D(
        data,
        Tensor((out_per_group * op.groups, group_channels, kh, kw), element, flipped),
        result_shape(op),
        (1, 1),
        (dh, dw),
        padding,
        op.groups,
        store_into(out, epilogue),
    )
    schedule(e, problem, e.target)
    return True


def _multiple(e: Emitter, value: Index, stride: int) -> SSAValue:
    """Whether `value` (not negative) is a whole multiple of `stride`."""
    remainder = e.index(e.rem(value, stride))
    return e.op(arith.CmpiOp(remainder, e.index(0), "eq"))


TEMPLATES: dict[type[Operation], NestTemplate] = {
    relay.Conv2DOp: _conv2d,
    relay.Conv2DTransposeOp: _conv2d_transpose,
    relay.Conv3DOp: _conv3d,
}
"""Convolution op → template writing its result into a buffer."""
