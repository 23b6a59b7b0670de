"""Converters of the elementwise operators and activations: to the relay
op whose `ONNX` names the operator (`op_converter`), a fold of one op over
any number of inputs (`_variadic`), or a few elementwise relay ops that
fuse into one kernel (LeakyRelu, Gelu, Sign, ...)."""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from hetero.dialects import relay
from hetero.frontends.onnx.node import ELEMENT_TYPES, Converter, Node, helper


def _operands(cls: type[relay.TensorOp]) -> Converter:
    """The op of the node's inputs, in order, as its operands."""
    arity = len(cls.get_irdl_definition().operands)
    return lambda n: n.op(cls, *(n.input(i) for i in range(arity)))


def _binary(cls: type[relay.TensorOp]) -> Converter:
    """NumPy broadcasting; before opset 7, `broadcast=1` with `axis` aligns
    the second operand's dimensions to the first's starting at `axis`."""

    def convert(n: Node) -> SSAValue:
        lhs, rhs = n.input(0), n.input(1)
        if n.opset < 7 and n.attrs.get("broadcast", 0) and "axis" in n.attrs:
            rank, other = len(n.shape(0)), n.shape(1)
            axis = n.attrs["axis"] % rank
            trailing = rank - axis - len(other)
            if trailing > 0:
                rhs = n.op(relay.ReshapeOp, rhs, newshape=other + (1,) * trailing)
        return n.op(cls, lhs, rhs)

    return convert


def _variadic(cls: type[relay.TensorOp]) -> Converter:
    """Sum, Max, Min of any number of inputs: a left fold."""

    def convert(n: Node) -> SSAValue:
        values = n.inputs()
        result = values[0]
        for value in values[1:]:
            result = n.op(cls, result, value)
        return result

    return convert


def _mean(n: Node) -> SSAValue:
    total = _variadic(relay.AddOp)(n)
    assert isinstance(total, SSAValue)
    return n.op(relay.DivideOp, total, n.scalar(len(n.inputs()), total))


def _identity(n: Node) -> SSAValue:
    """Identity, and Dropout at inference (its mask output is not produced)."""
    return n.input(0)


def _negative_part(n: Node, x: SSAValue) -> SSAValue:
    """min(x, 0)."""
    return n.op(relay.MinimumOp, x, n.scalar(0.0, x))


def _leaky_relu(n: Node) -> SSAValue:
    """relu(x) + alpha * min(x, 0): right for any alpha."""
    x = n.input(0)
    slope = n.op(
        relay.MultiplyOp, _negative_part(n, x), n.scalar(n.attrs.get("alpha", 0.01), x)
    )
    return n.op(relay.AddOp, n.op(relay.ReluOp, x), slope)


def _prelu(n: Node) -> SSAValue:
    """relu(x) + slope * min(x, 0); before opset 7 a `[C]` slope is per channel."""
    x, slope = n.input(0), n.input(1)
    shape, slope_shape = n.shape(0), n.shape(1)
    if n.opset < 7 and len(slope_shape) == 1 and len(shape) > 2 and slope_shape[0] != 1:
        slope = n.op(
            relay.ReshapeOp, slope, newshape=(slope_shape[0],) + (1,) * (len(shape) - 2)
        )
    scaled = n.op(relay.MultiplyOp, _negative_part(n, x), slope)
    return n.op(relay.AddOp, n.op(relay.ReluOp, x), scaled)


def _elu_part(n: Node, x: SSAValue, alpha: float) -> SSAValue:
    """alpha * (exp(min(x, 0)) - 1): the negative branch, never overflowing."""
    exp = n.op(relay.ExpOp, _negative_part(n, x))
    return n.op(
        relay.MultiplyOp,
        n.op(relay.SubtractOp, exp, n.scalar(1.0, x)),
        n.scalar(alpha, x),
    )


def _elu(n: Node) -> SSAValue:
    x = n.input(0)
    return n.op(
        relay.AddOp, n.op(relay.ReluOp, x), _elu_part(n, x, n.attrs.get("alpha", 1.0))
    )


def _selu(n: Node) -> SSAValue:
    x = n.input(0)
    alpha = n.attrs.get("alpha", 1.67326319217681884765625)
    gamma = n.attrs.get("gamma", 1.05070102214813232421875)
    inner = n.op(relay.AddOp, n.op(relay.ReluOp, x), _elu_part(n, x, alpha))
    return n.op(relay.MultiplyOp, inner, n.scalar(gamma, x))


def _softplus(n: Node) -> SSAValue:
    """Softplus of the node's input (`_softplus_of`)."""
    return _softplus_of(n, n.input(0))


def _softplus_of(n: Node, x: SSAValue) -> SSAValue:
    """log(1 + exp(x)) = relu(x) + log(1 + exp(-|x|)): no overflow."""
    tail = n.op(relay.ExpOp, n.op(relay.NegativeOp, n.op(relay.AbsOp, x)))
    soft = n.op(relay.LogOp, n.op(relay.AddOp, tail, n.scalar(1.0, x)))
    return n.op(relay.AddOp, n.op(relay.ReluOp, x), soft)


def _softsign(n: Node) -> SSAValue:
    x = n.input(0)
    denominator = n.op(relay.AddOp, n.op(relay.AbsOp, x), n.scalar(1.0, x))
    return n.op(relay.DivideOp, x, denominator)


def _hard_sigmoid_of(n: Node, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    """clip(alpha * x + beta, 0, 1)."""
    scaled = n.op(relay.MultiplyOp, x, n.scalar(alpha, x))
    shifted = n.op(relay.AddOp, scaled, n.scalar(beta, x))
    return n.op(relay.ClipOp, shifted, a_min=0.0, a_max=1.0)


def _hard_sigmoid(n: Node) -> SSAValue:
    alpha, beta = n.attrs.get("alpha", 0.2), n.attrs.get("beta", 0.5)
    return _hard_sigmoid_of(n, n.input(0), alpha, beta)


_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


def _gelu(n: Node) -> SSAValue:
    """x/2 * (1 + erf(x / sqrt 2)), or with `approximate="tanh"`
    x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x³))): elementwise ops that
    fuse into one kernel (with a producing GEMM's stores)."""
    x = n.input(0)
    approximate = n.attrs.get("approximate", b"none")
    approximate = (
        approximate.decode() if isinstance(approximate, bytes) else approximate
    )
    if approximate == "none":
        inner = n.op(
            relay.ErfOp, n.op(relay.MultiplyOp, x, n.scalar(1 / math.sqrt(2), x))
        )
    elif approximate == "tanh":
        cube = n.op(relay.MultiplyOp, n.op(relay.MultiplyOp, x, x), x)
        cubic = n.op(relay.MultiplyOp, cube, n.scalar(0.044715, x))
        argument = n.op(relay.AddOp, x, cubic)
        inner = n.op(
            relay.TanhOp,
            n.op(relay.MultiplyOp, argument, n.scalar(_SQRT_2_OVER_PI, x)),
        )
    else:
        raise n.error(f"approximate '{approximate}' is not supported")
    half = n.op(relay.MultiplyOp, x, n.scalar(0.5, x))
    return n.op(relay.MultiplyOp, half, n.op(relay.AddOp, inner, n.scalar(1.0, x)))


def _sign(n: Node) -> SSAValue:
    """1 above zero, -1 below, else x itself (0, -0 and NaN stay)."""
    x = n.input(0)
    zero = n.scalar(0, x)
    below = n.op(relay.WhereOp, n.op(relay.LessOp, x, zero), n.scalar(-1, x), x)
    return n.op(relay.WhereOp, n.op(relay.GreaterOp, x, zero), n.scalar(1, x), below)


def _is_nan(n: Node) -> SSAValue:
    """x ≠ x, true for NaN only (an unordered comparison): torch's export of
    scaled_dot_product_attention zeroes a fully masked row's NaNs with it."""
    x = n.input(0)
    return n.op(relay.NotEqualOp, x, x)


def _shrink(n: Node) -> SSAValue:
    """x + bias below -lambd, x - bias above lambd, 0 between."""
    x = n.input(0)
    lambd, bias = n.attrs.get("lambd", 0.5), n.attrs.get("bias", 0.0)
    low = n.op(relay.LessOp, x, n.scalar(-lambd, x))
    high = n.op(relay.GreaterOp, x, n.scalar(lambd, x))
    inside = n.op(
        relay.WhereOp,
        high,
        n.op(relay.SubtractOp, x, n.scalar(bias, x)),
        n.scalar(0, x),
    )
    return n.op(relay.WhereOp, low, n.op(relay.AddOp, x, n.scalar(bias, x)), inside)


def _reciprocal(n: Node) -> SSAValue:
    """1 / x: a divide, which fuses with its neighbours (RMSNorm's
    `1 / sqrt(mean(x²) + eps)`)."""
    x = n.input(0)
    return n.op(relay.DivideOp, n.scalar(1.0, x), x)


def _is_inf(n: Node) -> SSAValue:
    """x = ±inf, of the signs `detect_positive` and `detect_negative` ask for."""
    x = n.input(0)
    signs = [
        sign
        for sign, attr in ((np.inf, "detect_positive"), (-np.inf, "detect_negative"))
        if n.attrs.get(attr, 1)
    ]
    if not signs:  # false everywhere, NaN included
        return n.op(relay.LessOp, x, x)
    tests = [n.op(relay.EqualOp, x, n.scalar(sign, x)) for sign in signs]
    return tests[0] if len(tests) == 1 else n.op(relay.LogicalOrOp, *tests)


def _mish(n: Node) -> SSAValue:
    """x · tanh(softplus(x))."""
    x = n.input(0)
    return n.op(relay.MultiplyOp, x, n.op(relay.TanhOp, _softplus_of(n, x)))


def _celu(n: Node) -> SSAValue:
    """relu(x) + alpha · (exp(min(x / alpha, 0)) - 1)."""
    x, alpha = n.input(0), n.attrs.get("alpha", 1.0)
    scaled = n.op(relay.DivideOp, x, n.scalar(alpha, x))
    return n.op(relay.AddOp, n.op(relay.ReluOp, x), _elu_part(n, scaled, alpha))


def _thresholded_relu(n: Node) -> SSAValue:
    """x above `alpha`, else 0."""
    x = n.input(0)
    above = n.op(relay.GreaterOp, x, n.scalar(n.attrs.get("alpha", 1.0), x))
    return n.op(relay.WhereOp, above, x, n.scalar(0.0, x))


def _swish(n: Node) -> SSAValue:
    """x · sigmoid(alpha · x): `relay.silu` at alpha 1."""
    x, alpha = n.input(0), n.attrs.get("alpha", 1.0)
    if alpha == 1.0:
        return n.op(relay.SiluOp, x)
    scaled = n.op(relay.MultiplyOp, x, n.scalar(alpha, x))
    return n.op(relay.MultiplyOp, x, n.op(relay.SigmoidOp, scaled))


_SMALL_POWERS = (1, 2, 3)
"""Constant exponents `Pow` multiplies out: `pow` is a library call per
element, and GPT-2's GELU cubes."""


def _pow(n: Node) -> SSAValue:
    """relay.power of the base's element type (ONNX lets the exponent's
    differ); a constant exponent of 1, 2 or 3 as products."""
    if n.is_constant(1) and n.const(1).size == 1:
        exponent = n.const(1).reshape(-1)[0]
        if exponent in _SMALL_POWERS and len(n.shape(1)) <= len(n.shape(0)):
            x = result = n.input(0)
            for _ in range(int(exponent) - 1):
                result = n.op(relay.MultiplyOp, result, x)
            return result
    base, exponent = n.input(0), n.input(1)
    base_type, exponent_type = base.type, exponent.type
    assert isinstance(base_type, TensorType) and isinstance(exponent_type, TensorType)
    if exponent_type.element_type != base_type.element_type:
        exponent = n.op(relay.CastOp, exponent, dtype=base_type.element_type)
    return n.op(relay.PowerOp, base, exponent)


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _clip(n: Node) -> SSAValue:
    """Bounds are attributes before opset 11, optional constant inputs after."""
    if n.opset < 11:
        low, high = n.attrs.get("min", -_FLOAT32_MAX), n.attrs.get("max", _FLOAT32_MAX)
    else:
        low = float(n.const(1)) if n.has_input(1) else -_FLOAT32_MAX
        high = float(n.const(2)) if n.has_input(2) else _FLOAT32_MAX
    return n.op(relay.ClipOp, n.input(0), a_min=float(low), a_max=float(high))


def _cast(n: Node) -> SSAValue:
    """`relay.cast` to the element type `to` names (nothing when the input
    has it already)."""
    x = n.input(0)
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(n.attrs["to"]))
    if dtype not in ELEMENT_TYPES:
        raise n.error(f"a cast to {dtype} is not supported")
    type_ = x.type
    assert isinstance(type_, TensorType)
    if ELEMENT_TYPES[dtype] == type_.element_type:
        return x
    return n.op(relay.CastOp, x, dtype=ELEMENT_TYPES[dtype])


def op_converter(op_type: str) -> Converter | None:
    """The converter of ONNX `op_type` to the elementwise op whose `ONNX`
    names it, looked up in `relay.ELEMENTWISE_OPS` when asked (so an op
    defined after import converts too); None if no op names it."""
    for cls in relay.ELEMENTWISE_OPS:
        if op_type in cls.ONNX:
            binary = issubclass(cls, relay.ElementwiseBinaryOp)
            return _binary(cls) if binary else _operands(cls)
    return None


CONVERTERS: dict[str, Converter] = {
    "Identity": _identity,
    "Dropout": _identity,
    "Pow": _pow,
    "IsNaN": _is_nan,
    "IsInf": _is_inf,
    "Reciprocal": _reciprocal,
    "Mish": _mish,
    "Celu": _celu,
    "ThresholdedRelu": _thresholded_relu,
    "Swish": _swish,
    "Sum": _variadic(relay.AddOp),
    "Max": _variadic(relay.MaximumOp),
    "Min": _variadic(relay.MinimumOp),
    "Mean": _mean,
    "LeakyRelu": _leaky_relu,
    "PRelu": _prelu,
    "Elu": _elu,
    "Selu": _selu,
    "Softplus": _softplus,
    "Softsign": _softsign,
    "HardSigmoid": _hard_sigmoid,
    "Gelu": _gelu,
    "Sign": _sign,
    "Shrink": _shrink,
    "Clip": _clip,
    "Cast": _cast,
}
"""ONNX op type → converter: the elementwise family's rows of
`importer.CONVERTERS`, for the ONNX operators that are no one relay op
(those that are: `op_converter`)."""
