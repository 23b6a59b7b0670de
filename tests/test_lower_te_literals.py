"""lower-te outlines a `Primitive` function literal called in place (as TVM's
LowerTE does), so a program holding one compiles and computes what the relay
reference computes; before, lower-te refused it."""

from __future__ import annotations

import numpy as np

import hetero
from hetero.interpreter.relay import run_text

CPU = '#target.vdevice<cpu:0, target = #target.target<"llvm">>'

PROGRAM = f"""
relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %f = relay.fn (%a: tensor<4xf32> {{vdevice = {CPU}}}) -> (tensor<4xf32> {{vdevice = {CPU}}}) attributes {{Primitive}} {{
    %0 = relay.exp %a : tensor<4xf32>
    %1 = relay.negative %0 : tensor<4xf32>
    relay.return %1 : tensor<4xf32>
  }}
  %r = relay.call_indirect %f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %s = relay.call_indirect %f(%r) : (tensor<4xf32>) -> tensor<4xf32>
  relay.return %s : tensor<4xf32>
}}
"""


def test_primitive_literal_called_in_place_compiles() -> None:
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    expected = run_text(PROGRAM, x)
    np.testing.assert_allclose(
        hetero.compile(PROGRAM, targets=["llvm"])(x), expected, rtol=1e-6
    )
