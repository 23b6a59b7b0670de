"""Shape inference of the relay tensor operators: pure functions on shapes.

Each tensor operator's `infer_shape` is one of these applied to its operand
shapes and attribute values, so they are shared by every op of a family and
testable without building IR.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from io import StringIO

from xdsl.dialects.builtin import DYNAMIC_INDEX
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.relay.layouts import (
    data_block,
    dense_block,
    kernel_block,
    winograd_tile,
)

DYNAMIC: int = DYNAMIC_INDEX
"""A dynamic dimension (`?`) in a shape, as xDSL stores it."""

Shape = tuple[int, ...]
Value = SSAValue | Operation
"""What the Python constructors accept as an operand."""


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
        else:  # len(range(...)), in arithmetic that sizes known at run time take
            start, stop = min(b, dim), min(e, dim)
            out.append(max(0, (stop - start + (s - 1)) // s))
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
