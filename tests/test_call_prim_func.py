"""relay calls a hand-written `tir.prim_func` (TVM's `call_lowered`):
`hetero.compile` runs it in the host function among the kernels it lowers,
and its results agree with NumPy (docs/dialects/relay.md, "Calls")."""

import numpy as np
import pytest

import hetero
from hetero.context import parse_module
from hetero.interpreter.relay import run
from hetero.utils.diagnostics import HeteroError

TARGET = "llvm -mcpu=x86-64-v3"

AXPY = """
  tir.prim_func @axpy(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %two = arith.constant 2.0 : f32
    tir.for %i = %c0 to %c8 step %c1 {
      %x = memref.load %a[%i] : memref<8xf32>
      %y = memref.load %b[%i] : memref<8xf32>
      %s = arith.mulf %x, %two : f32
      %z = arith.addf %s, %y : f32
      memref.store %z, %c[%i] : memref<8xf32>
    }
  }
"""

SPLIT = """
  tir.prim_func @split(%a: memref<2x4xf32>, %lo: memref<4xf32>, %hi: memref<4xf32>) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    tir.for %i = %c0 to %c4 step %c1 {
      %x = memref.load %a[%c0, %i] : memref<2x4xf32>
      %y = memref.load %a[%c1, %i] : memref<2x4xf32>
      memref.store %x, %lo[%i] : memref<4xf32>
      memref.store %y, %hi[%i] : memref<4xf32>
    }
  }
"""


def test_relay_ops_around_a_prim_func_call():
    """The prim_func reads a fused kernel's output and its result feeds
    another: relay's kernels and the hand-written one share the host function."""
    f = hetero.compile(
        f"""builtin.module {{{AXPY}
  relay.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {{
    %0 = relay.exp %x : tensor<8xf32>
    %1 = relay.call @axpy(%0, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %2 = relay.negative %1 : tensor<8xf32>
    relay.return %2 : tensor<8xf32>
  }}
}}""",
        TARGET,
    )
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    y = np.arange(8, dtype=np.float32)
    np.testing.assert_allclose(f(x, y), -(2 * np.exp(x) + y), rtol=1e-6)


def test_a_tuple_result_is_one_buffer_per_tensor():
    """A prim_func writing two outputs returns a tuple to relay; each field
    is used apart, and one is returned straight from the kernel's buffer."""
    f = hetero.compile(
        f"""builtin.module {{{SPLIT}
  relay.func @main(%a: tensor<2x4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>> {{
    %0 = relay.call @split(%a) : (tensor<2x4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
    %lo = relay.get_item %0[0] : tuple<tensor<4xf32>, tensor<4xf32>> -> tensor<4xf32>
    %hi = relay.get_item %0[1] : tuple<tensor<4xf32>, tensor<4xf32>> -> tensor<4xf32>
    %1 = relay.multiply %lo, %hi : tensor<4xf32>
    %r = relay.tuple(%1, %hi) : tuple<tensor<4xf32>, tensor<4xf32>>
    relay.return %r : tuple<tensor<4xf32>, tensor<4xf32>>
  }}
}}""",
        TARGET,
    )
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    product, hi = f(a)
    np.testing.assert_array_equal(product, a[0] * a[1])
    np.testing.assert_array_equal(hi, a[1])


def test_a_wrong_call_is_a_located_diagnostic():
    text = f"""builtin.module {{{AXPY}
  relay.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {{
    %0 = relay.call @axpy(%x) : (tensor<8xf32>) -> tensor<8xf32>
    relay.return %0 : tensor<8xf32>
  }}
}}"""
    with pytest.raises(HeteroError, match="@axpy takes 3 buffer") as error:
        hetero.compile(text, TARGET)
    call = next(
        i for i, line in enumerate(text.splitlines(), 1) if "relay.call" in line
    )
    assert error.value.location is not None and error.value.location.line == call


@pytest.mark.parametrize(
    ("source", "inputs"),
    [
        (
            f"""builtin.module {{{AXPY}
  relay.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {{
    %0 = relay.exp %x : tensor<8xf32>
    %1 = relay.call @axpy(%0, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    relay.return %1 : tensor<8xf32>
  }}
}}""",
            [np.linspace(-1, 1, 8, dtype=np.float32), np.arange(8, dtype=np.float32)],
        ),
        (
            f"""builtin.module {{{SPLIT}
  relay.func @main(%a: tensor<2x4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>> {{
    %0 = relay.call @split(%a) : (tensor<2x4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
    relay.return %0 : tuple<tensor<4xf32>, tensor<4xf32>>
  }}
}}""",
            [np.arange(8, dtype=np.float32).reshape(2, 4)],
        ),
    ],
)
def test_the_interpreter_runs_a_prim_func_call(source, inputs):
    """The reference interpreter runs the prim_func in the TIR interpreter
    (results after the arguments), so `hetero-run --check` has an oracle."""
    module = parse_module(source)
    expected = hetero.compile(source, TARGET)(*inputs)
    got = run(module, *inputs)
    for e, g in zip(
        expected if isinstance(expected, tuple) else (expected,),
        got if isinstance(got, tuple) else (got,),
        strict=True,
    ):
        np.testing.assert_allclose(g, e, rtol=1e-6)
