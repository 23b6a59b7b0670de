"""`alter-op-layout`: conv2d weights packed, at compile time, in the layout
that the conv2d schedule of their device's target wants.

TVM's `AlterOpLayout` asks each target's `conv2d_alter_layout` for better
layouts of a conv2d's operands and rewrites it to take them, with
`layout_transform`s on its inputs that `FoldConstant` folds into constant
weights.  hetero does the part that needs no change of the values flowing
between ops: the data and the result stay NCHW, only a constant weight is
repacked.  A `relay.nn.conv2d`

* placed on a device (its `vdevice`, from `plan-devices`) whose device
  type's schedule asks for another layout for this conv's shapes: first
  `hetero.lowering.schedules.WINOGRAD_TILES`, for a 3x3 weight in the
  Winograd domain (the CPU schedule: 3x3 stride-1 convolutions,
  `winograd4_OI64o` with AVX-512 on large images), else `WEIGHT_BLOCKS`,
  for a block `b > 0` (the CPU schedule: channels in the vector lanes,
  `OIHW64o` with AVX-512, for deep reductions),
* with `kernel_layout = "OIHW"` (the default) and a `relay.constant` weight,
* outside a BYOC `Compiler` function (an external codegen reads `OIHW`),

gets a new constant: the weight in layout `OIHW<b>o` (`[ceil(O / b), I, KH,
KW, b]`, zero past `O`) or `winograd<m>_OI<b>o` (`[(m + 2)^2, ceil(O / b),
I, b]`, `G w G^T`: `hetero.utils.winograd`), on the old one's device, and
the attributes `kernel_layout` and `channels = O`.  Its values are packed
on the background thread (`hetero.utils.background`: the passes after this
one read shapes only).  The old constant is erased unless something else
uses it.  A weight computed at run time is left: packing it would cost a
copy per call.
"""

from __future__ import annotations

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
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from hetero.dialects import relay
from hetero.interpreter.relay import attribute_value, packed_weight
from hetero.lowering.schedules import WEIGHT_BLOCKS, WINOGRAD_TILES
from hetero.transforms.fold_constant import constant_later
from hetero.utils.symbols import enclosing
from hetero.utils.winograd import transformed_weight


def _in_external_function(op: relay.Conv2DOp) -> bool:
    function = enclosing(op, relay.FunctionOpBase)
    return function is not None and (function.compiler is not None or function.is_extern)


def _wanted_layout(op: relay.Conv2DOp) -> str | None:
    """The weight layout the schedule of `op`'s device wants (None: `OIHW`,
    or not known): the Winograd domain where it asks for it, else a block."""
    device = op.vdevice
    if device is None or device.target is None:
        return None
    weight, result = op.weight.type, op.results[0].type
    assert isinstance(weight, TensorType) and isinstance(result, TensorType)
    if not weight.has_static_shape() or not result.has_static_shape():
        return None
    shape = weight.get_shape()
    out = relay.nchw_shape(result.get_shape(), op.out_layout, "the result")
    blocked = bool(relay.data_block(op.data_layout) or relay.data_block(op.out_layout))
    target, element = device.target, weight.element_type
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


def _packed(
    weight: DenseIntOrFPElementsAttr | DenseResourceAttr, layout: str
) -> np.ndarray:
    """The `OIHW` weight `weight` in `layout` (on the background thread)."""
    w = attribute_value(weight)
    block = relay.kernel_block(layout)
    if tile := relay.winograd_tile(layout):
        return transformed_weight(w, tile, block)
    return packed_weight(w, block)


class PackConvWeights(RewritePattern):
    """`conv2d(x, W)` → `conv2d(x, pack(W))` (see the module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: relay.Conv2DOp, rewriter: PatternRewriter, /):
        weight = op.weight.owner
        if op.kernel_layout != "OIHW" or not isinstance(weight, relay.ConstantOp):
            return
        if _in_external_function(op) or not (layout := _wanted_layout(op)):
            return
        old = op.weight.type
        assert isinstance(old, TensorType)
        shape = relay.packed_weight_shape(old.get_shape(), layout)
        make = partial(_packed, weight.value, layout)
        new = constant_later(make, TensorType(old.element_type, shape), "packed")
        if weight.vdevice is not None:
            new.properties["vdevice"] = weight.vdevice
        rewriter.insert(new, InsertPoint.before(op))
        op.operands[1] = new.results[0]
        op.properties["kernel_layout"] = StringAttr(layout)
        op.properties["channels"] = IntegerAttr(old.get_shape()[0], i64)
        rewriter.notify_op_modified(op)
        if not weight.results[0].uses:
            rewriter.erase(weight)


@dataclass(frozen=True)
class AlterOpLayoutPass(ModulePass):
    """Packs constant conv2d weights as the schedules want (module docstring)."""

    name = "alter-op-layout"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        walker = PatternRewriteWalker(PackConvWeights(), apply_recursively=False)
        walker.rewrite_module(op)
