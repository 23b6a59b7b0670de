"""`trim-conv-taps`: a convolution's rows and columns of taps that read only
padding are dropped, and one whose taps mostly read padding is split tap by
tap (`SplitPartialTaps`).

A dilated convolution over a small feature map (DeepLabV3's atrous pyramid:
3×3 taps at dilation 24 and 36 over a 14×14 map, padded as much) reads,
through its outer taps, nothing but the zeros of its padding: tap row `ky`
reads input row `oy·s + ky·d - pad_top`, outside the input for every output
row `oy`.  Such leading and trailing rows (and columns) of taps add
nothing; slicing them off the weight and their reach off the padding keeps
the output's shape and values, and saves the schedule padding the input by
as much (a 3×3 at dilation 36 over 14×14 becomes a 1×1 over the map):

    conv2d(x, w) {padding, dilation}
        → conv2d(x, strided_slice(w)) {padding - dead taps' reach, dilation}

for `NCHW` data and an `OIHW` weight of static shapes (before
`alter-op-layout` packs it); the weight's slice folds where the weight is a
constant (`fold-constant` runs after).  A trimmed side whose padding would
go negative is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from hetero.dialects import relay


def _plain(op: relay.Conv2DOp) -> bool:
    """Whether `op` is an `NCHW` convolution of an `OIHW` weight into `NCHW`,
    of static shapes: the layouts before `alter-data-layout` and
    `alter-op-layout`, whose axes the patterns read."""
    return (op.data_layout, op.kernel_layout, op.out_layout) == (
        "NCHW",
        "OIHW",
        "NCHW",
    ) and all(
        isinstance(t, TensorType) and t.has_static_shape()
        for t in (op.x.type, op.weight.type)
    )


def live_taps(
    size: int, out: int, taps: int, stride: int, dilation: int, pad: int
) -> range:
    """The taps along one axis that read inside an input of `size` for some
    output position (an empty range: none)."""
    live = [
        k
        for k in range(taps)
        if any(0 <= o * stride + k * dilation - pad < size for o in range(out))
    ]
    return range(live[0], live[-1] + 1) if live else range(0)


class TrimTaps(RewritePattern):
    """`conv2d` without its rows and columns of taps that read only padding."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.Conv2DOp, rewriter: PatternRewriter, /):
        data, weight, result = op.x.type, op.weight.type, op.results[0].type
        assert isinstance(data, TensorType) and isinstance(weight, TensorType)
        assert isinstance(result, TensorType)
        if not _plain(op):
            return
        padding, dilation = list(op.padding), list(op.dilation)
        begin, end = [0, 0, 0, 0], list(weight.get_shape())
        for axis in (0, 1):  # height, width
            taps = weight.get_shape()[2 + axis]
            live = live_taps(
                data.get_shape()[2 + axis],
                result.get_shape()[2 + axis],
                taps,
                op.strides[axis],
                dilation[axis],
                padding[axis],
            )
            low = padding[axis] - live.start * dilation[axis]
            high = padding[2 + axis] - (taps - live.stop) * dilation[axis]
            if not live or low < 0 or high < 0:
                continue
            padding[axis], padding[2 + axis] = low, high
            begin[2 + axis], end[2 + axis] = live.start, live.stop
            if len(live) == 1:
                dilation[axis] = 1
        if begin == [0, 0, 0, 0] and end == list(weight.get_shape()):
            return
        sliced = relay.StridedSliceOp(
            op.weight,
            begin=tuple(begin),
            end=tuple(end),
            strides=(1, 1, 1, 1),
            vdevice=op.vdevice,
        )
        params = {name: getattr(op, name) for name in relay.Conv2DOp.params()}
        params |= {"padding": tuple(padding), "dilation": tuple(dilation)}
        conv = relay.Conv2DOp(op.x, sliced.results[0], vdevice=op.vdevice, **params)
        rewriter.replace(op, [sliced, conv])


PARTIAL_SHARE = 0.5
"""A stride-1 convolution whose taps read the map at fewer than this share
of their output positions is split tap by tap (`SplitPartialTaps`)."""


def live_outputs(size: int, out: int, tap: int, dilation: int, pad: int) -> range:
    """The output positions (stride 1) at which `tap` reads inside an input
    of `size`."""
    shift = tap * dilation - pad
    start = max(0, -shift)
    return range(start, max(start, min(out, size - shift)))


class SplitPartialTaps(RewritePattern):
    """A stride-1 `conv2d` whose taps mostly read padding (DeepLabV3's 3×3
    at dilation 12 over a 14×14 map: 18 % of its products touch the map) as
    one 1×1 product per tap over just the block of the map it reads, padded
    into place and added: the zeros are neither copied into a padded input
    nor multiplied."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.Conv2DOp, rewriter: PatternRewriter, /):
        data, weight, result = op.x.type, op.weight.type, op.results[0].type
        assert isinstance(data, TensorType) and isinstance(weight, TensorType)
        assert isinstance(result, TensorType)
        if not _plain(op) or op.groups != 1 or tuple(op.strides) != (1, 1):
            return
        h, w = data.get_shape()[2:]
        kh, kw = weight.get_shape()[2:]
        oh, ow = result.get_shape()[2:]
        rows = [
            live_outputs(h, oh, k, op.dilation[0], op.padding[0]) for k in range(kh)
        ]
        cols = [
            live_outputs(w, ow, k, op.dilation[1], op.padding[1]) for k in range(kw)
        ]
        live = sum(len(r) * len(q) for r in rows for q in cols)
        if kh * kw == 1 or live >= PARTIAL_SHARE * kh * kw * oh * ow:
            return
        new: list[Operation] = []
        total: SSAValue | None = None
        for ky, r in enumerate(rows):
            for kx, q in enumerate(cols):
                if r and q:
                    placed = _tap_product(op, (ky, kx), (r, q), (oh, ow), new)
                    total = placed if total is None else _add(op, total, placed, new)
        if total is not None:
            rewriter.replace(op, new, [total])


def _tap_product(
    op: relay.Conv2DOp,
    tap: tuple[int, int],
    live: tuple[range, range],
    out: tuple[int, int],
    new: list[Operation],
) -> SSAValue:
    """Tap `tap`'s 1×1 product over the block of `op`'s input it reads at
    its `live` output rows and columns, padded to the `out` map (the ops
    appended to `new`)."""
    weight = op.weight.type
    assert isinstance(weight, TensorType)
    o, c = weight.get_shape()[:2]
    (ky, kx), (r, q), (oh, ow) = tap, live, out
    y0 = r.start + ky * op.dilation[0] - op.padding[0]
    x0 = q.start + kx * op.dilation[1] - op.padding[1]
    block = relay.StridedSliceOp(
        op.x,
        begin=(0, 0, y0, x0),
        end=(op.x.type.get_shape()[0], c, y0 + len(r), x0 + len(q)),  # type: ignore[attr-defined]
        strides=(1, 1, 1, 1),
        vdevice=op.vdevice,
    )
    kernel = relay.StridedSliceOp(
        op.weight,
        begin=(0, 0, ky, kx),
        end=(o, c, ky + 1, kx + 1),
        strides=(1, 1, 1, 1),
        vdevice=op.vdevice,
    )
    product = relay.Conv2DOp(
        block.results[0], kernel.results[0], channels=op.channels, vdevice=op.vdevice
    )
    widths = (0, 0, 0, 0, r.start, oh - r.stop, q.start, ow - q.stop)
    placed = relay.PadOp(
        product.results[0], pad_width=widths, pad_value=0.0, vdevice=op.vdevice
    )
    new.extend((block, kernel, product, placed))
    return placed.results[0]


def _add(
    op: relay.Conv2DOp, a: SSAValue, b: SSAValue, new: list[Operation]
) -> SSAValue:
    added = relay.AddOp(a, b, vdevice=op.vdevice)
    new.append(added)
    return added.results[0]


@dataclass(frozen=True)
class TrimConvTapsPass(ModulePass):
    """Drops taps that read only padding (see the module docstring)."""

    name = "trim-conv-taps"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(TrimTaps()).rewrite_module(op)
        PatternRewriteWalker(
            SplitPartialTaps(), apply_recursively=False
        ).rewrite_module(op)
