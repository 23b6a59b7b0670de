"""Converters of the neural-network operators: softmax, dense layers and
matrix products (Gemm, MatMul, Einsum: attention's pieces), convolution and
pooling windows, and the normalisations."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from hetero.dialects import relay
from hetero.frontends.onnx.node import Converter, Node
from hetero.interpreter.relay import element_dtype


def _softmax_like(op: type[relay.RowNormalizationOp]) -> Converter:
    """Before opset 13 the input is coerced to 2-D at `axis` (default 1) and
    normalised over the whole second part; from 13 over `axis` (default -1)."""

    def convert(n: Node) -> SSAValue:
        x = n.input(0)
        shape = n.shape(0)
        if n.opset >= 13:
            return n.op(op, x, axis=n.attrs.get("axis", -1))
        axis = n.attrs.get("axis", 1) % max(len(shape), 1)
        flat = (
            n.op(relay.FlattenOp, x, axis=axis) if len(shape) != 2 or axis != 1 else x
        )
        result = n.op(op, flat, axis=-1)
        if flat is not x:
            result = n.op(
                relay.ReshapeOp,
                result,
                newshape=tuple(max(d, 0) for d in shape),
            )
        return result

    return convert


# -- dense layers and matrix products --------------------------------------------


def _gemm(n: Node) -> SSAValue:
    """alpha * A' B' + beta * C as relay.nn.dense (whose weight is [N, K]);
    a constant B is transposed at import."""
    a = n.input(0)
    if n.attrs.get("transA", 0):
        a = n.op(relay.TransposeOp, a, axes=(1, 0))
    if n.is_constant(1):
        b = n.const(1)
        weight = n.graph.constant(
            b if n.attrs.get("transB", 0) else b.T.copy(), n.proto.input[1]
        )
    else:
        weight = n.input(1)
        if not n.attrs.get("transB", 0):
            weight = n.op(relay.TransposeOp, weight, axes=(1, 0))
    result = n.op(relay.DenseOp, a, weight)
    alpha, beta = n.attrs.get("alpha", 1.0), n.attrs.get("beta", 1.0)
    if alpha != 1.0:
        result = n.op(relay.MultiplyOp, result, n.scalar(alpha, result))
    if n.has_input(2) and beta != 0.0:
        if n.is_constant(2):
            c = n.graph.constant(
                (n.const(2) * beta).astype(n.const(2).dtype), n.proto.input[2]
            )
        else:
            c = n.input(2)
            if beta != 1.0:
                c = n.op(relay.MultiplyOp, c, n.scalar(beta, c))
        result = n.op(relay.AddOp, result, c)
    return result


def _matmul(n: Node) -> SSAValue:
    """NumPy matmul: [M, K] x constant [K, N] is a dense layer; 1-D operands
    get a unit dimension that is squeezed away afterwards."""
    a_shape, b_shape = n.shape(0), n.shape(1)
    if len(a_shape) == 2 and len(b_shape) == 2 and n.is_constant(1):
        weight = n.graph.constant(n.const(1).T.copy(), n.proto.input[1])
        return n.op(relay.DenseOp, n.input(0), weight)
    a, b = n.input(0), n.input(1)
    squeeze = []
    if len(a_shape) == 1:
        a = n.op(relay.ExpandDimsOp, a, axis=0)
        squeeze.append(-2)
    if len(b_shape) == 1:
        b = n.op(relay.ExpandDimsOp, b, axis=1)
        squeeze.append(-1)
    result = n.op(relay.MatmulOp, a, b)
    return n.op(relay.SqueezeOp, result, axis=tuple(squeeze)) if squeeze else result


def _einsum_subscripts(n: Node, ranks: Sequence[int]) -> tuple[list[str], str]:
    """The subscripts of each operand and of the result, an ellipsis spelled
    out as digits (aligned at the right across operands, as broadcasting
    is); without `->`, the result is the ellipsis, then the subscripts that
    occur once, in alphabetical order (NumPy's rule)."""
    equation = n.attrs["equation"]
    equation = equation.decode() if isinstance(equation, bytes) else equation
    inputs, arrow, output = equation.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ranks):
        raise n.error(
            f"equation '{equation}' names {len(terms)} operands, not {len(ranks)}"
        )
    extra = max((r - len(t) + 3 for t, r in zip(terms, ranks) if "..." in t), default=0)
    digits = "".join(str(i) for i in range(extra))

    def spelled(term: str, rank: int) -> str:
        return term.replace("...", digits[extra - (rank - len(term) + 3) :])

    terms = [spelled(t, r) for t, r in zip(terms, ranks)]
    if arrow:
        output = output.replace("...", digits)
    else:
        letters = "".join(terms)
        output = digits + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1 and c.isalpha())
        )
    for term, rank in zip(terms, ranks):
        if len(term) != rank or len(set(term)) != len(term):
            raise n.error(
                f"subscripts '{term}' do not name the {rank} axes of an operand once "
                "each (diagonals are not supported)"
            )
    return terms, output


def _value_shape(value: SSAValue) -> tuple[int, ...]:
    type_ = value.type
    assert isinstance(type_, TensorType)
    return tuple(type_.get_shape())


def _arranged(n: Node, value: SSAValue, term: str, order: str) -> SSAValue:
    """`value` (subscripts `term`) with its axes in `order`."""
    if term == order:
        return value
    axes = tuple(term.index(c) for c in order)
    return n.op(relay.TransposeOp, value, axes=axes)


def _reshaped(n: Node, value: SSAValue, shape: Sequence[int]) -> SSAValue:
    if tuple(shape) == _value_shape(value):
        return value
    return n.op(relay.ReshapeOp, value, newshape=tuple(shape))


def _summed_out(n: Node, value: SSAValue, term: str, keep: str) -> tuple[SSAValue, str]:
    """`value` summed over the subscripts not in `keep`."""
    axes = tuple(i for i, c in enumerate(term) if c not in keep)
    if not axes:
        return value, term
    summed = n.op(relay.SumOp, value, axis=axes, keepdims=False)
    return summed, "".join(c for c in term if c in keep)


def _contract(
    n: Node,
    a: tuple[SSAValue, str],
    b: tuple[SSAValue, str],
    output: str,
    constant_b: bool,
) -> SSAValue:
    """The product of two operands with subscripts `output`: a batched
    [batch, M, K] x [batch, K, N] matmul of the transposed, flattened
    operands (a dense layer when there is no batch and `b` is a constant),
    reshaped and transposed back."""
    (x, xs), (y, ys) = a, b
    batch = "".join(c for c in output if c in xs and c in ys)
    summed = "".join(c for c in xs if c in ys and c not in output)
    left = "".join(c for c in xs if c not in ys)
    right = "".join(c for c in ys if c not in xs)
    sizes = {**dict(zip(ys, _value_shape(y))), **dict(zip(xs, _value_shape(x)))}
    if any(sizes[c] < 0 for c in summed + left + right):
        raise n.error("Einsum needs static sizes of its summed and free axes")

    def flat(letters: str) -> int:
        return math.prod(sizes[c] for c in letters)

    keep = (0,) * len(batch)
    x = _reshaped(
        n, _arranged(n, x, xs, batch + left + summed), (*keep, flat(left), flat(summed))
    )
    y = _reshaped(
        n,
        _arranged(n, y, ys, batch + summed + right),
        (*keep, flat(summed), flat(right)),
    )
    if not batch and constant_b:
        product = n.op(relay.DenseOp, x, n.op(relay.TransposeOp, y, axes=(1, 0)))
    else:
        product = n.op(relay.MatmulOp, x, y)
    unflat = (*keep, *(sizes[c] for c in left + right))
    return _arranged(n, _reshaped(n, product, unflat), batch + left + right, output)


def _einsum(n: Node) -> SSAValue:
    """NumPy's einsum without diagonals (a subscript twice in one operand):
    subscripts in one operand only are summed first; operands are then
    contracted pairwise, left to right (`_contract`), each product keeping
    the subscripts still needed; one operand is a sum and a transpose."""
    values = [n.input(i) for i in range(len(n.proto.input))]
    terms, output = _einsum_subscripts(n, [len(_value_shape(v)) for v in values])
    operands = []
    for i, (value, term) in enumerate(zip(values, terms)):
        others = "".join(terms[:i] + terms[i + 1 :]) + output
        operands.append(_summed_out(n, value, term, others))
    result = operands[0]
    for i, operand in enumerate(operands[1:], start=1):
        later = "".join(t for _, t in operands[i + 1 :]) + output
        order = "".join(dict.fromkeys(c for c in result[1] + operand[1] if c in later))
        result = (_contract(n, result, operand, order, n.is_constant(i)), order)
    value, term = _summed_out(n, *result, output)
    return _arranged(n, value, term, output)


# -- convolution and pooling -----------------------------------------------------


def _auto_pad(n: Node) -> str:
    """The node's `auto_pad` attribute (`NOTSET` when absent)."""
    auto_pad = n.attrs.get("auto_pad", "NOTSET")
    return auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad


def _window_padding(
    n: Node,
    spatial: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> list[int]:
    """ONNX `pads` ([begins..., ends...]) or what `auto_pad` asks for."""
    rank = len(spatial)
    auto_pad = _auto_pad(n)
    if auto_pad in ("NOTSET", ""):
        return [int(p) for p in n.attrs.get("pads", [0] * (2 * rank))]
    if auto_pad == "VALID":
        return [0] * (2 * rank)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise n.error(f"auto_pad '{auto_pad}' is not supported")
    begins, ends = [], []
    for size, k, s, d in zip(spatial, kernel, strides, dilations):
        if size < 0:
            raise n.error("auto_pad needs static spatial dimensions")
        total = max((math.ceil(size / s) - 1) * s + (k - 1) * d + 1 - size, 0)
        small = total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else total - small)
        ends.append(total - begins[-1])
    return begins + ends


@dataclass(frozen=True)
class _Window:
    """Convolution/pooling attributes in relay's form: 2-D (1-D data as
    height 1) or 3-D; `padding` is the starts of every axis, then the ends."""

    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilation: tuple[int, ...]
    padding: tuple[int, ...]


def _window(n: Node, spatial: Sequence[int], kernel: Sequence[int]) -> _Window:
    """ONNX window attributes of 1-D, 2-D or 3-D data, as relay's (1-D data
    is treated as height 1)."""
    strides, dilations = _strides_and_dilations(n, len(spatial))
    pads = _window_padding(n, spatial, kernel, strides, dilations)
    return _relay_window(kernel, strides, dilations, pads)


def _strides_and_dilations(n: Node, rank: int) -> tuple[list[int], list[int]]:
    """The node's `strides` and `dilations` (1 on every axis when absent)."""
    strides = [int(s) for s in n.attrs.get("strides", [1] * rank)]
    return strides, [int(d) for d in n.attrs.get("dilations", [1] * rank)]


def _relay_window(
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pads: Sequence[int],
) -> _Window:
    """ONNX window attributes as relay's: 1-D ones as height 1."""
    if len(kernel) == 1:
        return _Window(
            (1, kernel[0]), (1, strides[0]), (1, dilations[0]), (0, pads[0], 0, pads[1])
        )
    return _Window(tuple(kernel), tuple(strides), tuple(dilations), tuple(pads))


SPATIAL_OPS: dict[int, tuple[type[relay.TensorOp], ...]] = {
    2: (relay.Conv2DOp, relay.MaxPool2DOp, relay.AvgPool2DOp),
    3: (relay.Conv3DOp, relay.MaxPool3DOp, relay.AvgPool3DOp),
}
"""Relay's convolution, max and average pooling per number of spatial axes
(1-D data takes the 2-D ops as height 1)."""


def _spatial_rank(n: Node, ranks: Sequence[int] = (1, 2, 3)) -> int:
    """The number of spatial dimensions, one relay has windows for."""
    rank = len(n.shape(0)) - 2
    if rank not in ranks:
        raise n.error(
            f"{rank}-D spatial data is not supported (relay has "
            f"{', '.join(f'{r}-D' for r in ranks)} windows here)"
        )
    return rank


def _as_2d(n: Node, x: SSAValue, rank: int) -> SSAValue:
    """1-D data [N, C, L] as [N, C, 1, L]."""
    return n.op(relay.ExpandDimsOp, x, axis=2) if rank == 1 else x


def _from_2d(n: Node, x: SSAValue, rank: int) -> SSAValue:
    return n.op(relay.SqueezeOp, x, axis=(2,)) if rank == 1 else x


def _conv(n: Node) -> SSAValue:
    rank = _spatial_rank(n)
    weight_shape = n.shape(1)
    kernel = n.attrs.get("kernel_shape", weight_shape[2:])
    window = _window(n, n.shape(0)[2:], kernel)
    weight = _as_2d(n, n.input(1), rank)
    result = n.op(
        SPATIAL_OPS[max(rank, 2)][0],
        _as_2d(n, n.input(0), rank),
        weight,
        strides=window.strides,
        padding=window.padding,
        dilation=window.dilation,
        groups=n.attrs.get("group", 1),
    )
    if n.has_input(2):
        result = n.op(relay.BiasAddOp, result, n.input(2), axis=1)
    return _from_2d(n, result, rank)


def _conv_transpose(n: Node) -> SSAValue:
    """ConvTranspose (1-D or 2-D) as `relay.nn.conv2d_transpose`.  With
    `output_shape` (or a SAME `auto_pad`, whose output is the input times
    the stride), the padding is what makes that shape, its odd unit at the
    end for SAME_UPPER and at the start otherwise (the ONNX rule)."""
    rank = _spatial_rank(n, (1, 2))
    spatial = n.shape(0)[2:]
    kernel = [int(k) for k in n.attrs.get("kernel_shape", n.shape(1)[2:])]
    strides, dilations = _strides_and_dilations(n, rank)
    extra = [int(p) for p in n.attrs.get("output_padding", [0] * rank)]
    pads = [int(p) for p in n.attrs.get("pads", [0] * 2 * rank)]
    auto_pad = _auto_pad(n)
    shape = n.attrs.get("output_shape")
    if shape is None and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        shape = [size * stride for size, stride in zip(spatial, strides)]
    if shape is not None:
        shape = [int(d) for d in shape][-rank:]
        totals = [
            s * (i - 1) + e + (k - 1) * d + 1 - o
            for s, i, e, k, d, o in zip(
                strides, spatial, extra, kernel, dilations, shape
            )
        ]
        if any(t < 0 for t in totals):
            raise n.error(f"output_shape {shape} is larger than the input makes")
        late = auto_pad == "SAME_UPPER"
        starts = [t // 2 if late else t - t // 2 for t in totals]
        pads = [*starts, *(t - b for t, b in zip(totals, starts))]
    elif auto_pad == "VALID":
        pads = [0] * 2 * rank
    window = _relay_window(kernel, strides, dilations, pads)
    result = n.op(
        relay.Conv2DTransposeOp,
        _as_2d(n, n.input(0), rank),
        _as_2d(n, n.input(1), rank),
        strides=window.strides,
        padding=window.padding,
        dilation=window.dilation,
        output_padding=(0, *extra) if rank == 1 else tuple(extra),
        groups=n.attrs.get("group", 1),
    )
    if n.has_input(2):
        result = n.op(relay.BiasAddOp, result, n.input(2), axis=1)
    return _from_2d(n, result, rank)


def _pool(average: bool) -> Converter:
    """MaxPool / AveragePool (1-D, 2-D or 3-D); the Indices output is not
    produced."""

    def convert(n: Node) -> SSAValue:
        rank = _spatial_rank(n)
        cls = SPATIAL_OPS[max(rank, 2)][2 if average else 1]
        window = _window(n, n.shape(0)[2:], n.attrs["kernel_shape"])
        params: dict[str, Any] = {
            "pool_size": window.kernel,
            "strides": window.strides,
            "padding": window.padding,
            "dilation": window.dilation,
            "ceil_mode": bool(n.attrs.get("ceil_mode", 0)),
        }
        if average:
            params["count_include_pad"] = bool(n.attrs.get("count_include_pad", 0))
        return _from_2d(n, n.op(cls, _as_2d(n, n.input(0), rank), **params), rank)

    return convert


def _global_pool(average: bool) -> Converter:
    def convert(n: Node) -> SSAValue:
        rank = _spatial_rank(n, (1, 2))
        x = _as_2d(n, n.input(0), rank)
        if average:
            pooled = n.op(relay.GlobalAvgPool2DOp, x)
        else:
            type_ = x.type
            assert isinstance(type_, TensorType)
            pooled = n.op(relay.MaxPool2DOp, x, pool_size=tuple(type_.get_shape()[2:]))
        return _from_2d(n, pooled, rank)

    return convert


# -- normalisation ---------------------------------------------------------------


def _batch_norm(n: Node) -> SSAValue:
    """Inference form; the training outputs (running statistics) are not produced."""
    return n.op(
        relay.BatchNormOp,
        *[n.input(i) for i in range(5)],
        axis=1,
        epsilon=float(n.attrs.get("epsilon", 1e-5)),
    )


def _instance_norm(n: Node) -> SSAValue:
    """(x - mean) / sqrt(var + epsilon) * scale + B, the statistics over the
    spatial dimensions of each sample and channel."""
    rank = len(n.shape(0))
    normal = _standardized(n, n.input(0), tuple(range(2, rank)))
    return _scaled(n, normal, (n.shape(1)[0],) + (1,) * (rank - 2))


def _group_norm(n: Node) -> SSAValue:
    """InstanceNormalization over groups of `num_groups` channels: the
    statistics of each sample's group (its channels and pixels), seen as
    one row of a `[N, G, C/G · pixels]` reshape; scale and bias per group
    (opset 18) or per channel (21)."""
    shape, groups = n.shape(0), n.attrs.get("num_groups", 0)
    if groups < 1:
        raise n.error(f"num_groups must be positive, got {groups}")
    if len(shape) < 2 or any(d < 0 for d in shape[1:]) or shape[1] % groups:
        raise n.error(
            f"GroupNormalization of {n.input(0).type}: static channels and pixels, "
            f"the channels a multiple of num_groups ({groups})"
        )
    row = (-1, groups, math.prod(shape[1:]) // groups)
    rows = n.op(relay.ReshapeOp, n.input(0), newshape=row)
    normal = _standardized(n, rows, (2,))
    if n.opset < 21:
        scaled = _scaled(n, normal, (groups, 1))
        return n.op(relay.ReshapeOp, scaled, newshape=(-1, *shape[1:]))
    normal = n.op(relay.ReshapeOp, normal, newshape=(-1, *shape[1:]))
    return _scaled(n, normal, (shape[1],) + (1,) * (len(shape) - 2))


def _standardized(n: Node, x: SSAValue, axes: tuple[int, ...]) -> SSAValue:
    """(x - mean) / sqrt(var + epsilon), the statistics over `axes`."""
    mean = n.op(relay.MeanOp, x, axis=axes, keepdims=True)
    centred = n.op(relay.SubtractOp, x, mean)
    squares = n.op(relay.MultiplyOp, centred, centred)
    variance = n.op(relay.MeanOp, squares, axis=axes, keepdims=True)
    epsilon = n.scalar(n.attrs.get("epsilon", 1e-5), x)
    deviation = n.op(relay.SqrtOp, n.op(relay.AddOp, variance, epsilon))
    return n.op(relay.DivideOp, centred, deviation)


def _scaled(n: Node, x: SSAValue, shape: tuple[int, ...]) -> SSAValue:
    """`x · scale + bias`, the node's inputs 1 and 2 reshaped to `shape`."""
    scale = n.op(relay.ReshapeOp, n.input(1), newshape=shape)
    shift = n.op(relay.ReshapeOp, n.input(2), newshape=shape)
    return n.op(relay.AddOp, n.op(relay.MultiplyOp, x, scale), shift)


def _normalised_operand(
    n: Node, index: int, shape: tuple[int, ...], default: float
) -> SSAValue:
    """LayerNormalization's scale or bias as `relay.nn.layer_norm` takes it,
    of the normalised shape: a constant broadcast to it at import (absent:
    `default`), a run-time one as it is."""
    if n.has_input(index) and not n.is_constant(index):
        return n.input(index)
    if any(d < 0 for d in shape):
        raise n.error("a constant scale or bias needs static normalised axes")
    type_ = n.input(0).type
    assert isinstance(type_, TensorType)
    value = (
        n.const(index)
        if n.has_input(index)
        else np.array(default, element_dtype(type_.element_type))
    )
    try:
        value = np.broadcast_to(value, shape)
    except ValueError as e:
        raise n.error(
            f"input {index} does not broadcast to the normalised axes {shape}"
        ) from e
    name = n.proto.input[index] if n.has_input(index) else "layer_norm_default"
    return n.graph.constant(np.ascontiguousarray(value), name)


def _layer_norm(n: Node) -> SSAValue:
    """`relay.nn.layer_norm` over the axes from `axis` (default -1); the
    training outputs (Mean, InvStdDev) are not produced."""
    if any(n.proto.output[1:]):
        raise n.error("the Mean and InvStdDev outputs are not supported")
    shape = n.shape(0)
    axis = n.attrs.get("axis", -1)
    if not -len(shape) <= axis < len(shape):
        raise n.error(f"axis {axis} is out of range for rank {len(shape)}")
    normalised = shape[axis % len(shape) :]
    return n.op(
        relay.LayerNormOp,
        n.input(0),
        _normalised_operand(n, 1, normalised, 1.0),
        _normalised_operand(n, 2, normalised, 0.0),
        axis=axis,
        epsilon=float(n.attrs.get("epsilon", 1e-5)),
    )


def _lrn(n: Node) -> SSAValue:
    return n.op(
        relay.LRNOp,
        n.input(0),
        size=int(n.attrs["size"]),
        axis=1,
        alpha=float(n.attrs.get("alpha", 1e-4)),
        beta=float(n.attrs.get("beta", 0.75)),
        bias=float(n.attrs.get("bias", 1.0)),
    )


CONVERTERS: dict[str, Converter] = {
    "Softmax": _softmax_like(relay.SoftmaxOp),
    "LogSoftmax": _softmax_like(relay.LogSoftmaxOp),
    "Gemm": _gemm,
    "MatMul": _matmul,
    "Conv": _conv,
    "ConvTranspose": _conv_transpose,
    "MaxPool": _pool(average=False),
    "AveragePool": _pool(average=True),
    "GlobalAveragePool": _global_pool(average=True),
    "GlobalMaxPool": _global_pool(average=False),
    "BatchNormalization": _batch_norm,
    "LRN": _lrn,
    "InstanceNormalization": _instance_norm,
    "GroupNormalization": _group_norm,
    "Einsum": _einsum,
    "LayerNormalization": _layer_norm,
}
"""ONNX op type → converter: the nn family's rows of `importer.CONVERTERS`."""
