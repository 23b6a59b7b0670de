"""Building relay ops from Python: inferred result types, accessors, errors."""

from __future__ import annotations

from typing import Any

import pytest
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FunctionType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    TupleType,
    UnitAttr,
    f16,
    f32,
    i1,
)
from xdsl.ir import Attribute, Block, BlockArgument, Region
from xdsl.utils.exceptions import VerifyException

from hetero.context import parse_module
from hetero.dialects.relay import (
    DYNAMIC,
    AddOp,
    AvgPool2DOp,
    BatchNormOp,
    BiasAddOp,
    CallIndirectOp,
    CallOp,
    ClipOp,
    ConcatenateOp,
    ConstantOp,
    Conv2DOp,
    DenseOp,
    DeviceCopyOp,
    DivideOp,
    ExpandDimsOp,
    ExpOp,
    FlattenOp,
    FnOp,
    FuncOp,
    GetItemOp,
    GlobalAvgPool2DOp,
    IfOp,
    MatmulOp,
    MaximumOp,
    MaxPool2DOp,
    MinimumOp,
    MultiplyOp,
    NegativeOp,
    OnDeviceOp,
    ReluOp,
    ReshapeOp,
    ReturnOp,
    SigmoidOp,
    SoftmaxOp,
    SqueezeOp,
    SubtractOp,
    TanhOp,
    TensorOp,
    TransposeOp,
    TupleOp,
    YieldOp,
    broadcast_shapes,
    reshape_shape,
)
from hetero.dialects.target import VirtualDeviceAttr
from hetero.dialects.target.kind import DeviceType

Q = DYNAMIC  # a `?` dimension
CPU = VirtualDeviceAttr(DeviceType.by_name("cpu"))
CUDA = VirtualDeviceAttr(DeviceType.by_name("cuda"), 0)


def tensor(*shape: int, element_type: Attribute = f32) -> TensorType[Attribute]:
    return TensorType(element_type, shape)


def values(*types: Attribute) -> tuple[BlockArgument, ...]:
    """Fresh SSA values of these types (arguments of a detached block)."""
    return Block(arg_types=types).args


# -- tensor operators: (op, operand shapes, attributes, expected result shape) ----

CASES: list[
    tuple[type[TensorOp], list[tuple[int, ...]], dict[str, Any], tuple[int, ...]]
] = [
    (AddOp, [(2, 3), (2, 3)], {}, (2, 3)),
    (SubtractOp, [(2, 3), (3,)], {}, (2, 3)),
    (MultiplyOp, [(Q, 1, 3), (2, 3)], {}, (Q, 2, 3)),
    (DivideOp, [(Q, 3), (1, 3)], {}, (Q, 3)),
    (MaximumOp, [(Q,), (5,)], {}, (5,)),
    (MinimumOp, [(), (4, 1)], {}, (4, 1)),
    (NegativeOp, [(Q, 7)], {}, (Q, 7)),
    (ExpOp, [()], {}, ()),
    (TanhOp, [(1, 1, 1)], {}, (1, 1, 1)),
    (SigmoidOp, [(5,)], {}, (5,)),
    (ReluOp, [(Q, Q)], {}, (Q, Q)),
    (ClipOp, [(3, 5)], {"a_min": 0.0, "a_max": 6.0}, (3, 5)),
    (DenseOp, [(7, 5), (11, 5)], {}, (7, 11)),
    (DenseOp, [(Q, 5), (11, Q)], {}, (Q, 11)),
    (MatmulOp, [(4, 1, 3, 5), (6, 5, 2)], {}, (4, 6, 3, 2)),
    (MatmulOp, [(Q, 3, 5), (5, 2)], {}, (Q, 3, 2)),
    (Conv2DOp, [(1, 3, 7, 7), (8, 3, 3, 3)], {}, (1, 8, 5, 5)),
    (
        Conv2DOp,
        [(2, 4, 7, 9), (6, 2, 3, 2)],
        {"strides": (2, 3), "padding": (1, 0, 1, 2), "dilation": (1, 2), "groups": 2},
        (2, 6, 4, 3),
    ),
    (Conv2DOp, [(Q, 3, Q, 8), (4, 3, 3, 3)], {"padding": (1, 1, 1, 1)}, (Q, 4, Q, 8)),
    (BiasAddOp, [(2, 5, 3), (5,)], {}, (2, 5, 3)),
    (BiasAddOp, [(2, 5, Q), (Q,)], {"axis": -1}, (2, 5, Q)),
    (
        BatchNormOp,
        [(1, 3, 4, 4), (3,), (3,), (3,), (3,)],
        {"epsilon": 1e-3},
        (1, 3, 4, 4),
    ),
    (
        MaxPool2DOp,
        [(1, 2, 7, 7)],
        {"pool_size": (3, 3), "strides": (2, 2)},
        (1, 2, 3, 3),
    ),
    (
        MaxPool2DOp,
        [(1, 2, 7, 7)],
        {"pool_size": (2, 2), "strides": (2, 2), "ceil_mode": True},
        (1, 2, 4, 4),
    ),
    (
        AvgPool2DOp,
        [(1, 2, 5, Q)],
        {"pool_size": (3, 3), "padding": (1, 1, 1, 1), "count_include_pad": True},
        (1, 2, 5, Q),
    ),
    (GlobalAvgPool2DOp, [(Q, 16, 7, 5)], {}, (Q, 16, 1, 1)),
    (SoftmaxOp, [(2, 9)], {"axis": 0}, (2, 9)),
    (ReshapeOp, [(2, 3, 4)], {"newshape": (4, -1)}, (4, 6)),
    (ReshapeOp, [(Q, 3, 4)], {"newshape": (0, 12)}, (Q, 12)),
    (ReshapeOp, [(Q, 3, 4)], {"newshape": (-1, 2)}, (Q, 2)),
    (TransposeOp, [(2, 3, 5)], {}, (5, 3, 2)),
    (TransposeOp, [(2, Q, 5)], {"axes": (1, -1, 0)}, (Q, 5, 2)),
    (FlattenOp, [(2, 3, 5)], {}, (2, 15)),
    (FlattenOp, [(2, Q, 5)], {"axis": 2}, (Q, 5)),
    (FlattenOp, [(2, 3)], {"axis": 0}, (1, 6)),
    (ConcatenateOp, [(2, 3), (4, 3), (1, 3)], {}, (7, 3)),
    (ConcatenateOp, [(2, Q), (2, 3)], {"axis": -1}, (2, Q)),
    (ConcatenateOp, [(Q, 3), (2, 3)], {"axis": 1}, (2, 6)),
    (SqueezeOp, [(1, 3, 1, Q)], {}, (3, Q)),
    (SqueezeOp, [(1, 3, 1)], {"axis": (-1,)}, (1, 3)),
    (ExpandDimsOp, [(3, 4)], {"axis": 1}, (3, 1, 4)),
    (ExpandDimsOp, [(3,)], {"axis": -1, "num_newaxis": 2}, (3, 1, 1)),
]


@pytest.mark.parametrize(("op_type", "shapes", "params", "expected"), CASES)
def test_tensor_op_infers_result_type(
    op_type: type[TensorOp],
    shapes: list[tuple[int, ...]],
    params: dict[str, Any],
    expected: tuple[int, ...],
) -> None:
    op = op_type(*values(*(tensor(*s) for s in shapes)), **params)
    assert op.result.type == tensor(*expected)
    op.verify()
    assert op_type.infer_result_type(op.operand_types, op.properties) == tensor(
        *expected
    )


def test_element_type_is_kept() -> None:
    x, y = values(tensor(2, element_type=f16), tensor(2, element_type=f16))
    assert AddOp(x, y).result.type == tensor(2, element_type=f16)


def test_accessors_give_defaults_and_given_values() -> None:
    x, w = values(tensor(1, 3, 8, 8), tensor(4, 3, 3, 3))
    plain = Conv2DOp(x, w)
    assert (plain.strides, plain.padding, plain.dilation, plain.groups) == (
        (1, 1),
        (0, 0, 0, 0),
        (1, 1),
        1,
    )
    assert "strides" not in plain.properties  # defaults are not stored
    strided = Conv2DOp(x, w, strides=(2, 2), vdevice=CUDA)
    assert strided.strides == (2, 2)
    assert strided.vdevice == CUDA
    pool = AvgPool2DOp(x, pool_size=(2, 2))
    assert (pool.pool_size, pool.ceil_mode, pool.count_include_pad) == (
        (2, 2),
        False,
        False,
    )
    (t,) = values(tensor(2, 3))
    assert TransposeOp(t).axes is None
    assert SqueezeOp(t).axis is None
    assert SoftmaxOp(t).axis == -1
    clip = ClipOp(t, a_min=-1.0, a_max=1.0)
    assert (clip.a_min, clip.a_max) == (-1.0, 1.0)
    assert BatchNormOp(*values(tensor(1, 2), *[tensor(2)] * 4)).epsilon == 1e-5


def test_infer_result_type_from_attributes_alone() -> None:
    attributes = Conv2DOp.params_to_properties(
        {"strides": (2, 2), "padding": (1, 1, 1, 1)}
    )
    result = Conv2DOp.infer_result_type(
        [tensor(1, 3, 9, 9), tensor(4, 3, 3, 3)], attributes
    )
    assert result == tensor(1, 4, 5, 5)
    newshape = {"newshape": ReshapeOp.newshape.to_attr((2, 3))}
    assert ReshapeOp.infer_result_type([tensor(6)], newshape) == tensor(2, 3)


@pytest.mark.parametrize(
    ("op_type", "types", "params", "message"),
    [
        (
            AddOp,
            [tensor(2, 3), tensor(4, 3)],
            {},
            r"cannot broadcast shapes \[2, 3\] and \[4, 3\]",
        ),
        (AddOp, [tensor(2), tensor(2, element_type=f16)], {}, "element type mismatch"),
        (AddOp, [tensor(2)], {}, r"relay.add takes 2 operand\(s\), got 1"),
        (ExpOp, [TupleType(())], {}, "operand 0 must be a ranked tensor, got tuple<>"),
        (DenseOp, [tensor(2, 3), tensor(4, 5)], {}, "reduction dimension mismatch"),
        (
            Conv2DOp,
            [tensor(1, 4, 9, 9), tensor(8, 3, 3, 3)],
            {},
            "weight expects 3 input channels",
        ),
        (
            Conv2DOp,
            [tensor(1, 4, 9, 9), tensor(8, 4, 3, 3)],
            {"strides": (1, 1, 1)},
            "'strides' must have 2 values, got 3",
        ),
        (
            MaxPool2DOp,
            [tensor(1, 4, 9, 9)],
            {},
            "missing required attribute 'pool_size'",
        ),
        (ReshapeOp, [tensor(2, 3)], {"newshape": (4, 2)}, "cannot reshape"),
        (SoftmaxOp, [tensor(2, 3)], {"axis": 2}, "axis 2 is out of range"),
        (ConcatenateOp, [], {}, "concatenate needs at least one operand"),
        (ClipOp, [tensor(2)], {"a_min": 1.0, "a_max": 0.0}, "must not exceed"),
    ],
)
def test_builder_rejects_invalid_inputs(
    op_type: type[TensorOp],
    types: list[Attribute],
    params: dict[str, Any],
    message: str,
) -> None:
    with pytest.raises(VerifyException, match=message):
        op_type(*values(*types), **params)


def test_unknown_attribute_is_a_type_error() -> None:
    x, w = values(tensor(1, 3, 8, 8), tensor(4, 3, 3, 3))
    with pytest.raises(TypeError, match="Conv2DOp has no attribute 'stride'"):
        Conv2DOp(x, w, stride=(2, 2))


def test_dynamic_dimension_helpers() -> None:
    assert broadcast_shapes((Q, 1), (1, Q)) == (Q, Q)
    assert broadcast_shapes((Q,), (3,)) == (3,)
    assert broadcast_shapes((1,), (Q,)) == (Q,)
    assert reshape_shape((Q, 4), (2, -1)) == (2, Q)
    assert reshape_shape((Q, 4), (0, 2, 2)) == (Q, 2, 2)


# -- structural ops ------------------------------------------------------------


def build_module() -> tuple[ModuleOp, FuncOp, FuncOp]:
    """`@double(x) = x + x` and `@main(x) = @double(x)` with devices, built in Python."""
    t = tensor(2, Q)
    double = FuncOp(
        "double", [t], t, private=True, attributes={"Primitive": UnitAttr()}
    )
    (x,) = double.args
    add = AddOp(x, x)
    double.body.block.add_ops([add, ReturnOp(add)])
    main = FuncOp("main", [t], t, param_vdevices=[CPU], result_vdevice=CUDA)
    call = CallOp(double, main.args)
    main.body.block.add_ops([call, ReturnOp(call)])
    return ModuleOp([double, main]), double, main


def test_functions_and_calls() -> None:
    module, double, main = build_module()
    module.verify()
    assert double.is_primitive and not double.is_inline and double.compiler is None
    assert main.param_vdevices == (CPU,) and main.result_vdevice == CUDA
    main.set_param_vdevices([None])
    main.set_result_vdevice(None)
    assert main.arg_attrs is None and main.res_attrs is None
    double.attributes["Compiler"] = StringAttr("cublas")
    assert double.compiler == "cublas"
    call = main.body.block.first_op
    assert isinstance(call, CallOp) and call.result.type == tensor(2, Q)
    text = str(module)
    assert (
        "relay.func private @double(%0: tensor<2x?xf32>) -> tensor<2x?xf32> "
        'attributes {Primitive, Compiler = "cublas"}'
    ) in text


def test_setting_devices_keeps_other_parameter_attributes() -> None:
    func = FuncOp("f", [tensor(2), tensor(3)], tensor(2), param_vdevices=[CPU, None])
    func.arg_attrs = ArrayAttr(
        [DictionaryAttr({"vdevice": CPU, "note": UnitAttr()}), DictionaryAttr({})]
    )
    func.set_param_vdevices([None, CUDA])
    assert func.param_vdevices == (None, CUDA)
    assert func.arg_attrs is not None
    assert func.arg_attrs.data[0] == DictionaryAttr({"note": UnitAttr()})


def test_built_module_prints_and_parses_back() -> None:
    module, _, _ = build_module()
    text = str(module)
    assert str(parse_module(text)) == text


def test_call_to_a_missing_function_fails_verification() -> None:
    module, _, main = build_module()
    call = main.body.block.first_op
    assert isinstance(call, CallOp)
    call.properties["callee"] = SymbolRefAttr("nope")
    with pytest.raises(VerifyException, match="@nope could not be found"):
        module.verify()
    detached = CallOp("double", values(tensor(2, Q)), tensor(2, Q))
    with pytest.raises(VerifyException, match="not inside a symbol table"):
        detached.verify()


def test_closure_and_indirect_call() -> None:
    (x,) = values(tensor(3))
    fn = FnOp([tensor(3)], tensor(3), param_vdevices=[CUDA], vdevice=CPU)
    (a,) = fn.args
    mul = MultiplyOp(a, x)  # captures `x` from the enclosing scope
    fn.body.block.add_ops([mul, ReturnOp(mul)])
    fn.verify()
    assert fn.result.type == FunctionType.from_lists([tensor(3)], [tensor(3)])
    assert fn.param_vdevices == (CUDA,) and fn.vdevice == CPU
    call = CallIndirectOp(fn, [x])
    assert call.result.type == tensor(3)
    call.verify()


def test_tuples_and_if() -> None:
    x, y, c = values(tensor(2), tensor(Q, 4), tensor(element_type=i1))
    tup = TupleOp([x, y])
    assert tup.result.type == TupleType((tensor(2), tensor(Q, 4)))
    item = GetItemOp(tup, 1)
    assert item.result.type == tensor(Q, 4) and item.index == 1
    with pytest.raises(VerifyException, match="index 2 is out of range"):
        GetItemOp(tup, 2)
    with pytest.raises(VerifyException, match="needs a tuple"):
        GetItemOp(x, 0)
    if_op = IfOp(c, tensor(2), Region(Block([YieldOp(x)])), Region(Block([YieldOp(x)])))
    if_op.verify()
    assert if_op.result.type == tensor(2)


def test_device_operators() -> None:
    (x,) = values(tensor(Q, 2))
    normal = OnDeviceOp(x, CUDA)
    fixed = OnDeviceOp.fixed(x, CUDA)
    free = OnDeviceOp.free(x)
    result_only = OnDeviceOp(x, CPU, constrain_body=False, constrain_result=True)
    assert [op.form for op in (normal, fixed, free, result_only)] == [
        "normal",
        "fixed",
        "free",
        "result_only",
    ]
    assert (normal.constrain_body, normal.constrain_result) == (True, False)
    assert "constrain_body" in free.properties  # both flags are always stored
    assert free.device is None and free.virtual_device.is_fully_unconstrained()
    for op in (normal, fixed, free, result_only):
        op.verify()
        assert op.result.type == tensor(Q, 2)
    with pytest.raises(VerifyException, match="needs a device"):
        OnDeviceOp(x, None).verify()
    copy = DeviceCopyOp(x, CPU, CUDA, vdevice=CUDA)
    copy.verify()
    assert (copy.src, copy.dst, copy.result.type) == (CPU, CUDA, tensor(Q, 2))
    with pytest.raises(
        VerifyException, match="source device must not be fully unconstrained"
    ):
        DeviceCopyOp(x, VirtualDeviceAttr(), CUDA).verify()


@pytest.mark.parametrize(
    ("shape", "data"),
    [((1, 3), [1.0, 2.0, 3.0]), ((4,), [0.5]), ((), [7.0])],
)
def test_constants(shape: tuple[int, ...], data: list[float]) -> None:
    """Dense, splat (one value for four elements) and rank-0 constants."""
    value = DenseIntOrFPElementsAttr.from_list(TensorType(f32, shape), data)
    op = ConstantOp(value, vdevice=CPU)
    op.verify()
    assert op.result.type == tensor(*shape) and op.value == value
