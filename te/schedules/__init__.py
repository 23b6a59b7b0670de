"""Schedules of the heavy ops (dense/matmul, conv2d, pooling), per device type.

`lower-te`'s templates describe such an op as a problem
(`hetero.te.schedules.problems`) and look the schedule up here by the
device type of the function's target; a device type without an entry gets
the templates' plain loop nests.  Another target registers its own schedules
by adding entries to `SCHEDULES`, and says which conv2d weight layout its
schedule wants in `WEIGHT_BLOCKS`, and which dense weight layout its GEMM
schedule wants in `DENSE_WEIGHT_BLOCKS` (`alter-op-layout` packs constant
weights so at compile time) and of the data in `DATA_BLOCKS`
(`alter-data-layout` blocks the activations between convolutions).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import Attribute

from hetero.dialects.target import TargetAttr
from hetero.dialects.target.kind import DeviceType
from hetero.te.emit import Emitter
from hetero.te.schedules import (
    cpu_conv2d,
    cpu_conv2d_lanes,
    cpu_gemm,
    cpu_pool,
    cpu_winograd,
    gpu_conv,
)
from hetero.te.schedules import gpu as gpu_schedules
from hetero.te.schedules.problems import Conv2D, Gemm, Pool2D

Problem = Gemm | Conv2D | Pool2D
Schedule = Callable[[Emitter, Problem, TargetAttr | None], None]

SCHEDULES: dict[tuple[DeviceType, type[Problem]], Schedule] = {
    (DeviceType.cpu, Gemm): cpu_gemm.gemm,  # type: ignore[dict-item]
    (DeviceType.cpu, Conv2D): cpu_conv2d.conv2d,  # type: ignore[dict-item]
    (DeviceType.cpu, Pool2D): cpu_pool.pool2d,  # type: ignore[dict-item]
    (DeviceType.cuda, Gemm): gpu_schedules.gemm,  # type: ignore[dict-item]
    (DeviceType.cuda, Conv2D): gpu_conv.conv2d,  # type: ignore[dict-item]
}
"""(device type, problem) → the schedule emitting its TIR."""

WeightBlock = Callable[
    [Sequence[int], Sequence[int], int, Attribute, TargetAttr | None, bool], int
]
"""(OIHW weight shape, NCHW output shape, groups, element type, target,
whether its data or output is blocked) → the output-channel block `b` of
the `OIHW<b>o` weight layout the conv2d schedule wants (0: `OIHW`)."""

WEIGHT_BLOCKS: dict[DeviceType, WeightBlock] = {
    DeviceType.cpu: cpu_conv2d.conv2d_weight_block
}
"""Device type → what its conv2d schedule wants of the weights' layout
(`alter-op-layout` asks; a device type without an entry keeps `OIHW`)."""

DenseWeightBlock = Callable[[Sequence[int], int, Attribute, TargetAttr | None], int]
"""(`NK` weight shape, rows of the data, element type, target) → the panel
width `b` of the `NK<b>n` weight layout the GEMM schedule wants for a dense
(0: `NK`)."""

DENSE_WEIGHT_BLOCKS: dict[DeviceType, DenseWeightBlock] = {
    DeviceType.cpu: cpu_gemm.dense_weight_block
}
"""Device type → what its GEMM schedule wants of a dense weight's layout
(`alter-op-layout` asks; a device type without an entry keeps `NK`)."""

WinogradTile = Callable[
    [
        Sequence[int],
        Sequence[int],
        Sequence[int],
        Sequence[int],
        int,
        Attribute,
        TargetAttr | None,
        bool,
    ],
    tuple[int, int],
]
"""(OIHW weight shape, NCHW output shape, strides, dilation, groups, element
type, target, whether its data or output is blocked) → the output tile `m`
and the output-channel block `b` of the `winograd<m>_OI<b>o` weight layout
(a 3x3 weight in the Winograd domain of F(m x m, 3 x 3)) the conv2d schedule
wants; (0, 0): none."""

WINOGRAD_TILES: dict[DeviceType, WinogradTile] = {
    DeviceType.cpu: cpu_winograd.conv2d_winograd_tile
}
"""Device type → whether its conv2d schedule wants a weight in the Winograd
domain (`alter-op-layout` asks before `WEIGHT_BLOCKS`)."""

DataBlock = Callable[[Sequence[int], int, Attribute, TargetAttr | None, bool], int]
"""(OIHW weight shape, groups, element type, target, whether the data comes
blocked) → the channel block `b` of the `NCHW<b>c` layout the conv2d
schedule wants its data and output in (0: `NCHW`)."""

DATA_BLOCKS: dict[DeviceType, DataBlock] = {
    DeviceType.cpu: cpu_conv2d_lanes.conv2d_data_block
}
"""Device type → what its conv2d schedule wants of the activations' layout
(`alter-data-layout` asks; a device type without an entry keeps `NCHW`)."""


SPREADS_TRANSPOSED = {DeviceType.cpu}
"""Device types whose conv2d schedule also runs strided transposed
convolutions, on the input spread out with zeros (`lower-te`'s
`conv2d_transpose`): a CPU's register tiles still do that faster than the
direct nest, while a GPU thread of the direct nest skips the zeros and needs
no buffer for the spread input."""


def _device(target: TargetAttr | None) -> DeviceType:
    return DeviceType.cpu if target is None else target.device_type


def problem_schedule(
    target: TargetAttr | None, problem: type[Problem]
) -> Schedule | None:
    """The schedule for `problem` on `target` (no target: the host CPU)."""
    return SCHEDULES.get((_device(target), problem))


def spreads_transposed(target: TargetAttr | None) -> bool:
    """Whether strided transposed convolutions on `target` go through its
    conv2d schedule (`SPREADS_TRANSPOSED`)."""
    return _device(target) in SPREADS_TRANSPOSED
