"""simplify-inference, fold-constant and fold-scale-axis keep the program's
meaning (checked in the reference interpreter and in compiled code)."""

import numpy as np
import pytest
from xdsl.context import Context

import hetero
from hetero.context import parse_module
from hetero.dialects import relay
from hetero.interpreter.relay import run
from hetero.transforms.fold_constant import FoldConstantPass
from hetero.transforms.fold_scale_axis import FoldScaleAxisPass
from hetero.transforms.simplify_inference import SimplifyInferencePass

PIPELINE = (
    SimplifyInferencePass(),
    FoldConstantPass(),
    FoldScaleAxisPass(),
    FoldConstantPass(),
)


def _literal(array: np.ndarray) -> str:
    """A `dense<...>` literal (never a resource: the text stands alone)."""
    from xdsl.dialects.builtin import (
        BytesAttr,
        DenseIntOrFPElementsAttr,
        TensorType,
        f32,
    )

    data = BytesAttr(array.astype("<f4").tobytes())
    return str(DenseIntOrFPElementsAttr(TensorType(f32, array.shape), data))


def conv_bn_relu(c_in: int, c_out: int, size: int, bias: bool, seed: int) -> str:
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((c_out, c_in, 3, 3)).astype(np.float32)
    vec = lambda lo=-1.0: rng.uniform(lo, 1.0, c_out).astype(np.float32)
    x_t = f"tensor<1x{c_in}x{size}x{size}xf32>"
    y_t = f"tensor<1x{c_out}x{size}x{size}xf32>"
    v_t = f"tensor<{c_out}xf32>"
    bias_lines = (
        f"""%bb = relay.constant {_literal(vec())}
  %cb = relay.nn.bias_add %c, %bb : ({y_t}, {v_t}) -> {y_t}"""
        if bias
        else ""
    )
    normalized = "%cb" if bias else "%c"
    return f"""
relay.func @main(%x: {x_t}) -> {y_t} {{
  %w = relay.constant {_literal(w)}
  %g = relay.constant {_literal(vec())}
  %b = relay.constant {_literal(vec())}
  %m = relay.constant {_literal(vec())}
  %v = relay.constant {_literal(vec(0.1))}
  %c = relay.nn.conv2d %x, %w {{padding = array<i64: 1, 1, 1, 1>}} : ({x_t}, tensor<{c_out}x{c_in}x3x3xf32>) -> {y_t}
  {bias_lines}
  %0 = relay.nn.batch_norm {normalized}, %g, %b, %m, %v : ({y_t}, {v_t}, {v_t}, {v_t}, {v_t}) -> {y_t}
  %r = relay.relu %0 : {y_t}
  relay.return %r : {y_t}
}}
"""


def _simplified(text: str):
    module = parse_module(text)
    for stage in PIPELINE:
        stage.apply(Context(), module)
    module.verify()
    return module


@pytest.mark.parametrize(
    "c_in,c_out,size,bias", [(3, 4, 5, False), (2, 7, 4, True), (8, 1, 3, True)]
)
def test_conv_batch_norm_folds_into_the_weights(c_in, c_out, size, bias):
    text = conv_bn_relu(c_in, c_out, size, bias, seed=c_in * 10 + c_out)
    module = _simplified(text)
    ops = [op.name for op in module.walk() if op.name.startswith("relay.")]
    # No batch_norm and no multiply left: the scale lives in the weights.
    assert "relay.nn.batch_norm" not in ops and "relay.multiply" not in ops
    x = (
        np.random.default_rng(0)
        .standard_normal((1, c_in, size, size))
        .astype(np.float32)
    )
    expected = run(parse_module(text), x)
    np.testing.assert_allclose(run(module, x), expected, rtol=1e-4, atol=1e-5)


def test_compile_runs_the_simplifications():
    text = conv_bn_relu(3, 4, 6, True, seed=3)
    x = np.random.default_rng(1).standard_normal((1, 3, 6, 6)).astype(np.float32)
    f = hetero.compile(text)
    # One kernel, the batch norm's scale folded into the conv2d weights.
    [call] = f.profile(x).calls
    assert "batch_norm" not in call.kernel and "multiply" not in call.kernel
    np.testing.assert_allclose(f(x), run(parse_module(text), x), rtol=1e-4, atol=1e-5)


def test_folded_values_match_the_interpreter_for_every_tensor_operator():
    """Every op folded in `fold-constant` is the interpreter's value, even with
    a broadcast and attributes."""
    text = """
relay.func @main() -> tensor<2x3xf32> {
  %a = relay.constant dense<[[1.0, -2.0, 3.0], [0.5, 0.0, -1.5]]> : tensor<2x3xf32>
  %b = relay.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %0 = relay.subtract %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = relay.nn.softmax %0 : tensor<2x3xf32>
  %2 = relay.clip %1 {a_min = 0.1 : f64, a_max = 0.8 : f64} : tensor<2x3xf32>
  relay.return %2 : tensor<2x3xf32>
}
"""
    module = _simplified(text)
    ops = [op for op in module.walk() if isinstance(op, relay.TensorOp)]
    assert ops == []
    np.testing.assert_allclose(run(module), run(parse_module(text)), rtol=1e-6)


@pytest.mark.parametrize("axis,shape", [(0, (3, 4, 5)), (2, (2, 4, 3)), (-1, (2, 3))])
def test_batch_norm_on_any_axis_keeps_its_value(axis, shape):
    """The scale broadcasts along `axis` whatever the rank (`expand_dims` with
    rank - 1 - axis new dimensions)."""
    rng = np.random.default_rng(abs(axis))
    c = shape[axis]
    vectors = [rng.uniform(0.1, 1.0, c).astype(np.float32) for _ in range(4)]
    t = "tensor<" + "x".join(map(str, shape)) + "xf32>"
    v = f"tensor<{c}xf32>"
    lines = "\n  ".join(
        f"%{n} = relay.constant {_literal(a)}" for n, a in zip("gbmv", vectors)
    )
    text = f"""
relay.func @main(%x: {t}) -> {t} {{
  {lines}
  %0 = relay.nn.batch_norm %x, %g, %b, %m, %v {{axis = {axis} : i64}} : ({t}, {v}, {v}, {v}, {v}) -> {t}
  relay.return %0 : {t}
}}
"""
    x = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(
        run(_simplified(text), x), run(parse_module(text), x), rtol=1e-5, atol=1e-6
    )
