"""`tir.alloc`: a buffer allocation.

Its storage scope (`shared`, `local`, ...) is the memory space of the
memref type, as TVM keeps it in the pointer type, so the scope survives
being passed to a subroutine.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, MemRefType, NoneAttr
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import HasAncestor, MemoryAllocEffect
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.tir.attrs import scope_problem, storage_scope
from hetero.dialects.tir.functions import PrimFuncOp


@irdl_op_definition
class AllocOp(IRDLOperation):
    """`%b = tir.alloc(%n) : memref<?x4xf32, "shared">`: a buffer.

    The storage scope is the memref's memory space (none = `global`); the
    buffer lives until the end of the enclosing region.  One size operand per
    dynamic dimension.
    """

    name = "tir.alloc"

    dynamic_sizes = var_operand_def(IndexType)
    buffer = result_def(MemRefType)

    traits = traits_def(HasAncestor(PrimFuncOp), MemoryAllocEffect())

    assembly_format = "(`(` $dynamic_sizes^ `)`)? attr-dict `:` type($buffer)"

    def __init__(
        self, type: MemRefType, dynamic_sizes: Sequence[SSAValue | Operation] = ()
    ):
        super().__init__(operands=[dynamic_sizes], result_types=[type])

    @property
    def scope(self) -> str:
        return storage_scope(self.buffer.type)

    def verify_(self) -> None:
        type = self.buffer.type
        assert isinstance(type, MemRefType)
        if (why := scope_problem(type)) is not None:
            raise VerifyException(why)
        if not isinstance(type.layout, NoneAttr):
            raise VerifyException(f"{type}: an allocated buffer has the default layout")
        dynamic = sum(1 for d in type.get_shape() if d == DYNAMIC_INDEX)
        if dynamic != len(self.dynamic_sizes):
            raise VerifyException(
                f"{type} has {dynamic} dynamic dimension(s) but "
                f"{len(self.dynamic_sizes)} size operand(s) are given"
            )


BUFFER_OPS: tuple[type[IRDLOperation], ...] = (AllocOp,)
"""The ops of this family, in the order the `TIR` dialect lists them."""
