"""Converters of Resize and Upsample (modes `nearest` and `linear`).

The sizes are static, so ONNX's formulas run at import, in float32 as
onnxruntime runs them: for each resized axis, each output position's source
coordinate (`COORDINATES`), then its source position (`nearest`, rounded
by `ROUNDINGS`) or its two neighbours and their weights (`linear`, the
coordinate clamped into the axis: the edge repeats).  The resize is then a
`relay.take` per axis, or per axis `take(x, i0) · w0 + take(x, i1) · w1`:
injective ops, which fuse into one kernel with what surrounds them, on
every target, and which the interpreter runs as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from hetero.dialects import relay
from hetero.frontends.onnx.node import Converter, Node
from hetero.interpreter.relay import element_dtype

F32 = np.float32

Coordinate = Callable[[np.ndarray, int, int, np.float32], np.ndarray]
"""(output positions, input size, output size, scale) → their coordinates
in the input, in float32 as onnxruntime computes them."""


def _half_pixel_symmetric(
    x: np.ndarray, size: int, out: int, scale: np.float32
) -> np.ndarray:
    adjustment = F32(out) / (scale * F32(size))
    offset = F32(size) / F32(2) * (F32(1) - adjustment)
    return offset + (x + F32(0.5)) / scale - F32(0.5)


def _asymmetric(x: np.ndarray, size: int, out: int, scale: np.float32) -> np.ndarray:
    """`x / scale`; for sizes onnxruntime's `x · in / out` (7 → 4: 2 · 1.75
    is 3.5, where `2 / (4 / 7)` rounds below it)."""
    return x * (F32(size) / F32(out)) if scale == F32(out) / F32(size) else x / scale


COORDINATES: dict[str, Coordinate] = {
    "half_pixel": lambda x, size, out, s: (x + F32(0.5)) / s - F32(0.5),
    "pytorch_half_pixel": lambda x, size, out, s: (
        (x + F32(0.5)) / s - F32(0.5) if out > 1 else np.zeros_like(x)
    ),
    "align_corners": lambda x, size, out, s: (
        x * F32(size - 1) / F32(out - 1) if out > 1 else np.zeros_like(x)
    ),
    "asymmetric": _asymmetric,
    "half_pixel_symmetric": _half_pixel_symmetric,
}
"""`coordinate_transformation_mode` → an output position's coordinate in
the input (`tf_crop_and_resize` is refused)."""

ROUNDINGS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "round_prefer_floor": lambda x: np.ceil(x - F32(0.5)),
    "round_prefer_ceil": lambda x: np.floor(x + F32(0.5)),
    "floor": np.floor,
    "ceil": np.ceil,
}
"""`nearest_mode` → the source position of a coordinate."""


def _text(n: Node, name: str, default: str) -> str:
    value = n.attrs.get(name, default)
    return value.decode() if isinstance(value, bytes) else str(value)


def _resize(n: Node) -> SSAValue:
    """Resize: from opset 11 the inputs are `X, roi, scales, sizes` and the
    attributes choose the coordinates and rounding; opset 10's is
    Upsample's (`X, scales`, asymmetric, nearest rounds down)."""
    if n.opset < 11:
        return _resized(n, _scales_input(n, 1), "asymmetric", "floor")
    for name, allowed in (("antialias", 0), ("exclude_outside", 0)):
        if n.attrs.get(name, allowed) != allowed:
            raise n.error(f"{name}={n.attrs[name]} is not supported")
    if _text(n, "keep_aspect_ratio_policy", "stretch") != "stretch":
        raise n.error("keep_aspect_ratio_policy other than 'stretch' is not supported")
    if n.has_input(3):
        sizes = _constant(n, 3, "sizes")
        scales = None
    else:
        sizes, scales = None, _scales_input(n, 2)
    return _resized(
        n,
        scales,
        _text(n, "coordinate_transformation_mode", "half_pixel"),
        _text(n, "nearest_mode", "round_prefer_floor"),
        sizes,
    )


def _upsample(n: Node) -> SSAValue:
    """Upsample: scales an attribute (opset 7) or an input (9); asymmetric
    coordinates, nearest rounding down."""
    scales = np.asarray(n.attrs["scales"], F32) if n.opset < 9 else _scales_input(n, 1)
    return _resized(n, scales, "asymmetric", "floor")


def _constant(n: Node, index: int, what: str) -> np.ndarray:
    if not n.is_constant(index):
        raise n.error(f"the {what} must be constants (computed at run time here)")
    return n.const(index)


def _scales_input(n: Node, index: int) -> np.ndarray:
    if not n.has_input(index):
        raise n.error("Resize needs scales or sizes")
    return _constant(n, index, "scales").astype(F32)


def _resized(
    n: Node,
    scales: np.ndarray | None,
    coordinates: str,
    rounding: str,
    sizes: np.ndarray | None = None,
) -> SSAValue:
    """`X` resized along each axis whose size or scale changes it."""
    mode = _text(n, "mode", "nearest")
    if mode not in ("nearest", "linear") or coordinates not in COORDINATES:
        raise n.error(
            f"mode '{mode}' with coordinate_transformation_mode '{coordinates}' is "
            "not supported (nearest and linear; not tf_crop_and_resize)"
        )
    if mode == "nearest" and rounding not in ROUNDINGS:
        raise n.error(f"nearest_mode '{rounding}' is not supported")
    shape = n.shape(0)
    axes = _axes(n, len(shape))
    given = scales if sizes is None else sizes
    if given is None or len(given) != len(axes):
        raise n.error(f"{len(axes)} scales or sizes expected, got {given}")
    x = n.input(0)
    for axis, value in zip(axes, given.reshape(-1)):
        size = shape[axis]
        out = int(value) if sizes is not None else int(np.floor(size * F32(value)))
        scale = F32(out) / F32(size) if sizes is not None else F32(value)
        if out == size and scale == 1:
            continue
        if size < 0 or out < 1:
            raise n.error(f"axis {axis} of size {size} resized to {out}")
        source = COORDINATES[coordinates](np.arange(out, dtype=F32), size, out, scale)
        x = _along(n, x, axis, len(shape), source, size, mode, rounding)
    return x


def _axes(n: Node, rank: int) -> list[int]:
    axes = n.attrs.get("axes")
    if axes is None:
        return list(range(rank))
    return [a % rank for a in axes]


def _along(
    n: Node,
    x: SSAValue,
    axis: int,
    rank: int,
    source: np.ndarray,
    size: int,
    mode: str,
    rounding: str,
) -> SSAValue:
    """`x` resized along `axis` to `source`'s coordinates."""
    if mode == "nearest":
        position = np.clip(ROUNDINGS[rounding](source), 0, size - 1)
        return _take(n, x, position, axis)
    clamped = np.clip(source, F32(0), F32(size - 1))
    low = np.floor(clamped)
    high = np.minimum(low + 1, size - 1)
    weight = (clamped - low).astype(F32)
    shape = (len(source),) + (1,) * (rank - axis - 1)
    terms = [
        n.op(relay.MultiplyOp, _take(n, x, p, axis), _weights(n, w, shape, x))
        for p, w in ((low, F32(1) - weight), (high, weight))
    ]
    return n.op(relay.AddOp, *terms)


def _take(n: Node, x: SSAValue, positions: np.ndarray, axis: int) -> SSAValue:
    indices = n.graph.constant(positions.astype(np.int64), "positions")
    return n.op(relay.TakeOp, x, indices, axis=axis)


def _weights(
    n: Node, weights: np.ndarray, shape: Sequence[int], like: SSAValue
) -> SSAValue:
    """`weights` along the resized axis, broadcast over the axes after it,
    of `like`'s element type."""
    type_ = like.type
    assert isinstance(type_, TensorType)
    dtype = element_dtype(type_.element_type)
    return n.graph.constant(weights.astype(dtype).reshape(shape), "weights")


CONVERTERS: dict[str, Converter] = {"Resize": _resize, "Upsample": _upsample}
"""ONNX op type → converter: the resize family's rows of `importer.CONVERTERS`."""
