"""`tir.for`, `tir.target_region` and their terminator `tir.yield`.

A `tir.for` has a *kind*: serial, parallel, vectorized, unrolled, or bound
to a GPU thread axis (`thread_binding "threadIdx.x"`).  A
`tir.target_region` is TVMScript's `with T.target(...)`: its body runs on
that target (outlined into a kernel by `split-host-device`).  Both are
single-block regions ended by an implicit `tir.yield`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasAncestor,
    HasParent,
    IsTerminator,
    RecursiveMemoryEffect,
    SingleBlockImplicitTerminator,
)
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.target import TargetAttr
from hetero.dialects.tir.attrs import (
    FOR_KINDS,
    INDEX,
    THREAD_TAGS,
    ForKind,
    ForKindAttr,
)
from hetero.dialects.tir.functions import PrimFuncOp, terminate
from hetero.utils.symbols import ancestors


@irdl_op_definition
class ForOp(IRDLOperation):
    """`tir.for %i = %lb to %ub step %s [kind] {...}`: a loop without results.

    TIR loops carry no values: accumulators live in buffers (`tir.alloc`
    with scope `local`); use `scf.for` for loop-carried SSA values.
    """

    name = "tir.for"

    lb = operand_def(IndexType)
    ub = operand_def(IndexType)
    step = operand_def(IndexType)
    kind = prop_def(ForKindAttr)
    thread_tag = opt_prop_def(StringAttr)
    body = region_def("single_block")

    traits = lazy_traits_def(
        lambda: (
            HasAncestor(PrimFuncOp),
            SingleBlockImplicitTerminator(YieldOp),
            RecursiveMemoryEffect(),
        )
    )

    def __init__(
        self,
        lb: SSAValue | Operation,
        ub: SSAValue | Operation,
        step: SSAValue | Operation,
        body: Region | None = None,
        *,
        kind: ForKind = ForKind.SERIAL,
        thread_tag: str | None = None,
    ):
        """A loop; without `body`, an empty one whose block has the induction
        variable.  A `thread_tag` implies kind `thread_binding`."""
        if thread_tag is not None:
            kind = ForKind.THREAD_BINDING
        super().__init__(
            operands=[lb, ub, step],
            regions=[body or Region(Block(arg_types=[INDEX]))],
            properties={
                "kind": FOR_KINDS[kind],
                "thread_tag": None if thread_tag is None else StringAttr(thread_tag),
            },
        )
        terminate(self, YieldOp)

    @property
    def induction_var(self) -> BlockArgument:
        return self.body.block.args[0]

    @property
    def is_thread_bound(self) -> bool:
        """Bound to a thread axis: its iterations are threads (or vthreads)."""
        return self.thread_tag is not None

    def verify_(self) -> None:
        if self.body.block.arg_types != (IndexType(),):
            raise VerifyException(
                "the body must have exactly one argument, the index induction variable"
            )
        if (step := const_evaluate_operand(self.step)) is not None and step <= 0:
            raise VerifyException(f"the step must be positive, not {step}")
        is_bound = self.kind.data == ForKind.THREAD_BINDING
        if is_bound != (self.thread_tag is not None):
            raise VerifyException(
                "a 'thread_binding' loop needs a thread axis"
                if is_bound
                else "only 'thread_binding' loops name a thread axis, "
                f"not '{self.kind.data}'"
            )
        if self.thread_tag is not None:
            self._verify_thread_binding(self.thread_tag.data)

    def _verify_thread_binding(self, tag: str) -> None:
        if tag not in THREAD_TAGS:
            raise VerifyException(
                f"unknown thread axis '{tag}' (known: {', '.join(THREAD_TAGS)})"
            )
        if const_evaluate_operand(self.lb) != 0:
            raise VerifyException(f"a loop bound to '{tag}' must start at a constant 0")
        if const_evaluate_operand(self.step) != 1:
            raise VerifyException(
                f"a loop bound to '{tag}' must have a constant step 1"
            )
        if any(
            isinstance(a, ForOp) and a.thread_tag == self.thread_tag
            for a in ancestors(self)
        ):
            raise VerifyException(
                f"a loop bound to '{tag}' is nested in another loop bound to '{tag}'"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.induction_var)
        printer.print_string(" = ")
        printer.print_ssa_value(self.lb)
        printer.print_string(" to ")
        printer.print_ssa_value(self.ub)
        printer.print_string(" step ")
        printer.print_ssa_value(self.step)
        if self.kind.data != ForKind.SERIAL:
            printer.print_string(f" {self.kind.data}")
        if self.thread_tag is not None:
            printer.print_string(" ")
            printer.print_string_literal(self.thread_tag.data)
        printer.print_string(" ")
        printer.print_region(
            self.body, print_entry_block_args=False, print_block_terminators=False
        )
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        indvar = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        bounds = [parser.parse_unresolved_operand()]
        for keyword in ("to", "step"):
            parser.parse_keyword(keyword)
            bounds.append(parser.parse_unresolved_operand())
        lb, ub, step = (parser.resolve_operand(b, IndexType()) for b in bounds)
        kind = parser.parse_optional_str_enum(ForKind) or ForKind.SERIAL
        tag = None
        if kind == ForKind.THREAD_BINDING:
            tag = parser.parse_str_literal('thread axis expected, e.g. "threadIdx.x"')
        body = parser.parse_region((indvar.resolve(IndexType()),))
        loop = cls(lb, ub, step, body, kind=kind, thread_tag=tag)
        loop.attributes |= parser.parse_optional_attr_dict()
        return loop


@irdl_op_definition
class TargetRegionOp(IRDLOperation):
    """`tir.target_region #target.target<"cuda"> {...}`: the body runs there.

    TVMScript's `with T.target(...)` (TVM's `AttrStmt("target")`).  The body
    uses values of the enclosing function freely; `split-host-device`
    outlines it into a kernel whose parameters are those values.
    """

    name = "tir.target_region"

    target = prop_def(TargetAttr)
    body = region_def("single_block")

    traits = lazy_traits_def(
        lambda: (
            HasAncestor(PrimFuncOp),
            SingleBlockImplicitTerminator(YieldOp),
            RecursiveMemoryEffect(),
        )
    )

    def __init__(self, target: TargetAttr, body: Region | None = None):
        super().__init__(
            regions=[body or Region(Block())], properties={"target": target}
        )
        terminate(self, YieldOp)

    def verify_(self) -> None:
        if self.body.block.args:
            raise VerifyException("the body of a target region takes no arguments")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.target)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_block_terminators=False)

    @classmethod
    def parse(cls, parser: Parser) -> TargetRegionOp:
        pos = parser.pos
        target = parser.parse_attribute()
        if not isinstance(target, TargetAttr):
            parser.raise_error("expected a #target.target", pos, parser.pos)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        region = cls(target, parser.parse_region())
        if attrs is not None:
            region.attributes |= attrs.data
        return region


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a `tir.for` or `tir.target_region` body; implicit in custom syntax."""

    name = "tir.yield"

    traits = traits_def(HasParent(ForOp, TargetRegionOp), IsTerminator())

    assembly_format = "attr-dict"


LOOP_OPS: tuple[type[IRDLOperation], ...] = (ForOp, TargetRegionOp, YieldOp)
"""The ops of this family, in the order the `TIR` dialect lists them."""
