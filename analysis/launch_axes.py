"""The launch axes of a GPU kernel and the rule that gives each its extent.

`lower-device-kernel-launch` computes the extents on the host and
`convert-tir-to-gpu` records them on the `gpu.func` and guards shorter
loops; both must agree on which loop gives an axis its extent, so the rule
lives here once.
"""

from __future__ import annotations

from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from hetero.dialects.tir import ForOp, PrimFuncOp
from hetero.utils.diagnostics import HeteroError

GRID_AXES = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
BLOCK_AXES = ("threadIdx.x", "threadIdx.y", "threadIdx.z")
LAUNCH_AXES = GRID_AXES + BLOCK_AXES
"""The thread axes that are launch dimensions (`vthread`s stay loops)."""


def launch_loops(kernel: PrimFuncOp) -> dict[str, ForOp]:
    """Launch axis → the loop whose extent (`ub`) is the axis' launch extent,
    in first-appearance order.

    An axis bound by several loops is launched with the largest of their
    constant extents (the shorter loops are guarded in the kernel), else with
    the one extent value all of them share; anything else is an error.
    """
    loops: dict[str, ForOp] = {}
    for op in kernel.walk():
        if not isinstance(op, ForOp) or not op.is_thread_bound:
            continue
        assert op.thread_tag is not None
        tag = op.thread_tag.data
        if tag not in LAUNCH_AXES:
            continue
        known = loops.setdefault(tag, op)
        if known.ub is op.ub:
            continue
        first, this = const_evaluate_operand(known.ub), const_evaluate_operand(op.ub)
        if first is None or this is None:
            raise HeteroError(
                f"@{kernel.sym_name.data} binds '{tag}' again with another extent, "
                "not both constant; the launch extent of an axis is the largest one",
                op,
            )
        if this > first:
            loops[tag] = op
    return loops
