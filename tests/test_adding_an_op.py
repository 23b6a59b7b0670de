"""docs/adding-an-op.md, done: an elementwise op defined here, as the page
shows, in one class (softsign, `x / (1 + |x|)`), and nothing else changed.
Its fusion pattern, its value in the reference interpreter, its compiled
code (`hetero.compile` on the CPU) and its ONNX import all work.

The op is defined in a fixture, which takes it out of `ELEMENTWISE_OPS`
after each test: the other tests never see it (ONNX's `Softsign` is theirs
to import as the importer's composition).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects import math as math_dialect

import hetero
from hetero.dialects import relay
from hetero.frontends.onnx import from_onnx
from hetero.interpreter.relay import run
from hetero.transforms.fuse_ops import FuseOpsPass
from hetero.transforms.plan_devices import PlanDevicesPass

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper

RNG = np.random.default_rng(0)
SHAPE = (16, 16)


def define_softsign() -> type[relay.ElementwiseUnaryOp]:
    """The op exactly as docs/adding-an-op.md writes it."""

    def softsign(e: Any, op: relay.ElementwiseOp, x: Any) -> Any:
        """x / (1 + |x|), on float elements."""
        magnitude = e.op(math_dialect.AbsFOp(x))
        denominator = e.op(arith.AddfOp(e.constant(1.0, x.type), magnitude))
        return e.op(arith.DivfOp(x, denominator))

    @relay.elementwise_op
    class SoftsignOp(relay.ElementwiseUnaryOp):
        """`x / (1 + |x|)`."""

        name = "relay.softsign"

        NUMPY: ClassVar[relay.NumpyRule] = staticmethod(lambda x: x / (1 + np.abs(x)))
        SCALAR: ClassVar[Mapping[str, relay.ScalarBody]] = {"float": softsign}
        ONNX: ClassVar[tuple[str, ...]] = ("Softsign",)

    return SoftsignOp


@pytest.fixture
def softsign() -> Iterator[type[relay.ElementwiseUnaryOp]]:
    """The new op, for one test."""
    op = define_softsign()
    yield op
    relay.ELEMENTWISE_OPS.remove(op)


def _model(*nodes: Any, inputs: tuple[str, ...] = ("x",)) -> Any:
    """A model of `nodes` on f32 inputs of `SHAPE` (square, for a MatMul),
    with output `y`."""
    graph = helper.make_graph(
        list(nodes),
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, SHAPE) for n in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)],
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9
    )


def _softsign_model() -> Any:
    return _model(helper.make_node("Softsign", ["x"], ["y"]))


def _expected(x: np.ndarray) -> np.ndarray:
    return x / (1 + np.abs(x))


def _data() -> np.ndarray:
    return (RNG.standard_normal(SHAPE) * 4).astype(np.float32)


def test_onnx_import_is_the_op(softsign: type[relay.ElementwiseOp]) -> None:
    """ONNX's `Softsign` imports as the op (its `ONNX` name wins over the
    importer's own composition), whose value is onnxruntime's."""
    model = _softsign_model()
    module = from_onnx(model)
    assert any(isinstance(op, softsign) for op in module.walk())
    x = _data()
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (reference,) = session.run(None, {"x": x})
    np.testing.assert_allclose(run(module, x), reference, rtol=1e-6, atol=1e-7)


def test_interpreter_runs_its_numpy_rule(softsign: type[relay.ElementwiseOp]) -> None:
    x = _data()
    np.testing.assert_allclose(run(from_onnx(_softsign_model()), x), _expected(x))


def test_fuses_as_an_elementwise_op(softsign: type[relay.ElementwiseOp]) -> None:
    """Its pattern is the family's: a multiply before it and an add after
    it make one kernel with it."""
    module = from_onnx(
        _model(
            helper.make_node("Mul", ["x", "x"], ["s"]),
            helper.make_node("Softsign", ["s"], ["t"]),
            helper.make_node("Add", ["t", "x"], ["y"]),
        )
    )
    (op,) = [op for op in module.walk() if isinstance(op, softsign)]
    assert relay.pattern_of(op) is relay.OpPattern.ELEMWISE
    PlanDevicesPass(targets="llvm").apply(Context(), module)
    FuseOpsPass().apply(Context(), module)
    kernels = [
        f.sym_name.data
        for f in module.ops
        if isinstance(f, relay.FuncOp) and f.is_primitive
    ]
    assert kernels == ["fused_multiply_softsign_add"]


def test_compiles_for_the_cpu(softsign: type[relay.ElementwiseOp]) -> None:
    """`hetero.compile` lowers it by its scalar body, alone and as the
    epilogue of a GEMM, to what NumPy computes."""
    x = _data()
    compiled = hetero.compile(from_onnx(_softsign_model()))
    np.testing.assert_allclose(compiled(x), _expected(x), rtol=1e-6, atol=1e-7)
    w = RNG.standard_normal(SHAPE).astype(np.float32)
    gemm = _model(
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Softsign", ["m"], ["y"]),
        inputs=("x", "w"),
    )
    np.testing.assert_allclose(
        hetero.compile(from_onnx(gemm))(x, w), _expected(x @ w), rtol=1e-5, atol=1e-6
    )


def test_no_leak_into_other_tests() -> None:
    """Without the fixture, `Softsign` is the importer's composition."""
    assert not any(op.name == "relay.softsign" for op in relay.ELEMENTWISE_OPS)
    module = from_onnx(_softsign_model())
    assert not any(op.name == "relay.softsign" for op in module.walk())
