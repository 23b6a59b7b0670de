"""`lower-aot-main` in `hetero.compile`: a returned reshape is a view.  The
producer of its input writes straight into the output, viewed with the
input's shape, and the reshape's copy kernel is not called; where the input
is needed elsewhere (returned too, read again, a parameter) the copy stays.
Every case gives the reference interpreter's result."""

from __future__ import annotations

import numpy as np
import pytest

import hetero
from hetero.context import parse_module
from hetero.interpreter.relay import run

HEADER = 'builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {'
DENSE = (
    "%d = relay.nn.dense %x, %w : (tensor<2x8xf32>, tensor<6x8xf32>) -> tensor<2x6xf32>"
)
RESHAPE = "%r = relay.reshape {of} {{newshape = array<i64: 1, 2, 6>}} : (tensor<2x6xf32>) -> tensor<1x2x6xf32>"
R = "tensor<1x2x6xf32>"
D = "tensor<2x6xf32>"

PAIR = f"tuple<{R}, {D}>"
RETURN_PAIR = f"%t = relay.tuple(%r, {{}}) : {PAIR}\n    relay.return %t : {PAIR}"

CASES = {
    # name: (body after the reshape, result type, reshaped value, copy kept)
    "returned": (f"relay.return %r : {R}", R, "%d", False),
    "input also returned": (RETURN_PAIR.format("%d"), PAIR, "%d", True),
    "input read again": (
        f"%e = relay.exp %d : {D}\n    " + RETURN_PAIR.format("%e"),
        PAIR,
        "%d",
        True,
    ),
    "parameter reshaped": (RETURN_PAIR.format("%d"), PAIR, "%p", True),
}


def _program(body: str, result: str, of: str) -> str:
    return f"""{HEADER}
  relay.func @main(%x: tensor<2x8xf32>, %w: tensor<6x8xf32>, %p: {D}) -> {result} {{
    {DENSE}
    {RESHAPE.format(of=of)}
    {body}
  }}
}}"""


@pytest.mark.parametrize("case", CASES)
def test_returned_reshape(case: str) -> None:
    body, result, of, copied = CASES[case]
    program = _program(body, result, of)
    rng = np.random.default_rng(0)
    inputs = [
        rng.standard_normal(s).astype(np.float32) for s in [(2, 8), (6, 8), (2, 6)]
    ]
    compiled = hetero.compile(program)
    expected = run(parse_module(program), *inputs)
    got = compiled(*inputs)
    for g, e in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, expected))):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
    kernels = [c.kernel for c in compiled.profile(*inputs).calls]
    assert any("reshape" in k for k in kernels) == copied, kernels
