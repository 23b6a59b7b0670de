"""The reductions over axes: `relay.sum`, `relay.mean`, `relay.max`,
`relay.min`, `relay.prod`; and the positions of a maximum or minimum along
one axis: `relay.argmax`, `relay.argmin`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.relay.base import NumpyRule, OpPattern, TensorOp, wide
from hetero.dialects.relay.params import BoolParam, IntParam, OptionalIntsParam
from hetero.dialects.relay.shapes import Shape, reduce_shape


class ReduceOp(TensorOp):
    """Base of the reductions over `axis` (default: every dimension);
    float16 accumulates in float32."""

    PATTERN: ClassVar[OpPattern] = OpPattern.COMM_REDUCE

    x = operand_def(TensorType)
    axis = OptionalIntsParam()
    keepdims = BoolParam(False)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return reduce_shape(
            shapes[0], cls.axis.read(attributes), cls.keepdims.read(attributes)
        )


@irdl_op_definition
class SumOp(ReduceOp):
    """Sum over `axis`.

    Compute template: `te/templates/reduction.py`."""

    name = "relay.sum"

    NUMPY: ClassVar[NumpyRule] = staticmethod(
        lambda x, axis, keepdims: np.sum(wide(x), axis=axis, keepdims=keepdims)
    )


@irdl_op_definition
class MeanOp(ReduceOp):
    """Mean over `axis`.

    Compute template: `te/templates/reduction.py`."""

    name = "relay.mean"

    NUMPY: ClassVar[NumpyRule] = staticmethod(
        lambda x, axis, keepdims: np.mean(wide(x), axis=axis, keepdims=keepdims)
    )


def _least(dtype: np.dtype, least: bool) -> object:
    """The start of a maximum (`least`) or minimum of `dtype`: -inf or inf,
    an integer type's extremes, a boolean's false or true."""
    if dtype.kind == "f":
        return -np.inf if least else np.inf
    if dtype.kind == "b":
        return not least
    limits = np.iinfo(dtype)
    return limits.min if least else limits.max


@irdl_op_definition
class MaxOp(ReduceOp):
    """Maximum over `axis` (NaN where one is, as NumPy's; -inf of none).

    Compute template: `te/templates/reduction.py`."""

    name = "relay.max"

    NUMPY: ClassVar[NumpyRule] = staticmethod(
        lambda x, axis, keepdims: np.max(
            x, axis, keepdims=keepdims, initial=_least(x.dtype, True)
        )
    )


@irdl_op_definition
class MinOp(ReduceOp):
    """Minimum over `axis` (NaN where one is, as NumPy's; inf of none).

    Compute template: `te/templates/reduction.py`."""

    name = "relay.min"

    NUMPY: ClassVar[NumpyRule] = staticmethod(
        lambda x, axis, keepdims: np.min(
            x, axis, keepdims=keepdims, initial=_least(x.dtype, False)
        )
    )


@irdl_op_definition
class ProdOp(ReduceOp):
    """Product over `axis`.

    Compute template: `te/templates/reduction.py`."""

    name = "relay.prod"

    NUMPY: ClassVar[NumpyRule] = staticmethod(
        lambda x, axis, keepdims: np.prod(wide(x), axis=axis, keepdims=keepdims)
    )


def _arg(best: Callable[..., np.ndarray]) -> NumpyRule:
    """NumPy's `best` (argmax, argmin) along `axis`, the last of equal
    positions with `select_last_index` (the first NaN's, or the last's)."""

    def rule(
        x: np.ndarray, axis: int, keepdims: bool, select_last_index: bool
    ) -> np.ndarray:
        if select_last_index:
            flipped = best(np.flip(x, axis), axis=axis, keepdims=True)
            found = x.shape[axis] - 1 - flipped
        else:
            found = best(x, axis=axis, keepdims=True)
        return (found if keepdims else np.squeeze(found, axis)).astype(np.int64)

    return rule


class ArgReduceOp(TensorOp):
    """Base of the positions of the best element along `axis`: `i64`
    positions, the first of equal ones (the last with `select_last_index`);
    a NaN is the best (NumPy's rule)."""

    PATTERN: ClassVar[OpPattern] = OpPattern.COMM_REDUCE

    x = operand_def(TensorType)
    axis = IntParam(0)
    keepdims = BoolParam(False)
    select_last_index = BoolParam(False)

    @classmethod
    def infer_element_type(
        cls,
        tensors: Sequence[TensorType[Attribute]],
        attributes: Mapping[str, Attribute],
    ) -> Attribute:
        return i64

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        axis = cls.axis.read(attributes)
        if shapes[0] and shapes[0][axis % len(shapes[0])] == 0:
            raise VerifyException(f"the axis {axis} to search is empty")
        return reduce_shape(shapes[0], [axis], cls.keepdims.read(attributes))


@irdl_op_definition
class ArgMaxOp(ArgReduceOp):
    """Positions of the maximum along `axis`.

    Compute template: `te/templates/reduction.py`."""

    name = "relay.argmax"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_arg(np.argmax))


@irdl_op_definition
class ArgMinOp(ArgReduceOp):
    """Positions of the minimum along `axis`.

    Compute template: `te/templates/reduction.py`."""

    name = "relay.argmin"

    NUMPY: ClassVar[NumpyRule] = staticmethod(_arg(np.argmin))


REDUCTION_OPS: tuple[type[TensorOp], ...] = (
    SumOp,
    MeanOp,
    MaxOp,
    MinOp,
    ProdOp,
    ArgMaxOp,
    ArgMinOp,
)
"""The ops of this family, in the order the `Relay` dialect lists them."""
