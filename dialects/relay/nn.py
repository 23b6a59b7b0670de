"""The neural-network tensor operators: dense and matmul, convolutions, bias,
normalisations, pools, softmax, padding and LRN.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.relay.base import NumpyRule, OpPattern, TensorOp, wide
from hetero.dialects.relay.layouts import (
    DATA_LAYOUT,
    DENSE_WEIGHT_LAYOUT,
    KERNEL_LAYOUT,
)
from hetero.dialects.relay.params import (
    BoolParam,
    FloatParam,
    IntParam,
    IntsParam,
    LayoutParam,
    StrParam,
)
from hetero.dialects.relay.shapes import (
    Shape,
    blocked_shape,
    check_channel_vector,
    conv2d_shape,
    conv2d_transpose_shape,
    conv_shape,
    dense_shape,
    format_shape,
    logical_dense_weight_shape,
    logical_weight_shape,
    matmul_shape,
    merge_dims,
    nchw_shape,
    normalize_axis,
    pad_shape,
    pool_shape,
    require_rank,
)


@irdl_op_definition
class DenseOp(TensorOp):
    """Fully connected layer: `x [M, K]`, `weight [N, K]` -> `[M, N]`; the
    weight may be packed in panels, `NK<b>n` (`weight_layout`, as
    `alter-op-layout` packs it for the CPU GEMM schedule).

    Compute template: `te/templates/gemm.py`."""

    name = "relay.nn.dense"

    PATTERN: ClassVar[OpPattern] = OpPattern.OUT_ELEMWISE_FUSABLE

    x = operand_def(TensorType)
    weight = operand_def(TensorType)
    weight_layout = LayoutParam(DENSE_WEIGHT_LAYOUT, "NK")
    units = IntParam(0, minimum=0)
    """Outputs `N`; 0 (the default) reads them from an `NK` weight."""

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        layout, units = cls.weight_layout.read(attributes), cls.units.read(attributes)
        return dense_shape(
            shapes[0], logical_dense_weight_shape(shapes[1], layout, units)
        )


@irdl_op_definition
class MatmulOp(TensorOp):
    """Batched matrix product, `[..., M, K] x [..., K, N]`, batch dimensions broadcast.

    Compute template: `te/templates/gemm.py`."""

    name = "relay.matmul"

    PATTERN: ClassVar[OpPattern] = OpPattern.OUT_ELEMWISE_FUSABLE
    NUMPY: ClassVar[NumpyRule] = staticmethod(lambda a, b: np.matmul(wide(a), wide(b)))

    a = operand_def(TensorType)
    b = operand_def(TensorType)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return matmul_shape(shapes[0], shapes[1])


@irdl_op_definition
class Conv2DOp(TensorOp):
    """2-D convolution of NCHW data with OIHW weights; the data and the
    result may be in a channel-blocked layout (`data_layout`, `out_layout`:
    `NCHW<b>c`, which `alter-data-layout` picks for the schedule of the
    device) and the weight in `OIHW<b>o` or, 3x3, in the Winograd domain
    `winograd<m>_OI<b>o` (`kernel_layout`, as `alter-op-layout` packs it).

    Compute template: `te/templates/conv.py`."""

    name = "relay.nn.conv2d"

    PATTERN: ClassVar[OpPattern] = OpPattern.OUT_ELEMWISE_FUSABLE

    x = operand_def(TensorType)
    weight = operand_def(TensorType)
    strides = IntsParam((1, 1), length=2, minimum=1)
    padding = IntsParam((0, 0, 0, 0), length=4, minimum=0)
    dilation = IntsParam((1, 1), length=2, minimum=1)
    groups = IntParam(1, minimum=1)
    data_layout = LayoutParam(DATA_LAYOUT, "NCHW")
    kernel_layout = LayoutParam(KERNEL_LAYOUT, "OIHW")
    out_layout = LayoutParam(DATA_LAYOUT, "NCHW")
    channels = IntParam(0, minimum=0)
    """Output channels; 0 (the default) reads them from an `OIHW` weight."""

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        data = nchw_shape(shapes[0], cls.data_layout.read(attributes), "conv2d data")
        out = conv2d_shape(
            data,
            logical_weight_shape(
                shapes[1],
                cls.kernel_layout.read(attributes),
                cls.channels.read(attributes),
            ),
            cls.strides.read(attributes),
            cls.padding.read(attributes),
            cls.dilation.read(attributes),
            cls.groups.read(attributes),
        )
        return blocked_shape(out, cls.out_layout.read(attributes), "the conv2d result")


@irdl_op_definition
class Conv3DOp(TensorOp):
    """3-D convolution of NCDHW data with OIDHW weights (TVM's `conv3d`).

    Compute template: `te/templates/conv.py`."""

    name = "relay.nn.conv3d"

    PATTERN: ClassVar[OpPattern] = OpPattern.OUT_ELEMWISE_FUSABLE

    x = operand_def(TensorType)
    weight = operand_def(TensorType)
    strides = IntsParam((1, 1, 1), length=3, minimum=1)
    padding = IntsParam((0, 0, 0, 0, 0, 0), length=6, minimum=0)
    """front, top, left, back, bottom, right."""
    dilation = IntsParam((1, 1, 1), length=3, minimum=1)
    groups = IntParam(1, minimum=1)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        require_rank(shapes[0], 5, "conv3d data (NCDHW)")
        require_rank(shapes[1], 5, "conv3d weight (OIDHW)")
        return conv_shape(
            shapes[0],
            shapes[1],
            cls.strides.read(attributes),
            cls.padding.read(attributes),
            cls.dilation.read(attributes),
            cls.groups.read(attributes),
        )


@irdl_op_definition
class Conv2DTransposeOp(TensorOp):
    """2-D transposed convolution of NCHW data with IOHW weights (TVM's
    `conv2d_transpose`, ONNX's `ConvTranspose`): each input pixel scatters
    its weighted window into the output, `strides` apart; `padding` crops
    the full result, `output_padding` adds rows and columns at its end.

    Compute template: `te/templates/conv.py`."""

    name = "relay.nn.conv2d_transpose"

    PATTERN: ClassVar[OpPattern] = OpPattern.OUT_ELEMWISE_FUSABLE

    x = operand_def(TensorType)
    weight = operand_def(TensorType)
    strides = IntsParam((1, 1), length=2, minimum=1)
    padding = IntsParam((0, 0, 0, 0), length=4, minimum=0)
    dilation = IntsParam((1, 1), length=2, minimum=1)
    output_padding = IntsParam((0, 0), length=2, minimum=0)
    groups = IntParam(1, minimum=1)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return conv2d_transpose_shape(
            shapes[0],
            shapes[1],
            cls.strides.read(attributes),
            cls.padding.read(attributes),
            cls.dilation.read(attributes),
            cls.output_padding.read(attributes),
            cls.groups.read(attributes),
        )


@irdl_op_definition
class BiasAddOp(TensorOp):
    """`x + bias`, the `[C]` bias added along `axis`.

    Compute template: `te/templates/elementwise.py`."""

    name = "relay.nn.bias_add"

    PATTERN: ClassVar[OpPattern] = OpPattern.BROADCAST

    x = operand_def(TensorType)
    bias = operand_def(TensorType)
    axis = IntParam(1)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        check_channel_vector(shapes[0], shapes[1], cls.axis.read(attributes), "bias")
        return shapes[0]


@irdl_op_definition
class BatchNormOp(TensorOp):
    """Inference-form batch normalisation along `axis` with `[C]` statistics.

    Compute template: `te/templates/elementwise.py`."""

    name = "relay.nn.batch_norm"

    PATTERN: ClassVar[OpPattern] = OpPattern.BROADCAST

    x = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    moving_mean = operand_def(TensorType)
    moving_var = operand_def(TensorType)
    axis = IntParam(1)
    epsilon = FloatParam(1e-5)

    _VECTORS: ClassVar[tuple[str, ...]] = ("gamma", "beta", "moving_mean", "moving_var")

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        axis = cls.axis.read(attributes)
        for name, shape in zip(cls._VECTORS, shapes[1:]):
            check_channel_vector(shapes[0], shape, axis, name)
        return shapes[0]


class WindowPoolOp(TensorOp):
    """Base of the pooling operators over `LAYOUT` data (`pool_shape`);
    subclasses declare the window parameters for its spatial axes."""

    PATTERN: ClassVar[OpPattern] = OpPattern.COMM_REDUCE

    LAYOUT: ClassVar[str]

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        require_rank(shapes[0], len(cls.LAYOUT), f"pooling data ({cls.LAYOUT})")
        params = ("pool_size", "strides", "padding", "dilation", "ceil_mode")
        return pool_shape(
            shapes[0], *(getattr(cls, p).read(attributes) for p in params)
        )


class Pool2DOp(WindowPoolOp):
    """Base of the NCHW 2-D pooling operators (the data and the result may
    be channel-blocked: `layout = "NCHW<b>c"`, `DATA_LAYOUT`)."""

    LAYOUT: ClassVar[str] = "NCHW"

    x = operand_def(TensorType)
    pool_size = IntsParam(length=2, minimum=1)
    strides = IntsParam((1, 1), length=2, minimum=1)
    padding = IntsParam((0, 0, 0, 0), length=4, minimum=0)
    dilation = IntsParam((1, 1), length=2, minimum=1)
    ceil_mode = BoolParam(False)
    layout = LayoutParam(DATA_LAYOUT, "NCHW")

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        layout = cls.layout.read(attributes)
        data = nchw_shape(shapes[0], layout, "pooling data")
        out = super().infer_shape([data], attributes)
        return blocked_shape(out, layout, "the pooling result")


@irdl_op_definition
class MaxPool2DOp(Pool2DOp):
    """Maximum over each window.

    Compute template: `te/templates/pool.py`."""

    name = "relay.nn.max_pool2d"


@irdl_op_definition
class AvgPool2DOp(Pool2DOp):
    """Mean over each window; padding counts only with `count_include_pad`.

    Compute template: `te/templates/pool.py`."""

    name = "relay.nn.avg_pool2d"

    count_include_pad = BoolParam(False)


class Pool3DOp(WindowPoolOp):
    """Base of the NCDHW 3-D pooling operators (`padding`: front, top,
    left, back, bottom, right)."""

    LAYOUT: ClassVar[str] = "NCDHW"

    x = operand_def(TensorType)
    pool_size = IntsParam(length=3, minimum=1)
    strides = IntsParam((1, 1, 1), length=3, minimum=1)
    padding = IntsParam((0, 0, 0, 0, 0, 0), length=6, minimum=0)
    dilation = IntsParam((1, 1, 1), length=3, minimum=1)
    ceil_mode = BoolParam(False)


@irdl_op_definition
class MaxPool3DOp(Pool3DOp):
    """Maximum over each window.

    Compute template: `te/templates/pool.py`."""

    name = "relay.nn.max_pool3d"


@irdl_op_definition
class AvgPool3DOp(Pool3DOp):
    """Mean over each window; padding counts only with `count_include_pad`.

    Compute template: `te/templates/pool.py`."""

    name = "relay.nn.avg_pool3d"

    count_include_pad = BoolParam(False)


@irdl_op_definition
class GlobalAvgPool2DOp(TensorOp):
    """Mean over the whole H x W plane: `[N, C, H, W]` -> `[N, C, 1, 1]`
    (or channel-blocked: `layout = "NCHW<b>c"`, `DATA_LAYOUT`).

    Compute template: `te/templates/pool.py`."""

    name = "relay.nn.global_avg_pool2d"

    PATTERN: ClassVar[OpPattern] = OpPattern.COMM_REDUCE

    x = operand_def(TensorType)
    layout = LayoutParam(DATA_LAYOUT, "NCHW")

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        layout = cls.layout.read(attributes)
        data = nchw_shape(shapes[0], layout, "pooling data")
        return blocked_shape(data[:2] + (1, 1), layout, "the pooling result")


class RowNormalizationOp(TensorOp):
    """A function of each row along `axis` and of that row's maximum and sum
    of `exp(x - max)`; the shape is unchanged."""

    x = operand_def(TensorType)
    axis = IntParam(-1)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        normalize_axis(cls.axis.read(attributes), len(shapes[0]))
        return shapes[0]


@irdl_op_definition
class SoftmaxOp(RowNormalizationOp):
    """Softmax along `axis`: `exp(x - max) / sum(exp(x - max))`.

    Compute template: `te/templates/reduction.py`."""

    name = "relay.nn.softmax"


@irdl_op_definition
class LogSoftmaxOp(RowNormalizationOp):
    """Log-softmax along `axis`: `x - max - log(sum(exp(x - max)))`, finite
    wherever `x` is (`log(softmax)` is -inf below float's range).

    Compute template: `te/templates/reduction.py`."""

    name = "relay.nn.log_softmax"


def _pad(
    x: np.ndarray, pad_width: tuple[int, ...], pad_value: float, pad_mode: str
) -> np.ndarray:
    """NumPy's `constant`, `edge` and `reflect` modes are relay's."""
    pairs = list(zip(pad_width[::2], pad_width[1::2]))
    if pad_mode == "constant":
        return np.pad(x, pairs, constant_values=pad_value)
    return np.pad(x, pairs, mode=pad_mode)


@irdl_op_definition
class PadOp(TensorOp):
    """Grow each dimension by a (before, after) pair: with `pad_value`
    (`constant`), the edge element (`edge`) or the mirrored data (`reflect`).

    Compute template: `te/templates/injective.py`."""

    name = "relay.nn.pad"

    PATTERN: ClassVar[OpPattern] = OpPattern.INJECTIVE
    NUMPY: ClassVar[NumpyRule] = staticmethod(_pad)

    x = operand_def(TensorType)
    pad_width = IntsParam(minimum=0)
    pad_value = FloatParam(0.0)
    pad_mode = StrParam("constant", choices=("constant", "edge", "reflect"))

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return pad_shape(
            shapes[0], cls.pad_width.read(attributes), cls.pad_mode.read(attributes)
        )


@irdl_op_definition
class LRNOp(TensorOp):
    """Local response normalisation across `axis` (AlexNet, GoogLeNet):
    `x / (bias + alpha / size * sum of x² over size neighbours) ** beta`.

    Compute template: `te/templates/reduction.py`."""

    name = "relay.nn.lrn"

    x = operand_def(TensorType)
    size = IntParam(5, minimum=1)
    axis = IntParam(1)
    alpha = FloatParam(1e-5)
    beta = FloatParam(0.75)
    bias = FloatParam(2.0)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        normalize_axis(cls.axis.read(attributes), len(shapes[0]))
        return shapes[0]


@irdl_op_definition
class LayerNormOp(TensorOp):
    """Layer normalisation over the trailing axes from `axis` (ONNX's
    `LayerNormalization`, PyTorch's `nn.LayerNorm`): each row of those axes
    becomes `(x - mean) / sqrt(var + epsilon) * gamma + beta`, `gamma` and
    `beta` of the normalised shape `x.shape[axis:]`.

    Compute template: `te/templates/reduction.py`."""

    name = "relay.nn.layer_norm"

    PATTERN: ClassVar[OpPattern] = OpPattern.OUT_ELEMWISE_FUSABLE

    x = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    axis = IntParam(-1)
    epsilon = FloatParam(1e-5)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        data = shapes[0]
        normalised = data[normalize_axis(cls.axis.read(attributes), len(data)) :]
        for name, shape in zip(("gamma", "beta"), shapes[1:]):
            if len(shape) != len(normalised) or any(
                merge_dims(a, b) is None for a, b in zip(shape, normalised)
            ):
                raise VerifyException(
                    f"{name} has shape {format_shape(shape)}, but the normalised "
                    f"axes of the data are {format_shape(normalised)}"
                )
        return data


NN_OPS: tuple[type[TensorOp], ...] = (
    DenseOp,
    MatmulOp,
    Conv2DOp,
    Conv2DTransposeOp,
    Conv3DOp,
    BiasAddOp,
    BatchNormOp,
    MaxPool2DOp,
    AvgPool2DOp,
    MaxPool3DOp,
    AvgPool3DOp,
    GlobalAvgPool2DOp,
    SoftmaxOp,
    LogSoftmaxOp,
    LayerNormOp,
    PadOp,
    LRNOp,
)
"""The ops of this family, in the order the `Relay` dialect lists them."""
