"""`annotate-target`: decide which external kind takes each supported op.

TVM's AnnotateTarget marks the ops an external codegen supports with
`compiler_begin`/`compiler_end` around them; here the decision is one op
attribute, `relay.compiler = "<kind>"`, and the support an op needs is a
pattern of the kind's table — that is, a call of a `Composite` literal
(`merge-composite`), whose name `<kind>.<pattern>` says which kind.

* A composite call is annotated with its kind when that kind is configured
  (and among `compilers`, when given) and is external codegen for the target
  of the call's device (docs/design.md §4.1).  Otherwise the composite is inlined back,
  so its ops stay plain ops of the device's regular target: after this pass
  every remaining composite call is annotated.
* Any other op is left alone: an op without support stays with the regular
  target, whatever it is (never an error, cf. TVM issue 6090).
* An annotation already present (written by hand or an earlier run) is kept
  and checked: the kind must be a configured external codegen for the op's
  device, else it is a diagnostic at the op.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from hetero.dialects.relay import CallIndirectOp, FnOp
from hetero.dialects.target.config import module_config
from hetero.transforms.byoc import (
    COMPILER_ATTR,
    ExternalTargets,
    check_compiler,
    compiler_names,
    composite_callee,
    inline_literal_call,
    program_blocks,
)
from hetero.utils.diagnostics import HeteroError


def annotation(op: Operation) -> str | None:
    """The kind an op is annotated with (its `relay.compiler`), checked to be a string."""
    attr = op.attributes.get(COMPILER_ATTR)
    if attr is None:
        return None
    if not isinstance(attr, StringAttr):
        raise HeteroError(f"'{COMPILER_ATTR}' must be a string naming a compiler", op)
    if len(op.results) != 1 or isinstance(op, FnOp):
        raise HeteroError(
            f"{op.name} cannot go to an external codegen: only a computation "
            "producing one value can",
            op,
        )
    kind = check_compiler(attr.data, op)
    if (callee := composite_callee(op)) is not None and composite_kind(callee) != kind:
        raise HeteroError(
            f"a call of composite '{callee.composite}' cannot go to '{kind}'", op
        )
    return kind


def composite_kind(fn: FnOp) -> str:
    """The kind a `Composite` name `<kind>.<pattern>` belongs to."""
    assert fn.composite is not None
    return check_compiler(
        fn.composite.partition(".")[0], fn, "compiler in composite name"
    )


def _annotate(op: Operation, externals: ExternalTargets) -> None:
    if (kind := annotation(op)) is not None:
        externals.check(kind, op)
        return
    callee = composite_callee(op)
    if callee is None:
        return
    assert isinstance(op, CallIndirectOp)
    kind = composite_kind(callee)
    takers = externals.chosen_for(externals.device(op))
    if kind in [t.kind_name.data for t in takers]:
        op.attributes[COMPILER_ATTR] = StringAttr(kind)
    else:
        inline_literal_call(op, callee)


@dataclass(frozen=True)
class AnnotateTargetPass(ModulePass):
    """Annotate composite calls with the external kind that takes them.

    `compilers=cublas,cudnn` restricts the kinds; `targets` only fills a
    missing `target.config`.
    """

    name = "annotate-target"
    compilers: tuple[str, ...] = ()
    targets: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = module_config(op, self.targets, self.name)
        externals = ExternalTargets(config, op, compiler_names(self.compilers, op))
        for block in program_blocks(op):
            for inner in list(block.ops):
                _annotate(inner, externals)
