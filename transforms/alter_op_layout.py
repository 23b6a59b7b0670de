"""`alter-op-layout`: conv2d and dense weights packed, at compile time, in
the layout that the schedule of their device's target wants.

TVM's `AlterOpLayout` asks each target's `conv2d_alter_layout` for better
layouts of a conv2d's operands and rewrites it to take them, with
`layout_transform`s on its inputs that `FoldConstant` folds into constant
weights (and turns `dense` into `contrib_dense_pack`).  hetero does the part
that needs no change of the values flowing between ops: the data and the
result keep their layout, only a constant weight is repacked.  A
`relay.nn.conv2d`

* placed on a device (its `vdevice`, from `plan-devices`) whose device
  type's schedule asks for another layout for this conv's shapes: first
  `hetero.te.schedules.WINOGRAD_TILES`, for a 3x3 weight in the
  Winograd domain (the CPU schedule: 3x3 stride-1 convolutions,
  `winograd4_OI64o` with AVX-512 on large images), else `WEIGHT_BLOCKS`,
  for a block `b > 0` (the CPU schedule: channels in the vector lanes,
  `OIHW64o` with AVX-512, for deep reductions),
* with `kernel_layout = "OIHW"` (the default) and a `relay.constant` weight,

gets a new constant: the weight in layout `OIHW<b>o` (`[ceil(O / b), I, KH,
KW, b]`, zero past `O`) or `winograd<m>_OI<b>o` (`[(m + 2)^2, ceil(O / b),
I, b]`, `G w G^T`: `hetero.utils.winograd`), on the old one's device, and
the attributes `kernel_layout` and `channels = O`.  Likewise a
`relay.nn.dense` with an `NK` constant weight, on a device type whose GEMM
schedule asks for panels (`DENSE_WEIGHT_BLOCKS`: the CPU's, `nr` columns
wide, for more than one row), gets its weight in layout `NK<nr>n`
(`[ceil(N / nr), K, nr]`, zero past `N`) and `units = N`.

Only ops that hetero's own schedules compute are rewritten: not in a BYOC
`Compiler` function, nor on an external codegen's target (BLAS reads
`OIHW` and `NK`).  The values are packed on the background thread
(`hetero.utils.background`: the passes after this one read shapes only).
The old constant is erased unless something else uses it.  A weight
computed at run time is left: packing it would cost a copy per call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
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
from hetero.dialects.target import TargetAttr
from hetero.interpreter.relay import attribute_value, packed_weight
from hetero.te.schedules import DENSE_WEIGHT_BLOCKS, WEIGHT_BLOCKS, WINOGRAD_TILES
from hetero.transforms.fold_constant import constant_later
from hetero.utils.symbols import enclosing
from hetero.utils.winograd import transformed_weight

Weight = DenseIntOrFPElementsAttr | DenseResourceAttr


def _packable(
    op: relay.Conv2DOp | relay.DenseOp, layout: str, plain: str
) -> tuple[relay.ConstantOp, TargetAttr] | None:
    """`op`'s weight and the target whose own schedule computes `op`, when
    that weight is a constant still in its `plain` layout and the shapes are
    static, but for a dense's rows, which the GEMM schedule also walks at
    run time (docs/dynamic-shapes.md) (None: the weight stays as it is)."""
    weight = op.weight.owner
    if layout != plain or not isinstance(weight, relay.ConstantOp):
        return None
    device = op.vdevice
    if (
        device is None
        or (target := device.target) is None
        or target.kind.is_external_codegen
    ):
        return None
    function = enclosing(op, relay.FunctionOpBase)
    if function is not None and (function.compiler is not None or function.is_extern):
        return None
    types = (op.weight.type, op.results[0].type)
    if isinstance(op, relay.DenseOp):
        types = types[:1]
    if not all(isinstance(t, TensorType) and t.has_static_shape() for t in types):
        return None
    return weight, target


def _conv2d_layout(op: relay.Conv2DOp, target: TargetAttr) -> str | None:
    """The weight layout the conv2d schedule of `target` wants (None:
    `OIHW`): the Winograd domain where it asks for it, else a block."""
    weight, result = op.weight.type, op.results[0].type
    assert isinstance(weight, TensorType) and isinstance(result, TensorType)
    shape = weight.get_shape()
    out = relay.nchw_shape(result.get_shape(), op.out_layout, "the result")
    blocked = bool(relay.data_block(op.data_layout) or relay.data_block(op.out_layout))
    element = weight.element_type
    winograd = WINOGRAD_TILES.get(target.device_type)
    if winograd is not None:
        tile, block = winograd(
            shape, out, op.strides, op.dilation, op.groups, element, target, blocked
        )
        if tile:
            return f"winograd{tile}_OI{block}o"
    query = WEIGHT_BLOCKS.get(target.device_type)
    block = query(shape, out, op.groups, element, target, blocked) if query else 0
    return f"OIHW{block}o" if block else None


def _conv2d_packed(weight: Weight, layout: str) -> np.ndarray:
    """The `OIHW` weight `weight` in `layout` (on the background thread)."""
    w = attribute_value(weight)
    block = relay.kernel_block(layout)
    if tile := relay.winograd_tile(layout):
        return transformed_weight(w, tile, block)
    return packed_weight(w, block)


def _repack(
    rewriter: PatternRewriter,
    op: relay.Conv2DOp | relay.DenseOp,
    weight: relay.ConstantOp,
    shape: tuple[int, ...],
    make: Callable[[], np.ndarray],
    attributes: dict[str, str | int],
) -> None:
    """`op` takes a new constant of `shape` (`make()`'s values, on the
    background thread, on `weight`'s device) and `attributes`; `weight` is
    erased if nothing else uses it."""
    old = op.weight.type
    assert isinstance(old, TensorType)
    new = constant_later(make, TensorType(old.element_type, shape), "packed")
    if weight.vdevice is not None:
        new.properties["vdevice"] = weight.vdevice
    rewriter.insert(new, InsertPoint.before(op))
    op.operands[1] = new.results[0]
    for name, value in attributes.items():
        op.properties[name] = (
            StringAttr(value) if isinstance(value, str) else IntegerAttr(value, i64)
        )
    rewriter.notify_op_modified(op)
    if not weight.results[0].uses:
        rewriter.erase(weight)


class PackConvWeights(RewritePattern):
    """`conv2d(x, W)` → `conv2d(x, pack(W))` (see the module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.Conv2DOp, rewriter: PatternRewriter, /):
        if (found := _packable(op, op.kernel_layout, "OIHW")) is None:
            return
        weight, target = found
        if not (layout := _conv2d_layout(op, target)):
            return
        old = op.weight.type
        assert isinstance(old, TensorType)
        shape = relay.packed_weight_shape(old.get_shape(), layout)
        make = partial(_conv2d_packed, weight.value, layout)
        attributes = {"kernel_layout": layout, "channels": old.get_shape()[0]}
        _repack(rewriter, op, weight, tuple(shape), make, attributes)


class PackDenseWeights(RewritePattern):
    """`dense(x, W)` → `dense(x, pack(W))` in panels (the module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.DenseOp, rewriter: PatternRewriter, /):
        if (found := _packable(op, op.weight_layout, "NK")) is None:
            return
        weight, target = found
        if (query := DENSE_WEIGHT_BLOCKS.get(target.device_type)) is None:
            return
        old, result = op.weight.type, op.results[0].type
        assert isinstance(old, TensorType) and isinstance(result, TensorType)
        (n, k), rows = old.get_shape(), result.get_shape()[0]
        if not (block := query((n, k), rows, old.element_type, target)):
            return
        value = weight.value
        make = lambda: packed_weight(attribute_value(value), block)
        attributes = {"weight_layout": f"NK{block}n", "units": n}
        _repack(rewriter, op, weight, (-(-n // block), k, block), make, attributes)


@dataclass(frozen=True)
class AlterOpLayoutPass(ModulePass):
    """Packs constant conv2d and dense weights as the schedules want (module
    docstring)."""

    name = "alter-op-layout"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([PackConvWeights(), PackDenseWeights()])
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)
