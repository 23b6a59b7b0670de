"""Converters of the operators that move, select or reshape elements:
reshape, transpose, concat, pad, slice, split, gather, tile, expand, trilu."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import IntegerType, TensorType, i1
from xdsl.ir import SSAValue

from hetero.analysis.shape_functions import (
    SIZE_LIMIT,
    Dim,
    DynamicShapeError,
    same_size,
)
from hetero.dialects import relay
from hetero.frontends.onnx.folding import constant_of_shape_value
from hetero.frontends.onnx.node import Converter, Node, element_type
from hetero.frontends.onnx.sizes import (
    broadcast_to,
    carrier,
    limit,
    reshape,
    run_time_size,
)
from hetero.interpreter.relay import element_dtype


def _reshape(n: Node) -> SSAValue:
    """`0` copies a dimension and `-1` is inferred, as in relay.reshape; a
    shape of sizes known at run time only is written with them
    (`sizes.reshape`)."""
    shape = n.sizes(1) if n.is_size(1) else n.ints("shape", 1)
    if shape is None:
        raise n.error("the target shape is missing")
    if n.attrs.get("allowzero", 0) and 0 in shape:
        raise n.error("allowzero=1 with a zero in the shape is not supported")
    if n.is_size(1):
        return reshape(n, n.input(0), shape)
    return n.op(relay.ReshapeOp, n.input(0), newshape=tuple(shape))


def _flatten(n: Node) -> SSAValue:
    return n.op(relay.FlattenOp, n.input(0), axis=n.attrs.get("axis", 1))


def _transpose(n: Node) -> SSAValue:
    perm = n.attrs.get("perm")
    return n.op(
        relay.TransposeOp, n.input(0), axes=None if perm is None else tuple(perm)
    )


def _concat(n: Node) -> SSAValue:
    return n.op(relay.ConcatenateOp, *n.inputs(), axis=n.attrs.get("axis", 1))


def _squeeze(n: Node) -> SSAValue:
    """Without axes, every axis of size 1 goes: which ones, for a dynamic
    dimension, is known at run time only (refused)."""
    axes = n.ints("axes", 1)
    if axes is None and relay.DYNAMIC in n.shape(0):
        raise n.error(
            f"Squeeze without axes of {n.input(0).type}: whether a dynamic "
            "dimension goes depends on its size"
        )
    return n.op(relay.SqueezeOp, n.input(0), axis=None if axes is None else tuple(axes))


def _unsqueeze(n: Node) -> SSAValue:
    """One expand_dims per axis, in increasing order of the output position."""
    axes = n.ints("axes", 1)
    if axes is None:
        raise n.error("axes are missing")
    out_rank = len(n.shape(0)) + len(axes)
    result = n.input(0)
    for axis in sorted(a % out_rank for a in axes):
        result = n.op(relay.ExpandDimsOp, result, axis=axis)
    return result


def _pad(n: Node) -> SSAValue:
    """Pads and value are attributes before opset 11, inputs after (with
    optional `axes` from 18); ONNX lists all begins, then all ends."""
    rank = len(n.shape(0))
    pads = n.ints("pads" if n.opset < 11 else None, 1)
    if pads is None:
        raise n.error("pads are missing")
    if n.opset >= 18 and n.has_input(3):
        axes = [int(a) % rank for a in n.const(3).reshape(-1)]
        full = [0] * (2 * rank)
        for i, axis in enumerate(axes):
            full[axis], full[rank + axis] = pads[i], pads[len(axes) + i]
        pads = full
    if any(p < 0 for p in pads):
        raise n.error("negative pads (cropping) are not supported")
    if n.opset < 11:
        value = float(n.attrs.get("value", 0.0))
    else:
        value = float(n.const(2).reshape(-1)[0]) if n.has_input(2) else 0.0
    mode = n.attrs.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode not in ("constant", "edge", "reflect"):
        raise n.error(f"pad mode '{mode}' is not supported")
    widths = [w for pair in zip(pads[:rank], pads[rank:]) for w in pair]
    return n.op(
        relay.PadOp, n.input(0), pad_width=tuple(widths), pad_value=value, pad_mode=mode
    )


def slice_bounds(
    n: Node,
    x: SSAValue,
    shape: Sequence[int],
    starts: Sequence[int],
    ends: Sequence[int],
    axes: Sequence[int],
    steps: Sequence[int],
) -> SSAValue:
    """relay.strided_slice of ONNX slice parameters: negative indices count
    from the end, bounds are clamped.  An axis of negative step (`x[::-1]`)
    of a static dimension is left whole by the slice and picked afterwards
    by a `relay.take` of its positions, which relay's slice (positive
    strides) cannot express."""
    rank = len(shape)
    begin, strides = [0] * rank, [1] * rank
    end = [SIZE_LIMIT if d < 0 else d for d in shape]
    backwards: list[tuple[int, np.ndarray]] = []
    for start, stop, axis, step in zip(starts, ends, axes, steps):
        axis %= rank
        dim = shape[axis]
        if step == 0:
            raise n.error("a slice step of 0")
        if step < 0:
            backwards.append((axis, _backward_positions(n, dim, start, stop, step)))
            continue
        if dim < 0 and (start < 0 or stop < 0):
            raise n.error(
                "negative slice bounds on a dynamic dimension are not supported"
            )
        limit = dim if dim >= 0 else SIZE_LIMIT
        begin[axis] = min(max(start + dim if start < 0 else start, 0), limit)
        end[axis] = min(max(stop + dim if stop < 0 else stop, 0), limit)
        strides[axis] = step
    result = n.op(
        relay.StridedSliceOp,
        x,
        begin=tuple(begin),
        end=tuple(end),
        strides=tuple(strides),
    )
    for axis, positions in backwards:
        indices = n.graph.constant(positions, "positions")
        result = n.op(relay.TakeOp, result, indices, axis=axis)
    return result


def _backward_positions(
    n: Node, dim: int, start: int, stop: int, step: int
) -> np.ndarray:
    """The positions a slice of negative `step` picks from a dimension of
    size `dim`, by ONNX's clamping: a negative bound counts from the end,
    then `start` is clamped to [0, dim - 1] and `stop` to [-1, dim - 1]."""
    if dim < 0:
        raise n.error("negative slice steps on a dynamic dimension are not supported")
    first = min(max(start + dim if start < 0 else start, 0), dim - 1)
    last = min(max(stop + dim if stop < 0 else stop, -1), dim - 1)
    return np.arange(first, last, step, dtype=np.int64)


def _slice(n: Node) -> SSAValue:
    """Starts/ends/axes are attributes before opset 10, inputs (with steps)
    after.  An end known at run time only (`_run_time_ends`) may be its
    axis's whole size, or end a slice from 0 of a static axis (`buffer[:,
    :seq]`): a `relay.take` of `arange_like` positions, the length at most
    the axis's size (`limit`: a longer one, which ONNX would clamp, is
    refused at the call; BERT's 512 positions)."""
    shape = n.shape(0)
    starts = n.ints("starts", 1)
    if n.is_size(2):
        ends, runs = _run_time_ends(n)
    else:
        ends, runs = n.ints("ends", 2), {}
    if starts is None or ends is None:
        raise n.error("starts and ends are missing")
    axes = n.ints("axes", 3, range(len(starts)))
    steps = n.ints(None, 4, [1] * len(starts))
    assert axes is not None and steps is not None
    result = slice_bounds(n, n.input(0), shape, starts, ends, axes, steps)
    for axis, length in runs.items():
        index = axes.index(axis) if axis in axes else axes.index(axis - len(shape))
        if starts[index] != 0 or steps[index] != 1:
            raise n.error(f"a slice of axis {axis} to {length} must start at 0, step 1")
        limit(n, length, shape[axis])
        positions = n.op(
            relay.ArangeLikeOp,
            carrier(n, length, 1, 0),
            dtype=element_type(np.dtype(np.int64), "positions"),
        )
        result = n.op(relay.TakeOp, result, positions, axis=axis)
    return result


def _run_time_ends(n: Node) -> tuple[list[int], dict[int, Dim]]:
    """Slice ends that are sizes: one that is its axis's dimension (`x[:,
    :x.size(1)]`) is the end of the axis; another, on a static axis, keeps
    the axis whole here and is returned by axis (`_slice` takes it)."""
    ends, dims = n.sizes(2), n.dims_of(n.input(0))
    axes = n.ints(None, 3, range(len(ends)))
    assert axes is not None
    whole, runs = [], {}
    for end, axis in zip(ends, axes):
        if isinstance(end, Dim) and not same_size(end, dims[axis]):
            if isinstance(dims[axis], Dim):
                raise n.error(
                    f"a slice of axis {axis} ending at {end} is not supported"
                )
            runs[axis % len(dims)] = end
        whole.append(SIZE_LIMIT if isinstance(end, Dim) else end)
    return whole, runs


def _split(n: Node) -> list[SSAValue]:
    """Equal parts by default; `split` sizes as attribute (< 13) or input."""
    shape = n.shape(0)
    axis = n.attrs.get("axis", 0) % len(shape)
    sizes = n.ints("split", 1)
    if sizes is None:
        count = len(n.proto.output)
        if shape[axis] < 0:
            raise n.error("splitting a dynamic dimension is not supported")
        part = -(-shape[axis] // count)
        sizes = [min(part, shape[axis] - i * part) for i in range(count)]
    results, start = [], 0
    for size in sizes:
        results.append(
            slice_bounds(n, n.input(0), shape, [start], [start + size], [axis], [1])
        )
        start += size
    return results


def _gather(n: Node) -> SSAValue:
    """Gather along `axis`.  Constant indices (a scalar or a list, as in
    shape arithmetic): one slice per index, concatenated, which constant
    folding and dynamic dimensions take as they are; a scalar index drops
    the axis.  Run-time indices (embeddings) and constant ones of higher
    rank: `relay.take`."""
    shape = n.shape(0)
    axis = n.attrs.get("axis", 0) % len(shape)
    if not n.is_constant(1) or n.const(1).ndim > 1:
        return n.op(relay.TakeOp, n.input(0), n.input(1), axis=axis)
    indices = n.const(1)
    dim = shape[axis]
    if dim < 0 and (indices < 0).any():
        raise n.error("negative indices into a dynamic dimension are not supported")
    picks = [
        slice_bounds(
            n, n.input(0), shape, [i], [i + 1 if i != -1 else dim], [axis], [1]
        )
        for i in (int(v) for v in indices.reshape(-1))
    ]
    result = (
        picks[0] if len(picks) == 1 else n.op(relay.ConcatenateOp, *picks, axis=axis)
    )
    return n.op(relay.SqueezeOp, result, axis=(axis,)) if indices.ndim == 0 else result


def _tile(n: Node) -> SSAValue:
    """Each axis repeated by concatenating copies."""
    result = n.input(0)
    for axis, count in enumerate(int(r) for r in n.const(1).reshape(-1)):
        if count != 1:
            result = n.op(relay.ConcatenateOp, *[result] * count, axis=axis)
    return result


def _expand(n: Node) -> SSAValue:
    """Broadcast to `shape` by adding a zero splat of that shape (booleans
    as `i8`).  A shape computed at run time is the one the model declares
    for the result."""
    x = n.input(0)
    if n.is_size(1):
        return broadcast_to(n, x, n.sizes(1))
    if n.is_constant(1):
        shape = tuple(int(d) for d in n.const(1))
    elif (declared := n.graph.declared.get(n.proto.output[0])) is not None:
        shape = declared
    else:
        raise n.error(
            "the target shape must be known at import (a constant, or the "
            "result's shape declared in the model)"
        )
    try:
        target = np.broadcast_shapes(shape, tuple(max(d, 1) for d in n.shape(0)))
    except ValueError as e:
        raise n.error(f"{n.shape(0)} does not broadcast to {shape}") from e
    type_ = x.type
    assert isinstance(type_, TensorType)
    boolean = type_.element_type == i1
    if boolean:
        x = n.op(relay.CastOp, x, dtype=IntegerType(8))
    dtype = np.int8 if boolean else element_dtype(type_.element_type)
    result = n.op(relay.AddOp, x, n.graph.constant(np.zeros(target, dtype), "zeros"))
    return n.op(relay.CastOp, result, dtype=i1) if boolean else result


def _gather_elements(n: Node) -> SSAValue:
    """`data[..., indices[i...], ...]` at each position of `indices` along
    `axis`: a `relay.take` from the flattened data at flat positions --
    computed at import for constant indices, else by index arithmetic on
    them (`indices * stride + offset`, a negative index first wrapped).  An
    axis of the indices whose size is known at run time only (a dynamic
    batch: RoBERTa's position ids) adds its positions by
    `relay.arange_like`; the data's strides and the gathered axis must be
    static."""
    shape = n.dims_of(n.input(0))
    axis = n.attrs.get("axis", 0) % len(shape)
    strides = [math.prod(shape[i + 1 :]) for i in range(len(shape))]
    if isinstance(shape[axis], Dim) or any(isinstance(s, Dim) for s in strides):
        raise n.error(
            f"GatherElements of {list(shape)} needs static sizes but the first"
        )
    flat = n.op(relay.ReshapeOp, n.input(0), newshape=(-1,))
    if n.is_constant(1):
        indices = n.const(1).astype(np.int64)
        indices = np.where(indices < 0, indices + shape[axis], indices)
        offsets = _offsets(indices.shape, strides, axis)
        positions = n.graph.constant(offsets + indices * strides[axis], "positions")
        return n.op(relay.TakeOp, flat, positions, axis=0)
    indices, index_shape = n.input(1), n.dims_of(n.input(1))
    index_type = indices.type
    assert isinstance(index_type, TensorType)
    wrapped = n.op(
        relay.WhereOp,
        n.op(relay.LessOp, indices, n.scalar(0, indices)),
        n.op(relay.AddOp, indices, n.scalar(shape[axis], indices)),
        indices,
    )
    positions = n.op(relay.MultiplyOp, wrapped, n.scalar(strides[axis], wrapped))
    static = [d if isinstance(d, int) else 1 for d in index_shape]
    offsets = _offsets(static, strides, axis, skip=index_shape)
    offsets = offsets.astype(element_dtype(index_type.element_type))
    positions = n.op(relay.AddOp, positions, n.graph.constant(offsets, "offsets"))
    for i, size in enumerate(index_shape):
        if isinstance(size, Dim) and i != axis:
            along = n.op(
                relay.ArangeLikeOp,
                indices,
                axis=i,
                step=strides[i],
                dtype=index_type.element_type,
            )
            newshape = tuple(-1 if j == i else 1 for j in range(len(index_shape)))
            along = n.op(relay.ReshapeOp, along, newshape=newshape)
            positions = n.op(relay.AddOp, positions, along)
    return n.op(relay.TakeOp, flat, positions, axis=0)


def _offsets(
    shape: Sequence[int],
    strides: Sequence[int],
    axis: int,
    skip: Sequence[int | Dim] = (),
) -> np.ndarray:
    """The flat offset of each position of `shape` along every axis but
    `axis` (and those whose size in `skip` is known at run time only)."""
    terms = [
        g * stride
        for i, (g, stride) in enumerate(zip(np.indices(shape), strides))
        if i != axis and not (i < len(skip) and isinstance(skip[i], Dim))
    ]
    return sum(terms, np.zeros(shape, np.int64))


def _gather_nd(n: Node) -> SSAValue:
    """`data[b..., indices[b..., i..., :]]`: the last axis of `indices`
    indexes the K axes of the data after its `batch_dims` leading ones
    (which `indices` shares).  A `relay.take` from the data with those
    axes flattened into one (batches included), at positions computed at
    import for constant indices (the dynamo exporter's mask indexing), else
    by index arithmetic on each column of them (negative indices wrapped,
    times the stride; no integer `relay.sum`, which lower-te lacks).

    Without `batch_dims`, the indexed axes may have sizes known at run time
    only (a mask's batch and sequence): their strides and the wrapping of
    negative indices take them as tensors (`sizes.run_time_size`); the
    batch of `indices` may be dynamic too."""
    shape, index_shape = n.dims_of(n.input(0)), n.shape(1)
    last = len(index_shape) - 1
    count = index_shape[last]
    batch = n.attrs.get("batch_dims", 0)
    indexed, rest = shape[batch : batch + count], shape[batch + count :]
    fixed = (*shape[:batch], *rest, *(indexed if batch else ()))
    if count < 0 or any(isinstance(d, Dim) for d in fixed):
        raise n.error(
            f"GatherND of {list(shape)} needs static sizes but for the indexed "
            "axes without batch_dims"
        )
    strides = [math.prod(indexed[i + 1 :]) for i in range(count)]
    flat = n.op(relay.ReshapeOp, n.input(0), newshape=(-1, *rest))
    if n.is_constant(1) and not any(isinstance(d, Dim) for d in indexed):
        indices = n.const(1).astype(np.int64)
        indices = np.where(indices < 0, indices + np.array(indexed), indices)
        offsets = _batch_offsets(shape[:batch], math.prod(indexed), indices.ndim)
        positions = n.graph.constant(indices @ np.array(strides) + offsets, "positions")
        return n.op(relay.TakeOp, flat, positions, axis=0)
    indices = n.input(1)
    index_type = indices.type
    assert isinstance(index_type, TensorType)
    dtype = element_dtype(index_type.element_type)
    offsets = _batch_offsets(shape[:batch], math.prod(indexed), last + 1)
    positions = n.graph.constant(offsets.astype(dtype), "offsets")
    for k, (size, stride) in enumerate(zip(indexed, strides)):
        index = n.op(
            relay.SqueezeOp,
            slice_bounds(n, indices, index_shape, [k], [k + 1], [last], [1]),
            axis=(last,),
        )
        index = n.op(
            relay.WhereOp,
            n.op(relay.LessOp, index, n.scalar(0, index)),
            n.op(relay.AddOp, index, _size_of(n, size, index)),
            index,
        )
        scaled = n.op(relay.MultiplyOp, index, _size_of(n, stride, index))
        positions = n.op(relay.AddOp, positions, scaled)
    return n.op(relay.TakeOp, flat, positions, axis=0)


def _size_of(n: Node, size: int | Dim, like: SSAValue) -> SSAValue:
    """A rank-0 tensor of `like`'s element type holding `size`."""
    if isinstance(size, int):
        return n.scalar(size, like)
    type_ = like.type
    assert isinstance(type_, TensorType)
    value = run_time_size(n, size, element_dtype(type_.element_type))
    return n.op(relay.ReshapeOp, value, newshape=())


def _batch_offsets(
    batches: Sequence[int | Dim], block: int | Dim, rank: int
) -> np.ndarray:
    """Each batch's first flat position (a block apart), shaped to broadcast
    over the `rank`-dimensional indices' positions (0 without batches)."""
    if not batches:
        return np.zeros((1,) * (rank - 1), np.int64)
    assert isinstance(block, int)
    starts = np.arange(math.prod(batches), dtype=np.int64) * block
    return starts.reshape(*batches, *(1,) * (rank - 1 - len(batches)))


def _trilu(n: Node) -> SSAValue:
    """The upper (or lower) triangle of the last two axes from diagonal
    `k`, the rest zero: a `relay.where` with a constant mask."""
    shape = n.shape(0)
    rows, columns = shape[-2:]
    if rows < 0 or columns < 0:
        raise n.error("Trilu needs static sizes of the last two axes")
    k = int(n.const(1).reshape(-1)[0]) if n.has_input(1) else 0
    ones = np.ones((rows, columns), dtype=np.bool_)
    mask = np.triu(ones, k) if n.attrs.get("upper", 1) else np.tril(ones, k)
    x = n.input(0)
    return n.op(relay.WhereOp, n.graph.constant(mask, "triangle"), x, n.scalar(0, x))


def _range(n: Node) -> SSAValue:
    """Folded at import when its inputs are constants (`folding`).  A
    length known at run time only (`arange(batch)` of a model with a
    dynamic batch) is a `relay.arange_like` over a tensor of that length
    (`carrier`); the length cannot depend on run-time values otherwise."""
    if not any(n.is_size(i) for i in range(3)):
        raise n.error(
            "start, limit and delta must be constants (the length is the shape)"
        )
    start, limit, delta = (n.sizes(i)[0] for i in range(3))
    if not (isinstance(start, int) and isinstance(delta, int) and delta > 0):
        raise n.error("a range of run-time length needs constant start and delta > 0")
    try:
        length = (limit - start) // delta
    except DynamicShapeError as e:
        raise n.error(f"the length of range({start}, {limit}, {delta}): {e}") from None
    dtype = n.graph.sizes[n.proto.input[0]].dtype if n.is_size(0) else n.const(0).dtype
    return n.op(
        relay.ArangeLikeOp,
        carrier(n, length, 1, 0),
        start=start,
        step=delta,
        dtype=element_type(dtype, "Range"),
    )


def _constant_of_shape(n: Node) -> SSAValue:
    """Folded at import for a constant shape (`folding`); of sizes known at
    run time only, the value broadcast to them."""
    value = constant_of_shape_value(n.attrs)
    return broadcast_to(n, n.graph.constant(value, "value"), n.sizes(0))


def _run_time_shape(n: Node) -> SSAValue:
    """`Shape` and `Size` fold at import when their input's type is static;
    they reach a converter only for a value with dynamic dimensions (a
    model imported with `batch="dynamic"`), whose shape arithmetic the
    importer does not carry to run time: say so, rather than call the
    operator unsupported."""
    raise n.error(
        f"the shape of a value with dynamic dimensions ({n.input(0).type}) is "
        "known only at run time; shape arithmetic on it is not supported"
    )


def _block(n: Node) -> int:
    """DepthToSpace's and SpaceToDepth's `blocksize`, positive."""
    block = n.attrs.get("blocksize", 0)
    if block < 1:
        raise n.error(f"blocksize must be positive, got {block}")
    return block


def _image_dims(n: Node) -> tuple[int, int, int]:
    """The static channels, height and width of an NCHW input."""
    shape = n.shape(0)
    if len(shape) != 4 or any(d < 0 for d in shape[1:]):
        raise n.error(f"{n.proto.op_type} takes NCHW data of static C, H, W")
    return shape[1], shape[2], shape[3]


DEPTH_TO_SPACE: dict[
    str, Callable[[int, int], tuple[tuple[int, ...], tuple[int, ...]]]
] = {
    "DCR": lambda b, c: ((b, b, c), (0, 3, 4, 1, 5, 2)),
    "CRD": lambda b, c: ((c, b, b), (0, 1, 4, 2, 5, 3)),
}
"""DepthToSpace's mode → (block size, output channels) → how the channels
split (after the batch, before the rows and columns) and the transpose
that interleaves them with the rows and columns."""


def _depth_to_space(n: Node) -> SSAValue:
    """Channels into blocks of pixels: a reshape that splits the channels, a
    transpose that interleaves them with the rows and columns, a reshape
    (DCR: the block's offsets outermost in the channels; CRD: innermost)."""
    b = _block(n)
    c, h, w = _image_dims(n)
    if c % (b * b):
        raise n.error(f"{c} channels do not split into blocks of {b}x{b}")
    mode = n.attrs.get("mode", b"DCR")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode not in DEPTH_TO_SPACE:
        raise n.error(f"mode '{mode}' is not supported")
    split, order = DEPTH_TO_SPACE[mode](b, c // (b * b))
    x = n.op(relay.ReshapeOp, n.input(0), newshape=(-1, *split, h, w))
    x = n.op(relay.TransposeOp, x, axes=order)
    return n.op(relay.ReshapeOp, x, newshape=(-1, c // (b * b), h * b, w * b))


def _space_to_depth(n: Node) -> SSAValue:
    """Blocks of pixels into channels (DepthToSpace's DCR inverse)."""
    b = _block(n)
    c, h, w = _image_dims(n)
    if h % b or w % b:
        raise n.error(f"{h}x{w} pixels do not split into blocks of {b}x{b}")
    x = n.op(relay.ReshapeOp, n.input(0), newshape=(-1, c, h // b, b, w // b, b))
    x = n.op(relay.TransposeOp, x, axes=(0, 3, 5, 1, 2, 4))
    return n.op(relay.ReshapeOp, x, newshape=(-1, c * b * b, h // b, w // b))


CONVERTERS: dict[str, Converter] = {
    "Shape": _run_time_shape,
    "ConstantOfShape": _constant_of_shape,
    "Size": _run_time_shape,
    "Reshape": _reshape,
    "Flatten": _flatten,
    "Transpose": _transpose,
    "Concat": _concat,
    "Squeeze": _squeeze,
    "Unsqueeze": _unsqueeze,
    "Pad": _pad,
    "Slice": _slice,
    "Split": _split,
    "Gather": _gather,
    "Tile": _tile,
    "Expand": _expand,
    "GatherElements": _gather_elements,
    "GatherND": _gather_nd,
    "Trilu": _trilu,
    "Range": _range,
    "DepthToSpace": _depth_to_space,
    "SpaceToDepth": _space_to_depth,
}
"""ONNX op type → converter: the transform family's rows of `importer.CONVERTERS`."""
