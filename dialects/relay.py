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
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from functools import cache
from io import StringIO
from types import MappingProxyType
from typing import Any, ClassVar, Generic, TypeVar, cast

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DictionaryAttr,
    FlatSymbolRefAttrConstr,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
    TupleType,
    UnitAttr,
    i1,
    i64,
)
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Dialect,
    Operation,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    VarOperandDef,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    CallableOpInterface,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    ReturnLike,
    SymbolOpInterface,
    SymbolTable,
    SymbolUserOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.target import VirtualDeviceAttr

DYNAMIC: int = DYNAMIC_INDEX
"""A dynamic dimension (`?`) in a shape, as xDSL stores it."""

Shape = tuple[int, ...]
Value = SSAValue | Operation
"""What the Python constructors accept as an operand."""


# ----------------------------------------------------------------------------
# Shape inference (pure functions on shapes, shared by the tensor operators)
# ----------------------------------------------------------------------------


def format_shape(shape: Sequence[int]) -> str:
    """`[2, ?, 3]`: how shapes appear in messages."""
    return "[" + ", ".join("?" if d == DYNAMIC else str(d) for d in shape) + "]"


def attr_text(attr: Attribute) -> str:
    """`attr` in MLIR syntax, for messages (some attributes' `str` is a summary)."""
    text = StringIO()
    Printer(stream=text).print_attribute(attr)
    return text.getvalue()


def merge_dims(a: int, b: int) -> int | None:
    """The size two dimensions that must be equal denote, or None if they differ.

    A `?` only says the size is unknown before run time, so it agrees with any
    size, and the static size, when there is one, is the more precise answer.
    """
    if a == DYNAMIC:
        return b
    if b == DYNAMIC or a == b:
        return a
    return None


def product(dims: Sequence[int]) -> int:
    """The number of elements of `dims`; `?` if any dimension is dynamic."""
    return DYNAMIC if DYNAMIC in dims else math.prod(dims)


def broadcast_shapes(lhs: Sequence[int], rhs: Sequence[int]) -> Shape:
    """NumPy broadcasting of two shapes, extended to dynamic dimensions.

    A `?` against 1 stays `?`; against n > 1 it gives n, because the program
    is only valid if the `?` is n or 1 at run time.
    """
    rank = max(len(lhs), len(rhs))
    a = (1,) * (rank - len(lhs)) + tuple(lhs)
    b = (1,) * (rank - len(rhs)) + tuple(rhs)
    out: list[int] = []
    for x, y in zip(a, b):
        dim = y if x == 1 else x if y == 1 else merge_dims(x, y)
        if dim is None:
            raise VerifyException(
                f"cannot broadcast shapes {format_shape(lhs)} and {format_shape(rhs)}"
            )
        out.append(dim)
    return tuple(out)


def normalize_axis(axis: int, extent: int, what: str = "axis") -> int:
    """`axis` as an index in [0, extent); negative axes count from the end (NumPy)."""
    if not -extent <= axis < extent:
        raise VerifyException(
            f"{what} {axis} is out of range: expected {-extent} <= {what} < {extent}"
        )
    return axis % extent


def require_rank(shape: Sequence[int], rank: int, what: str) -> None:
    """Operators with a fixed layout (NCHW, [M, K]) need exactly that rank."""
    if len(shape) != rank:
        raise VerifyException(
            f"{what} must have rank {rank}, got shape {format_shape(shape)}"
        )


def window_output_dim(
    size: int,
    window: int,
    stride: int,
    dilation: int,
    padding: int,
    ceil_mode: bool = False,
) -> int:
    """Number of positions of a sliding window (convolution or pooling) on one axis.

    `padding` is the total of both sides.  This is TVM's formula, so that
    shapes agree with the reference semantics; ceil mode rounds the last
    partial window up instead of dropping it.
    """
    if DYNAMIC in (size, window):
        return DYNAMIC
    span = dilation * (window - 1) + 1
    if size + padding < span:
        raise VerifyException(
            f"window of extent {span} does not fit in the padded input of size {size + padding}"
        )
    rounding = stride - 1 if ceil_mode else 0
    return (size + padding - span + rounding) // stride + 1


def conv2d_shape(
    data: Shape,
    weight: Shape,
    strides: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> Shape:
    """NCHW data and OIHW weight (I = C / groups) to the NCHW output shape."""
    require_rank(data, 4, "conv2d data (NCHW)")
    require_rank(weight, 4, "conv2d weight (OIHW)")
    return conv_shape(data, weight, strides, padding, dilation, groups)


def conv_shape(
    data: Shape,
    weight: Shape,
    strides: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> Shape:
    """`[N, C, *spatial]` data and `[O, C / groups, *kernel]` weight to the
    `[N, O, *windows]` output, for any number of spatial dimensions;
    `padding` is the starts of every spatial dimension, then their ends."""
    n, c = data[:2]
    o, i = weight[:2]
    if c != DYNAMIC and c % groups:
        raise VerifyException(
            f"input channels ({c}) are not divisible by groups ({groups})"
        )
    if o != DYNAMIC and o % groups:
        raise VerifyException(
            f"output channels ({o}) are not divisible by groups ({groups})"
        )
    if DYNAMIC not in (c, i) and i * groups != c:
        raise VerifyException(
            f"weight expects {i * groups} input channels ({i} x groups {groups}), "
            f"but the data has {c}"
        )
    return (n, o, *window_dims(data[2:], weight[2:], strides, padding, dilation))


def window_dims(
    sizes: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool = False,
) -> tuple[int, ...]:
    """`window_output_dim` of each spatial dimension; `padding` holds the
    starts of all of them, then their ends."""
    rank = len(sizes)
    return tuple(
        window_output_dim(
            sizes[d],
            kernel[d],
            strides[d],
            dilation[d],
            padding[d] + padding[rank + d],
            ceil_mode,
        )
        for d in range(rank)
    )


def logical_weight_shape(weight: Shape, layout: str, channels: int) -> Shape:
    """The `OIHW` shape of a conv2d weight of shape `weight` in `layout`
    (`KERNEL_LAYOUT`) for `channels` output channels (0: the weight's own)."""
    block = kernel_block(layout)
    if not block:
        require_rank(weight, 4, "conv2d weight (OIHW)")
        if channels and weight[0] not in (channels, DYNAMIC):
            raise VerifyException(
                f"'channels' is {channels} but the OIHW weight has {weight[0]} outputs"
            )
        return weight
    tile = winograd_tile(layout)
    require_rank(weight, 4 if tile else 5, f"conv2d weight ({layout})")
    if not channels:
        raise VerifyException(f"kernel_layout \"{layout}\" needs 'channels'")
    blocks = -(-channels // block)
    if tile:
        positions, outer, i, b = weight
        form, logical = (
            f"[{(tile + 2) ** 2}, {blocks}, I, {block}]",
            (channels, i, 3, 3),
        )
        mismatch = positions != (tile + 2) ** 2
    else:
        outer, i, kh, kw, b = weight
        form, logical = f"[{blocks}, I, KH, KW, {block}]", (channels, i, kh, kw)
        mismatch = False
    if mismatch or b != block or outer not in (blocks, DYNAMIC):
        raise VerifyException(
            f"a weight in layout {layout} for {channels} output channels has "
            f"shape {form}, got {list(weight)}"
        )
    return logical


def packed_weight_shape(weight: Shape, layout: str) -> Shape:
    """The shape of an `OIHW` conv2d weight of shape `weight` packed in
    `layout` (`KERNEL_LAYOUT`): what `logical_weight_shape` undoes."""
    if not (block := kernel_block(layout)):
        return weight
    o, i, kh, kw = weight
    blocks = -(-o // block)
    if tile := winograd_tile(layout):
        return ((tile + 2) ** 2, blocks, i, block)
    return (blocks, i, kh, kw, block)


def logical_dense_weight_shape(weight: Shape, layout: str, units: int) -> Shape:
    """The `[N, K]` shape of a dense weight of shape `weight` in `layout`
    (`DENSE_WEIGHT_LAYOUT`) for `units` outputs (0: the weight's own)."""
    if not (block := dense_block(layout)):
        require_rank(weight, 2, "dense weight [N, K]")
        if units and weight[0] not in (units, DYNAMIC):
            raise VerifyException(
                f"'units' is {units} but the weight has {weight[0]} rows"
            )
        return weight
    require_rank(weight, 3, f"dense weight ({layout})")
    if not units:
        raise VerifyException(f"weight_layout \"{layout}\" needs 'units'")
    blocks, k, b = weight
    if b != block or blocks not in (-(-units // block), DYNAMIC):
        raise VerifyException(
            f"a weight in layout {layout} for {units} units has shape "
            f"[{-(-units // block)}, K, {block}], got {list(weight)}"
        )
    return (units, k)


def nchw_shape(shape: Shape, layout: str, what: str) -> Shape:
    """The `NCHW` shape of a tensor of shape `shape` in `layout`
    (`DATA_LAYOUT`)."""
    block = data_block(layout)
    if not block:
        require_rank(shape, 4, f"{what} (NCHW)")
        return shape
    require_rank(shape, 5, f"{what} ({layout})")
    n, blocks, h, w, b = shape
    if b != block:
        raise VerifyException(
            f"{what} in layout {layout} is [N, C / {block}, H, W, {block}], "
            f"got {list(shape)}"
        )
    return (n, DYNAMIC if blocks == DYNAMIC else blocks * block, h, w)


def blocked_shape(shape: Shape, layout: str, what: str) -> Shape:
    """An `NCHW` shape in `layout` (`DATA_LAYOUT`); the channels must fill
    whole blocks."""
    block = data_block(layout)
    if not block:
        return shape
    n, c, h, w = shape
    if c != DYNAMIC and c % block:
        raise VerifyException(
            f"{what} has {c} channels, not a multiple of the block of {layout}"
        )
    return (n, DYNAMIC if c == DYNAMIC else c // block, h, w, block)


def pool_shape(
    data: Shape,
    pool_size: Sequence[int],
    strides: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool,
) -> Shape:
    """`[N, C, *spatial]` data to its shape after pooling (`window_dims`)."""
    dims = window_dims(data[2:], pool_size, strides, padding, dilation, ceil_mode)
    return (*data[:2], *dims)


def dense_shape(data: Shape, weight: Shape) -> Shape:
    """`[M, K] x [N, K]ᵀ -> [M, N]` (the weight is stored transposed, as in TVM)."""
    require_rank(data, 2, "dense data [M, K]")
    require_rank(weight, 2, "dense weight [N, K]")
    if merge_dims(data[1], weight[1]) is None:
        raise VerifyException(
            f"reduction dimension mismatch: data {format_shape(data)} has K = {data[1]}, "
            f"weight {format_shape(weight)} has K = {weight[1]}"
        )
    return (data[0], weight[0])


def matmul_shape(a: Shape, b: Shape) -> Shape:
    """`[..., M, K] x [..., K, N] -> [..., M, N]`, the batch dimensions broadcast."""
    for shape, what in ((a, "first"), (b, "second")):
        if len(shape) < 2:
            raise VerifyException(
                f"matmul's {what} operand must have rank >= 2, got shape {format_shape(shape)}"
            )
    if merge_dims(a[-1], b[-2]) is None:
        raise VerifyException(
            f"reduction dimension mismatch: {format_shape(a)} has K = {a[-1]}, "
            f"{format_shape(b)} has K = {b[-2]}"
        )
    return broadcast_shapes(a[:-2], b[:-2]) + (a[-2], b[-1])


def check_channel_vector(data: Shape, vector: Shape, axis: int, what: str) -> None:
    """Per-channel operands (bias, batch-norm statistics) are `[C]`, C = data[axis]."""
    require_rank(vector, 1, what)
    channels = data[normalize_axis(axis, len(data))]
    if merge_dims(vector[0], channels) is None:
        raise VerifyException(
            f"{what} has {vector[0]} elements, but the data has {channels} channels "
            f"on axis {axis}"
        )


def reshape_shape(data: Shape, newshape: Sequence[int]) -> Shape:
    """The shape `newshape` denotes: `0` copies the input dimension, one `-1` is inferred."""
    out: list[int] = []
    inferred: int | None = None
    for index, dim in enumerate(newshape):
        if dim == 0:
            if index >= len(data):
                raise VerifyException(
                    f"newshape[{index}] = 0 copies input dimension {index}, "
                    f"but the input has rank {len(data)}"
                )
            dim = data[index]
        elif dim == -1:
            if inferred is not None:
                raise VerifyException("newshape may contain at most one -1")
            inferred = index
        elif dim < -1:
            raise VerifyException(
                f"invalid newshape value {dim}: expected a size, 0 or -1"
            )
        out.append(dim)
    total = product(data)
    known = product([d for i, d in enumerate(out) if i != inferred])
    if inferred is not None:
        out[inferred] = _inferred_dim(total, known, newshape)
    elif DYNAMIC not in (total, known) and total != known:
        raise VerifyException(
            f"cannot reshape {format_shape(data)} ({total} elements) into "
            f"{format_shape(out)} ({known} elements)"
        )
    return tuple(out)


def _inferred_dim(total: int, known: int, newshape: Sequence[int]) -> int:
    """The `-1` of a reshape: what the other dimensions leave of the elements."""
    if DYNAMIC in (total, known):
        return DYNAMIC
    if known == 0 or total % known:
        raise VerifyException(
            f"cannot reshape {total} elements into newshape {list(newshape)}"
        )
    return total // known


def conv2d_transpose_shape(
    data: Shape,
    weight: Shape,
    strides: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    output_padding: Sequence[int],
    groups: int,
) -> Shape:
    """NCHW data and an IOHW weight (`[C, O / groups, KH, KW]`, ONNX's and
    PyTorch's layout) to the NCHW output: `(H - 1) * sh - pt - pb + dh *
    (KH - 1) + oph + 1` rows (the gradient of the conv2d that maps the
    output back to the data's shape)."""
    require_rank(data, 4, "conv2d_transpose data (NCHW)")
    require_rank(weight, 4, "conv2d_transpose weight (IOHW)")
    n, c, h, w = data
    i, o, kh, kw = weight
    if c != DYNAMIC and c % groups:
        raise VerifyException(
            f"input channels ({c}) are not divisible by groups ({groups})"
        )
    if DYNAMIC not in (c, i) and i != c:
        raise VerifyException(
            f"weight expects {i} input channels, but the data has {c}"
        )
    for extra, stride, dil in zip(output_padding, strides, dilation):
        if extra >= max(stride, dil):
            raise VerifyException(
                f"output_padding ({extra}) must be smaller than the stride or "
                f"the dilation ({max(stride, dil)})"
            )
    top, left, bottom, right = padding
    sizes = []
    for size, k, stride, dil, pad, extra in (
        (h, kh, strides[0], dilation[0], top + bottom, output_padding[0]),
        (w, kw, strides[1], dilation[1], left + right, output_padding[1]),
    ):
        if DYNAMIC in (size, k):
            sizes.append(DYNAMIC)
            continue
        out = (size - 1) * stride - pad + dil * (k - 1) + extra + 1
        if out < 1:
            raise VerifyException(
                f"padding ({pad}) leaves no output of an input of size {size}"
            )
        sizes.append(out)
    return (n, DYNAMIC if o == DYNAMIC else o * groups, sizes[0], sizes[1])


def take_shape(data: Shape, indices: Shape, axis: int) -> Shape:
    """`data` with dimension `axis` replaced by the dimensions of `indices`
    (none for a scalar index: the axis is dropped)."""
    axis = normalize_axis(axis, len(data))
    return (*data[:axis], *indices, *data[axis + 1 :])


def transpose_shape(data: Shape, axes: Sequence[int] | None) -> Shape:
    """The permuted shape; no `axes` reverses the dimensions."""
    rank = len(data)
    if axes is None:
        return tuple(reversed(data))
    if len(axes) != rank:
        raise VerifyException(f"axes must list all {rank} dimensions, got {list(axes)}")
    perm = [normalize_axis(a, rank) for a in axes]
    if sorted(perm) != list(range(rank)):
        raise VerifyException(
            f"axes {list(axes)} is not a permutation of the {rank} dimensions"
        )
    return tuple(data[a] for a in perm)


def flatten_shape(data: Shape, axis: int) -> Shape:
    """`[prod(d[:axis]), prod(d[axis:])]`; `axis` may also be the rank itself."""
    rank = len(data)
    if not -rank <= axis <= rank:
        raise VerifyException(
            f"axis {axis} is out of range: expected {-rank} <= axis <= {rank}"
        )
    axis = axis + rank if axis < 0 else axis
    return (product(data[:axis]), product(data[axis:]))


def concatenate_shape(shapes: Sequence[Shape], axis: int) -> Shape:
    """Shapes equal except on `axis`, where the sizes add up."""
    if not shapes:
        raise VerifyException("concatenate needs at least one operand")
    rank = len(shapes[0])
    axis = normalize_axis(axis, rank)
    out = list(shapes[0])
    for number, shape in enumerate(shapes[1:], start=1):
        if len(shape) != rank:
            raise VerifyException(
                f"operand {number} has rank {len(shape)}, but operand 0 has rank {rank}"
            )
        for dim, size in enumerate(shape):
            if dim == axis:
                merged = DYNAMIC if DYNAMIC in (out[dim], size) else out[dim] + size
            else:
                merged = merge_dims(out[dim], size)
            if merged is None:
                raise VerifyException(
                    f"operand {number} has size {size} in dimension {dim}, expected {out[dim]}"
                )
            out[dim] = merged
    return tuple(out)


def squeeze_shape(data: Shape, axes: Sequence[int] | None) -> Shape:
    """Drop the given size-1 dimensions; no `axes` drops every static size-1 dimension."""
    if axes is None:
        return tuple(d for d in data if d != 1)
    dropped = {normalize_axis(a, len(data)) for a in axes}
    for a in sorted(dropped):
        if data[a] not in (1, DYNAMIC):
            raise VerifyException(f"cannot squeeze dimension {a} of size {data[a]}")
    return tuple(d for i, d in enumerate(data) if i not in dropped)


def expand_dims_shape(data: Shape, axis: int, num_newaxis: int) -> Shape:
    """Insert `num_newaxis` size-1 dimensions at `axis` (which may be the rank)."""
    at = normalize_axis(axis, len(data) + 1)
    return data[:at] + (1,) * num_newaxis + data[at:]


def pad_shape(data: Shape, pad_width: Sequence[int], pad_mode: str) -> Shape:
    """Each dimension grows by its (before, after) pair of `pad_width`.

    `reflect` mirrors the data without repeating the edge, so a pad must stay
    below the dimension's size (NumPy's and TVM's rule)."""
    if len(pad_width) != 2 * len(data):
        raise VerifyException(
            f"'pad_width' must have 2 values per dimension ({2 * len(data)}), "
            f"got {len(pad_width)}"
        )
    out: list[int] = []
    for dim, before, after in zip(data, pad_width[::2], pad_width[1::2]):
        if pad_mode == "reflect" and dim != DYNAMIC and max(before, after) >= dim:
            raise VerifyException(
                f"reflect padding ({before}, {after}) must be smaller than the "
                f"dimension ({dim})"
            )
        out.append(DYNAMIC if dim == DYNAMIC else dim + before + after)
    return tuple(out)


def strided_slice_shape(
    data: Shape, begin: Sequence[int], end: Sequence[int], strides: Sequence[int]
) -> Shape:
    """`data[b0:e0:s0, b1:e1:s1, ...]` with NumPy's clamping of `end` (begin
    and end are non-negative; a `?` dimension gives `?`)."""
    for name, values in (("begin", begin), ("end", end), ("strides", strides)):
        if len(values) != len(data):
            raise VerifyException(
                f"'{name}' must have one value per dimension ({len(data)}), "
                f"got {len(values)}"
            )
    out: list[int] = []
    for dim, b, e, s in zip(data, begin, end, strides):
        if dim == DYNAMIC:
            out.append(DYNAMIC)
        else:
            out.append(len(range(min(b, dim), min(e, dim), s)))
    return tuple(out)


def reduce_shape(data: Shape, axes: Sequence[int] | None, keepdims: bool) -> Shape:
    """The shape after reducing `axes` (None: all), kept as size 1 or dropped."""
    reduced = (
        set(range(len(data)))
        if axes is None
        else {normalize_axis(a, len(data)) for a in axes}
    )
    if axes is not None and len(reduced) != len(axes):
        raise VerifyException(f"axis {list(axes)} names a dimension twice")
    if keepdims:
        return tuple(1 if i in reduced else d for i, d in enumerate(data))
    return tuple(d for i, d in enumerate(data) if i not in reduced)


# ----------------------------------------------------------------------------
# Params: op attributes as Python values
# ----------------------------------------------------------------------------

_T = TypeVar("_T")
_REQUIRED: Any = object()
_NO_ATTRIBUTES: Mapping[str, Attribute] = MappingProxyType({})


class Param(property, Generic[_T]):
    """An op attribute seen from Python: `op.strides -> (1, 1)`.

    A `Param` in the body of a `ValueOp` subclass declares the IRDL property
    of the same name (see `ValueOp.__init_subclass__`) and is the accessor
    that converts it to a Python value, or gives the default when it is
    absent.  It is a `property` so that IRDL accepts it in an op class.
    `read` does the same on a bare attribute mapping: type inference runs
    before the op exists.  A `Param` without a default is required.
    """

    def __init__(self, default: _T = _REQUIRED) -> None:
        super().__init__(self._read_op)
        self.name = ""
        self.default = default

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    def _read_op(self, op: Operation) -> _T:
        return self.read(op.properties)

    def read(self, attributes: Mapping[str, Attribute]) -> _T:
        """The Python value of this attribute in `attributes`; raises if it is invalid."""
        attr = attributes.get(self.name)
        if attr is not None:
            return self.from_attr(attr)
        if self.required:
            raise VerifyException(f"missing required attribute '{self.name}'")
        return self.default

    def from_attr(self, attr: Attribute) -> _T:
        raise NotImplementedError

    def to_attr(self, value: _T) -> Attribute:
        raise NotImplementedError

    def _wrong_kind(self, expected: str, attr: Attribute) -> VerifyException:
        return VerifyException(
            f"'{self.name}' must be {expected}, got {attr_text(attr)}"
        )


def _check_minimum(name: str, values: Sequence[int], minimum: int | None) -> None:
    if minimum is not None and any(v < minimum for v in values):
        shown = values[0] if len(values) == 1 else list(values)
        raise VerifyException(f"'{name}' must be >= {minimum}, got {shown}")


class IntParam(Param[int]):
    """An integer, stored as an `i64` `IntegerAttr` (`axis = 1`)."""

    def __init__(self, default: int = _REQUIRED, *, minimum: int | None = None) -> None:
        super().__init__(default)
        self.minimum = minimum

    def from_attr(self, attr: Attribute) -> int:
        if not isinstance(attr, IntegerAttr) or attr.type == i1:
            raise self._wrong_kind("an integer", attr)
        value = cast(int, attr.value.data)
        _check_minimum(self.name, [value], self.minimum)
        return value

    def to_attr(self, value: int) -> Attribute:
        return IntegerAttr(value, i64)


def _ints_from_attr(
    name: str, attr: Attribute, length: int | None, minimum: int | None
) -> tuple[int, ...]:
    """The values of an `array<i64: ...>` attribute, checked."""
    if not isinstance(attr, DenseArrayBase) or attr.elt_type != i64:
        raise VerifyException(
            f"'{name}' must be an array<i64: ...>, got {attr_text(attr)}"
        )
    values = cast(tuple[int, ...], attr.get_values())
    if length is not None and len(values) != length:
        raise VerifyException(f"'{name}' must have {length} values, got {len(values)}")
    _check_minimum(name, values, minimum)
    return values


class IntsParam(Param[tuple[int, ...]]):
    """A list of integers, stored as `array<i64: ...>`, with an optional fixed length."""

    def __init__(
        self,
        default: tuple[int, ...] = _REQUIRED,
        *,
        length: int | None = None,
        minimum: int | None = None,
    ) -> None:
        super().__init__(default)
        self.length = length
        self.minimum = minimum

    def from_attr(self, attr: Attribute) -> tuple[int, ...]:
        return _ints_from_attr(self.name, attr, self.length, self.minimum)

    def to_attr(self, value: tuple[int, ...]) -> Attribute:
        return DenseArrayBase.from_list(i64, list(value))


class OptionalIntsParam(Param[tuple[int, ...] | None]):
    """A list of integers whose absence means something no list says (e.g. "all")."""

    def __init__(self) -> None:
        super().__init__(None)

    def from_attr(self, attr: Attribute) -> tuple[int, ...]:
        return _ints_from_attr(self.name, attr, None, None)

    def to_attr(self, value: tuple[int, ...] | None) -> Attribute:
        assert value is not None, "absent values are not stored"
        return DenseArrayBase.from_list(i64, list(value))


class FloatParam(Param[float]):
    """A float, stored as a `FloatAttr` (`f64` when built from Python)."""

    def from_attr(self, attr: Attribute) -> float:
        if not isinstance(attr, FloatAttr):
            raise self._wrong_kind("a float", attr)
        return float(attr.value.data)

    def to_attr(self, value: float) -> Attribute:
        return FloatAttr(value, 64)


class BoolParam(Param[bool]):
    """A flag, stored as `true` / `false` (an `i1` `IntegerAttr`)."""

    def from_attr(self, attr: Attribute) -> bool:
        if not isinstance(attr, IntegerAttr) or attr.type != i1:
            raise self._wrong_kind("true or false", attr)
        return bool(attr.value.data)

    def to_attr(self, value: bool) -> Attribute:
        return IntegerAttr.from_bool(value)


KERNEL_LAYOUT = re.compile(
    r"OIHW(?:([1-9][0-9]*)o)?|winograd(?P<tile>[24])_OI(?P<wblock>[1-9][0-9]*)o"
)
"""conv2d weight layouts: `OIHW`; `OIHW<b>o`: `[ceil(O / b), I, KH, KW, b]`,
element `[o // b, i, ky, kx, o % b]` holding `W[o, i, ky, kx]` (zero past
`O`); `winograd<m>_OI<b>o`: a 3x3 weight in the Winograd domain of F(m x m,
3 x 3), m = 2 or 4 (`hetero.utils.winograd`): `[(m + 2)^2, ceil(O / b), I,
b]`, element `[u * (m + 2) + v, o // b, i, o % b]` holding `(G W[o, i]
G^T)[u, v]` (zero past `O`).  Only such values mean a weight: the compiled
code multiplies by them as they are, the interpreter reads `W` back with a
left inverse of `G` (values outside the transform's range differ there)."""

DATA_LAYOUT = re.compile(r"NCHW(?:([1-9][0-9]*)c)?")
"""conv2d data and output layouts: `NCHW`, or `NCHW<b>c` (TVM's `NCHWc`):
`[N, C / b, H, W, b]`, element `[n, c // b, y, x, c % b]` holding `X[n, c,
y, x]`; the channels fill whole blocks."""


DENSE_WEIGHT_LAYOUT = re.compile(r"NK(?:([1-9][0-9]*)n)?")
"""dense weight layouts: `NK` (`[N, K]`), or `NK<b>n`: `[ceil(N / b), K,
b]`, element `[n // b, k, n % b]` holding `W[n, k]` (zero past `N`), panels
of `b` outputs contiguous per `k` (what a CPU GEMM schedule packs `b` into)."""


LAYOUT_FORMS: dict[re.Pattern[str], str] = {
    KERNEL_LAYOUT: '"OIHW", "OIHW<b>o" or "winograd<m>_OI<b>o" (b >= 1, m = 2 or 4)',
    DATA_LAYOUT: '"NCHW" or "NCHW<b>c" (b >= 1)',
    DENSE_WEIGHT_LAYOUT: '"NK" or "NK<b>n" (b >= 1)',
}
"""What a diagnostic says each layout pattern accepts."""


def _number(pattern: re.Pattern[str], layout: str, *groups: int | str) -> int:
    """The first of `groups` of `layout` (which `pattern` matches) that
    matched, as a number; 0 when none did."""
    match = pattern.fullmatch(layout)
    assert match is not None, layout
    return int(next((g for g in map(match.group, groups) if g), 0))


def kernel_block(layout: str) -> int:
    """The output-channel block `b` of a conv2d weight layout (0: `OIHW`)."""
    return _number(KERNEL_LAYOUT, layout, 1, "wblock")


def winograd_tile(layout: str) -> int:
    """The output tile `m` of a `winograd<m>_OI<b>o` weight layout (0: another)."""
    return _number(KERNEL_LAYOUT, layout, "tile")


def data_block(layout: str) -> int:
    """The channel block `b` of a data layout (0: `NCHW`)."""
    return _number(DATA_LAYOUT, layout, 1)


def dense_block(layout: str) -> int:
    """The output block `b` of a dense weight layout (0: `NK`)."""
    return _number(DENSE_WEIGHT_LAYOUT, layout, 1)


class LayoutParam(Param[str]):
    """A layout (`KERNEL_LAYOUT` or `DATA_LAYOUT`: `pattern`), stored as a string."""

    def __init__(self, pattern: re.Pattern[str], default: str = _REQUIRED) -> None:
        super().__init__(default)
        self.pattern = pattern

    def from_attr(self, attr: Attribute) -> str:
        if not isinstance(attr, StringAttr) or not self.pattern.fullmatch(attr.data):
            raise self._wrong_kind(LAYOUT_FORMS[self.pattern], attr)
        return attr.data

    def to_attr(self, value: str) -> Attribute:
        return StringAttr(value)


class ElementTypeParam(Param[Attribute]):
    """A tensor element type: a float, or an integer (`i1` to `i64`,
    signless or unsigned), stored as the type itself (`dtype = f32`)."""

    def from_attr(self, attr: Attribute) -> Attribute:
        if not isinstance(attr, AnyFloat | IntegerType):
            raise self._wrong_kind("a float or integer type", attr)
        return attr

    def to_attr(self, value: Attribute) -> Attribute:
        return value


class StrParam(Param[str]):
    """One of a fixed set of words, stored as a string (`pad_mode = "edge"`)."""

    def __init__(self, default: str = _REQUIRED, *, choices: Sequence[str]) -> None:
        super().__init__(default)
        self.choices = tuple(choices)

    def from_attr(self, attr: Attribute) -> str:
        if not isinstance(attr, StringAttr) or attr.data not in self.choices:
            raise self._wrong_kind(
                "one of " + ", ".join(f'"{c}"' for c in self.choices), attr
            )
        return attr.data

    def to_attr(self, value: str) -> Attribute:
        return StringAttr(value)


# ----------------------------------------------------------------------------
# Syntax helpers
# ----------------------------------------------------------------------------


def parse_attr_dict(
    parser: Parser, op_type: type[IRDLOperation], reserved: Sequence[str] = ()
) -> tuple[dict[str, Attribute], dict[str, Attribute]]:
    """An optional `{...}` split into (properties, discardable attributes).

    The custom syntax prints properties such as `vdevice` inside the
    attribute dictionary; this puts them back where they belong.
    """
    pos = parser.pos
    entries = parser.parse_optional_attr_dict()
    if clash := [name for name in reserved if name in entries]:
        parser.raise_error(
            f"'{clash[0]}' is part of the op's syntax and cannot be given in its "
            "attribute dictionary",
            pos,
            parser.pos,
        )
    names = op_type.get_irdl_definition().properties.keys()
    properties = {k: v for k, v in entries.items() if k in names}
    attributes = {k: v for k, v in entries.items() if k not in names}
    return properties, attributes


def print_attr_dict(
    printer: Printer, op: Operation, reserved: Sequence[str] = ()
) -> None:
    """Properties (except those printed elsewhere) then attributes, as one `{...}`."""
    entries = {k: v for k, v in op.properties.items() if k not in reserved}
    printer.print_op_attributes(entries | op.attributes)


def _parse_typed_operands(
    parser: Parser,
    operands: Sequence[UnresolvedOperand],
    signature: FunctionType,
    pos: int,
) -> tuple[list[SSAValue], Attribute]:
    """Resolve call-like operands against `(T1, T2) -> R` (parsed at `pos`); returns them and R."""
    if len(signature.outputs.data) != 1:
        parser.raise_error(
            f"expected exactly one result type, got {signature}", pos, parser.pos
        )
    values = parser.resolve_operands(operands, signature.inputs.data, pos)
    return list(values), signature.outputs.data[0]


def _parse_function_type(parser: Parser) -> tuple[FunctionType, int]:
    """A function type and where it starts, for messages about it."""
    pos = parser.pos
    parsed = parser.parse_type()
    if not isinstance(parsed, FunctionType):
        parser.raise_error(f"expected a function type, got {parsed}", pos, parser.pos)
    return parsed, pos


# ----------------------------------------------------------------------------
# Base of value-producing ops
# ----------------------------------------------------------------------------


class ValueOp(IRDLOperation):
    """An op producing one value: the `vdevice` property and `Param` declarations."""

    vdevice = opt_prop_def(VirtualDeviceAttr)
    result = result_def()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Declare the IRDL property behind each `Param` (field `<name>_attr`)."""
        super().__init_subclass__(**kwargs)
        for name, value in list(vars(cls).items()):
            if isinstance(value, Param):
                setattr(cls, f"{name}_attr", opt_prop_def(Attribute, prop_name=name))

    @classmethod
    def params(cls) -> Mapping[str, Param[Any]]:
        """Every `Param` of the op, by name (looked up once a class: each op
        built or verified asks)."""
        return _params_of(cls)

    @classmethod
    def params_to_properties(cls, values: Mapping[str, Any]) -> dict[str, Attribute]:
        """Python values (None: absent) to properties, for the constructors."""
        params = cls.params()
        properties: dict[str, Attribute] = {}
        for name, value in values.items():
            if name not in params:
                known = ", ".join(params) or "none"
                raise TypeError(
                    f"{cls.__name__} has no attribute '{name}' (it has: {known})"
                )
            if value is not None:
                properties[name] = params[name].to_attr(value)
        return properties

    def verify_(self) -> None:
        for param in self.params().values():
            param.read(self.properties)


@cache
def _params_of(op_type: type[ValueOp]) -> Mapping[str, Param[Any]]:
    return MappingProxyType(
        {
            name: value
            for klass in reversed(op_type.mro())
            for name, value in vars(klass).items()
            if isinstance(value, Param)
        }
    )


def _with_vdevice(
    properties: dict[str, Attribute], vdevice: VirtualDeviceAttr | None
) -> dict[str, Attribute]:
    if vdevice is not None:
        properties["vdevice"] = vdevice
    return properties


# ----------------------------------------------------------------------------
# Functions, closures, calls
# ----------------------------------------------------------------------------

UNIT_FUNCTION_ATTRS = ("Primitive", "Inline", "Extern", "SkipOptimization")
"""Function attributes that are flags (`UnitAttr`)."""

STRING_FUNCTION_ATTRS = ("Compiler", "Composite", "global_symbol")
"""Function attributes that hold a string."""

VDEVICE = "vdevice"
"""Name of the device entry in parameter/result attribute dictionaries."""


def _unit_flag(name: str) -> property:
    def get(op: Operation) -> bool:
        return name in op.attributes

    return property(get, doc=f"Whether the function has the `{name}` attribute.")


def _string_attr(name: str) -> property:
    def get(op: Operation) -> str | None:
        attr = op.attributes.get(name)
        return attr.data if isinstance(attr, StringAttr) else None

    return property(get, doc=f"The function's `{name}` attribute, if any.")


def _device_dicts(
    devices: Sequence[VirtualDeviceAttr | None],
    old: ArrayAttr[DictionaryAttr] | None = None,
) -> ArrayAttr[DictionaryAttr] | None:
    """`arg_attrs`/`res_attrs` with these devices, keeping the other entries of `old`."""
    old_dicts = [d.data for d in old.data] if old else [{}] * len(devices)
    return _dicts_or_none(
        [
            {k: v for k, v in entry.items() if k != VDEVICE}
            | ({} if device is None else {VDEVICE: device})
            for entry, device in zip(old_dicts, devices, strict=True)
        ]
    )


def _dicts_or_none(
    dicts: Sequence[dict[str, Attribute]],
) -> ArrayAttr[DictionaryAttr] | None:
    """Absent rather than a list of empty dictionaries, so both spellings print alike."""
    return ArrayAttr(DictionaryAttr(d) for d in dicts) if any(dicts) else None


class FunctionOpBase(IRDLOperation):
    """What `relay.func` and `relay.fn` share: body, signature syntax, attributes."""

    body = region_def()
    arg_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    res_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])

    is_primitive = _unit_flag("Primitive")
    is_inline = _unit_flag("Inline")
    is_extern = _unit_flag("Extern")
    skip_optimization = _unit_flag("SkipOptimization")
    compiler = _string_attr("Compiler")
    composite = _string_attr("Composite")
    global_symbol = _string_attr("global_symbol")

    @property
    def function_type(self) -> FunctionType:
        """The signature; `relay.func` stores it, a `relay.fn`'s is its result type."""
        raise NotImplementedError

    @property
    def result_type(self) -> Attribute:
        return self.function_type.outputs.data[0]

    @property
    def args(self) -> tuple[BlockArgument, ...]:
        """The parameters (entry block arguments)."""
        return self.body.block.args

    # -- parameter and result devices ------------------------------------------

    @property
    def param_vdevices(self) -> tuple[VirtualDeviceAttr | None, ...]:
        """Each parameter's `vdevice` argument attribute, or None."""
        count = len(self.function_type.inputs.data)
        if self.arg_attrs is None:
            return (None,) * count
        return tuple(_vdevice_of(d) for d in self.arg_attrs.data)

    @property
    def result_vdevice(self) -> VirtualDeviceAttr | None:
        return None if self.res_attrs is None else _vdevice_of(self.res_attrs.data[0])

    def set_param_vdevices(self, devices: Sequence[VirtualDeviceAttr | None]) -> None:
        """Set (None: remove) each parameter's device; one entry per parameter."""
        self.arg_attrs = _device_dicts(devices, self.arg_attrs)

    def set_result_vdevice(self, device: VirtualDeviceAttr | None) -> None:
        self.res_attrs = _device_dicts([device], self.res_attrs)

    # -- verification ------------------------------------------------------------

    def verify_function(self) -> None:
        """Checks common to `relay.func` and `relay.fn`."""
        signature = self.function_type
        if len(signature.outputs.data) != 1:
            raise VerifyException(
                "a relay function has exactly one result, "
                f"got {len(signature.outputs.data)}"
            )
        if len(self.body.blocks) != 1:
            raise VerifyException(
                f"the body must have exactly one block, got {len(self.body.blocks)}"
            )
        block = self.body.block
        if block.arg_types != signature.inputs.data:
            raise VerifyException(
                f"parameter types ({_types(block.arg_types)}) do not match the function "
                f"type's inputs ({_types(signature.inputs.data)})"
            )
        if not isinstance(block.last_op, ReturnOp):
            raise VerifyException("the body must end with relay.return")
        self._verify_arg_res_attrs()
        self._verify_function_attrs()

    def _verify_arg_res_attrs(self) -> None:
        counts = (("arg_attrs", len(self.function_type.inputs.data)), ("res_attrs", 1))
        for (name, count), dicts in zip(counts, (self.arg_attrs, self.res_attrs)):
            if dicts is None:
                continue
            if len(dicts.data) != count:
                raise VerifyException(
                    f"{name} has {len(dicts.data)} entries, expected {count}"
                )
            for index, entry in enumerate(dicts.data):
                device = entry.data.get(VDEVICE)
                if device is not None and not isinstance(device, VirtualDeviceAttr):
                    raise VerifyException(
                        f"{name}[{index}]: 'vdevice' must be a #target.vdevice, "
                        f"got {attr_text(device)}"
                    )

    def _verify_function_attrs(self) -> None:
        for name, attr in self.attributes.items():
            if name in UNIT_FUNCTION_ATTRS and not isinstance(attr, UnitAttr):
                raise VerifyException(
                    f"function attribute '{name}' must be a unit attribute, "
                    f"got {attr_text(attr)}"
                )
            if name in STRING_FUNCTION_ATTRS and not isinstance(attr, StringAttr):
                raise VerifyException(
                    f"function attribute '{name}' must be a string, "
                    f"got {attr_text(attr)}"
                )

    # -- syntax ------------------------------------------------------------------

    def print_signature_and_body(
        self, printer: Printer, reserved: Sequence[str]
    ) -> None:
        """`(%a: T {attrs}, ...) -> R attributes {...} { body }`."""
        arg_dicts = self.arg_attrs.data if self.arg_attrs else [None] * len(self.args)
        printer.print_string("(")
        printer.print_list(
            zip(self.args, arg_dicts), lambda p: _print_param(printer, *p)
        )
        printer.print_string(") -> ")
        result_dict = self.res_attrs.data[0].data if self.res_attrs else {}
        if result_dict or isinstance(self.result_type, FunctionType):
            printer.print_string("(")
            printer.print_attribute(self.result_type)
            printer.print_op_attributes(result_dict)
            printer.print_string(")")
        else:
            printer.print_attribute(self.result_type)
        entries = {k: v for k, v in self.properties.items() if k not in reserved}
        printer.print_op_attributes(entries | self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(
            self.body, print_entry_block_args=False, print_empty_block=False
        )


def _vdevice_of(entry: DictionaryAttr) -> VirtualDeviceAttr | None:
    device = entry.data.get(VDEVICE)
    return device if isinstance(device, VirtualDeviceAttr) else None


def _types(types: Sequence[Attribute]) -> str:
    return ", ".join(str(t) for t in types)


def _print_param(
    printer: Printer, arg: BlockArgument, attrs: DictionaryAttr | None
) -> None:
    printer.print_block_argument(arg, print_type=False)
    printer.print_string(": ")
    printer.print_attribute(arg.type)
    if attrs is not None:
        printer.print_op_attributes(attrs.data)


class _Signature:
    """A parsed `(%a: T {attrs}, ...) -> (R {attrs}) attributes {...} { body }`."""

    def __init__(self, parser: Parser) -> None:
        params = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN,
            lambda: (parser.parse_argument(), parser.parse_optional_attr_dict()),
        )
        parser.parse_punctuation("->")
        result_dict: dict[str, Attribute] = {}
        if parser.parse_optional_punctuation("(") is not None:
            self.result_type = parser.parse_type()
            result_dict = parser.parse_optional_attr_dict()
            parser.parse_punctuation(")")
        else:
            self.result_type = parser.parse_type()
        self.function_type = FunctionType.from_lists(
            [a.type for a, _ in params], [self.result_type]
        )
        self.arg_attrs = _dicts_or_none([d for _, d in params])
        self.res_attrs = _dicts_or_none([result_dict])
        attrs = parser.parse_optional_attr_dict_with_keyword(_FUNCTION_SYNTAX)
        self.attributes = dict(attrs.data) if attrs else {}
        self.body = parser.parse_region([a for a, _ in params])

    def pop_properties(self, names: Sequence[str]) -> dict[str, Attribute]:
        """Move the properties among `attributes {...}` (e.g. `vdevice`) out of it."""
        return {n: self.attributes.pop(n) for n in names if n in self.attributes}


_FUNCTION_SYNTAX = (
    "sym_name",
    "function_type",
    "sym_visibility",
    "arg_attrs",
    "res_attrs",
)
"""Properties spelled by the function syntax itself, not in `attributes {...}`."""


class _FunctionCallable(CallableOpInterface):
    """Lets generic passes (inlining, call graphs) see relay functions as callables."""

    @classmethod
    def get_callable_region(cls, op: Operation) -> Region:
        return cast(FunctionOpBase, op).body

    @classmethod
    def get_argument_types(cls, op: Operation) -> tuple[Attribute, ...]:
        return cast(FunctionOpBase, op).function_type.inputs.data

    @classmethod
    def get_result_types(cls, op: Operation) -> tuple[Attribute, ...]:
        return cast(FunctionOpBase, op).function_type.outputs.data


@irdl_op_definition
class FuncOp(FunctionOpBase):
    """A global function: a symbol of the module, called by `relay.call`."""

    name = "relay.func"

    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]
    sym_visibility = opt_prop_def(StringAttr)

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface(), _FunctionCallable())

    def __init__(
        self,
        sym_name: str,
        inputs: Sequence[Attribute],
        result: Attribute,
        body: Region | None = None,
        *,
        private: bool = False,
        param_vdevices: Sequence[VirtualDeviceAttr | None] = (),
        result_vdevice: VirtualDeviceAttr | None = None,
        attributes: Mapping[str, Attribute] | None = None,
    ) -> None:
        """A function; without `body`, an entry block with the parameters to fill."""
        properties: dict[str, Attribute | None] = {
            "sym_name": StringAttr(sym_name),
            "function_type": FunctionType.from_lists(inputs, [result]),
            "sym_visibility": StringAttr("private") if private else None,
            "arg_attrs": _device_dicts(param_vdevices),
            "res_attrs": _device_dicts([result_vdevice]),
        }
        super().__init__(
            properties=properties,
            attributes=attributes,
            regions=[body if body is not None else Region(Block(arg_types=inputs))],
        )

    def verify_(self) -> None:
        self.verify_function()

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        visibility = parser.parse_optional_visibility_keyword()
        sym_name = parser.parse_symbol_name()
        sig = _Signature(parser)
        properties: dict[str, Attribute | None] = {
            "sym_name": sym_name,
            "function_type": sig.function_type,
            "sym_visibility": visibility,
            "arg_attrs": sig.arg_attrs,
            "res_attrs": sig.res_attrs,
        }
        return cls.create(
            properties={k: v for k, v in properties.items() if v is not None},
            attributes=sig.attributes,
            regions=[sig.body],
        )

    def print(self, printer: Printer) -> None:
        if self.sym_visibility is not None:
            printer.print_string(f" {self.sym_visibility.data}")
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        self.print_signature_and_body(printer, tuple(self.properties))


@irdl_op_definition
class FnOp(FunctionOpBase, ValueOp):
    """A function literal; its body may use values of the enclosing region (a closure)."""

    name = "relay.fn"

    result = result_def(FunctionType)

    traits = traits_def(_FunctionCallable())

    def __init__(
        self,
        inputs: Sequence[Attribute],
        result: Attribute,
        body: Region | None = None,
        *,
        param_vdevices: Sequence[VirtualDeviceAttr | None] = (),
        result_vdevice: VirtualDeviceAttr | None = None,
        attributes: Mapping[str, Attribute] | None = None,
        vdevice: VirtualDeviceAttr | None = None,
    ) -> None:
        """A closure; without `body`, an entry block with the parameters to fill."""
        properties: dict[str, Attribute | None] = {
            "arg_attrs": _device_dicts(param_vdevices),
            "res_attrs": _device_dicts([result_vdevice]),
            "vdevice": vdevice,
        }
        super().__init__(
            properties=properties,
            attributes=attributes,
            result_types=[FunctionType.from_lists(inputs, [result])],
            regions=[body if body is not None else Region(Block(arg_types=inputs))],
        )

    @property
    def function_type(self) -> FunctionType:
        return cast(FunctionType, self.result.type)

    def verify_(self) -> None:
        self.verify_function()

    @classmethod
    def parse(cls, parser: Parser) -> FnOp:
        sig = _Signature(parser)
        properties = sig.pop_properties(("vdevice",))
        if sig.arg_attrs is not None:
            properties["arg_attrs"] = sig.arg_attrs
        if sig.res_attrs is not None:
            properties["res_attrs"] = sig.res_attrs
        return cls.create(
            properties=properties,
            attributes=sig.attributes,
            result_types=[sig.function_type],
            regions=[sig.body],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        self.print_signature_and_body(printer, ("arg_attrs", "res_attrs"))


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Terminator of `relay.func` and `relay.fn`: the function's result."""

    name = "relay.return"

    value = operand_def()

    traits = traits_def(HasParent(FuncOp, FnOp), IsTerminator(), ReturnLike())

    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: Value) -> None:
        super().__init__(operands=[value])

    def verify_(self) -> None:
        parent = self.parent_op()
        if not isinstance(parent, FunctionOpBase):
            return  # detached; HasParent reports misplaced returns
        expected = parent.function_type.outputs.data
        if expected != (self.value.type,):
            raise VerifyException(
                f"returned type {self.value.type} does not match the function's result "
                f"type {_types(expected)}"
            )


class _CallSymbolUser(SymbolUserOpInterface):
    """`relay.call` names a `relay.func` of the enclosing symbol table, with its types."""

    def verify(self, op: Operation) -> None:
        call = cast(CallOp, op)
        callee = f"@{call.callee.string_value()}"
        try:
            func = SymbolTable.lookup_symbol(call, call.callee)
        except ValueError:
            raise VerifyException(
                f"call to {callee} is not inside a symbol table"
            ) from None
        if func is None:
            raise VerifyException(f"{callee} could not be found in the symbol table")
        if not isinstance(func, FuncOp):
            raise VerifyException(f"{callee} is a {func.name}, not a relay.func")
        _check_call_types(callee, func.function_type, call.args.types, call.result.type)


def _check_call_types(
    callee: str,
    signature: FunctionType,
    arg_types: Sequence[Attribute],
    result: Attribute,
) -> None:
    """A call's argument and result types against the callee's signature."""
    params = signature.inputs.data
    if len(arg_types) != len(params):
        raise VerifyException(
            f"{callee} takes {len(params)} argument(s), but the call passes {len(arg_types)}"
        )
    for index, (given, expected) in enumerate(zip(arg_types, params)):
        if given != expected:
            raise VerifyException(
                f"argument {index} of the call to {callee}: expected {expected}, got {given}"
            )
    if signature.outputs.data != (result,):
        raise VerifyException(
            f"result type of the call to {callee}: expected "
            f"{_types(signature.outputs.data)}, got {result}"
        )


@irdl_op_definition
class CallOp(ValueOp):
    """Call of a global `relay.func` by name."""

    name = "relay.call"

    callee = prop_def(FlatSymbolRefAttrConstr)
    args = var_operand_def()

    traits = traits_def(_CallSymbolUser())

    def __init__(
        self,
        callee: FuncOp | str,
        args: Sequence[Value],
        result_type: Attribute | None = None,
        *,
        vdevice: VirtualDeviceAttr | None = None,
    ) -> None:
        """Call `callee`; the result type comes from it when it is a `FuncOp`."""
        if isinstance(callee, FuncOp):
            result_type = callee.result_type
            callee = callee.sym_name.data
        if result_type is None:
            raise TypeError("CallOp needs result_type when the callee is given by name")
        super().__init__(
            operands=[args],
            result_types=[result_type],
            properties=_with_vdevice({"callee": SymbolRefAttr(callee)}, vdevice),
        )

    @classmethod
    def parse(cls, parser: Parser) -> CallOp:
        callee = parser.parse_symbol_name()
        args = parser.parse_op_args_list()
        properties, attributes = parse_attr_dict(parser, cls, reserved=("callee",))
        parser.parse_punctuation(":")
        values, result = _parse_typed_operands(
            parser, args, *_parse_function_type(parser)
        )
        properties["callee"] = SymbolRefAttr(callee)
        return cls.create(
            operands=values,
            result_types=[result],
            properties=properties,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.callee.string_value())
        printer.print_operands(self.args)
        print_attr_dict(printer, self, reserved=("callee",))
        printer.print_string(" : ")
        printer.print_attribute(
            FunctionType.from_lists(self.args.types, [self.result.type])
        )


@irdl_op_definition
class CallIndirectOp(ValueOp):
    """Call of a function value (a `relay.fn`, a parameter, a tuple element...)."""

    name = "relay.call_indirect"

    callee = operand_def(FunctionType)
    args = var_operand_def()

    def __init__(
        self,
        callee: Value,
        args: Sequence[Value],
        *,
        vdevice: VirtualDeviceAttr | None = None,
    ) -> None:
        """The result type is the callee's."""
        signature = SSAValue.get(callee).type
        if not isinstance(signature, FunctionType) or len(signature.outputs.data) != 1:
            raise TypeError(
                f"the callee must have a single-result function type, got {signature}"
            )
        super().__init__(
            operands=[callee, args],
            result_types=[signature.outputs.data[0]],
            properties=_with_vdevice({}, vdevice),
        )

    def verify_(self) -> None:
        super().verify_()
        _check_call_types(
            "the callee",
            cast(FunctionType, self.callee.type),
            self.args.types,
            self.result.type,
        )

    @classmethod
    def parse(cls, parser: Parser) -> CallIndirectOp:
        callee = parser.parse_unresolved_operand()
        args = parser.parse_op_args_list()
        properties, attributes = parse_attr_dict(parser, cls)
        parser.parse_punctuation(":")
        signature, pos = _parse_function_type(parser)
        values, result = _parse_typed_operands(parser, args, signature, pos)
        return cls.create(
            operands=[parser.resolve_operand(callee, signature), *values],
            result_types=[result],
            properties=properties,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.callee)
        printer.print_operands(self.args)
        print_attr_dict(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.callee.type)


# ----------------------------------------------------------------------------
# Tuples and conditionals
# ----------------------------------------------------------------------------


def _tuple_type(types: Sequence[Attribute]) -> TupleType:
    return TupleType(cast(tuple[TypeAttribute, ...], tuple(types)))


@irdl_op_definition
class TupleOp(ValueOp):
    """A tuple of values; its type is `tuple<T1, T2, ...>` of theirs."""

    name = "relay.tuple"

    elements = var_operand_def()
    result = result_def(TupleType)

    def __init__(
        self, elements: Sequence[Value], *, vdevice: VirtualDeviceAttr | None = None
    ) -> None:
        values = [SSAValue.get(e) for e in elements]
        super().__init__(
            operands=[values],
            result_types=[_tuple_type([v.type for v in values])],
            properties=_with_vdevice({}, vdevice),
        )

    def verify_(self) -> None:
        super().verify_()
        expected = _tuple_type(self.elements.types)
        if self.result.type != expected:
            raise VerifyException(
                f"result type mismatch: expected {expected}, got {self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> TupleOp:
        elements = parser.parse_op_args_list()
        properties, attributes = parse_attr_dict(parser, cls)
        parser.parse_punctuation(":")
        pos = parser.pos
        result = parser.parse_type()
        if not isinstance(result, TupleType):
            parser.raise_error(f"expected a tuple type, got {result}", pos, parser.pos)
        values = parser.resolve_operands(elements, result.types.data, pos)
        return cls.create(
            operands=values,
            result_types=[result],
            properties=properties,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_operands(self.elements)
        print_attr_dict(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class GetItemOp(ValueOp):
    """Projection `%t[index]` of a tuple."""

    name = "relay.get_item"

    value = operand_def(TupleType)
    index = IntParam(minimum=0)

    def __init__(
        self, value: Value, index: int, *, vdevice: VirtualDeviceAttr | None = None
    ) -> None:
        """The result type is the element's."""
        properties = _with_vdevice(self.params_to_properties({"index": index}), vdevice)
        element = self.element_type(SSAValue.get(value).type, index)
        super().__init__(
            operands=[value], result_types=[element], properties=properties
        )

    @staticmethod
    def element_type(tuple_type: Attribute, index: int) -> Attribute:
        """Type of element `index` of `tuple_type`; raises if there is none."""
        if not isinstance(tuple_type, TupleType):
            raise VerifyException(f"relay.get_item needs a tuple, got {tuple_type}")
        if not 0 <= index < len(tuple_type.types.data):
            raise VerifyException(
                f"index {index} is out of range for {tuple_type} "
                f"({len(tuple_type.types.data)} elements)"
            )
        return tuple_type.types.data[index]

    def verify_(self) -> None:
        super().verify_()
        expected = self.element_type(self.value.type, self.index)
        if self.result.type != expected:
            raise VerifyException(
                f"result type mismatch: expected {expected} (element {self.index}), "
                f"got {self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> GetItemOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        index = parser.parse_integer(allow_boolean=False)
        parser.parse_punctuation("]")
        properties, attributes = parse_attr_dict(parser, cls, reserved=("index",))
        parser.parse_punctuation(":")
        tuple_type = parser.parse_type()
        parser.parse_punctuation("->")
        result = parser.parse_type()
        properties["index"] = IntegerAttr(index, i64)
        return cls.create(
            operands=[parser.resolve_operand(value, tuple_type)],
            result_types=[result],
            properties=properties,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(f"[{self.index}]")
        print_attr_dict(printer, self, reserved=("index",))
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class IfOp(ValueOp):
    """`if cond then A else B`; each branch ends with `relay.yield` of the result."""

    name = "relay.if"

    cond = operand_def(TensorType)
    true_branch = region_def()
    false_branch = region_def()

    def __init__(
        self,
        cond: Value,
        result_type: Attribute,
        true_branch: Region | None = None,
        false_branch: Region | None = None,
        *,
        vdevice: VirtualDeviceAttr | None = None,
    ) -> None:
        """Missing branches start as empty blocks to fill."""
        super().__init__(
            operands=[cond],
            result_types=[result_type],
            properties=_with_vdevice({}, vdevice),
            regions=[_region_or_empty(true_branch), _region_or_empty(false_branch)],
        )

    def verify_(self) -> None:
        super().verify_()
        cond = cast(TensorType[Attribute], self.cond.type)
        if cond.get_shape() or cond.element_type != i1:
            raise VerifyException(f"the condition must be a tensor<i1>, got {cond}")
        for what, region in (("then", self.true_branch), ("else", self.false_branch)):
            if len(region.blocks) != 1 or region.block.args:
                raise VerifyException(
                    f"the {what} branch must be one block without arguments"
                )
            if not isinstance(region.block.last_op, YieldOp):
                raise VerifyException(f"the {what} branch must end with relay.yield")

    @classmethod
    def parse(cls, parser: Parser) -> IfOp:
        cond = parser.parse_unresolved_operand()
        properties, attributes = parse_attr_dict(parser, cls)
        parser.parse_punctuation(":")
        cond_type = parser.parse_type()
        parser.parse_punctuation("->")
        result = parser.parse_type()
        true_branch = parser.parse_region()
        parser.parse_keyword("else")
        false_branch = parser.parse_region()
        return cls.create(
            operands=[parser.resolve_operand(cond, cond_type)],
            result_types=[result],
            properties=properties,
            attributes=attributes,
            regions=[true_branch, false_branch],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.cond)
        print_attr_dict(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.cond.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)
        printer.print_string(" ")
        printer.print_region(self.true_branch)
        printer.print_string(" else ")
        printer.print_region(self.false_branch)


def _region_or_empty(region: Region | None) -> Region:
    return Region(Block()) if region is None else region


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminator of a `relay.if` branch: the branch's value."""

    name = "relay.yield"

    value = operand_def()

    traits = traits_def(HasParent(IfOp), IsTerminator(), ReturnLike())

    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: Value) -> None:
        super().__init__(operands=[value])

    def verify_(self) -> None:
        parent = self.parent_op()
        if isinstance(parent, IfOp) and parent.result.type != self.value.type:
            raise VerifyException(
                f"yielded type {self.value.type} does not match the relay.if result "
                f"type {parent.result.type}"
            )


# ----------------------------------------------------------------------------
# Device operators
# ----------------------------------------------------------------------------

ON_DEVICE_FORMS: dict[str, tuple[bool, bool]] = {
    "normal": (True, False),
    "fixed": (True, True),
    "result_only": (False, True),
    "free": (False, False),
}
"""`relay.on_device` form name -> (constrain_body, constrain_result)."""


def _check_identity_type(op: ValueOp, operand: SSAValue) -> None:
    """The device operators do not change the type of their operand."""
    if op.result.type != operand.type:
        raise VerifyException(
            f"result type mismatch: expected {operand.type} (the operand's), "
            f"got {op.result.type}"
        )


def _require_constrained(device: VirtualDeviceAttr | None, problem: str) -> None:
    """Spec §2: a device operator's constraining device must say something."""
    if device is None or device.is_fully_unconstrained():
        raise VerifyException(problem)


@irdl_op_definition
class OnDeviceOp(ValueOp):
    """Annotation: `body` is on `device` (spec §2.1); identity on values.

    The flags select the form: normal (body constrained), fixed (body and
    result), result_only, free (neither; a copy is allowed here, no device).
    """

    name = "relay.on_device"

    body = operand_def()
    device = opt_prop_def(VirtualDeviceAttr)
    constrain_body = BoolParam(True)
    constrain_result = BoolParam(False)

    _SYNTAX: ClassVar[tuple[str, ...]] = (
        "device",
        "constrain_body",
        "constrain_result",
    )

    def __init__(
        self,
        body: Value,
        device: VirtualDeviceAttr | None,
        *,
        constrain_body: bool = True,
        constrain_result: bool = False,
        vdevice: VirtualDeviceAttr | None = None,
    ) -> None:
        """Both flags are always stored, so readers of the IR need no defaults."""
        flags = {"constrain_body": constrain_body, "constrain_result": constrain_result}
        properties = _with_vdevice(self.params_to_properties(flags), vdevice)
        if device is not None:
            properties["device"] = device
        super().__init__(
            operands=[body],
            result_types=[SSAValue.get(body).type],
            properties=properties,
        )

    @staticmethod
    def fixed(body: Value, device: VirtualDeviceAttr) -> OnDeviceOp:
        return OnDeviceOp(body, device, constrain_result=True)

    @staticmethod
    def free(body: Value) -> OnDeviceOp:
        return OnDeviceOp(body, None, constrain_body=False)

    @property
    def form(self) -> str:
        """`normal`, `fixed`, `result_only` or `free`."""
        flags = (self.constrain_body, self.constrain_result)
        return next(name for name, f in ON_DEVICE_FORMS.items() if f == flags)

    @property
    def virtual_device(self) -> VirtualDeviceAttr:
        """The device; fully unconstrained for the free form (as in TVM)."""
        return self.device or VirtualDeviceAttr.unconstrained()

    def verify_(self) -> None:
        super().verify_()
        _check_identity_type(self, self.body)
        if self.form != "free":
            _require_constrained(
                self.device,
                f"the {self.form} form of relay.on_device needs a device that is not "
                "fully unconstrained",
            )
        elif self.device is not None:
            raise VerifyException(
                "the free form of relay.on_device (constrain_body = false, "
                f"constrain_result = false) takes no device, got {attr_text(self.device)}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> OnDeviceOp:
        body = parser.parse_unresolved_operand()
        properties: dict[str, Attribute] = {}
        if parser.parse_optional_keyword("free") is not None:
            form = "free"
        else:
            parser.parse_keyword("to", "expected 'to <vdevice>' or 'free'")
            properties["device"] = _parse_vdevice(parser)
            form = (
                parser.parse_optional_keyword_in(("fixed", "result_only")) or "normal"
            )
        extra, attributes = parse_attr_dict(parser, cls, reserved=cls._SYNTAX)
        constrain_body, constrain_result = ON_DEVICE_FORMS[form]
        properties |= cls.params_to_properties(
            {"constrain_body": constrain_body, "constrain_result": constrain_result}
        )
        parser.parse_punctuation(":")
        type = parser.parse_type()
        return cls.create(
            operands=[parser.resolve_operand(body, type)],
            result_types=[type],
            properties=properties | extra,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.body)
        if self.form == "free":
            printer.print_string(" free")
        else:
            printer.print_string(" to ")
            printer.print_attribute(self.virtual_device)
            if self.form != "normal":
                printer.print_string(f" {self.form}")
        print_attr_dict(printer, self, reserved=self._SYNTAX)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


def _parse_vdevice(parser: Parser) -> VirtualDeviceAttr:
    pos = parser.pos
    device = parser.parse_attribute()
    if not isinstance(device, VirtualDeviceAttr):
        parser.raise_error(
            f"expected a #target.vdevice, got {attr_text(device)}", pos, parser.pos
        )
    return device


@irdl_op_definition
class DeviceCopyOp(ValueOp):
    """Copy of `body` from device `src` to device `dst` (spec §2.2); identity on values."""

    name = "relay.device_copy"

    body = operand_def()
    src = prop_def(VirtualDeviceAttr)
    dst = prop_def(VirtualDeviceAttr)

    def __init__(
        self,
        body: Value,
        src: VirtualDeviceAttr,
        dst: VirtualDeviceAttr,
        *,
        vdevice: VirtualDeviceAttr | None = None,
    ) -> None:
        super().__init__(
            operands=[body],
            result_types=[SSAValue.get(body).type],
            properties=_with_vdevice({"src": src, "dst": dst}, vdevice),
        )

    def verify_(self) -> None:
        super().verify_()
        _check_identity_type(self, self.body)
        _require_constrained(
            self.src, "the source device must not be fully unconstrained"
        )
        _require_constrained(
            self.dst, "the destination device must not be fully unconstrained"
        )

    @classmethod
    def parse(cls, parser: Parser) -> DeviceCopyOp:
        body = parser.parse_unresolved_operand()
        parser.parse_keyword("from")
        src = _parse_vdevice(parser)
        parser.parse_keyword("to")
        dst = _parse_vdevice(parser)
        properties, attributes = parse_attr_dict(parser, cls, reserved=("src", "dst"))
        parser.parse_punctuation(":")
        type = parser.parse_type()
        return cls.create(
            operands=[parser.resolve_operand(body, type)],
            result_types=[type],
            properties=properties | {"src": src, "dst": dst},
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.body)
        printer.print_string(" from ")
        printer.print_attribute(self.src)
        printer.print_string(" to ")
        printer.print_attribute(self.dst)
        print_attr_dict(printer, self, reserved=("src", "dst"))
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


# ----------------------------------------------------------------------------
# Constants
# ----------------------------------------------------------------------------


@irdl_op_definition
class ConstantOp(ValueOp):
    """A tensor constant; the value's type is the result type.

    The value is a `dense<...>` literal or, for large weights, a
    `dense_resource<name>` whose bytes live in the file's
    `{-# dialect_resources #-}` section (`hetero.utils.dense_resources`)."""

    name = "relay.constant"

    value = prop_def(DenseIntOrFPElementsAttr | DenseResourceAttr)
    result = result_def(TensorType)

    def __init__(
        self,
        value: DenseIntOrFPElementsAttr | DenseResourceAttr,
        *,
        vdevice: VirtualDeviceAttr | None = None,
    ) -> None:
        super().__init__(
            result_types=[value.type],
            properties=_with_vdevice({"value": value}, vdevice),
        )

    def verify_(self) -> None:
        super().verify_()
        if self.value.type != self.result.type:
            raise VerifyException(
                f"result type mismatch: expected {self.value.type} (the value's), "
                f"got {self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        properties, attributes = parse_attr_dict(parser, cls, reserved=("value",))
        pos = parser.pos
        value = parser.parse_attribute()
        if not isinstance(
            value, DenseIntOrFPElementsAttr | DenseResourceAttr
        ) or not isinstance(value.type, TensorType):
            parser.raise_error(
                f"expected a dense tensor attribute (dense<...> : tensor<...>), got {value}",
                pos,
                parser.pos,
            )
        return cls.create(
            result_types=[value.type],
            properties=properties | {"value": value},
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        print_attr_dict(printer, self, reserved=("value",))
        printer.print_string(" ")
        printer.print_attribute(self.value)


@irdl_op_definition
class ShapeOfOp(ValueOp):
    """The shape of a tensor as a `tensor<rank x i64>`: host data (spec §3.4).

    Its operand may live anywhere; the result always lives on the host device,
    where shape computations run (`plan-devices` binds it there).
    """

    name = "relay.shape_of"

    x = operand_def(TensorType)
    result = result_def(TensorType)

    def __init__(self, x: Value, *, vdevice: VirtualDeviceAttr | None = None) -> None:
        rank = len(cast(TensorType[Attribute], SSAValue.get(x).type).get_shape())
        super().__init__(
            operands=[x],
            result_types=[TensorType(i64, [rank])],
            properties=_with_vdevice({}, vdevice),
        )

    def verify_(self) -> None:
        super().verify_()
        rank = len(cast(TensorType[Attribute], self.x.type).get_shape())
        expected = TensorType(i64, [rank])
        if self.result.type != expected:
            raise VerifyException(
                f"result type mismatch: expected {expected}, got {self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> ShapeOfOp:
        x = parser.parse_unresolved_operand()
        properties, attributes = parse_attr_dict(parser, cls)
        parser.parse_punctuation(":")
        pos = parser.pos
        signature = parser.parse_type()
        if not isinstance(signature, FunctionType):
            parser.raise_error(
                "expected (operand type) -> result type", pos, parser.pos
            )
        values, result = _parse_typed_operands(parser, [x], signature, pos)
        return cls.create(
            operands=values,
            result_types=[result],
            properties=properties,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.x)
        print_attr_dict(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(
            FunctionType.from_lists([self.x.type], [self.result.type])
        )


# ----------------------------------------------------------------------------
# Tensor operators
# ----------------------------------------------------------------------------


class TensorOp(ValueOp):
    """Base of the tensor operators: inferred result type and shared syntax.

    Syntax: `operands attr-dict : T` when the operands and the result all have
    type T, else `operands attr-dict : (T1, T2) -> R`.
    Subclasses declare operands, `Param`s and `infer_shape`.
    """

    result = result_def(TensorType)

    def __init__(
        self, *operands: Value, vdevice: VirtualDeviceAttr | None = None, **params: Any
    ) -> None:
        """Build the op from operands and Python attribute values; infers the result type.

        E.g. `Conv2DOp(x, w, strides=(2, 2), padding=(1, 1, 1, 1))`; a None
        (or omitted) attribute takes its default.
        """
        values = [SSAValue.get(o) for o in operands]
        properties = _with_vdevice(self.params_to_properties(params), vdevice)
        result_type = self.infer_result_type([v.type for v in values], properties)
        super().__init__(
            operands=self.group_operands(values),
            result_types=[result_type],
            properties=properties,
        )

    @classmethod
    def group_operands(
        cls, values: list[SSAValue]
    ) -> Sequence[SSAValue | Sequence[SSAValue]]:
        """Operands as IRDL wants them at construction (one entry per definition)."""
        return values

    @classmethod
    def infer_result_type(
        cls,
        operand_types: Sequence[Attribute],
        attributes: Mapping[str, Attribute] = _NO_ATTRIBUTES,
    ) -> TensorType[Attribute]:
        """The result type for these operand types and attributes (properties).

        The entry point of type inference for passes and builders; raises a
        `VerifyException` saying what is wrong when there is no valid result.
        """
        cls._check_operand_count(len(operand_types))
        tensors = _tensor_types(operand_types)
        element_type = cls.infer_element_type(tensors, attributes)
        shapes = [t.get_shape() for t in tensors]
        return TensorType(element_type, cls.infer_shape(shapes, attributes))

    @classmethod
    def infer_element_type(
        cls,
        tensors: Sequence[TensorType[Attribute]],
        attributes: Mapping[str, Attribute],
    ) -> Attribute:
        """The result's element type: by default the one the operands share
        (relay has no implicit casts)."""
        return _common_element_type(tensors)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        """The result shape; subclasses read their `Param`s from `attributes`."""
        raise NotImplementedError

    @classmethod
    def _check_operand_count(cls, count: int) -> None:
        defs = cls.get_irdl_definition().operands
        if any(isinstance(d, VarOperandDef) for _, d in defs):
            return
        if count != len(defs):
            raise VerifyException(
                f"{cls.name} takes {len(defs)} operand(s), got {count}"
            )

    def verify_(self) -> None:
        super().verify_()
        expected = self.infer_result_type(self.operand_types, self.properties)
        if self.result.type != expected:
            raise VerifyException(
                f"result type mismatch: expected {expected}, got {self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> TensorOp:
        operands = parser.parse_comma_separated_list(
            Parser.Delimiter.NONE, parser.parse_unresolved_operand
        )
        properties, attributes = parse_attr_dict(parser, cls)
        parser.parse_punctuation(":")
        pos = parser.pos
        declared = parser.parse_type()
        if isinstance(declared, FunctionType):
            values, result = _parse_typed_operands(parser, operands, declared, pos)
        else:
            values = parser.resolve_operands(operands, [declared] * len(operands), pos)
            result = declared
        return cls.create(
            operands=values,
            result_types=[result],
            properties=properties,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        print_attr_dict(printer, self)
        printer.print_string(" : ")
        if all(t == self.result.type for t in self.operand_types):
            printer.print_attribute(self.result.type)
        else:
            printer.print_attribute(
                FunctionType.from_lists(self.operand_types, [self.result.type])
            )


def _tensor_types(types: Sequence[Attribute]) -> list[TensorType[Attribute]]:
    """The operand types, checked to be ranked tensors."""
    for index, t in enumerate(types):
        if not isinstance(t, TensorType):
            raise VerifyException(f"operand {index} must be a ranked tensor, got {t}")
    return cast(list[TensorType[Attribute]], list(types))


def _common_element_type(tensors: Sequence[TensorType[Attribute]]) -> Attribute:
    """Relay has no implicit casts: the operands share one element type."""
    element_type = tensors[0].element_type
    for index, t in enumerate(tensors[1:], start=1):
        if t.element_type != element_type:
            raise VerifyException(
                f"element type mismatch: operand 0 is {element_type}, "
                f"operand {index} is {t.element_type}"
            )
    return element_type


# -- elementwise ---------------------------------------------------------------


class ElementwiseBinaryOp(TensorOp):
    """`lhs op rhs` element by element, with NumPy broadcasting."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return broadcast_shapes(shapes[0], shapes[1])


class ElementwiseUnaryOp(TensorOp):
    """A function applied to each element; the shape is unchanged."""

    x = operand_def(TensorType)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return shapes[0]


class ComparisonOp(ElementwiseBinaryOp):
    """`lhs <relation> rhs` element by element, with NumPy broadcasting: an
    `i1` tensor (the operands share one element type)."""

    @classmethod
    def infer_element_type(
        cls,
        tensors: Sequence[TensorType[Attribute]],
        attributes: Mapping[str, Attribute],
    ) -> Attribute:
        _common_element_type(tensors)
        return i1


class BooleanOperands:
    """Mixin of the logical operators: `i1` operands, an `i1` result."""

    @classmethod
    def infer_element_type(
        cls,
        tensors: Sequence[TensorType[Attribute]],
        attributes: Mapping[str, Attribute],
    ) -> Attribute:
        for index, t in enumerate(tensors):
            if t.element_type != i1:
                raise VerifyException(
                    f"operand {index} must be of i1, got {t.element_type}"
                )
        return i1


class LogicalBinaryOp(BooleanOperands, ElementwiseBinaryOp):
    """A logical operator on `i1` tensors, with NumPy broadcasting."""


@irdl_op_definition
class EqualOp(ComparisonOp):
    """`lhs == rhs`."""

    name = "relay.equal"


@irdl_op_definition
class NotEqualOp(ComparisonOp):
    """`lhs != rhs` (true where either is NaN)."""

    name = "relay.not_equal"


@irdl_op_definition
class LessOp(ComparisonOp):
    """`lhs < rhs`."""

    name = "relay.less"


@irdl_op_definition
class LessEqualOp(ComparisonOp):
    """`lhs <= rhs`."""

    name = "relay.less_equal"


@irdl_op_definition
class GreaterOp(ComparisonOp):
    """`lhs > rhs`."""

    name = "relay.greater"


@irdl_op_definition
class GreaterEqualOp(ComparisonOp):
    """`lhs >= rhs`."""

    name = "relay.greater_equal"


@irdl_op_definition
class LogicalAndOp(LogicalBinaryOp):
    """`lhs and rhs`."""

    name = "relay.logical_and"


@irdl_op_definition
class LogicalOrOp(LogicalBinaryOp):
    """`lhs or rhs`."""

    name = "relay.logical_or"


@irdl_op_definition
class LogicalNotOp(BooleanOperands, ElementwiseUnaryOp):
    """`not x` on an `i1` tensor."""

    name = "relay.logical_not"


@irdl_op_definition
class WhereOp(TensorOp):
    """`condition ? x : y` element by element, the three broadcast together
    (NumPy's `where`); `condition` is `i1`, `x` and `y` share a type."""

    name = "relay.where"

    condition = operand_def(TensorType)
    x = operand_def(TensorType)
    y = operand_def(TensorType)

    @classmethod
    def infer_element_type(
        cls,
        tensors: Sequence[TensorType[Attribute]],
        attributes: Mapping[str, Attribute],
    ) -> Attribute:
        if tensors[0].element_type != i1:
            raise VerifyException(
                f"the condition must be of i1, got {tensors[0].element_type}"
            )
        return _common_element_type(tensors[1:])

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return broadcast_shapes(broadcast_shapes(shapes[0], shapes[1]), shapes[2])


@irdl_op_definition
class AddOp(ElementwiseBinaryOp):
    """`lhs + rhs`."""

    name = "relay.add"


@irdl_op_definition
class SubtractOp(ElementwiseBinaryOp):
    """`lhs - rhs`."""

    name = "relay.subtract"


@irdl_op_definition
class MultiplyOp(ElementwiseBinaryOp):
    """`lhs * rhs`."""

    name = "relay.multiply"


@irdl_op_definition
class DivideOp(ElementwiseBinaryOp):
    """`lhs / rhs`."""

    name = "relay.divide"


@irdl_op_definition
class MaximumOp(ElementwiseBinaryOp):
    """`max(lhs, rhs)`."""

    name = "relay.maximum"


@irdl_op_definition
class MinimumOp(ElementwiseBinaryOp):
    """`min(lhs, rhs)`."""

    name = "relay.minimum"


@irdl_op_definition
class PowerOp(ElementwiseBinaryOp):
    """`lhs ** rhs`."""

    name = "relay.power"


@irdl_op_definition
class NegativeOp(ElementwiseUnaryOp):
    """`-x`."""

    name = "relay.negative"


@irdl_op_definition
class ExpOp(ElementwiseUnaryOp):
    """`e ** x`."""

    name = "relay.exp"


@irdl_op_definition
class TanhOp(ElementwiseUnaryOp):
    """`tanh(x)`."""

    name = "relay.tanh"


@irdl_op_definition
class SigmoidOp(ElementwiseUnaryOp):
    """`1 / (1 + e ** -x)`."""

    name = "relay.sigmoid"


@irdl_op_definition
class SiluOp(ElementwiseUnaryOp):
    """`x * sigmoid(x)` (SiLU, swish: EfficientNet's activation), one op so
    that it is one epilogue of the op before it (`simplify-activations`)."""

    name = "relay.silu"


@irdl_op_definition
class HardSwishOp(ElementwiseUnaryOp):
    """`x * clip(x / 6 + 1 / 2, 0, 1)` (MobileNet-v3's activation, ONNX's
    HardSwish), one op for the same reason as `silu`."""

    name = "relay.hard_swish"


@irdl_op_definition
class ReluOp(ElementwiseUnaryOp):
    """`max(x, 0)`."""

    name = "relay.relu"


@irdl_op_definition
class LogOp(ElementwiseUnaryOp):
    """Natural logarithm."""

    name = "relay.log"


@irdl_op_definition
class SqrtOp(ElementwiseUnaryOp):
    """Square root."""

    name = "relay.sqrt"


@irdl_op_definition
class AbsOp(ElementwiseUnaryOp):
    """`|x|`."""

    name = "relay.abs"


@irdl_op_definition
class FloorOp(ElementwiseUnaryOp):
    """The largest integer not above `x` (a float)."""

    name = "relay.floor"


@irdl_op_definition
class CeilOp(ElementwiseUnaryOp):
    """The smallest integer not below `x` (a float)."""

    name = "relay.ceil"


@irdl_op_definition
class RoundOp(ElementwiseUnaryOp):
    """`x` rounded to the nearest integer, halves to even (NumPy's `round`,
    ONNX's `Round`)."""

    name = "relay.round"


@irdl_op_definition
class ErfOp(ElementwiseUnaryOp):
    """The error function (GELU's `x * (1 + erf(x / sqrt 2)) / 2`)."""

    name = "relay.erf"


@irdl_op_definition
class ClipOp(ElementwiseUnaryOp):
    """`x` clamped to `[a_min, a_max]`."""

    name = "relay.clip"

    a_min = FloatParam()
    a_max = FloatParam()

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        a_min, a_max = cls.a_min.read(attributes), cls.a_max.read(attributes)
        if a_min > a_max:
            raise VerifyException(f"a_min ({a_min}) must not exceed a_max ({a_max})")
        return shapes[0]


# -- neural network ------------------------------------------------------------


@irdl_op_definition
class DenseOp(TensorOp):
    """Fully connected layer: `x [M, K]`, `weight [N, K]` -> `[M, N]`; the
    weight may be packed in panels, `NK<b>n` (`weight_layout`, as
    `alter-op-layout` packs it for the CPU GEMM schedule)."""

    name = "relay.nn.dense"

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
    """Batched matrix product, `[..., M, K] x [..., K, N]`, batch dimensions broadcast."""

    name = "relay.matmul"

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
    `winograd<m>_OI<b>o` (`kernel_layout`, as `alter-op-layout` packs it)."""

    name = "relay.nn.conv2d"

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
    """3-D convolution of NCDHW data with OIDHW weights (TVM's `conv3d`)."""

    name = "relay.nn.conv3d"

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
    the full result, `output_padding` adds rows and columns at its end."""

    name = "relay.nn.conv2d_transpose"

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
    """`x + bias`, the `[C]` bias added along `axis`."""

    name = "relay.nn.bias_add"

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
    """Inference-form batch normalisation along `axis` with `[C]` statistics."""

    name = "relay.nn.batch_norm"

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
    """Maximum over each window."""

    name = "relay.nn.max_pool2d"


@irdl_op_definition
class AvgPool2DOp(Pool2DOp):
    """Mean over each window; padding counts only with `count_include_pad`."""

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
    """Maximum over each window."""

    name = "relay.nn.max_pool3d"


@irdl_op_definition
class AvgPool3DOp(Pool3DOp):
    """Mean over each window; padding counts only with `count_include_pad`."""

    name = "relay.nn.avg_pool3d"

    count_include_pad = BoolParam(False)


@irdl_op_definition
class GlobalAvgPool2DOp(TensorOp):
    """Mean over the whole H x W plane: `[N, C, H, W]` -> `[N, C, 1, 1]`
    (or channel-blocked: `layout = "NCHW<b>c"`, `DATA_LAYOUT`)."""

    name = "relay.nn.global_avg_pool2d"

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
    """Softmax along `axis`: `exp(x - max) / sum(exp(x - max))`."""

    name = "relay.nn.softmax"


@irdl_op_definition
class LogSoftmaxOp(RowNormalizationOp):
    """Log-softmax along `axis`: `x - max - log(sum(exp(x - max)))`, finite
    wherever `x` is (`log(softmax)` is -inf below float's range)."""

    name = "relay.nn.log_softmax"


@irdl_op_definition
class PadOp(TensorOp):
    """Grow each dimension by a (before, after) pair: with `pad_value`
    (`constant`), the edge element (`edge`) or the mirrored data (`reflect`)."""

    name = "relay.nn.pad"

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
    `x / (bias + alpha / size * sum of x² over size neighbours) ** beta`."""

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


# -- shape manipulation ----------------------------------------------------------


@irdl_op_definition
class ReshapeOp(TensorOp):
    """Same elements, new shape (`0` copies a dimension, one `-1` is inferred)."""

    name = "relay.reshape"

    x = operand_def(TensorType)
    newshape = IntsParam()

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return reshape_shape(shapes[0], cls.newshape.read(attributes))


@irdl_op_definition
class TransposeOp(TensorOp):
    """Permute the dimensions (default: reverse them)."""

    name = "relay.transpose"

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
    `layout_transform`): `NCHW` to `NCHW<b>c`, back, or between blocks."""

    name = "relay.layout_transform"

    x = operand_def(TensorType)
    src_layout = LayoutParam(DATA_LAYOUT)
    dst_layout = LayoutParam(DATA_LAYOUT)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        nchw = nchw_shape(shapes[0], cls.src_layout.read(attributes), "the data")
        return blocked_shape(nchw, cls.dst_layout.read(attributes), "the data")


@irdl_op_definition
class CastOp(TensorOp):
    """Each element converted to `dtype` (TVM's `cast`, ONNX's `Cast`, NumPy's
    `astype`): floats round to the nearest, to integers toward zero (a
    value out of the integer's range is undefined, as in C); to `i1`,
    nonzero is true; from `i1`, true is 1."""

    name = "relay.cast"

    x = operand_def(TensorType)
    dtype = ElementTypeParam()

    @classmethod
    def infer_element_type(
        cls,
        tensors: Sequence[TensorType[Attribute]],
        attributes: Mapping[str, Attribute],
    ) -> Attribute:
        return cls.dtype.read(attributes)

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
    mode), so no index reads outside `data`."""

    name = "relay.take"

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
class FlattenOp(TensorOp):
    """Collapse to 2-D: the dimensions before `axis`, and those from it on."""

    name = "relay.flatten"

    x = operand_def(TensorType)
    axis = IntParam(1)

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return flatten_shape(shapes[0], cls.axis.read(attributes))


@irdl_op_definition
class ConcatenateOp(TensorOp):
    """Join one or more tensors along `axis`."""

    name = "relay.concatenate"

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
        attributes: Mapping[str, Attribute] = _NO_ATTRIBUTES,
    ) -> TensorType[Attribute]:
        if not operand_types:
            raise VerifyException("concatenate needs at least one operand")
        return super().infer_result_type(operand_types, attributes)


@irdl_op_definition
class SqueezeOp(TensorOp):
    """Drop size-1 dimensions: those in `axis`, or all of them."""

    name = "relay.squeeze"

    x = operand_def(TensorType)
    axis = OptionalIntsParam()

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        return squeeze_shape(shapes[0], cls.axis.read(attributes))


@irdl_op_definition
class ExpandDimsOp(TensorOp):
    """Insert `num_newaxis` size-1 dimensions at `axis`."""

    name = "relay.expand_dims"

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
    """`x[b0:e0:s0, ...]`: one begin, end and positive stride per dimension."""

    name = "relay.strided_slice"

    x = operand_def(TensorType)
    begin = IntsParam(minimum=0)
    end = IntsParam(minimum=0)
    strides = OptionalIntsParam()

    @classmethod
    def infer_shape(
        cls, shapes: Sequence[Shape], attributes: Mapping[str, Attribute]
    ) -> Shape:
        strides = cls.strides.read(attributes) or (1,) * len(shapes[0])
        _check_minimum("strides", strides, 1)
        return strided_slice_shape(
            shapes[0], cls.begin.read(attributes), cls.end.read(attributes), strides
        )


class ReduceOp(TensorOp):
    """Base of the reductions over `axis` (default: every dimension)."""

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
    """Sum over `axis`."""

    name = "relay.sum"


@irdl_op_definition
class MeanOp(ReduceOp):
    """Mean over `axis`."""

    name = "relay.mean"


@irdl_op_definition
class LayerNormOp(TensorOp):
    """Layer normalisation over the trailing axes from `axis` (ONNX's
    `LayerNormalization`, PyTorch's `nn.LayerNorm`): each row of those axes
    becomes `(x - mean) / sqrt(var + epsilon) * gamma + beta`, `gamma` and
    `beta` of the normalised shape `x.shape[axis:]`."""

    name = "relay.nn.layer_norm"

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


TENSOR_OPS: tuple[type[TensorOp], ...] = (
    AddOp,
    SubtractOp,
    MultiplyOp,
    DivideOp,
    MaximumOp,
    MinimumOp,
    PowerOp,
    EqualOp,
    NotEqualOp,
    LessOp,
    LessEqualOp,
    GreaterOp,
    GreaterEqualOp,
    LogicalAndOp,
    LogicalOrOp,
    LogicalNotOp,
    WhereOp,
    NegativeOp,
    ExpOp,
    TanhOp,
    SigmoidOp,
    SiluOp,
    HardSwishOp,
    ReluOp,
    LogOp,
    SqrtOp,
    AbsOp,
    FloorOp,
    CeilOp,
    RoundOp,
    ErfOp,
    ClipOp,
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
    ReshapeOp,
    TransposeOp,
    LayoutTransformOp,
    CastOp,
    TakeOp,
    FlattenOp,
    ConcatenateOp,
    SqueezeOp,
    ExpandDimsOp,
    StridedSliceOp,
    SumOp,
    MeanOp,
)
"""The tensor operators, whose result types `infer_result_type` computes."""

Relay = Dialect(
    "relay",
    [
        FuncOp,
        FnOp,
        ReturnOp,
        CallOp,
        CallIndirectOp,
        TupleOp,
        GetItemOp,
        IfOp,
        YieldOp,
        OnDeviceOp,
        DeviceCopyOp,
        ConstantOp,
        ShapeOfOp,
        *TENSOR_OPS,
    ],
    [],
)
