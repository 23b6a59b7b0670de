"""`matmul-to-dense`: a matmul by a constant 2-D weight becomes a dense layer
over the flattened rows.

`nn.Linear` on a 3-D or 4-D activation (a transformer's projections, a
ConvNeXt block's pointwise layers) is, in ONNX, `MatMul` of `x [..., K]` by
a constant `W [K, N]`: a batched `relay.matmul` whose GEMM schedule packs the
weight again for every batch row of every call.  As a dense layer over
`x`'s rows, `[prod(...), K] x [N, K]ᵀ`, the weight is read as one GEMM's
operand, in dense's layout (TVM's ONNX frontend imports it so).  Three
rewrites, applied to a fixed point:

* `matmul(x, W)` with a `relay.constant` `W [1, ..., 1, K, N]` (the same
  weight for every batch) and static shapes → `reshape(dense(reshape(x,
  [M, K]), Wᵀ), R)`, `R` the matmul's result shape and `Wᵀ [N, K]` folded
  at compile time (`fold-constant`'s pattern, on that weight alone).  Rows
  known at run time only (compiled once for every length) read as
  `reshape(x, [-1, K])`, the result shaped back like `x` but for its last
  axis (`reshape_like`, `keep = 1`: one `-1` cannot name two sizes).  A
  matmul of two activations (attention's `Q·Kᵀ`) or by a weight with a real
  batch is left as it is.
* An elementwise or broadcast op (its `OpPattern`) reading such a row reshape
  `reshape(d [M, N], R)` (or `reshape_like`) computes on `d` instead, the
  reshape sunk after it:
  `add(reshape(d, R), b)` → `reshape(add(d, b'), R)`.  Every other operand
  must be another row reshape of an `[M, N]` value, or a constant or vector
  that broadcasts along the last axis only (`b'` is it as `[N]`).  Without
  this the reshape would sit between the dense and its bias add, residual
  add or activation, and `fuse-ops` (which fuses no reshape into an anchor)
  would compute those in a copy kernel instead of the GEMM's stores.
* A reshape of a reshape reads the first one's input; a reshape to the
  shape it has is its input; `[-1, K]` rows of rows shaped back are those
  rows; an unused reshape (or `reshape_like`) is erased.  A residual
  stream of reshaped dense layers so stays `[M, N]` from one layer to the
  next, with no copy between them.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from hetero.dialects import relay
from hetero.dialects.relay import OpPattern, pattern_of
from hetero.transforms.fold_constant import FoldTensorOp

AXIS_PROPERTIES = ("axis",)
"""Properties that name a dimension of the operands (`bias_add`'s axis):
an op with one is not moved to operands of another rank."""


def _static_shape(value: SSAValue) -> tuple[int, ...] | None:
    t = value.type
    if isinstance(t, TensorType) and t.has_static_shape():
        return tuple(t.get_shape())
    return None


def _device(op: Operation) -> dict[str, Attribute]:
    """`op`'s placement, for the ops that replace it."""
    device = getattr(op, "vdevice", None)
    return {} if device is None else {"vdevice": device}


def _replace_folding(
    op: Operation, new: list[Operation], rewriter: PatternRewriter
) -> None:
    """`op` replaced by `new` (its last op's result standing for `op`'s),
    then those of `new` on constants folded by `fold-constant`'s pattern,
    in order (a weight's reshape, then its transpose), and the constants
    `op` and they read erased if nothing else reads them."""
    read = list(op.operands)
    rewriter.replace(op, new, new[-1].results)
    for made in new:
        read += made.operands
        FoldTensorOp().match_and_rewrite(made, rewriter)
    for value in dict.fromkeys(read):
        if isinstance(value.owner, relay.ConstantOp) and not value.uses:
            rewriter.erase(value.owner)


def _reshaped(
    value: SSAValue, shape: tuple[int, ...], device: dict[str, Attribute]
) -> list[relay.ReshapeOp]:
    """The reshape of `value` to `shape`; none where it has that shape."""
    if _static_shape(value) == shape:
        return []
    return [relay.ReshapeOp(value, newshape=shape, **device)]


def _value(ops: list[relay.ReshapeOp], value: SSAValue) -> SSAValue:
    return ops[-1].results[0] if ops else value


class MatmulToDense(RewritePattern):
    """`matmul(x, W)` → `reshape(dense(reshape(x), Wᵀ))` (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.MatmulOp, rewriter: PatternRewriter, /):
        weight, x, result = op.b, _shape(op.a), _static_shape(op.result)
        w = _static_shape(weight)
        if not isinstance(weight.owner, relay.ConstantOp) or w is None:
            return
        if any(d != 1 for d in w[:-2]):
            return  # a weight per batch
        if result is None and len(x) != len(_shape(op.result)):
            return  # run-time rows broadcast over the weight's batch axes
        (k, n), device = w[-2:], _device(op)
        rows = _rows(op.a, k, result is not None, device)
        flat = _reshaped(weight, (k, n), device)
        transposed = relay.TransposeOp(_value(flat, weight), axes=(1, 0), **device)
        dense = relay.DenseOp(_value(rows, op.a), transposed, **device)
        back = _back(dense.results[0], op.a, result, device)
        _replace_folding(op, [*rows, *flat, transposed, dense, *back], rewriter)


def _rows(
    x: SSAValue, k: int, static: bool, device: dict[str, Attribute]
) -> list[relay.ReshapeOp]:
    """`x [..., K]` as `[M, K]` rows: `M` their product where static, `-1`
    where some are known at run time only (none for a 2-D `x`)."""
    shape = _shape(x)
    if static:
        return _reshaped(x, (prod(shape[:-1]), k), device)
    return [] if len(shape) == 2 else [relay.ReshapeOp(x, newshape=(-1, k), **device)]


def _shape(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def _back(
    rows: SSAValue,
    x: SSAValue,
    result: tuple[int, ...] | None,
    device: dict[str, Attribute],
) -> list[Operation]:
    """The dense's `[M, N]` rows in the matmul's result shape: a reshape to
    it where static; else, where `x [..., K]` has sizes known at run time
    only, shaped like `x` but for its last axis (`reshape_like`, `keep=1`;
    none for a 2-D `x`)."""
    if result is not None:
        return list(_reshaped(rows, result, device))
    if len(_shape(x)) == 2:
        return []
    like = x  # the leading axes' first holder, not a copy made only for them
    while isinstance(like.owner, relay.ReshapeLikeOp) and like.owner.keep == 1:
        like = like.owner.like
    return [relay.ReshapeLikeOp(rows, like, keep=1, **device)]


def _rows_source(value: SSAValue, shape: tuple[int, ...]) -> Operation | None:
    """The reshape of an `[M, N]` value of which `value` (of the op's
    `shape`, whose last dimension is `N`) is the row reshape, if it is one:
    a static `reshape`, or `reshape_like` with `keep = 1` for rows known at
    run time only."""
    owner = value.owner
    if isinstance(owner, relay.ReshapeOp):
        source = _static_shape(owner.x)
        static = _static_shape(value) == shape
    elif isinstance(owner, relay.ReshapeLikeOp) and owner.keep == 1:
        source, static = _shape(owner.x), _shape(value) == shape
    else:
        return None
    if not static or source is None or len(source) != 2 or source[-1] != shape[-1]:
        return None
    return owner


def _back_as(reshape: Operation, rows: SSAValue) -> Operation:
    """`rows` reshaped back as `reshape` (a row reshape) did its input."""
    if isinstance(reshape, relay.ReshapeLikeOp):
        return relay.ReshapeLikeOp(rows, reshape.like, keep=1, **_device(reshape))
    assert isinstance(reshape, relay.ReshapeOp)
    return relay.ReshapeOp(rows, newshape=reshape.newshape, **_device(reshape))


def _along_last(value: SSAValue, rank: int) -> tuple[int, ...] | None:
    """The shape of `value` if it broadcasts along the last of `rank` axes
    only and is a constant (folded when reshaped) or at most a vector."""
    shape = _static_shape(value)
    if shape is None or len(shape) > rank or any(d != 1 for d in shape[:-1]):
        return None
    if len(shape) > 1 and not isinstance(value.owner, relay.ConstantOp):
        return None
    return shape


def _sinkable(op: Operation) -> tuple[int, ...] | None:
    """The result shape of an elementwise or broadcast op that may compute
    on `[M, N]` operands instead (module docstring)."""
    if not isinstance(op, relay.TensorOp) or pattern_of(op) > OpPattern.BROADCAST:
        return None
    if any(name in op.properties for name in AXIS_PROPERTIES):
        return None
    return _shape(op.results[0])


class SinkRowReshape(RewritePattern):
    """`op(reshape(d [M, N], R), b)` → `reshape(op(d, b'), R)` (module docstring)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if (shape := _sinkable(op)) is None:
            return
        sources = [_rows_source(v, shape) for v in op.operands]
        first = next((source for source in sources if source is not None), None)
        if first is None:
            return
        device, new, operands = _device(op), [], []
        for value, source in zip(op.operands, sources):
            if source is not None:
                operands.append(source.operands[0])
                continue
            if (vector := _along_last(value, len(shape))) is None:
                return
            reshape = _reshaped(value, vector[-1:], device) if len(vector) > 1 else []
            new += reshape
            operands.append(_value(reshape, value))
        types = [v.type for v in operands]
        moved = type(op).create(
            operands=operands,
            result_types=[type(op).infer_result_type(types, op.properties)],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        back = _back_as(first, moved.results[0])
        _replace_folding(op, [*new, moved, back], rewriter)


class CollapseReshape(RewritePattern):
    """A reshape of a reshape reads the first's input; a reshape to its
    input's shape is that input; `[-1, K]` rows of rows shaped back
    (`reshape_like`, `keep = 1`) are those rows; an unused reshape is erased."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, relay.ReshapeOp | relay.ReshapeLikeOp):
            return
        if not op.results[0].uses:
            rewriter.erase(op)
            return
        if not isinstance(op, relay.ReshapeOp):
            return
        shape, inner = _static_shape(op.result), op.x.owner
        if shape is not None and _static_shape(op.x) == shape:
            rewriter.replace(op, [], [op.x])
        elif shape is not None and isinstance(inner, relay.ReshapeOp):
            rewriter.replace(
                op, relay.ReshapeOp(inner.x, newshape=shape, **_device(op))
            )
        elif _rows_again(op, inner):
            rewriter.replace(op, [], [inner.operands[0]])  # type: ignore[union-attr]


def _rows_again(op: relay.ReshapeOp, inner: object) -> bool:
    """Whether `op` takes `[-1, K]` rows of rows `[?, K]` shaped back by a
    `reshape_like` with `keep = 1`: the same rows."""
    if not isinstance(inner, relay.ReshapeLikeOp) or inner.keep != 1:
        return False
    rows = _shape(inner.x)
    return len(rows) == 2 and op.newshape == (-1, rows[1])


@dataclass(frozen=True)
class MatmulToDensePass(ModulePass):
    """Matmuls by constant 2-D weights as dense layers (module docstring)."""

    name = "matmul-to-dense"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [MatmulToDense(), SinkRowReshape(), CollapseReshape()]
            )
        ).rewrite_module(op)
