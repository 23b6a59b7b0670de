"""The reductions over axes: `relay.sum` and `relay.mean`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def

from hetero.dialects.relay.base import NumpyRule, OpPattern, TensorOp, wide
from hetero.dialects.relay.params import BoolParam, OptionalIntsParam
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


REDUCTION_OPS: tuple[type[TensorOp], ...] = (
    SumOp,
    MeanOp,
)
"""The ops of this family, in the order the `Relay` dialect lists them."""
