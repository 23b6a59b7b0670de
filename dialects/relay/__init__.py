"""The `relay` dialect: graph-level tensor programs (docs/dialects/relay.md).

Functions (`relay.func`, closures `relay.fn`), calls, tuples, conditionals, the
two device operators of heterogeneous compilation (`relay.on_device`,
`relay.device_copy`), constants, and the tensor operators.

The tensor operators are data driven: each declares its attributes as
`Param`s (typed Python accessors with defaults, which also declare the IRDL
property of the same name) and its result shape as a pure function of the
operand shapes and attribute values (`infer_shape`).  The verifier, the
custom parser and the Python constructors all go through
`TensorOp.infer_result_type`, so a declared result type can never disagree
with the one a pass would build.

Every op that produces a value has the optional `vdevice` property, the
device holding its result (written by `plan-devices`).

The package holds one module per op family, each with the list of its ops:
`functions`, `control` (tuples and conditionals), `devices`, `constants`,
`elementwise`, `nn`, `transform` (ops that move elements) and `reduction`;
below them `base` (`ValueOp`, `TensorOp`), `params` (`Param`s), `layouts`
and `shapes` (shape inference).  This module builds the dialect from the
families' lists and re-exports the names the rest of hetero uses.
"""

from xdsl.ir import Dialect

from hetero.dialects.relay.base import (
    NumpyRule,
    OpPattern,
    TensorOp,
    ValueOp,
    pattern_of,
    wide,
)
from hetero.dialects.relay.constants import (
    CONSTANT_OPS,
    ConstantOp,
    ShapeOfOp,
)
from hetero.dialects.relay.control import (
    CONTROL_OPS,
    GetItemOp,
    IfOp,
    TupleOp,
    YieldOp,
)
from hetero.dialects.relay.devices import (
    DEVICE_OPS,
    DeviceCopyOp,
    OnDeviceOp,
)
from hetero.dialects.relay.elementwise import (
    ELEMENTWISE_OPS,
    AbsOp,
    AddOp,
    CeilOp,
    ClipOp,
    ComparisonOp,
    DivideOp,
    ElementwiseBinaryOp,
    ElementwiseOp,
    ElementwiseUnaryOp,
    EqualOp,
    ErfOp,
    ExpOp,
    FloorOp,
    GreaterEqualOp,
    GreaterOp,
    HardSwishOp,
    LessEqualOp,
    LessOp,
    LogicalAndOp,
    LogicalNotOp,
    LogicalOrOp,
    LogOp,
    MaximumOp,
    MinimumOp,
    MultiplyOp,
    NegativeOp,
    NotEqualOp,
    PowerOp,
    ReluOp,
    RoundOp,
    ScalarBody,
    SigmoidOp,
    SiluOp,
    SqrtOp,
    SubtractOp,
    TanhOp,
    WhereOp,
    elementwise_op,
)
from hetero.dialects.relay.functions import (
    FUNCTION_OPS,
    CallIndirectOp,
    CallOp,
    FnOp,
    FuncOp,
    FunctionOpBase,
    ReturnOp,
)
from hetero.dialects.relay.layouts import (
    DATA_LAYOUT,
    KERNEL_LAYOUT,
    data_block,
    dense_block,
    kernel_block,
    winograd_tile,
)
from hetero.dialects.relay.nn import (
    NN_OPS,
    AvgPool2DOp,
    AvgPool3DOp,
    BatchNormOp,
    BiasAddOp,
    Conv2DOp,
    Conv2DTransposeOp,
    Conv3DOp,
    DenseOp,
    GlobalAvgPool2DOp,
    LayerNormOp,
    LogSoftmaxOp,
    LRNOp,
    MatmulOp,
    MaxPool2DOp,
    MaxPool3DOp,
    PadOp,
    Pool2DOp,
    Pool3DOp,
    RowNormalizationOp,
    SoftmaxOp,
)
from hetero.dialects.relay.params import (
    Param,
)
from hetero.dialects.relay.reduction import (
    REDUCTION_OPS,
    MeanOp,
    ReduceOp,
    SumOp,
)
from hetero.dialects.relay.shapes import (
    DYNAMIC,
    broadcast_shapes,
    conv2d_shape,
    logical_weight_shape,
    nchw_shape,
    packed_weight_shape,
    pool_shape,
    reshape_shape,
)
from hetero.dialects.relay.transform import (
    TRANSFORM_OPS,
    CastOp,
    ConcatenateOp,
    ExpandDimsOp,
    FlattenOp,
    LayoutTransformOp,
    ReshapeOp,
    SqueezeOp,
    StridedSliceOp,
    TakeOp,
    TransposeOp,
)

TENSOR_OPS: tuple[type[TensorOp], ...] = (
    *ELEMENTWISE_OPS,
    *NN_OPS,
    *TRANSFORM_OPS,
    *REDUCTION_OPS,
)
"""The tensor operators, whose result types `infer_result_type` computes."""

Relay = Dialect(
    "relay",
    [*FUNCTION_OPS, *CONTROL_OPS, *DEVICE_OPS, *CONSTANT_OPS, *TENSOR_OPS],
    [],
)

__all__ = [
    "CONSTANT_OPS",
    "CONTROL_OPS",
    "DATA_LAYOUT",
    "DEVICE_OPS",
    "DYNAMIC",
    "ELEMENTWISE_OPS",
    "FUNCTION_OPS",
    "KERNEL_LAYOUT",
    "NN_OPS",
    "REDUCTION_OPS",
    "TENSOR_OPS",
    "TRANSFORM_OPS",
    "AbsOp",
    "AddOp",
    "AvgPool2DOp",
    "AvgPool3DOp",
    "BatchNormOp",
    "BiasAddOp",
    "CallIndirectOp",
    "CallOp",
    "CastOp",
    "CeilOp",
    "ClipOp",
    "ComparisonOp",
    "ConcatenateOp",
    "ConstantOp",
    "Conv2DOp",
    "Conv2DTransposeOp",
    "Conv3DOp",
    "DenseOp",
    "DeviceCopyOp",
    "DivideOp",
    "ElementwiseBinaryOp",
    "ElementwiseOp",
    "ElementwiseUnaryOp",
    "EqualOp",
    "ErfOp",
    "ExpOp",
    "ExpandDimsOp",
    "FlattenOp",
    "FloorOp",
    "FnOp",
    "FuncOp",
    "FunctionOpBase",
    "GetItemOp",
    "GlobalAvgPool2DOp",
    "GreaterEqualOp",
    "GreaterOp",
    "HardSwishOp",
    "IfOp",
    "LRNOp",
    "LayerNormOp",
    "LayoutTransformOp",
    "LessEqualOp",
    "LessOp",
    "LogOp",
    "LogSoftmaxOp",
    "LogicalAndOp",
    "LogicalNotOp",
    "LogicalOrOp",
    "MatmulOp",
    "MaxPool2DOp",
    "MaxPool3DOp",
    "MaximumOp",
    "MeanOp",
    "MinimumOp",
    "MultiplyOp",
    "NegativeOp",
    "NotEqualOp",
    "NumpyRule",
    "OnDeviceOp",
    "OpPattern",
    "PadOp",
    "Param",
    "Pool2DOp",
    "Pool3DOp",
    "PowerOp",
    "ReduceOp",
    "Relay",
    "ReluOp",
    "ReshapeOp",
    "ReturnOp",
    "RoundOp",
    "RowNormalizationOp",
    "ScalarBody",
    "ShapeOfOp",
    "SigmoidOp",
    "SiluOp",
    "SoftmaxOp",
    "SqrtOp",
    "SqueezeOp",
    "StridedSliceOp",
    "SubtractOp",
    "SumOp",
    "TakeOp",
    "TanhOp",
    "TensorOp",
    "TransposeOp",
    "TupleOp",
    "ValueOp",
    "WhereOp",
    "YieldOp",
    "broadcast_shapes",
    "conv2d_shape",
    "data_block",
    "dense_block",
    "elementwise_op",
    "kernel_block",
    "logical_weight_shape",
    "nchw_shape",
    "packed_weight_shape",
    "pattern_of",
    "pool_shape",
    "reshape_shape",
    "wide",
    "winograd_tile",
]
