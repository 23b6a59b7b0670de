"""`matmul-to-dense` in `hetero.compile`: transformer-shaped blocks (constant
projections of 3-D and 4-D activations, attention's products of two
activations, bias, erf and residual adds) compile to dense layers and agree
with the reference interpreter."""

import numpy as np
import pytest
from xdsl.context import Context

import hetero
from hetero.context import parse_module
from hetero.dialects import relay
from hetero.dialects.target.config import module_config
from hetero.driver import lower_to_tir
from hetero.interpreter.relay import run
from hetero.transforms.matmul_to_dense import MatmulToDensePass


def _tensor(*shape: int) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def _constant(name: str, array: np.ndarray) -> str:
    values = np.array2string(
        array, separator=", ", threshold=array.size, floatmode="unique"
    )
    return f"  %{name} = relay.constant dense<{values.replace(chr(10), '')}> : {_tensor(*array.shape)}\n"


def block(rows: tuple[int, ...], k: int = 8, hidden: int = 12) -> str:
    """Q, K (its weight `[1, K, N]`), V projections, softmax(Q·Kᵀ)·V plus
    the input, then an MLP with a bias and erf, plus its input."""
    rng = np.random.default_rng(0)
    x, h, t = _tensor(*rows, k), _tensor(*rows, hidden), _tensor
    s, kt = t(*rows, rows[-1]), t(*rows[:-1], k, rows[-1])
    axes = ", ".join(map(str, [*range(len(rows) - 1), len(rows), len(rows) - 1]))
    shapes = {
        "wq": (k, k),
        "wk": (1, k, k),
        "wv": (k, k),
        "w1": (k, hidden),
        "w2": (hidden, k),
    }
    text = f"relay.func @main(%x: {x}) -> {x} {{\n"
    for name, shape in [*shapes.items(), ("b1", (hidden,))]:
        text += _constant(name, rng.standard_normal(shape).astype(np.float32).round(3))
    return (
        text
        + f"""  %half = relay.constant dense<0.5> : tensor<f32>
  %q = relay.matmul %x, %wq : ({x}, {t(k, k)}) -> {x}
  %kk = relay.matmul %x, %wk : ({x}, {t(1, k, k)}) -> {x}
  %v = relay.matmul %x, %wv : ({x}, {t(k, k)}) -> {x}
  %kt = relay.transpose %kk {{axes = array<i64: {axes}>}} : ({x}) -> {kt}
  %s = relay.matmul %q, %kt : ({x}, {kt}) -> {s}
  %p = relay.nn.softmax %s : {s}
  %a = relay.matmul %p, %v : ({s}, {x}) -> {x}
  %r = relay.add %a, %x : {x}
  %m = relay.matmul %r, %w1 : ({x}, {t(k, hidden)}) -> {h}
  %mb = relay.add %m, %b1 : ({h}, {t(hidden)}) -> {h}
  %e = relay.erf %mb : {h}
  %g0 = relay.multiply %mb, %e : {h}
  %g = relay.multiply %g0, %half : ({h}, tensor<f32>) -> {h}
  %o = relay.matmul %g, %w2 : ({h}, {t(hidden, k)}) -> {x}
  %y = relay.add %o, %r : {x}
  relay.return %y : {x}
}}"""
    )


@pytest.mark.parametrize("rows", [(1, 5), (2, 3, 4)], ids=["3-D", "4-D"])
def test_block_matches_interpreter(rows: tuple[int, ...]) -> None:
    text = block(rows)
    x = np.random.default_rng(1).standard_normal((*rows, 8)).astype(np.float32)
    f = hetero.compile(text)
    np.testing.assert_allclose(f(x), run(parse_module(text), x), rtol=1e-5, atol=1e-5)


def test_block_of_run_time_rows_compiles_once_to_dense_layers() -> None:
    """Rows known at run time only (`dynamic="once"`): the five projections
    are dense layers over `[-1, K]` rows, shaped back like their input by
    `reshape_like` where a value of the full shape is needed (batched
    matmuls ran 3.6x slower in DistilBERT), right at every size."""
    text = block(("?", "?"))
    module = parse_module(text)
    MatmulToDensePass().apply(Context(), module)
    names = [op.name for op in module.walk()]
    assert names.count("relay.nn.dense") == 5
    # Q, K, V and the MLP's output; the first MLP layer's rows (bias, erf,
    # the multiplies on them) flow into the second as they are.
    assert names.count("relay.reshape_like") == 4
    compiled = hetero.compile(text, dynamic="once")
    for rows in ((1, 5), (3, 2)):
        x = np.random.default_rng(1).standard_normal((*rows, 8)).astype(np.float32)
        np.testing.assert_allclose(
            compiled(x), run(parse_module(text), x), rtol=1e-5, atol=1e-5
        )


def test_projections_become_dense_layers() -> None:
    """The five constant projections are dense kernels; the two attention
    products stay matmuls (with the reshapes and transposes that they read
    as views: `fuse-ops`); the first MLP layer's bias add is in its kernel."""
    module = parse_module(block((1, 5)))
    module_config(module, "llvm", "test")
    lower_to_tir(module)
    kernels = [op.sym_name.data for op in module.walk() if isinstance(op, relay.FuncOp)]
    assert sum("nn_dense" in k for k in kernels) == 5
    assert sum(k.endswith("_matmul") or "_matmul_" in k for k in kernels) == 2
    assert any("nn_dense_add" in k for k in kernels)
