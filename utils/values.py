"""SSA values crossing a region's boundary: the ones it uses from outside
(`free_values`), and rebinding them inside (`replace_within`).

Outlining passes (`split-host-device`, `outline-compiler-functions`, the
parallel loops of `convert-tir-to-scf`) ask both of regions deep in large
functions.  Each is one walk of the region: asking `is_ancestor` of every
operand, or scanning every use of a value (a constant used all over the
function), costs the depth of the nest or the size of the function each
time."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from xdsl.ir import Block, Operation, Region, SSAValue


def free_values(region: Region) -> list[SSAValue]:
    """The values used in `region` but defined outside it, in order of first use."""
    ops = list(region.walk())
    inside = set(ops)
    found: dict[SSAValue, None] = {}
    for op in ops:
        for value in op.operands:
            owner = value.owner
            if isinstance(owner, Block):
                defined = owner.parent is region or owner.parent_op() in inside
            else:
                defined = owner in inside
            if not defined:
                found[value] = None
    return list(found)


def replace_within(
    ops: Iterable[Operation], mapping: Mapping[SSAValue, SSAValue]
) -> None:
    """Make each operand of `ops` that is a key of `mapping` its value."""
    for op in ops:
        for index, operand in enumerate(op.operands):
            if (new := mapping.get(operand)) is not None:
                op.operands[index] = new
