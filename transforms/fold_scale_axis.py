"""`fold-scale-axis`: a per-output-channel scale after a convolution or dense
layer is folded into its constant weights, a per-channel shift into its bias.

TVM's backward `FoldScaleAxis`: `conv2d(x, W) · s`, with `s` constant and
varying only along the output-channel axis, equals `conv2d(x, W · s')` where
`s'` is `s` laid along the weight's output-channel axis (axis 0 of OIHW
weights and of `[N, K]` dense weights).  The scale then costs nothing at run
time: `fold-constant` computes `W · s'` once.  A `relay.nn.bias_add` on the
channel axis between the anchor and the scale is passed through, scaling the
(constant) bias too: `bias_add(y, b) · s = bias_add(y · s, b · s)`.

A constant shift added after such a bias_add joins its bias:
`bias_add(y, b) + t = bias_add(y, b + t)`, `t` varying along the channel axis
only.  Rules (each a pattern below); the anchor (and a bias_add in between)
must have no other user, and its weight (and a bias) must be a constant or
what this pass made of constants (`_constant`) — otherwise the multiply
would move onto weights computed at run time, which is no gain.  A batch
norm followed by another per-channel scale and shift (Inception v2's
convolutions) so folds whole: the second scale moves onto the weights the
first made.  The scale may be a scalar-like constant (all dimensions 1).
Run `fold-constant` afterwards; `simplify-inference` produces exactly this
shape from batch_norm.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from hetero.dialects import relay

ANCHORS: dict[type[Operation], int] = {relay.Conv2DOp: 1, relay.DenseOp: -1}
"""Operator → its result's output-channel axis; operand 1 is the weight, whose
axis 0 is the output channel."""


def _single_use_result(
    value: SSAValue, kind: type[Operation] | tuple[type[Operation], ...]
):
    owner = value.owner
    return owner if isinstance(owner, kind) and value.has_one_use() else None


def _channel_scale(scale: SSAValue, result: SSAValue, axis: int) -> int | None:
    """The number of channels `scale` varies over (1 for a uniform scale), if it
    is a constant that varies along `axis` of `result` only; else None."""
    if not isinstance(scale.owner, relay.ConstantOp):
        return None
    s_type, r_type = scale.type, result.type
    assert isinstance(s_type, TensorType) and isinstance(r_type, TensorType)
    rank = r_type.get_num_dims()
    shape = list(s_type.get_shape())
    if len(shape) > rank:
        return None
    padded = [1] * (rank - len(shape)) + shape
    channel = axis % rank
    if any(d != 1 for i, d in enumerate(padded) if i != channel):
        return None
    return padded[channel]


def _split(op: relay.MultiplyOp | relay.AddOp) -> tuple[SSAValue, SSAValue]:
    """(anchor side, scale or shift side) of a multiply or add, the constant
    on the right."""
    lhs, rhs = op.operands
    return (rhs, lhs) if isinstance(lhs.owner, relay.ConstantOp) else (lhs, rhs)


def _constant(value: SSAValue) -> bool:
    """Whether `value` is a constant, or what this pass makes of constants
    (a scaled or reshaped one), which `fold-constant` computes."""
    owner = value.owner
    if isinstance(owner, relay.ConstantOp):
        return True
    return isinstance(owner, relay.MultiplyOp | relay.ReshapeOp | relay.AddOp) and all(
        _constant(v) for v in owner.operands
    )


def _anchor_axis(value: SSAValue) -> tuple[Operation, int] | None:
    anchor = _single_use_result(value, tuple(ANCHORS))
    if anchor is None or not _constant(anchor.operands[1]):
        return None
    if getattr(anchor, "kernel_layout", "OIHW") != "OIHW":
        return None  # a packed weight's axis 0 is not the output channel
    return anchor, ANCHORS[type(anchor)]


def _placed_like(op: Operation, new: list[Operation]) -> list[Operation]:
    """`new`, on the device of the op they replace (when planned already)."""
    if (device := getattr(op, "vdevice", None)) is not None:
        for o in new:
            o.properties["vdevice"] = device
    return new


def _laid_along(scale: SSAValue, channels: int, rank: int) -> relay.ReshapeOp:
    """`scale` reshaped to `[channels, 1, ..., 1]` of `rank` dimensions."""
    return relay.ReshapeOp(scale, newshape=(channels, *([1] * (rank - 1))))


class FoldScaleIntoAnchor(RewritePattern):
    """`anchor(x, W) · s` → `anchor(x, W · s')`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.MultiplyOp, rewriter: PatternRewriter, /):
        value, scale = _split(op)
        if (found := _anchor_axis(value)) is None:
            return
        anchor, axis = found
        if (channels := _channel_scale(scale, value, axis)) is None:
            return
        weight = anchor.operands[1]
        assert isinstance(weight.type, TensorType)
        laid = _laid_along(scale, channels, weight.type.get_num_dims())
        scaled = relay.MultiplyOp(weight, laid)
        rewriter.insert(
            _placed_like(anchor, [laid, scaled]), InsertPoint.before(anchor)
        )
        anchor.operands[1] = scaled.results[0]
        rewriter.notify_op_modified(anchor)
        rewriter.replace_all_uses_with(op.results[0], value)
        rewriter.erase(op)


class FoldScaleThroughBiasAdd(RewritePattern):
    """`bias_add(anchor(...), b) · s` → `bias_add(anchor(...) · s, b · s)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.MultiplyOp, rewriter: PatternRewriter, /):
        value, scale = _split(op)
        bias_add = _single_use_result(value, relay.BiasAddOp)
        if bias_add is None or not _constant(bias_add.bias):
            return
        if (found := _anchor_axis(bias_add.x)) is None:
            return
        rank = value.type.get_num_dims()  # type: ignore[attr-defined]
        if bias_add.axis % rank != found[1] % rank:
            return
        if (channels := _channel_scale(scale, value, found[1])) is None:
            return
        scaled = relay.MultiplyOp(bias_add.x, scale)
        laid = relay.ReshapeOp(scale, newshape=(channels,))
        bias = relay.MultiplyOp(bias_add.bias, laid)
        moved = relay.BiasAddOp(scaled, bias, axis=bias_add.axis)
        rewriter.replace(op, _placed_like(op, [scaled, laid, bias, moved]))
        rewriter.erase(bias_add)


class FoldShiftIntoBiasAdd(RewritePattern):
    """`bias_add(anchor(...), b) + t` → `bias_add(anchor(...), b + t')`, `t`
    a constant varying along the bias axis only (a batch norm's shift, or a
    Caffe-style scale layer's after it, as in Inception v2): one addition
    per element less in the anchor's epilogue."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.AddOp, rewriter: PatternRewriter, /):
        value, shift = _split(op)
        bias_add = _single_use_result(value, relay.BiasAddOp)
        if bias_add is None or not _constant(bias_add.bias) or not _constant(shift):
            return
        if _anchor_axis(bias_add.x) is None:
            return
        if (channels := _channel_scale(shift, value, bias_add.axis)) is None:
            return
        laid = relay.ReshapeOp(shift, newshape=(channels,))
        bias = relay.AddOp(bias_add.bias, laid)
        moved = relay.BiasAddOp(bias_add.x, bias, axis=bias_add.axis)
        rewriter.replace(op, _placed_like(op, [laid, bias, moved]))
        rewriter.erase(bias_add)


@dataclass(frozen=True)
class FoldScaleAxisPass(ModulePass):
    """Folds per-channel scales into constant weights (see the module docstring)."""

    name = "fold-scale-axis"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    FoldScaleThroughBiasAdd(),
                    FoldScaleIntoAnchor(),
                    FoldShiftIntoBiasAdd(),
                ]
            )
        ).rewrite_module(op)
