"""`merge-compiler-regions`: group connected annotated ops into regions.

After `annotate-target` every op an external kind takes carries
`relay.compiler = "<kind>"`; on its own, each would become a partition.  This
pass numbers regions instead (`relay.compiler_region = N`, per module, in
program order): an annotated op joins the regions of its producers that have
the same kind and the same device, as TVM's MergeCompilerRegions removes the
end/begin annotation pairs between them — but only where that creates no
cycle.  Grouping `{a, c}` when `a → b → c` with `b` outside would make the
partition both feed and consume `b`; such a merge is refused and the op starts
its own region.

The test is exact on the dependence graph of one block: `reach(v)` is the set
of regions a value depends on; a region's `outside` set holds the regions that
reach it through an edge from outside the region.  A set of regions (with the
new op) may merge iff none of them is in the `outside` set of another, and no
input of the op that comes from outside the set depends on a member.  Values
captured by nested regions (an `if` branch, a closure) count as inputs of the
op that holds them.  Ops in different blocks never share a region.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from hetero.transforms.annotate_target import annotation
from hetero.transforms.byoc import REGION_ATTR, program_blocks


def op_inputs(op: Operation) -> list[SSAValue]:
    """Operands of `op` and values its nested regions use from outside it."""
    if not op.regions:
        return list(op.operands)
    return [
        v for inner in op.walk() for v in inner.operands if not op.is_ancestor(v.owner)
    ]


class _Regions:
    """Union-find over region ids, with each root's `outside` set."""

    def __init__(self) -> None:
        self.parent: list[int] = []
        self.outside: list[set[int]] = []

    def new(self, outside: set[int]) -> int:
        self.parent.append(len(self.parent))
        self.outside.append(outside)
        return len(self.parent) - 1

    def find(self, r: int) -> int:
        while self.parent[r] != r:
            self.parent[r] = self.parent[self.parent[r]]
            r = self.parent[r]
        return r

    def roots(self, ids: Iterable[int]) -> set[int]:
        return {self.find(r) for r in ids}

    def merge(self, members: set[int], outside: set[int]) -> int:
        root = min(members)
        for r in members:
            self.parent[r] = root
        self.outside[root] = self.roots(outside) - {root}
        return root


@dataclass
class _Annotated:
    """An op's region and its merge key (kind, device)."""

    region: int
    key: tuple[str, Attribute | None]


_NONE: frozenset[int] = frozenset()


def _union(sets: Iterable[frozenset[int]]) -> frozenset[int]:
    """The union, sharing the one set when only one is non-empty (chains of
    unannotated ops then cost nothing)."""
    present = [s for s in sets if s]
    if len(present) <= 1:
        return present[0] if present else _NONE
    return frozenset().union(*present)


class _BlockMerger:
    def __init__(self, regions: _Regions) -> None:
        self.regions = regions
        self.reach: dict[SSAValue, frozenset[int]] = {}
        self.annotated: dict[Operation, _Annotated] = {}

    def run(self, block: Block) -> None:
        for op in block.ops:
            self._visit(op)

    def _producer(self, value: SSAValue) -> _Annotated | None:
        owner = value.owner
        return self.annotated.get(owner) if isinstance(owner, Operation) else None

    def _visit(self, op: Operation) -> None:
        inputs = op_inputs(op)
        reach = _union(self.reach.get(v, _NONE) for v in inputs)
        kind = annotation(op)
        if kind is not None:
            key = (kind, getattr(op, "vdevice", None))
            region = self._place(inputs, key)
            self.annotated[op] = _Annotated(region, key)
            reach = reach | {region}
        for result in op.results:
            self.reach[result] = reach

    def _place(self, inputs: list[SSAValue], key: tuple[str, Attribute | None]) -> int:
        """Join as many producer regions (same key) as stay acyclic; the op's region."""
        find = self.regions.find
        candidates: list[int] = []
        for v in inputs:
            producer = self._producer(v)
            if (
                producer is not None
                and producer.key == key
                and find(producer.region) not in candidates
            ):
                candidates.append(find(producer.region))
        chosen: set[int] = set()
        for candidate in candidates:
            if self._acyclic(chosen | {candidate}, inputs):
                chosen.add(candidate)
        outside = {r for c in chosen for r in self.regions.outside[c]}
        for v in inputs:
            producer = self._producer(v)
            if producer is None or find(producer.region) not in chosen:
                outside |= self.reach.get(v, _NONE)
        own = self.regions.new(set())
        return self.regions.merge(chosen | {own}, outside)

    def _acyclic(self, members: set[int], inputs: list[SSAValue]) -> bool:
        regions = self.regions
        for r in members:
            if regions.roots(regions.outside[r]) & members:
                return False
        for v in inputs:
            producer = self._producer(v)
            if producer is not None and regions.find(producer.region) in members:
                continue
            if regions.roots(self.reach.get(v, _NONE)) & members:
                return False
        return True


def merge_regions(module: ModuleOp) -> None:
    """Write `relay.compiler_region` on every annotated op, numbered in program order."""
    regions = _Regions()
    mergers = []
    for block in program_blocks(module):
        merger = _BlockMerger(regions)
        merger.run(block)
        mergers.append(merger)
    numbers: dict[int, int] = {}
    for merger in mergers:
        for op, info in merger.annotated.items():
            number = numbers.setdefault(regions.find(info.region), len(numbers))
            op.attributes[REGION_ATTR] = IntegerAttr(number, i64)


@dataclass(frozen=True)
class MergeCompilerRegionsPass(ModulePass):
    """Number the regions of connected same-kind annotated ops (no cycles)."""

    name = "merge-compiler-regions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        merge_regions(op)
