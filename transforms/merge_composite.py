"""`merge-composite`: pattern matches become `Composite` functions (docs/design.md §4.2).

For every external-codegen kind of the compilation config, in config order,
and every pattern of its table (`hetero.targets.patterns`), in table order,
each match in ordinary program code is wrapped in a function literal called in
place — TVM's MergeComposite, read for SSA:

    %d = relay.nn.dense %x, %w : ...
    %b = relay.nn.bias_add %d, %bias : ...
  becomes
    %f = relay.fn (%0: ..., %1: ..., %2: ...) -> ... attributes {Composite = "blas.dense_bias"} {
      %d = relay.nn.dense %0, %1 : ...
      %b = relay.nn.bias_add %d, %2 : ...
      relay.return %b : ...
    }
    %b = relay.call_indirect %f(%x, %w, %bias) : ...

A match is only taken by a kind that may run it where plan-devices put it:
the kind must be external codegen for the target of the match's device (an
unplanned op is on the config's default device), and all ops of the match
must be on one device.  Everything else is left alone: an op no table covers
simply stays with its device's regular target.  The literal, its parameters,
its result and the call carry the match's device.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from hetero.dialects.relay import CallIndirectOp, FnOp, ReturnOp
from hetero.dialects.target import TargetAttr
from hetero.dialects.target.config import module_config
from hetero.targets.patterns import (
    CompositePattern,
    Match,
    PatternError,
    match,
    pattern_table,
)
from hetero.transforms.byoc import (
    ExternalTargets,
    bind_parameters,
    compiler_names,
    program_blocks,
)
from hetero.utils.diagnostics import HeteroError


def _wrap(found: Match, name: str) -> None:
    """Move the matched ops into a `Composite` literal called where the root was."""
    root = found.root
    device = getattr(root, "vdevice", None)
    inputs = found.inputs
    fn = FnOp(
        [v.type for v in inputs],
        root.results[0].type,
        param_vdevices=[device] * len(inputs) if device else (),
        result_vdevice=device,
        attributes={"Composite": StringAttr(name)},
        vdevice=device,
    )
    call = CallIndirectOp(fn.result, inputs, vdevice=device)
    fn.location = call.location = root.location
    call.result.name_hint = root.results[0].name_hint
    Rewriter.insert_op([fn, call], InsertPoint.before(root))
    body = fn.body.block
    for op in found.ops:
        op.detach()
        body.add_op(op)
    body.add_op(ReturnOp(root.results[0]))
    root.results[0].replace_uses_with_if(
        call.result, lambda use: not fn.is_ancestor(use.operation)
    )
    bind_parameters(fn, inputs)


def _one_device(found: Match) -> bool:
    devices = {getattr(op, "vdevice", None) for op in found.ops}
    return len(devices) == 1


class _Merger:
    def __init__(self, externals: ExternalTargets) -> None:
        self.externals = externals

    def run(self, block: Block) -> None:
        for target in self.externals.targets:
            kind = target.kind_name.data
            for entry in pattern_table(kind):
                self._apply(block, target, entry)

    def _apply(self, block: Block, target: TargetAttr, entry: CompositePattern) -> None:
        """Matches rooted at each op, from the block's end: an output op
        claims its producers before they could root a smaller match."""
        name = f"{target.kind_name.data}.{entry.name}"
        for op in reversed(list(block.ops)):
            if op.parent is not block:  # moved into an earlier match
                continue
            if target not in self.externals.for_device(self.externals.device(op)):
                continue
            found = self._match(entry, op)
            if found is not None and _one_device(found):
                _wrap(found, name)

    @staticmethod
    def _match(entry: CompositePattern, op: Operation) -> Match | None:
        try:
            return match(entry.pattern, op)
        except PatternError as e:
            raise HeteroError(str(e), op) from e


@dataclass(frozen=True)
class MergeCompositePass(ModulePass):
    """Wrap pattern matches of the configured external kinds in `Composite` functions.

    `compilers=blas,cublas` restricts the kinds used; `targets` only
    fills a missing `target.config`.
    """

    name = "merge-composite"
    compilers: tuple[str, ...] = ()
    targets: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = module_config(op, self.targets, self.name)
        externals = ExternalTargets(config, op, compiler_names(self.compilers, op))
        try:
            for kind in externals.targets:
                pattern_table(kind.kind_name.data)
        except PatternError as e:
            raise HeteroError(f"{self.name}: {e}", op) from e
        merger = _Merger(externals)
        for block in program_blocks(op):
            merger.run(block)
