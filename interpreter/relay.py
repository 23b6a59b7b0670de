"""The NumPy reference interpreter of the `relay` dialect.

It gives every op of `docs/dialects/relay.md` its meaning and is the oracle
that compiled code is compared against, so it favours plain, obviously right
NumPy over speed -- but stays fast enough for real models (im2col + GEMM for
convolutions, strided window views for pooling).

* Values: a tensor is an `np.ndarray` whose dtype is its element type; a tuple
  is a Python tuple; a function value is a `Closure`.
* Devices never change values: `relay.on_device` and `relay.device_copy` are
  the identity.
* A tensor operator that declares its NumPy rule (`NUMPY`, on the op class
  in `dialects/relay/`: every elementwise op, and the moves of elements
  that NumPy does in a line) runs it; the others dispatch through `_OPS`,
  a table keyed by op name.  A block runs as a
  loop, so a chain of 10,000 ops needs no Python recursion; only nested
  regions (`relay.if`) and calls recurse.
* Every op result is converted to its declared element type and its shape is
  checked against the declared type, so a disagreement with the dialect's
  type inference is reported at the op that causes it.
"""

from __future__ import annotations

import math
from collections import ChainMap
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache, partial
from typing import Any, TypeAlias, cast

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    TensorType,
    TupleType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from hetero.context import parse_module
from hetero.dialects.relay import (
    CallOp,
    ConstantOp,
    FnOp,
    FuncOp,
    FunctionOpBase,
    GetItemOp,
    IfOp,
    NumpyRule,
    Param,
    TensorOp,
    data_block,
    dense_block,
    kernel_block,
    wide,
    winograd_tile,
)
from hetero.dialects.relay.functions import tensor_types, unflatten
from hetero.dialects.tir import PrimFuncOp
from hetero.interpreter.tir import run_prim_func
from hetero.utils.dense_resources import resource_bytes, resource_view
from hetero.utils.max_sizes import oversized
from hetero.utils.winograd import spatial_weight


class InterpreterError(Exception):
    """A program the interpreter cannot run: bad inputs, an unknown op, ..."""


Value: TypeAlias = "np.ndarray | tuple[Value, ...] | Closure"
Env: TypeAlias = "MutableMapping[SSAValue, Value]"
"""The values of the SSA names visible in a running block."""


@dataclass(frozen=True, eq=False)
class Closure:
    """A `relay.fn` value: the literal and the environment it was created in."""

    fn: FnOp
    env: Env = field(repr=False)


# ----------------------------------------------------------------------------
# Types and attributes
# ----------------------------------------------------------------------------

_FLOAT_DTYPES: dict[type[Attribute], np.dtype[Any]] = {
    Float16Type: np.dtype(np.float16),
    Float32Type: np.dtype(np.float32),
    Float64Type: np.dtype(np.float64),
}


@cache
def element_dtype(element_type: Attribute) -> np.dtype[Any]:
    """The NumPy dtype that holds values of a builtin element type."""
    if type(element_type) in _FLOAT_DTYPES:
        return _FLOAT_DTYPES[type(element_type)]
    if isinstance(element_type, IndexType):
        return np.dtype(np.int64)
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        if width == 1:
            return np.dtype(np.bool_)
        if width in (8, 16, 32, 64):
            unsigned = element_type.signedness.data == Signedness.UNSIGNED
            return np.dtype(f"{'u' if unsigned else ''}int{width}")
    raise InterpreterError(f"element type {element_type} has no NumPy dtype")


def _python(attr: Attribute) -> Any:
    """An `array<i64: ...>`, integer, flag or float attribute as a Python value."""
    match attr:
        case DenseArrayBase():
            return tuple(attr.get_values())
        case IntegerAttr() if attr.type == IntegerType(1):
            return bool(attr.value.data)
        case IntegerAttr() | FloatAttr():
            return attr.value.data
        case _:
            raise InterpreterError(f"unexpected attribute value {attr}")


_REQUIRED = object()


def _attr(op: Operation, name: str, default: Any = _REQUIRED) -> Any:
    """Attribute `name` of a tensor operator: through the dialect's `Param`
    accessor (which applies the documented default) when the op declares
    one, else the property of that documented name."""
    if isinstance(getattr(type(op), name, None), Param):
        return getattr(op, name)
    raw = op.properties.get(name, op.attributes.get(name))
    if raw is not None:
        return _python(raw)
    if default is _REQUIRED:
        raise InterpreterError(f"'{op.name}' needs the attribute '{name}'")
    return default


def _describe(value: Value) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype} array of shape {value.shape}"
    return type(value).__name__


def _is_tensor_of(value: Value, type_: TensorType[Attribute]) -> bool:
    """Same dtype and rank; each static dim equal (a `?` takes any size)."""
    if not isinstance(value, np.ndarray) or value.dtype != element_dtype(
        type_.element_type
    ):
        return False
    shape = type_.get_shape()
    return len(shape) == value.ndim and all(
        d in (DYNAMIC_INDEX, n) for d, n in zip(shape, value.shape)
    )


def _mismatch(value: Value, type_: Attribute) -> str | None:
    """Why `value` is not a value of `type_`, or None when it is."""
    match type_:
        case TensorType():
            if not _is_tensor_of(value, type_):
                return f"expected {type_}, got {_describe(value)}"
        case TupleType():
            if not isinstance(value, tuple) or len(value) != len(type_.types.data):
                return f"expected {type_}, got {_describe(value)}"
            reasons = (_mismatch(v, t) for v, t in zip(value, type_.types.data))
            return next((f"in {type_}: {r}" for r in reasons if r), None)
        case FunctionType():
            if not isinstance(value, Closure):
                return f"expected a function value {type_}, got {_describe(value)}"
    return None


def _conform(value: Value, type_: Attribute) -> Value:
    """A kernel's result as a value of the declared type: tensors take the
    declared element type (NumPy scalars become rank-0 arrays)."""
    if isinstance(type_, TensorType):
        return np.asarray(value, dtype=element_dtype(type_.element_type))
    return value


# ----------------------------------------------------------------------------
# Tensor kernels
# ----------------------------------------------------------------------------


def _lowest(dtype: np.dtype[Any]) -> Any:
    """The padding value of max pooling: below every element."""
    if dtype.kind == "f":
        return -np.inf
    return False if dtype.kind == "b" else np.iinfo(dtype).min


def _along(v: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """A 1-D per-channel vector shaped to broadcast along `axis`."""
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def _dense(op: Operation, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    if dense_block(_attr(op, "weight_layout", "NK")):
        w = unpacked_weight(w, _attr(op, "units", 0))
    return wide(x) @ wide(w).T


def _windows(
    x: np.ndarray,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilation: Sequence[int],
) -> np.ndarray:
    """[..., *spatial] -> [..., *windows, *kernel]: the receptive field of
    every output position over the last `len(kernel)` axes, as a strided
    view (no copy)."""
    rank = len(kernel)
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    view = sliding_window_view(x, span, axis=tuple(range(-rank, 0)))
    return view[
        (
            ...,
            *(slice(None, None, s) for s in strides),
            *(slice(None, None, d) for d in dilation),
        )
    ]


def _spatial_pads(padding: Sequence[int]) -> list[tuple[int, int]]:
    """Relay's padding (the starts of every spatial axis, then the ends) as
    NumPy's (start, end) pairs."""
    rank = len(padding) // 2
    return list(zip(padding[:rank], padding[rank:]))


def oihw_weight(w: np.ndarray, layout: str, channels: int) -> np.ndarray:
    """A conv2d weight in `layout` (`relay.KERNEL_LAYOUT`) as `OIHW`."""
    if tile := winograd_tile(layout):
        return spatial_weight(w, tile, channels)
    if not kernel_block(layout):
        return w
    return unpacked_weight(w, channels)


def unpacked_weight(w: np.ndarray, count: int) -> np.ndarray:
    """A weight blocked along its first axis, `[blocks, ..., b]` (`OIHW<b>o`,
    `NK<b>n`), as `[count, ...]`: what `packed_weight` undoes."""
    blocks, *rest, block = w.shape
    return np.moveaxis(w, -1, 1).reshape(blocks * block, *rest)[:count]


def packed_weight(w: np.ndarray, block: int) -> np.ndarray:
    """A weight `[O, ...]` blocked along its first axis: `[ceil(O / block),
    ..., block]`, zero past `O` (`OIHW<block>o` for a conv2d's `OIHW`,
    `NK<block>n` for a dense's `NK`)."""
    o, *rest = w.shape
    blocks = -(-o // block)
    if o % block:
        w = np.concatenate([w, np.zeros((blocks * block - o, *rest), w.dtype)])
    return np.ascontiguousarray(np.moveaxis(w.reshape(blocks, block, *rest), 1, -1))


def nchw_data(x: np.ndarray, layout: str) -> np.ndarray:
    """Data in `layout` (`relay.DATA_LAYOUT`) as `NCHW`."""
    if not data_block(layout):
        return x
    n, blocks, h, w, block = x.shape
    return x.transpose(0, 1, 4, 2, 3).reshape(n, blocks * block, h, w)


def blocked_data(x: np.ndarray, layout: str) -> np.ndarray:
    """`NCHW` data in `layout` (`relay.DATA_LAYOUT`)."""
    if not (block := data_block(layout)):
        return x
    n, c, h, w = x.shape
    return np.ascontiguousarray(
        x.reshape(n, c // block, block, h, w).transpose(0, 1, 3, 4, 2)
    )


def _conv2d(op: Operation, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    w = oihw_weight(w, _attr(op, "kernel_layout", "OIHW"), _attr(op, "channels", 0))
    x = nchw_data(x, _attr(op, "data_layout", "NCHW"))
    return blocked_data(_conv(op, x, w), _attr(op, "out_layout", "NCHW"))


def _layout_transform(op: Operation, x: np.ndarray) -> np.ndarray:
    source = nchw_data(x, _attr(op, "src_layout", "NCHW"))
    return blocked_data(source, _attr(op, "dst_layout", "NCHW"))


def _conv(op: Operation, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """[N, C, *spatial] x [O, C / groups, *kernel] as im2col (the window
    view, copied into [group, pixel, tap] rows) and one GEMM per group,
    batched: exact and BLAS-fast."""
    rank = x.ndim - 2
    groups: int = _attr(op, "groups", 1)
    n = x.shape[0]
    o, cg = w.shape[:2]
    kernel = w.shape[2:]
    pads = _spatial_pads(_attr(op, "padding", (0,) * 2 * rank))
    xp = np.pad(wide(x), [(0, 0), (0, 0), *pads])
    win = _windows(
        xp,
        kernel,
        _attr(op, "strides", (1,) * rank),
        _attr(op, "dilation", (1,) * rank),
    )
    out_spatial = win.shape[2 : 2 + rank]
    cols = win.reshape(n, groups, cg, *out_spatial, *kernel)
    # [group, n, *out, cg, *kernel]: each output position's taps in one row
    order = (1, 0, *range(3, 3 + rank), 2, *range(3 + rank, 3 + 2 * rank))
    cols = cols.transpose(order).reshape(
        groups, n * math.prod(out_spatial), cg * math.prod(kernel)
    )
    wmat = (
        wide(w).reshape(groups, o // groups, cg * math.prod(kernel)).transpose(0, 2, 1)
    )
    out = (cols @ wmat).reshape(groups, n, *out_spatial, o // groups)
    # [n, group, o/group, *out] -> [n, o, *out]
    out = out.transpose(1, 0, 2 + rank, *range(2, 2 + rank))
    return out.reshape(n, o, *out_spatial)


def _conv2d_transpose(op: Operation, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """NCHW x IOHW: each window tap scatters the whole image, `strides`
    apart, into the full output (one GEMM per group and tap), which the
    padding then crops."""
    pt, pl, pb, pr = _attr(op, "padding", (0, 0, 0, 0))
    sh, sw = _attr(op, "strides", (1, 1))
    dh, dw = _attr(op, "dilation", (1, 1))
    oph, opw = _attr(op, "output_padding", (0, 0))
    groups: int = _attr(op, "groups", 1)
    x, w = wide(x), wide(w)
    n, c, h, width = x.shape
    _, og, kh, kw = w.shape
    full = np.zeros(
        (
            n,
            og * groups,
            (h - 1) * sh + dh * (kh - 1) + 1 + oph,
            (width - 1) * sw + dw * (kw - 1) + 1 + opw,
        ),
        np.result_type(x, w),
    )
    cg = c // groups
    for g in range(groups):
        xs, ws = x[:, g * cg : (g + 1) * cg], w[g * cg : (g + 1) * cg]
        for ky in range(kh):
            for kx in range(kw):
                rows = slice(ky * dh, ky * dh + (h - 1) * sh + 1, sh)
                cols = slice(kx * dw, kx * dw + (width - 1) * sw + 1, sw)
                full[:, g * og : (g + 1) * og, rows, cols] += np.einsum(
                    "nchw,co->nohw", xs, ws[:, :, ky, kx]
                )
    return full[:, :, pt : full.shape[2] - pb, pl : full.shape[3] - pr]


def _pool_extra(size: int, pad: int, span: int, stride: int, ceil_mode: bool) -> int:
    """Rows (or columns) added after the padding so that `ceil_mode` keeps a
    last partial window (TVM's rule, as the type inference applies it:
    out = (size + pad - span + stride - 1) // stride + 1)."""
    if not ceil_mode:
        return 0
    out = (size + pad - span + stride - 1) // stride + 1
    return max(0, (out - 1) * stride + span - (size + pad))


def _pool(op: Operation, x: np.ndarray, average: bool) -> np.ndarray:
    """Max or average pooling over [N, C, *spatial].  Max pads with the
    lowest value; the average divides by the taps inside the input (and,
    with `count_include_pad`, inside the explicit padding).  Extra rows that
    `ceil_mode` adds never count."""
    kernel = _attr(op, "pool_size")
    rank = len(kernel)
    strides = _attr(op, "strides", (1,) * rank)
    dilation = _attr(op, "dilation", (1,) * rank)
    pads = _spatial_pads(_attr(op, "padding", (0,) * 2 * rank))
    ceil_mode = _attr(op, "ceil_mode", False)
    sizes = x.shape[2:]
    extras = [
        _pool_extra(size, begin + end, d * (k - 1) + 1, s, ceil_mode)
        for size, (begin, end), k, s, d in zip(sizes, pads, kernel, strides, dilation)
    ]
    padded = [(begin, end + extra) for (begin, end), extra in zip(pads, extras)]
    axes = tuple(range(-rank, 0))
    if not average:
        xp = np.pad(x, [(0, 0), (0, 0), *padded], constant_values=_lowest(x.dtype))
        return _windows(xp, kernel, strides, dilation).max(axis=axes)
    total = _windows(
        np.pad(wide(x), [(0, 0), (0, 0), *padded]), kernel, strides, dilation
    )
    counted = np.zeros(
        [b + size + e for size, (b, e) in zip(sizes, padded)], dtype=total.dtype
    )
    if _attr(op, "count_include_pad", False):
        region = tuple(slice(0, b + size + e) for size, (b, e) in zip(sizes, pads))
    else:
        region = tuple(slice(b, b + size) for size, (b, _) in zip(sizes, pads))
    counted[region] = 1
    count = _windows(counted, kernel, strides, dilation).sum(axis=axes)
    return total.sum(axis=axes) / np.maximum(count, 1)


def _global_avg_pool2d(op: Operation, x: np.ndarray) -> np.ndarray:
    layout = _attr(op, "layout", "NCHW")
    mean = wide(nchw_data(x, layout)).mean(axis=(-2, -1), keepdims=True)
    return blocked_data(mean, layout)


def _blocked_pool(op: Operation, x: np.ndarray, average: bool) -> np.ndarray:
    """`_pool` of data in the op's `layout` (`relay.DATA_LAYOUT`)."""
    layout = _attr(op, "layout", "NCHW")
    return blocked_data(_pool(op, nchw_data(x, layout), average), layout)


def _bias_add(op: Operation, x: np.ndarray, b: np.ndarray) -> np.ndarray:
    return x + _along(b, _attr(op, "axis", 1), x.ndim)


def _batch_norm(
    op: Operation,
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    mean: np.ndarray,
    var: np.ndarray,
) -> np.ndarray:
    """Inference form: (x - mean) / sqrt(var + eps) * gamma + beta."""
    axis, eps = _attr(op, "axis", 1), _attr(op, "epsilon", 1e-5)
    x = wide(x)
    scale = wide(gamma) / np.sqrt(wide(var) + x.dtype.type(eps))
    shift = wide(beta) - wide(mean) * scale
    return x * _along(scale, axis, x.ndim) + _along(shift, axis, x.ndim)


def _shifted(op: Operation, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`x - max` along `axis` (so that exp never overflows) and the sum of its
    exp.  A row holding NaN or +inf, or only -inf, is NaN (as onnxruntime's)."""
    axis = _attr(op, "axis", -1)
    x = wide(x)
    with np.errstate(invalid="ignore", over="ignore"):
        shifted = x - x.max(axis=axis, keepdims=True)
    return shifted, np.exp(shifted).sum(axis=axis, keepdims=True)


def _softmax(op: Operation, x: np.ndarray) -> np.ndarray:
    shifted, total = _shifted(op, x)
    return np.exp(shifted) / total


def _log_softmax(op: Operation, x: np.ndarray) -> np.ndarray:
    shifted, total = _shifted(op, x)
    return shifted - np.log(total)


def _layer_norm(
    op: Operation, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray
) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) * gamma + beta, the statistics of each
    row of the axes from `axis` (the population variance, as ONNX's), all
    in float64: a row's mean can be large next to its spread."""
    axis, eps = _attr(op, "axis", -1) % x.ndim, _attr(op, "epsilon", 1e-5)
    x = x.astype(np.float64)
    axes = tuple(range(axis, x.ndim))
    centred = x - x.mean(axis=axes, keepdims=True)
    variance = (centred * centred).mean(axis=axes, keepdims=True)
    return centred / np.sqrt(variance + eps) * gamma + beta.astype(np.float64)


def _squeeze(op: Operation, x: np.ndarray) -> np.ndarray:
    """Without `axis`, the dims the *type* says are 1: a `?` that happens to
    be 1 at run time stays, as the result type says."""
    axis = _attr(op, "axis", None)
    if axis is None:
        shape = cast(TensorType[Attribute], op.operands[0].type).get_shape()
        axis = tuple(i for i, d in enumerate(shape) if d == 1)
    return np.squeeze(x, axis=axis)


def _lrn(op: Operation, x: np.ndarray) -> np.ndarray:
    """x / (bias + alpha / size * window sum of x²) ** beta; the window along
    `axis` spans (size - 1) // 2 channels before and size // 2 after."""
    size, axis = _attr(op, "size", 5), _attr(op, "axis", 1)
    alpha, beta, bias = (_attr(op, n) for n in ("alpha", "beta", "bias"))
    x = wide(x)
    axis = axis % x.ndim
    before, after = (size - 1) // 2, size // 2
    pads = [(0, 0)] * x.ndim
    pads[axis] = (before, after)
    squares = np.pad(x * x, pads)
    window = sliding_window_view(squares, size, axis=axis).sum(axis=-1)
    return x / (bias + alpha / size * window) ** beta


def constant_value(op: ConstantOp) -> np.ndarray:
    """Decoded straight from the attribute's bytes (a `dense_resource`'s blob);
    a splat is broadcast."""
    return attribute_value(op.value)


def attribute_value(attr: DenseIntOrFPElementsAttr | DenseResourceAttr) -> np.ndarray:
    """`constant_value` of a `relay.constant` of `attr` (on any thread: an
    attribute never changes); a read-only array, which a blob not yet made
    gives as the view it is (`resource_view`: a weight's transpose, packed
    from the weight itself)."""
    if (
        isinstance(attr, DenseResourceAttr)
        and (view := resource_view(attr)) is not None
    ):
        return view
    type_ = cast(TensorType[Attribute], attr.type)
    element_type = type_.element_type
    dtype = element_dtype(element_type)  # first: it rejects types NumPy lacks
    data = (
        resource_bytes(attr) if isinstance(attr, DenseResourceAttr) else attr.data.data
    )
    raw = np.frombuffer(data, dtype=np.dtype(element_type.format).newbyteorder("<"))
    # i1 is stored as 0 / -1; other types as they are: no copy (read-only).
    flat = raw.astype(dtype, copy=False)
    shape = type_.get_shape()
    return np.full(shape, flat[0]) if flat.size == 1 else flat.reshape(shape)


# ----------------------------------------------------------------------------
# The machine: functions, calls, closures, regions
# ----------------------------------------------------------------------------

Handler: TypeAlias = Callable[["_Machine", Operation, list[Value], Env], Value]
"""(machine, op, operand values, env of the running block) -> result."""

_TERMINATORS = frozenset({"relay.return", "relay.yield"})


class _Machine:
    """Runs the functions of one module; holds its symbol table."""

    def __init__(self, module: ModuleOp) -> None:
        self.module = module
        self.functions = {
            op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp)
        }
        self.prim_funcs = {
            op.sym_name.data for op in module.ops if isinstance(op, PrimFuncOp)
        }

    def function(self, name: str) -> FuncOp:
        if name not in self.functions:
            raise InterpreterError(f"no relay.func @{name} in the module")
        return self.functions[name]

    def invoke(self, func: FunctionOpBase, args: Sequence[Value], env: Env) -> Value:
        """Run the one-block body of a `relay.func`/`relay.fn` on `args`."""
        env.update(zip(func.args, args))
        (result,) = self.run_block(func.body.block, env)
        return result

    def run_block(self, block: Block, env: Env) -> list[Value]:
        """The values its terminator passes on.  A loop, not a recursion, so
        the length of a block is not limited by Python's stack."""
        for op in block.ops:
            args = [env[v] for v in op.operands]
            if op.name in _TERMINATORS:
                return args
            handler = _handler(op)
            if handler is None:
                raise InterpreterError(
                    f"the interpreter does not know the op '{op.name}'"
                )
            env[op.results[0]] = _checked_result(
                op, _apply(handler, self, op, args, env)
            )
        raise InterpreterError(f"a block of '{block.parent_op()}' has no terminator")

    # -- structural ops ---------------------------------------------------------

    def call(self, op: Operation, args: list[Value], env: Env) -> Value:
        """A global call runs in a fresh environment: functions are closed.  A
        call of a `tir.prim_func` runs it in the TIR interpreter, passing it
        the result's buffers after the arguments, as compiled code does."""
        callee = cast(CallOp, op).callee.string_value()
        if callee in self.prim_funcs:
            return self.call_prim_func(callee, op.results[0].type, args)
        return self.invoke(self.function(callee), args, {})

    def call_prim_func(
        self, callee: str, result: Attribute, args: list[Value]
    ) -> Value:
        outputs = [
            np.zeros(t.get_shape(), element_dtype(t.element_type))
            for t in tensor_types(result)
            if isinstance(t, TensorType)
        ]
        inputs = [np.ascontiguousarray(a) for a in args]
        run_prim_func(self.module, callee, *inputs, *outputs)
        return unflatten(result, iter(outputs))

    def call_indirect(self, op: Operation, args: list[Value], env: Env) -> Value:
        """Each application gets its own layer over the captured environment,
        so two activations of one closure never share locals."""
        closure, *actuals = args
        if not isinstance(closure, Closure):
            raise InterpreterError(f"'{op.name}' applied to {_describe(closure)}")
        return self.invoke(closure.fn, actuals, ChainMap({}, closure.env))

    def fn(self, op: Operation, args: list[Value], env: Env) -> Value:
        """Captures the environment by reference: SSA values never change."""
        return Closure(cast(FnOp, op), env)

    def if_(self, op: Operation, args: list[Value], env: Env) -> Value:
        """Only the taken branch runs; it reads and extends the enclosing env."""
        if_op = cast(IfOp, op)
        branch = if_op.true_branch if bool(args[0]) else if_op.false_branch
        (result,) = self.run_block(branch.block, env)
        return result


def _checked_result(op: Operation, value: Value) -> Value:
    """The value in its declared type; a shape the type denies is an error
    naming the op (the interpreter and the type inference disagree)."""
    return _checked(op.name, op.results[0].type, value)


def _checked(name: str, type_: Attribute, value: Value) -> Value:
    value = _conform(value, type_)
    if (why := _mismatch(value, type_)) is not None:
        raise InterpreterError(f"'{name}' result: {why}")
    return value


def _apply(
    handler: Handler, machine: _Machine, op: Operation, args: list[Value], env: Env
) -> Value:
    """Run a handler; NumPy's complaints become errors naming the op."""
    with _complaints_named(op.name):
        return handler(machine, op, args, env)


@contextmanager
def _complaints_named(name: str) -> Iterator[None]:
    """NumPy's complaints (`ValueError`, `IndexError`) as errors naming the op `name`."""
    try:
        yield
    except (ValueError, IndexError) as e:
        raise InterpreterError(f"'{name}': {e}") from e


# ----------------------------------------------------------------------------
# The dispatch table
# ----------------------------------------------------------------------------


def _plain(kernel: Callable[..., Any]) -> Handler:
    """A kernel of the operand arrays only."""
    return lambda machine, op, args, env: kernel(*args)


def _with_op(kernel: Callable[..., Any]) -> Handler:
    """A kernel that also reads the op's attributes."""
    return lambda machine, op, args, env: kernel(op, *args)


def _numpy_rule(machine: _Machine, op: Operation, args: list[Value], env: Env) -> Value:
    """A tensor operator's own NumPy rule, given its attribute values."""
    params = {name: getattr(op, name) for name in cast(TensorOp, op).params()}
    return cast(NumpyRule, _rule(op))(*args, **params)


def _identity(machine: _Machine, op: Operation, args: list[Value], env: Env) -> Value:
    """Devices hold values; they never change them."""
    return args[0]


_PLAIN: dict[str, Callable[..., Any]] = {
    "shape_of": lambda x: np.array(x.shape, dtype=np.int64),
}
"""Ops without attributes and without their own `NUMPY`."""

_WITH_ATTRIBUTES: dict[str, Callable[..., Any]] = {
    "constant": constant_value,
    "nn.conv2d": _conv2d,
    "nn.conv2d_transpose": _conv2d_transpose,
    "nn.conv3d": _conv,
    "nn.bias_add": _bias_add,
    "nn.batch_norm": _batch_norm,
    "nn.max_pool2d": lambda op, x: _blocked_pool(op, x, average=False),
    "nn.avg_pool2d": lambda op, x: _blocked_pool(op, x, average=True),
    "nn.global_avg_pool2d": _global_avg_pool2d,
    "nn.max_pool3d": lambda op, x: _pool(op, x, average=False),
    "nn.avg_pool3d": lambda op, x: _pool(op, x, average=True),
    "nn.softmax": _softmax,
    "nn.log_softmax": _log_softmax,
    "nn.dense": _dense,
    "nn.layer_norm": _layer_norm,
    "nn.lrn": _lrn,
    "layout_transform": _layout_transform,
    "cast": lambda op, x: x.astype(element_dtype(op.results[0].type.element_type)),
    "arange_like": lambda op, x: (
        op.start + op.step * np.arange(x.shape[op.axis])
    ).astype(element_dtype(op.results[0].type.element_type)),
    "squeeze": _squeeze,
}
"""Tensor operators whose meaning depends on properties (defaults as
documented) and on more than their `NUMPY` could see (the op's types, the
interpreter's layout and widening helpers)."""

_STRUCTURAL: dict[str, Handler] = {
    "call": _Machine.call,
    "call_indirect": _Machine.call_indirect,
    "fn": _Machine.fn,
    "if": _Machine.if_,
    "tuple": lambda machine, op, args, env: tuple(args),
    "get_item": lambda machine, op, args, env: args[0][cast(GetItemOp, op).index],
    "on_device": _identity,
    "device_copy": _identity,
}
"""Ops about functions, tuples, control flow and devices."""

_OPS: dict[str, Handler] = {
    **{f"relay.{name}": _plain(kernel) for name, kernel in _PLAIN.items()},
    **{f"relay.{name}": _with_op(kernel) for name, kernel in _WITH_ATTRIBUTES.items()},
    **{f"relay.{name}": handler for name, handler in _STRUCTURAL.items()},
}


def _rule(op: Operation) -> NumpyRule | None:
    """`op`'s own NumPy rule, if it declares one (looked up when asked, so
    an op defined after import runs too)."""
    return type(op).NUMPY if isinstance(op, TensorOp) else None


def _handler(op: Operation) -> Handler | None:
    """How the interpreter runs `op`: by its own rule, else by the table."""
    return _numpy_rule if _rule(op) is not None else _OPS.get(op.name)


# ----------------------------------------------------------------------------
# Public API
# ----------------------------------------------------------------------------


def _check_inputs(func: FuncOp, args: Sequence[Value]) -> None:
    """Inputs must match the parameter types exactly (a `?` accepts any size)."""
    name = f"@{func.sym_name.data}"
    if len(args) != len(func.args):
        raise InterpreterError(
            f"{name} takes {len(func.args)} input(s), {len(args)} given"
        )
    for i, (param, arg) in enumerate(zip(func.args, args)):
        if (why := _mismatch(arg, param.type)) is not None:
            hint = f" (%{param.name_hint})" if param.name_hint else ""
            raise InterpreterError(f"parameter #{i}{hint} of {name}: {why}")
    if (why := oversized(func.max_sizes, [np.shape(a) for a in args])) is not None:
        raise InterpreterError(f"{name}: {why}")


def evaluate_function(
    module: ModuleOp, func: FuncOp | str, args: Sequence[Value]
) -> Value:
    """Run one `relay.func` of `module` (given or named) on checked `args`."""
    machine = _Machine(module)
    func_op = machine.function(func) if isinstance(func, str) else func
    _check_inputs(func_op, args)
    try:
        return machine.invoke(func_op, args, {})
    except RecursionError as e:
        raise InterpreterError("calls nest too deeply for the interpreter") from e


def evaluate_op(op: Operation, args: Sequence[np.ndarray]) -> np.ndarray:
    """The value of one tensor operator on `args` (for compile-time folding)."""
    handler = _handler(op)
    if handler is None or op.name.removeprefix("relay.") in _STRUCTURAL:
        raise InterpreterError(f"'{op.name}' is not a tensor operator")
    return np.asarray(_checked_result(op, _apply(handler, None, op, list(args), {})))  # type: ignore[arg-type]


def _array_kernel(op: Operation) -> Callable[..., Any] | None:
    """`op`'s value as a function of its operand arrays alone, if it has one:
    its own rule with its attribute values, read now."""
    if (rule := _rule(op)) is not None:
        params = {name: getattr(op, name) for name in cast(TensorOp, op).params()}
        return partial(rule, **params) if params else rule
    return _PLAIN.get(op.name.removeprefix("relay."))


def array_evaluator(
    op: Operation,
) -> Callable[[Sequence[np.ndarray]], np.ndarray] | None:
    """`evaluate_op` of `op` as a function of the operand arrays alone, when
    its value depends on nothing else (an operator with a NumPy rule: `add`,
    `multiply`, `transpose` with its axes, ...), else None.  It reads
    nothing of the op once made, so it may run on another thread while the
    op is rewritten (`fold-constant` folds a weight's scaling in the
    background, `matmul-to-dense` a weight's transpose)."""
    kernel = _array_kernel(op)
    if kernel is None or len(op.results) != 1:
        return None
    name, type_ = op.name, op.results[0].type

    def evaluate(args: Sequence[np.ndarray]) -> np.ndarray:
        with _complaints_named(name):
            value = kernel(*args)
        return np.asarray(_checked(name, type_, value))

    return evaluate


def run(module: ModuleOp, *inputs: np.ndarray, entry: str = "main") -> Value:
    """The result of `@entry` on `inputs`: an array, or a (nested) tuple."""
    return evaluate_function(module, entry, inputs)


def run_text(text: str, *inputs: np.ndarray, entry: str = "main") -> Value:
    """`run` on MLIR text, parsed and verified as `hetero-opt` does (all hetero
    dialects loaded; errors are `HeteroError`s with a location)."""
    return run(parse_module(text), *inputs, entry=entry)
