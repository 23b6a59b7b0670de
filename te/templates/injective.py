"""The injective ops' templates, which only move elements (any element
type): reshapes, transposes and the other views, layout transforms and the
views of blocked layouts that the heavy ops read through, take,
concatenate, pad and strided_slice."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Operation, SSAValue

from hetero.analysis.shape_functions import Dim, DynamicShapeError, same_size
from hetero.dialects import relay
from hetero.te.emit import Emitter, Index, Tensor
from hetero.te.templates.base import LazyTemplate, channel_axis, result_shape


def _has_elements(shape: Sequence[int | Dim]) -> bool:
    """A `Dim` is at least 1 (`shape_functions`)."""
    return all(isinstance(d, Dim) or d for d in shape)


def _strides(shape: Sequence[int | Dim]) -> list[int | Dim]:
    """Row-major element strides."""
    return [math.prod(shape[i + 1 :]) for i in range(len(shape))]


def reshape_groups(
    source: Sequence[int], target: Sequence[int]
) -> list[tuple[list[int], list[int]]]:
    """The dimensions of `source` and of `target` (shapes of one size) in
    consecutive groups of equal size, as small as can be: a reshape maps
    each group of `target` onto the same group of `source` alone
    (`[N, C, H, W]` to `[N, g, C/g, H, W]`: `C` to `g, C/g`, the others
    one to one).  A dimension of size 1 left over is a group of its own.
    Sizes known at run time only (`Dim`s) are grouped by `_dynamic_groups`."""
    if any(isinstance(d, Dim) for d in (*source, *target)):
        return _dynamic_groups(source, target)
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(source) or j < len(target):
        a: list[int] = []
        b: list[int] = []
        size_a = size_b = 1
        if i < len(source):
            a.append(i)
            size_a, i = source[i], i + 1
        if j < len(target):
            b.append(j)
            size_b, j = target[j], j + 1
        while size_a != size_b:
            if size_a < size_b:
                a.append(i)
                size_a, i = size_a * source[i], i + 1
            else:
                b.append(j)
                size_b, j = size_b * target[j], j + 1
        groups.append((a, b))
    return groups


def _dynamic_groups(
    source: Sequence[int | Dim], target: Sequence[int | Dim]
) -> list[tuple[list[int], list[int]]]:
    """`reshape_groups` where some sizes are `Dim`s, asking nothing about
    their values: a static 1 is a group of its own, and a group grows on the
    side whose size divides the other's (exactly, as expressions) until the
    two are the same expression; where neither divides, the rest is one
    group.  Any grouping into groups of equal size is right."""
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(source) or j < len(target):
        if i < len(source) and _is_one(source[i]):
            groups.append(([i], []))
            i += 1
        elif j < len(target) and _is_one(target[j]):
            groups.append(([], [j]))
            j += 1
        else:
            a, b = [i], [j]
            size_a, size_b, i, j = source[i], target[j], i + 1, j + 1
            while not same_size(size_a, size_b):
                if i < len(source) and _divides(size_a, size_b):
                    a.append(i)
                    size_a, i = size_a * source[i], i + 1
                elif j < len(target) and _divides(size_b, size_a):
                    b.append(j)
                    size_b, j = size_b * target[j], j + 1
                else:
                    a.extend(range(i, len(source)))
                    b.extend(range(j, len(target)))
                    i, j = len(source), len(target)
                    break
            groups.append((a, b))
    return groups


def _is_one(size: int | Dim) -> bool:
    return isinstance(size, int) and size == 1


def _divides(small: int | Dim, large: int | Dim) -> bool:
    """`large` is `small` times a product of sizes, whatever the sizes."""
    if isinstance(large, int):
        return isinstance(small, int) and large % small == 0
    try:
        large // small
    except DynamicShapeError:
        return False
    return True


def _reshape(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """Same row-major order, group by group (`reshape_groups`): a dimension
    kept as it is keeps its index (an image's rows and columns stay affine,
    for the vectorizer); within a group the output index is linearised and
    split for the input.  `reshape_like`'s second operand only gives the
    shape."""
    x = inputs[0]
    shape = result_shape(op)
    groups = reshape_groups(x.shape, shape) if _has_elements(shape) else None
    # A group's flat index is below its size, so its outermost dimension
    # needs no remainder: left out where sizes are dynamic (a remainder in a
    # vectorized loop, which an attention's fused views read in its
    # products), kept for static ones (their code stays as it is).
    dynamic = any(isinstance(d, Dim) for d in (*x.shape, *shape))

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        if groups is None:  # no element is ever read
            return x.load(e, [0] * len(x.shape))
        source: list[Index] = [0] * len(x.shape)
        for a, b in groups:
            if len(a) == 1 and len(b) == 1:
                source[a[0]] = idx[b[0]]
                continue
            flat: Index = 0
            for d, stride in zip(b, _strides([shape[d] for d in b])):
                flat = e.add(flat, e.mul(idx[d], stride))
            for d, stride in zip(a, _strides([x.shape[d] for d in a])):
                split = e.div(flat, stride)
                outermost = dynamic and d == a[0]
                source[d] = split if outermost else e.rem(split, x.shape[d])
        return x.load(e, source)

    return Tensor(shape, x.element_type, load)


def nchw(tensor: Tensor, layout: str) -> Tensor:
    """`tensor`, in data layout `layout` (`relay.DATA_LAYOUT`), read as `NCHW`."""
    if not (block := relay.data_block(layout)):
        return tensor
    n, blocks, h, w, _ = tensor.shape
    return Tensor(
        (n, blocks * block, h, w),
        tensor.element_type,
        lambda e, idx: tensor.load(
            e, [idx[0], e.div(idx[1], block), *idx[2:], e.rem(idx[1], block)]
        ),
    )


def blocked_index(e: Emitter, idx: Sequence[Index], layout: str) -> list[Index]:
    """Where `NCHW` element `idx` lies in data layout `layout`."""
    if not (block := relay.data_block(layout)):
        return list(idx)
    n, c, y, x = idx
    return [n, e.div(c, block), y, x, e.rem(c, block)]


def _layout_transform(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    assert isinstance(op, relay.LayoutTransformOp)
    source = nchw(inputs[0], op.src_layout)
    if not (block := relay.data_block(op.dst_layout)):
        return Tensor(result_shape(op), source.element_type, source.load)
    return Tensor(
        result_shape(op),
        source.element_type,
        lambda e, idx: source.load(
            e, [idx[0], e.add(e.mul(idx[1], block), idx[4]), *idx[2:4]]
        ),
    )


def _transpose(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    assert isinstance(op, relay.TransposeOp)
    (x,) = inputs
    rank = len(x.shape)
    axes = [a + rank if a < 0 else a for a in (op.axes or reversed(range(rank)))]

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        source: list[Index] = [0] * rank
        for out_dim, in_dim in enumerate(axes):
            source[in_dim] = idx[out_dim]
        return x.load(e, source)

    return Tensor(result_shape(op), x.element_type, load)


def _take(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """Output element `idx` reads `data` at `idx` with the `indices` element
    at `idx[axis : axis + rank(indices)]` in place of those dimensions,
    that index counted from the end if negative and clamped into the axis
    (`relay.take`), so no element is read out of bounds."""
    assert isinstance(op, relay.TakeOp)
    data, indices = inputs
    axis = op.axis % len(data.shape)
    rank, extent = len(indices.shape), data.shape[axis]

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        raw = indices.load(e, idx[axis : axis + rank])
        picked = e.op(arith.IndexCastOp(raw, IndexType()))
        negative = e.op(arith.CmpiOp(picked, e.index(0), "slt"))
        wrapped = e.op(arith.SelectOp(negative, e.index(e.add(picked, extent)), picked))
        low = e.op(arith.MaxSIOp(wrapped, e.index(0)))
        clamped = e.op(arith.MinSIOp(low, e.index(e.sub(extent, 1))))
        return data.load(e, [*idx[:axis], clamped, *idx[axis + rank :]])

    return Tensor(result_shape(op), data.element_type, load)


def _squeeze(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """The dropped dimensions have size 1: read them at 0."""
    (x,) = inputs
    axis = op.axis  # type: ignore[attr-defined]
    if axis is None:
        kept = [i for i, d in enumerate(x.shape) if d != 1]
    else:  # (asks nothing of the sizes, which may be known at run time only)
        dropped = {a + len(x.shape) if a < 0 else a for a in axis}
        kept = [i for i in range(len(x.shape)) if i not in dropped]

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        source: list[Index] = [0] * len(x.shape)
        for out_dim, in_dim in enumerate(kept):
            source[in_dim] = idx[out_dim]
        return x.load(e, source)

    return Tensor(result_shape(op), x.element_type, load)


def _expand_dims(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """The new dimensions have size 1: skip their indices."""
    assert isinstance(op, relay.ExpandDimsOp)
    (x,) = inputs
    at = op.axis + len(x.shape) + 1 if op.axis < 0 else op.axis
    count = op.num_newaxis

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        return x.load(e, [*idx[:at], *idx[at + count :]])

    return Tensor(result_shape(op), x.element_type, load)


def _concatenate(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """Read in place, which input an element comes from is decided by
    `scf.if`s on the axis index, so only the chosen input is read; stored
    whole, the inputs are its parts (one branch-free copy each)."""
    shape = result_shape(op)
    axis = channel_axis(op, len(shape))
    starts = [0]
    for x in inputs:
        starts.append(starts[-1] + x.shape[axis])

    def load_from(e: Emitter, idx: Sequence[Index], k: int) -> SSAValue:
        local = [*idx[:axis], e.sub(idx[axis], starts[k]), *idx[axis + 1 :]]
        if k == len(inputs) - 1:
            return inputs[k].load(e, local)
        before_next = e.op(
            arith.CmpiOp(e.index(idx[axis]), e.index(starts[k + 1]), "slt")
        )
        return e.choose(
            before_next,
            inputs[k].element_type,
            lambda t: inputs[k].load(t, local),
            lambda f: load_from(f, idx, k + 1),
        )

    parts = tuple(
        (x, tuple(start if i == axis else 0 for i in range(len(shape))))
        for x, start in zip(inputs, starts)
    )
    return Tensor(
        shape, inputs[0].element_type, lambda e, idx: load_from(e, idx, 0), parts
    )


def unblocked(weight: Tensor, count: int, block: int) -> Tensor:
    """A weight blocked along its first axis (`[blocks, ..., block]`:
    `OIHW<b>o`, `NK<b>n`) read as `[count, ...]`."""
    return Tensor(
        (count, *weight.shape[1:-1]),
        weight.element_type,
        lambda e, idx: weight.load(
            e, [e.div(idx[0], block), *idx[1:], e.rem(idx[0], block)]
        ),
    )


def _edge_index(e: Emitter, i: Index, size: int) -> Index:
    """`clamp(i, 0, size - 1)`: the `edge` mode of pad."""
    low = e.op(arith.MaxSIOp(e.index(i), e.index(0)))
    return e.op(arith.MinSIOp(low, e.index(size - 1)))


def _abs_index(e: Emitter, i: Index) -> Index:
    return e.op(arith.MaxSIOp(e.index(i), e.index(e.sub(0, i))))


def _reflect_index(e: Emitter, i: Index, size: int) -> Index:
    """`(size-1) - |(size-1) - |i||`: mirror without repeating the edge, for
    -size < i < 2*size - 1 (the verifier keeps pads below the size)."""
    return e.sub(size - 1, _abs_index(e, e.sub(size - 1, _abs_index(e, i))))


_PAD_SOURCE: dict[str, Callable[[Emitter, Index, int], Index]] = {
    "edge": _edge_index,
    "reflect": _reflect_index,
}


def _pad(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """`constant`: the input element when every index is inside it (an
    `scf.if`, so nothing is read out of bounds), else `pad_value`; `edge`
    and `reflect`: the input element at a remapped index."""
    assert isinstance(op, relay.PadOp)
    (x,) = inputs
    before = op.pad_width[::2]
    mode = op.pad_mode

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        local = [e.sub(i, b) for i, b in zip(idx, before)]
        if mode in _PAD_SOURCE:
            remap = _PAD_SOURCE[mode]
            return x.load(e, [remap(e, i, n) for i, n in zip(local, x.shape)])
        inside = e.all_of([e.in_range(i, 0, n) for i, n in zip(local, x.shape)])
        if isinstance(inside, bool):
            if inside:
                return x.load(e, local)
            return e.constant(op.pad_value, x.element_type)
        return e.choose(
            inside,
            x.element_type,
            lambda t: x.load(t, local),
            lambda f: f.constant(op.pad_value, x.element_type),
        )

    return Tensor(result_shape(op), x.element_type, load)


def _strided_slice(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """Output index i reads input index begin + i * stride."""
    assert isinstance(op, relay.StridedSliceOp)
    (x,) = inputs
    strides = op.strides or (1,) * len(x.shape)

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        return x.load(
            e, [e.add(b, e.mul(i, s)) for i, b, s in zip(idx, op.begin, strides)]
        )

    return Tensor(result_shape(op), x.element_type, load)


VIEW_OPS: frozenset[type[Operation]] = frozenset(
    {
        relay.ReshapeOp,
        relay.TransposeOp,
        relay.FlattenOp,
        relay.SqueezeOp,
        relay.ExpandDimsOp,
    }
)
"""Injective ops that only renumber their input's elements: inside a
kernel, index arithmetic on the way to a load."""


TEMPLATES: dict[type[Operation], LazyTemplate] = {
    relay.ReshapeOp: _reshape,
    relay.ReshapeLikeOp: _reshape,
    relay.FlattenOp: _reshape,
    relay.TransposeOp: _transpose,
    relay.LayoutTransformOp: _layout_transform,
    relay.TakeOp: _take,
    relay.SqueezeOp: _squeeze,
    relay.ExpandDimsOp: _expand_dims,
    relay.ConcatenateOp: _concatenate,
    relay.PadOp: _pad,
    relay.StridedSliceOp: _strided_slice,
}
"""Injective op → template returning its lazy result."""
