"""LLVM dialect ops that xDSL 0.74's `llvm` dialect lacks or restricts.

They carry MLIR's op names and print in MLIR's syntax, so the IR that hetero's
lowering emits stays valid upstream MLIR; `hetero.lowering.llvmir` translates
them to LLVM IR next to xDSL's own ops.

* `llvm.fptosi`, `llvm.fptoui`, `llvm.uitofp`, `llvm.extractelement`,
  `llvm.addrspacecast`: absent.
* `llvm.fcmp`: xDSL's accepts scalars only (MLIR's also takes vectors).
* `llvm.select`: xDSL's wants an `i1` condition (MLIR's also `vector<Nxi1>`).
* `llvm.intr.prefetch`: absent (`memref.prefetch` lowers to it).
* `llvm.intr.masked.load`: absent; `llvm.intr.masked.store`: xDSL's stores
  float vectors only.  A vectorized loop's masked remainder is these ops, not
  `llvm.call_intrinsic`s: the intrinsics' signature changed in LLVM 21 (the
  alignment moved from an `i32` operand to the pointer's `align` attribute),
  and the ops translate to either (`hetero.lowering.llvmir`; `mlir-translate`
  writes the new one).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    I1,
    I32,
    AnyFloatConstr,
    IntegerAttr,
    IntegerType,
    SignlessIntegerConstraint,
    VectorType,
    i1,
    i32,
    i64,
)
from xdsl.dialects.llvm import (
    FastMathAttr,
    FCmpPredicateFlag,
    GenericCastOp,
    LLVMPointerType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

_BOOL_LIKE = I1 | VectorType[I1]


@irdl_op_definition
class FPToSIOp(GenericCastOp):
    """`llvm.fptosi`: float to signed integer, rounding toward zero."""

    name = "llvm.fptosi"


@irdl_op_definition
class FPToUIOp(GenericCastOp):
    """`llvm.fptoui`: float to unsigned integer, rounding toward zero."""

    name = "llvm.fptoui"


@irdl_op_definition
class UIToFPOp(GenericCastOp):
    """`llvm.uitofp`: unsigned integer to float."""

    name = "llvm.uitofp"


@irdl_op_definition
class AddrSpaceCastOp(GenericCastOp):
    """`llvm.addrspacecast`: a pointer into another address space (GPU shared memory)."""

    name = "llvm.addrspacecast"


@irdl_op_definition
class ExtractElementOp(IRDLOperation):
    """`llvm.extractelement`: one element of a vector, at a dynamic position."""

    name = "llvm.extractelement"

    ELEMENT: ClassVar = VarConstraint(
        "ELEMENT", AnyFloatConstr | SignlessIntegerConstraint
    )

    vector = operand_def(VectorType.constr(ELEMENT))
    position = operand_def(SignlessIntegerConstraint)
    res = result_def(ELEMENT)

    traits = traits_def(Pure())

    assembly_format = (
        "$vector `[` $position `:` type($position) `]` attr-dict `:` type($vector)"
    )

    def __init__(self, vector: SSAValue, position: SSAValue):
        assert isinstance(vector.type, VectorType)
        element: Attribute = vector.type.element_type
        super().__init__(operands=[vector, position], result_types=[element])


@irdl_op_definition
class FCmpOp(IRDLOperation):
    """`llvm.fcmp` on scalars and 1-D vectors (the result is `i1`-like)."""

    name = "llvm.fcmp"

    T: ClassVar = VarConstraint("T", AnyFloatConstr | VectorType.constr(AnyFloatConstr))

    lhs = operand_def(T)
    rhs = operand_def(T)
    res = result_def(_BOOL_LIKE)
    predicate = prop_def(IntegerAttr[IntegerType])
    fastmathFlags = prop_def(FastMathAttr, default_value=FastMathAttr(None))

    traits = traits_def(Pure())

    def __init__(
        self, lhs: SSAValue, rhs: SSAValue, predicate: str, fastmath: FastMathAttr
    ):
        t = lhs.type
        result = VectorType(i1, t.get_shape()) if isinstance(t, VectorType) else i1
        super().__init__(
            operands=[lhs, rhs],
            result_types=[result],
            properties={
                "predicate": IntegerAttr(FCmpPredicateFlag(predicate).to_int(), i64),
                "fastmathFlags": fastmath,
            },
        )

    @property
    def predicate_name(self) -> str:
        """MLIR's spelling: `olt`, ..., `_false`, `_true`."""
        return FCmpPredicateFlag.from_int(self.predicate.value.data).value

    def print(self, printer: Printer) -> None:
        printer.print_string(f' "{self.predicate_name}" ')
        printer.print_ssa_value(self.lhs)
        printer.print_string(", ")
        printer.print_ssa_value(self.rhs)
        if self.fastmathFlags.data:
            printer.print_string(" {fastmathFlags = ")
            printer.print_attribute(self.fastmathFlags)
            printer.print_string("}")
        printer.print_string(" : ")
        printer.print_attribute(self.lhs.type)


@irdl_op_definition
class SelectOp(IRDLOperation):
    """`llvm.select` with an `i1` or a per-lane `vector<Nxi1>` condition."""

    name = "llvm.select"

    T: ClassVar = VarConstraint("T", AnyAttr())

    cond = operand_def(_BOOL_LIKE)
    lhs = operand_def(T)
    rhs = operand_def(T)
    res = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($res)"

    def __init__(self, cond: SSAValue, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[cond, lhs, rhs], result_types=[lhs.type])


@irdl_op_definition
class PrefetchOp(IRDLOperation):
    """`llvm.intr.prefetch`: LLVM's `llvm.prefetch(addr, rw, hint, cache)`,
    its three immediates as `i32` properties (MLIR's form)."""

    name = "llvm.intr.prefetch"

    addr = operand_def(LLVMPointerType)
    cache = prop_def(IntegerAttr[I32])
    hint = prop_def(IntegerAttr[I32])
    rw = prop_def(IntegerAttr[I32])

    RANGES: ClassVar = {"cache": range(2), "hint": range(4), "rw": range(2)}
    """What LLVM accepts of each immediate."""

    def __init__(self, addr: SSAValue, locality: int, write: bool, data: bool):
        super().__init__(
            operands=[addr],
            properties={
                "cache": IntegerAttr(int(data), i32),
                "hint": IntegerAttr(locality, i32),
                "rw": IntegerAttr(int(write), i32),
            },
        )

    def verify_(self) -> None:
        for name, allowed in self.RANGES.items():
            value = self.properties[name]
            assert isinstance(value, IntegerAttr)
            if value.value.data not in allowed:
                raise VerifyException(
                    f"{name} must be {allowed.start} to {allowed.stop - 1}, got {value.value.data}"
                )


@irdl_op_definition
class MaskedLoadOp(IRDLOperation):
    """`llvm.intr.masked.load`: the lanes of `mask` read from `data`, the
    others `pass_thru`'s; `data` aligned to `alignment` bytes."""

    name = "llvm.intr.masked.load"

    T: ClassVar = VarConstraint("T", VectorType.constr())

    data = operand_def(LLVMPointerType)
    mask = operand_def(VectorType[I1])
    pass_thru = operand_def(T)
    res = result_def(T)
    alignment = prop_def(IntegerAttr[I32])

    assembly_format = "$data `,` $mask `,` $pass_thru attr-dict `:` functional-type(operands, results)"

    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self, data: SSAValue, mask: SSAValue, pass_thru: SSAValue, alignment: int
    ):
        super().__init__(
            operands=[data, mask, pass_thru],
            result_types=[pass_thru.type],
            properties={"alignment": IntegerAttr(alignment, i32)},
        )


@irdl_op_definition
class MaskedStoreOp(IRDLOperation):
    """`llvm.intr.masked.store`: the lanes of `mask` of `value` written to
    `data`, aligned to `alignment` bytes; of any element type."""

    name = "llvm.intr.masked.store"

    value = operand_def(VectorType.constr())
    data = operand_def(LLVMPointerType)
    mask = operand_def(VectorType[I1])
    alignment = prop_def(IntegerAttr[I32])

    assembly_format = "$value `,` $data `,` $mask attr-dict `:` type($value) `,` type($mask) `into` type($data)"

    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, value: SSAValue, data: SSAValue, mask: SSAValue, alignment: int):
        super().__init__(
            operands=[value, data, mask],
            properties={"alignment": IntegerAttr(alignment, i32)},
        )


ABSENT_OPS = (
    FPToSIOp, FPToUIOp, UIToFPOp, AddrSpaceCastOp, ExtractElementOp, PrefetchOp, MaskedLoadOp
)  # fmt: skip
"""The ops here that xDSL's `llvm` dialect has none of: a `Context` may load
them beside it (`hetero.context.load_upstream_extras`); `llvm.fcmp`,
`llvm.select` and `llvm.intr.masked.store` parse as xDSL's."""
