"""`annotate-device-regions`: mark the device parts of host-exposed functions (docs/design.md §7.2).

A function whose target has a host (`#target.target<"cuda", host = ...>`)
mixes host code with device code.  This pass makes the device parts explicit
as `tir.target_region`s for the target without its host, which
`split-host-device` then outlines into kernels.  Every statement (an op of a
block) is classified:

* **host** if it contains a host-only op (trait `HostOnly`: `tir.launch`,
  `tir.call_packed`) — TVM's host-only builtins — or a call of a
  host-exposed function (public, not a kernel): such a function is entered
  through the host API, so only host code can call it;
* **device** if it is, or contains, a thread-bound loop or a target region;
* **either** otherwise (scalar work, buffer accesses, serial loops).

Then, from the function body down:

* in a block holding a host statement, every maximal run of non-host
  statements becomes **one** device region; host statements stay and their
  own blocks are annotated the same way; existing target regions are kept
  as they are and end a run (so the pass is idempotent);
* in a block without host statements, each outermost thread-bound loop is
  wrapped in its own region; existing target regions are left as they are;
* a body that is *either* as a whole is wrapped entirely: nothing needs the
  host, so the function belongs on the device (`T.target("c", host="llvm")`).

Functions without a host, and those whose host is their device (`llvm` with
host `llvm`), are unchanged; every function needs a target (`bind-target`).

SSA adds one rule TVM's statement trees do not need: a statement whose result
is used outside its run stays on the host (it is computed there and passed to
the kernel), so regions never hide a value from its users.  Unlike TVM, which
wraps thread loops first and may then wrap the run around them again, regions
are never nested: the outermost one is the kernel either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import IsTerminator

from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import (
    CallOp,
    ForOp,
    HostOnly,
    PrimFuncOp,
    TargetRegionOp,
    called_function,
    prim_funcs,
)
from hetero.transforms.bind_target import is_host_exposed
from hetero.utils.diagnostics import HeteroError


class Place(Enum):
    """Where a statement must run (TVM's `Region`)."""

    EITHER = 0
    DEVICE = 1
    HOST = 2


def is_device_construct(op: Operation) -> bool:
    """A thread-bound loop or a target region: only meaningful on a device."""
    return isinstance(op, TargetRegionOp) or (
        isinstance(op, ForOp) and op.is_thread_bound
    )


def is_host_only(op: Operation) -> bool:
    """A host-only builtin, or a call of a function entered through the host API."""
    return op.has_trait(HostOnly) or (
        isinstance(op, CallOp) and is_host_exposed(called_function(op))
    )


def place_of(op: Operation) -> Place:
    """Host if `op` holds a host-only op, else device if it holds a device
    construct, else either (the host wins: it cannot move to the device)."""
    ops = list(op.walk())
    if any(is_host_only(o) for o in ops):
        return Place.HOST
    if any(is_device_construct(o) for o in ops):
        return Place.DEVICE
    return Place.EITHER


def _statements(block: Block) -> list[Operation]:
    return [op for op in block.ops if not op.has_trait(IsTerminator)]


def _runs(
    statements: Sequence[Operation], on_host: set[Operation]
) -> list[list[Operation]]:
    runs: list[list[Operation]] = [[]]
    for op in statements:
        if op in on_host:
            runs.append([])
        else:
            runs[-1].append(op)
    return [run for run in runs if run]


def _used_outside(op: Operation, run: set[Operation], block: Block) -> bool:
    for result in op.results:
        for use in result.uses:
            user = use.operation
            while user.parent_block() is not block:
                user = user.parent_op()
                assert user is not None
            if user not in run:
                return True
    return False


def _pin_to_host(statements: Sequence[Operation], on_host: set[Operation]) -> None:
    """Keep statements whose results leave their run on the host (to a fixpoint)."""
    block = statements[0].parent_block()
    assert block is not None
    changed = True
    while changed:
        changed = False
        for run in _runs(statements, on_host):
            members = set(run)
            for op in run:
                if _used_outside(op, members, block):
                    on_host.add(op)
                    changed = True


class DeviceRegionAnnotator:
    """Annotates one function body for `device`."""

    def __init__(self, device: TargetAttr):
        self.device = device

    def wrap(self, ops: Sequence[Operation]) -> None:
        region = TargetRegionOp(self.device)
        Rewriter.insert_op(region, InsertPoint.before(ops[0]))
        for op in ops:
            op.detach()
            region.body.block.insert_op_before(op, region.body.block.last_op)  # type: ignore[arg-type]

    def split_block(
        self, statements: Sequence[Operation], on_host: set[Operation]
    ) -> None:
        """Wrap each run of non-host statements; annotate inside host ones."""
        regions = {op for op in statements if isinstance(op, TargetRegionOp)}
        stay = on_host | regions
        _pin_to_host(statements, stay)
        for run in _runs(statements, stay):
            self.wrap(run)
        for op in statements:
            if op in stay and op not in regions:
                self.annotate_nested(op)

    def annotate_block(self, block: Block) -> None:
        statements = _statements(block)
        on_host = {op for op in statements if place_of(op) is Place.HOST}
        if on_host:
            self.split_block(statements, on_host)
            return
        for op in statements:
            if isinstance(op, ForOp) and op.is_thread_bound:
                self.wrap([op])
            elif not isinstance(op, TargetRegionOp):
                self.annotate_nested(op)

    def annotate_nested(self, op: Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                self.annotate_block(block)

    def annotate_function(self, func: PrimFuncOp) -> None:
        statements = _statements(func.body.block)
        if statements and place_of(func) is Place.EITHER:
            self.split_block(statements, set())
        else:
            self.annotate_block(func.body.block)


class AnnotateDeviceRegionsPass(ModulePass):
    """Wrap the device parts of host-exposed functions in `tir.target_region`s."""

    name = "annotate-device-regions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in prim_funcs(op):
            target = func.target
            if target is None:
                raise HeteroError(
                    f"{self.name}: @{func.sym_name.data} has no target; run bind-target first",
                    func,
                )
            if target.host is None or str(target.host) == str(target.without_host()):
                continue
            DeviceRegionAnnotator(target.without_host()).annotate_function(func)
