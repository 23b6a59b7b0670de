"""The `npu` dialect: one op, `npu.scale %x by 2.0 : tensor<...>` (y = x * factor)."""

from typing import ClassVar

from xdsl.dialects.builtin import Float64Type, FloatAttr, TensorType
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from hetero.dialects.target import VirtualDeviceAttr


@irdl_op_definition
class ScaleOp(IRDLOperation):
    """Multiply every element by a constant, on the NPU's vector unit."""

    name = "npu.scale"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)
    factor = prop_def(FloatAttr[Float64Type])
    vdevice = opt_prop_def(VirtualDeviceAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input `by` $factor attr-dict `:` type($result)"

    def __init__(
        self, input: SSAValue, factor: float, vdevice: VirtualDeviceAttr | None = None
    ):
        props: dict[str, Attribute] = {"factor": FloatAttr(factor, 64)}
        if vdevice is not None:
            props["vdevice"] = vdevice
        super().__init__(operands=[input], result_types=[input.type], properties=props)


NPU_DIALECT = Dialect("npu", [ScaleOp], [])
