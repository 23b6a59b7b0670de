"""The tensor operators that move elements: reshape, transpose, layout
transforms, cast, take, flatten, concatenate, squeeze, expand_dims and
strided_slice; and arange_like, the positions along an axis, and
reshape_like, a reshape to another tensor's shape.

Their compute templates are `te/templates/injective.py`'s (cast's,
`te/templates/elementwise.py`'s).  Those whose value is a NumPy function
of their operands and `Param`s declare it (`NUMPY`); the reference
interpreter holds the others' (layout_transform, cast, squeeze).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, var_operand_def
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.relay.base import NumpyRule, OpPattern, TensorOp
from hetero.dialects.relay.layouts import DATA_LAYOUT
from hetero.dialects.relay.params import (
    NO_ATTRIBUTES,
    ElementTypeParam,
    IntParam,
    IntsParam,
    LayoutParam,
    OptionalIntsParam,
    check_minimum,
)
from hetero.dialects.relay.shapes import (
    DYNAMIC,
    Shape,
    blocked_shape,
    concatenate_shape,
    expand_dims_shape,
    flatten_shape,
    format_shape,
    nchw_shape,
    product,
    reshape_shape,
    squeeze_shape,
    strided_slice_shape,
    take_shape,
    transpose_shape,
)


def _reshape(x: np.ndarray, newshape: tuple[int, ...]) -> np.ndarray:
    """`0` copies the input dimension at the same position; NumPy infers `-1`."""
    return x.reshape([x.shape[i] if d == 0 else d for i, d in enumerate(newshape)])


def _take(data: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """`np.take` along `axis`, a negative index counting from the end and
    one still out of range clamped (`relay.take`'s rule)."""
    axis = axis % data.ndim
    extent = data.shape[axis]
    wrapped = np.where(indices < 0, indices.astype(np.int64) + extent, indices)
    return np.take(data, np.clip(wrapped, 0, extent - 1), axis=axis)


def _flatten(x: np.ndarray, axis: int) -> np.ndarray:
    """`axis` may be the rank; a negative one counts from the end."""
    axis = axis + x.ndim if axis < 0 else axis
    return x.reshape(int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:])))


def _expand_dims(x: np.ndarray, axis: int, num_newaxis: int) -> np.ndarray:
    """`num_newaxis` size-1 dims inserted at `axis`, which ranges over
    [-rank - 1, rank]: -1 appends, as in NumPy."""
    at = axis + x.ndim + 1 if axis < 0 else axis
    return x.reshape(x.shape[:at] + (1,) * num_newaxis + x.shape[at:])


def _strided_slice(
    x: np.ndarray,
    begin: tuple[int, ...],
    end: tuple[int, ...],
    strides: tuple[int, ...] | None,
) -> np.ndarray:
    strides = strides or (1,) * x.ndim
    return x[tuple(slice(b, e, s) for b, e, s in zip(begin, end, strides))]


@irdl_op_definition
class ReshapeOp(TensorOp):
    """Same elements, new shape (`0` copies a dimension, one `-1` is inferred).

    Compute template: `te/templates/injective.py`."""

    name = "relay.reshape"

    PATTERN: ClassVar[OpPattern] = OpPattern.INJECTIVE
    NUMPY: ClassVar[NumpyRule] = staticmethod(_reshape)

    x = operand_def(TensorType)
    newshape = IntsParam()

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return reshape_shape(shapes[0], cls.newshape.read(attributes))


def _reshape_like(x: np.ndarray, like: np.ndarray, keep: int) -> np.ndarray:
    return x.reshape(like.shape[: like.ndim - keep] + x.shape[x.ndim - keep :])


@irdl_op_definition
class ReshapeLikeOp(TensorOp):
    """`x`'s elements in the shape of `like` (whose elements are not read),
    but for its last `keep` axes, which are `x`'s last `keep` (TVM's
    `reshape_like` with `lhs_begin = 0`, `rhs_begin = 0`): a reshape to
    sizes known at run time only that `newshape`'s one `-1` cannot name
    (ONNX's reshape of a `[b·s]` mask to `[b, 1, 1, s]`; a dense's `[b·s,
    N]` result back to `[b, s, N]` like its `[b, s, K]` input, `keep = 1`).
    Sizes that are known must have `x`'s product.

    Compute template: `te/templates/injective.py` (reshape's)."""

    name = "relay.reshape_like"

    PATTERN: ClassVar[OpPattern] = OpPattern.INJECTIVE
    NUMPY: ClassVar[NumpyRule] = staticmethod(_reshape_like)

    x = operand_def(TensorType)
    like = operand_def(TensorType)
    keep = IntParam(0, minimum=0)

    @classmethod
    def infer_element_type(
        cls,
        tensors: Sequence[TensorType[Attribute]],
        attributes: Mapping[str, Attribute],
    ) -> Attribute:
        return tensors[0].element_type

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        data, like = shapes
        keep = cls.keep.read(attributes)
        if keep > min(len(data), len(like)):
            raise VerifyException(
                f"keep = {keep} is more axes than {format_shape(data)} or "
                f"{format_shape(like)} has"
            )
        shape = (*like[: len(like) - keep], *data[len(data) - keep :])
        total, wanted = product(data), product(shape)
        if DYNAMIC not in (total, wanted) and total != wanted:
            raise VerifyException(
                f"cannot reshape {format_shape(data)} ({total} elements) to "
                f"{format_shape(shape)} ({wanted} elements)"
            )
        return shape


@irdl_op_definition
class TransposeOp(TensorOp):
    """Permute the dimensions (default: reverse them).

    Compute template: `te/templates/injective.py`."""

    name = "relay.transpose"

    PATTERN: ClassVar[OpPattern] = OpPattern.INJECTIVE
    NUMPY: ClassVar[NumpyRule] = staticmethod(lambda x, axes: np.transpose(x, axes))

    x = operand_def(TensorType)
    axes = OptionalIntsParam()

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return transpose_shape(shapes[0], cls.axes.read(attributes))


@irdl_op_definition
class LayoutTransformOp(TensorOp):
    """The same tensor in another data layout (`DATA_LAYOUT`; TVM's
    `layout_transform`): `NCHW` to `NCHW<b>c`, back, or between blocks.

    Compute template: `te/templates/injective.py`."""

    name = "relay.layout_transform"

    PATTERN: ClassVar[OpPattern] = OpPattern.INJECTIVE

    x = operand_def(TensorType)
    src_layout = LayoutParam(DATA_LAYOUT)
    dst_layout = LayoutParam(DATA_LAYOUT)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        nchw = nchw_shape(shapes[0], cls.src_layout.read(attributes), "the data")
        return blocked_shape(nchw, cls.dst_layout.read(attributes), "the data")


class _OfDtype:
    """Mixin of the ops whose result's element type is their `dtype`
    (a `Param` of each)."""

    @classmethod
    def infer_element_type(
        cls,
        tensors: Sequence[TensorType[Attribute]],
        attributes: Mapping[str, Attribute],
    ) -> Attribute:
        return cls.dtype.read(attributes)


@irdl_op_definition
class CastOp(_OfDtype, TensorOp):
    """Each element converted to `dtype` (TVM's `cast`, ONNX's `Cast`, NumPy's
    `astype`): floats round to the nearest, to integers toward zero (a
    value out of the integer's range is undefined, as in C); to `i1`,
    nonzero is true; from `i1`, true is 1.

    Compute template: `te/templates/elementwise.py`."""

    name = "relay.cast"

    PATTERN: ClassVar[OpPattern] = OpPattern.ELEMWISE

    x = operand_def(TensorType)
    dtype = ElementTypeParam()

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return shapes[0]


@irdl_op_definition
class TakeOp(TensorOp):
    """Elements of `data` picked along `axis` by run-time `indices` (TVM's
    `take`, ONNX's `Gather`): the result's dimension `axis` becomes the
    dimensions of `indices`.  A negative index counts from the end; one
    still out of range is clamped to the nearest end (TVM's default `clip`
    mode), so no index reads outside `data`.

    Compute template: `te/templates/injective.py`."""

    name = "relay.take"

    PATTERN: ClassVar[OpPattern] = OpPattern.INJECTIVE
    NUMPY: ClassVar[NumpyRule] = staticmethod(_take)

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    axis = IntParam(0)

    @classmethod
    def infer_element_type(
        cls,
        tensors: Sequence[TensorType[Attribute]],
        attributes: Mapping[str, Attribute],
    ) -> Attribute:
        index_type = tensors[1].element_type
        if not isinstance(index_type, IntegerType) or index_type.width.data < 8:
            raise VerifyException(f"indices must be integers, got {index_type}")
        return tensors[0].element_type

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return take_shape(shapes[0], shapes[1], cls.axis.read(attributes))


@irdl_op_definition
class ArangeLikeOp(_OfDtype, TensorOp):
    """`start + step * i` for each position `i` along `axis` of `x`: a 1-D
    tensor of `dtype` as long as `x` is there, whatever that length is
    (ONNX's `Range` of a length known at run time only, over a value of
    that length).  The elements of `x` are not read.

    Compute template: `te/templates/elementwise.py` (index arithmetic, then
    cast's conversions)."""

    name = "relay.arange_like"

    PATTERN: ClassVar[OpPattern] = OpPattern.INJECTIVE

    x = operand_def(TensorType)
    axis = IntParam(0)
    start = IntParam(0)
    step = IntParam(1)
    dtype = ElementTypeParam()

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        data, axis = shapes[0], cls.axis.read(attributes)
        if not -len(data) <= axis < len(data):
            raise VerifyException(f"axis {axis} is out of range for rank {len(data)}")
        return (data[axis],)


@irdl_op_definition
class FlattenOp(TensorOp):
    """Collapse to 2-D: the dimensions before `axis`, and those from it on.

    Compute template: `te/templates/injective.py`."""

    name = "relay.flatten"

    PATTERN: ClassVar[OpPattern] = OpPattern.INJECTIVE
    NUMPY: ClassVar[NumpyRule] = staticmethod(_flatten)

    x = operand_def(TensorType)
    axis = IntParam(1)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return flatten_shape(shapes[0], cls.axis.read(attributes))


@irdl_op_definition
class ConcatenateOp(TensorOp):
    """Join one or more tensors along `axis`.

    Compute template: `te/templates/injective.py`."""

    name = "relay.concatenate"

    PATTERN: ClassVar[OpPattern] = OpPattern.INJECTIVE
    NUMPY: ClassVar[NumpyRule] = staticmethod(
        lambda *xs, axis: np.concatenate(xs, axis=axis)
    )

    inputs = var_operand_def(TensorType)
    axis = IntParam(0)

    @classmethod
    def group_operands(
        cls, values: list[SSAValue]
    ) -> Sequence[SSAValue | Sequence[SSAValue]]:
        return [values]

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return concatenate_shape(shapes, cls.axis.read(attributes))

    @classmethod
    def infer_result_type(
        cls,
        operand_types: Sequence[Attribute],
        attributes: Mapping[str, Attribute] = NO_ATTRIBUTES,
    ) -> TensorType[Attribute]:
        if not operand_types:
            raise VerifyException("concatenate needs at least one operand")
        return super().infer_result_type(operand_types, attributes)


@irdl_op_definition
class SqueezeOp(TensorOp):
    """Drop size-1 dimensions: those in `axis`, or all of them.

    Compute template: `te/templates/injective.py`."""

    name = "relay.squeeze"

    PATTERN: ClassVar[OpPattern] = OpPattern.INJECTIVE

    x = operand_def(TensorType)
    axis = OptionalIntsParam()

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return squeeze_shape(shapes[0], cls.axis.read(attributes))


@irdl_op_definition
class ExpandDimsOp(TensorOp):
    """Insert `num_newaxis` size-1 dimensions at `axis`.

    Compute template: `te/templates/injective.py`."""

    name = "relay.expand_dims"

    PATTERN: ClassVar[OpPattern] = OpPattern.INJECTIVE
    NUMPY: ClassVar[NumpyRule] = staticmethod(_expand_dims)

    x = operand_def(TensorType)
    axis = IntParam()
    num_newaxis = IntParam(1, minimum=0)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return expand_dims_shape(
            shapes[0], cls.axis.read(attributes), cls.num_newaxis.read(attributes)
        )


@irdl_op_definition
class StridedSliceOp(TensorOp):
    """`x[b0:e0:s0, ...]`: one begin, end and positive stride per dimension.

    Compute template: `te/templates/injective.py`."""

    name = "relay.strided_slice"

    PATTERN: ClassVar[OpPattern] = OpPattern.INJECTIVE
    NUMPY: ClassVar[NumpyRule] = staticmethod(_strided_slice)

    x = operand_def(TensorType)
    begin = IntsParam(minimum=0)
    end = IntsParam(minimum=0)
    strides = OptionalIntsParam()

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        strides = cls.strides.read(attributes) or (1,) * len(shapes[0])
        check_minimum("strides", strides, 1)
        return strided_slice_shape(
            shapes[0], cls.begin.read(attributes), cls.end.read(attributes), strides
        )


TRANSFORM_OPS: tuple[type[TensorOp], ...] = (
    ReshapeOp,
    ReshapeLikeOp,
    TransposeOp,
    LayoutTransformOp,
    CastOp,
    TakeOp,
    ArangeLikeOp,
    FlattenOp,
    ConcatenateOp,
    SqueezeOp,
    ExpandDimsOp,
    StridedSliceOp,
)
"""The ops of this family, in the order the `Relay` dialect lists them."""
