"""TVM-style operator patterns of the relay tensor ops, the data `fuse-ops` decides by.

The pattern says how an op's loop nest relates its output to its inputs,
which is what decides whether it can be computed inside another op's loops:

* `ELEMWISE` — output element i reads input element i;
* `BROADCAST` — like elementwise, but an input may repeat along some axes;
* `INJECTIVE` — each output element reads one input element (reshape,
  transpose, concatenate, ...);
* `COMM_REDUCE` — reduces input elements (pools, softmax);
* `OUT_ELEMWISE_FUSABLE` — an anchor whose result can take an elementwise
  epilogue (dense, matmul, conv2d, layer_norm);
* `OPAQUE` — never fused (anything not in the table).

The order is meaningful: a pattern at most `INJECTIVE` may be inlined into
its consumer's loop body.
"""

from __future__ import annotations

from enum import IntEnum

from xdsl.ir import Operation

from hetero.dialects import relay


class OpPattern(IntEnum):
    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    OPAQUE = 8


OP_PATTERNS: dict[type[Operation], OpPattern] = {
    relay.NegativeOp: OpPattern.ELEMWISE,
    relay.ExpOp: OpPattern.ELEMWISE,
    relay.TanhOp: OpPattern.ELEMWISE,
    relay.SigmoidOp: OpPattern.ELEMWISE,
    relay.SiluOp: OpPattern.ELEMWISE,
    relay.HardSwishOp: OpPattern.ELEMWISE,
    relay.ReluOp: OpPattern.ELEMWISE,
    relay.ClipOp: OpPattern.ELEMWISE,
    relay.CastOp: OpPattern.ELEMWISE,
    relay.LogOp: OpPattern.ELEMWISE,
    relay.SqrtOp: OpPattern.ELEMWISE,
    relay.AbsOp: OpPattern.ELEMWISE,
    relay.FloorOp: OpPattern.ELEMWISE,
    relay.CeilOp: OpPattern.ELEMWISE,
    relay.RoundOp: OpPattern.ELEMWISE,
    relay.ErfOp: OpPattern.ELEMWISE,
    relay.AddOp: OpPattern.BROADCAST,
    relay.SubtractOp: OpPattern.BROADCAST,
    relay.MultiplyOp: OpPattern.BROADCAST,
    relay.DivideOp: OpPattern.BROADCAST,
    relay.MaximumOp: OpPattern.BROADCAST,
    relay.MinimumOp: OpPattern.BROADCAST,
    relay.PowerOp: OpPattern.BROADCAST,
    relay.EqualOp: OpPattern.BROADCAST,
    relay.NotEqualOp: OpPattern.BROADCAST,
    relay.LessOp: OpPattern.BROADCAST,
    relay.LessEqualOp: OpPattern.BROADCAST,
    relay.GreaterOp: OpPattern.BROADCAST,
    relay.GreaterEqualOp: OpPattern.BROADCAST,
    relay.LogicalAndOp: OpPattern.BROADCAST,
    relay.LogicalOrOp: OpPattern.BROADCAST,
    relay.LogicalNotOp: OpPattern.ELEMWISE,
    relay.WhereOp: OpPattern.BROADCAST,
    relay.BiasAddOp: OpPattern.BROADCAST,
    relay.BatchNormOp: OpPattern.BROADCAST,
    relay.ReshapeOp: OpPattern.INJECTIVE,
    relay.TransposeOp: OpPattern.INJECTIVE,
    relay.LayoutTransformOp: OpPattern.INJECTIVE,
    relay.TakeOp: OpPattern.INJECTIVE,
    relay.FlattenOp: OpPattern.INJECTIVE,
    relay.ConcatenateOp: OpPattern.INJECTIVE,
    relay.SqueezeOp: OpPattern.INJECTIVE,
    relay.ExpandDimsOp: OpPattern.INJECTIVE,
    relay.PadOp: OpPattern.INJECTIVE,
    relay.StridedSliceOp: OpPattern.INJECTIVE,
    relay.MaxPool2DOp: OpPattern.COMM_REDUCE,
    relay.AvgPool2DOp: OpPattern.COMM_REDUCE,
    relay.MaxPool3DOp: OpPattern.COMM_REDUCE,
    relay.AvgPool3DOp: OpPattern.COMM_REDUCE,
    relay.GlobalAvgPool2DOp: OpPattern.COMM_REDUCE,
    relay.SumOp: OpPattern.COMM_REDUCE,
    relay.MeanOp: OpPattern.COMM_REDUCE,
    relay.SoftmaxOp: OpPattern.OPAQUE,
    relay.LogSoftmaxOp: OpPattern.OPAQUE,
    relay.LRNOp: OpPattern.OPAQUE,
    relay.LayerNormOp: OpPattern.OUT_ELEMWISE_FUSABLE,
    relay.DenseOp: OpPattern.OUT_ELEMWISE_FUSABLE,
    relay.MatmulOp: OpPattern.OUT_ELEMWISE_FUSABLE,
    relay.Conv2DOp: OpPattern.OUT_ELEMWISE_FUSABLE,
    relay.Conv2DTransposeOp: OpPattern.OUT_ELEMWISE_FUSABLE,
    relay.Conv3DOp: OpPattern.OUT_ELEMWISE_FUSABLE,
}
"""relay op class → pattern; an op not listed is `OPAQUE`."""


def pattern_of(op: Operation) -> OpPattern:
    return OP_PATTERNS.get(type(op), OpPattern.OPAQUE)


def is_injective(op: Operation) -> bool:
    """Computable inside a consumer's loop body, element by element."""
    return pattern_of(op) <= OpPattern.INJECTIVE
