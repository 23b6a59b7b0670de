"""`inplace-concatenate` in `hetero.compile`: a fire module's expand convs
write their parts of the concatenation in place — same result as the
reference interpreter, no call (nor code) of the concatenation kernel, and the parts
share their bytes with the result in the planned arena."""

from __future__ import annotations

import numpy as np

import hetero
from hetero.context import parse_module
from hetero.interpreter.relay import run

FIRE = """
builtin.module attributes {target.config = #target.config<[#target.target<"llvm", {num_threads = 2}>]>} {
  relay.func @main(%x: tensor<1x8x9x9xf32>, %w1: tensor<4x8x1x1xf32>, %w3: tensor<6x8x3x3xf32>) -> tensor<1x10x4x4xf32> {
    %a = relay.nn.conv2d %x, %w1 : (tensor<1x8x9x9xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x9x9xf32>
    %ar = relay.relu %a : tensor<1x4x9x9xf32>
    %b = relay.nn.conv2d %x, %w3 {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x9x9xf32>, tensor<6x8x3x3xf32>) -> tensor<1x6x9x9xf32>
    %br = relay.relu %b : tensor<1x6x9x9xf32>
    %c = relay.concatenate %ar, %br {axis = 1} : (tensor<1x4x9x9xf32>, tensor<1x6x9x9xf32>) -> tensor<1x10x9x9xf32>
    %r = relay.nn.max_pool2d %c {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x10x9x9xf32>) -> tensor<1x10x4x4xf32>
    relay.return %r : tensor<1x10x4x4xf32>
  }
}
"""


def test_fire_module_concatenates_in_place() -> None:
    rng = np.random.default_rng(0)
    inputs = [
        rng.standard_normal(s).astype(np.float32)
        for s in [(1, 8, 9, 9), (4, 8, 1, 1), (6, 8, 3, 3)]
    ]
    compiled = hetero.compile(FIRE)
    expected = run(parse_module(FIRE), *inputs)
    np.testing.assert_allclose(compiled(*inputs), expected, rtol=1e-5, atol=1e-5)
    kernels = [c.kernel for c in compiled.profile(*inputs).calls]
    assert len(kernels) == 3 and not any("concatenate" in k for k in kernels)
    # Nothing calls the concatenation kernel: it is not even compiled.
    assert "concatenate" not in compiled.native.llvm_ir()
    # The two parts (4 + 6 channels of 81 f32) are the result's 3240 bytes.
    _, requested = compiled.memory["cpu:0"]
    assert requested == 3264  # one buffer, 3240 bytes rounded up to 64
