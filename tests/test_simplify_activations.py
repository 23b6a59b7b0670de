"""SiLU and HardSwish as one op each: right, and fused into the convolution
before them (`simplify-activations`, the ONNX importer's HardSwish)."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import hetero
from hetero.dialects import tir
from hetero.dialects.target.config import module_config
from hetero.driver import lower_to_tir
from hetero.frontends.onnx import from_onnx

RNG = np.random.default_rng(0)


def _conv_then(activation: list) -> object:
    """Conv (8 -> 16 channels, 3x3, pad 1) then `activation`'s nodes, from
    `c` to `y`, as an ONNX model."""
    w = (RNG.standard_normal((16, 8, 3, 3)) / 8).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        *activation,
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 10, 10])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    return model


ACTIVATIONS = {
    "silu": [
        helper.make_node("Sigmoid", ["c"], ["s"]),
        helper.make_node("Mul", ["c", "s"], ["y"]),
    ],
    "hard_swish": [helper.make_node("HardSwish", ["c"], ["y"])],
}


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_is_the_convolutions_epilogue(name: str) -> None:
    """One kernel computes the convolution and the activation (two before:
    the activation's input had two users), and it matches onnxruntime."""
    import onnxruntime

    model = _conv_then(ACTIVATIONS[name])
    lowered = from_onnx(model)
    module_config(lowered, "llvm", "test")
    lower_to_tir(lowered)
    kernels = [
        op.sym_name.data
        for op in lowered.ops
        if isinstance(op, tir.PrimFuncOp) and op.sym_name.data != "main_host"
    ]
    assert kernels == [f"fused_nn_conv2d_{name}_tir"]
    x = (RNG.standard_normal((1, 8, 10, 10)) * 3).astype(np.float32)
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    expected = session.run(None, {"x": x})[0]
    np.testing.assert_allclose(
        hetero.compile(from_onnx(model))(x), expected, rtol=1e-5, atol=1e-5
    )
