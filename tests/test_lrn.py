"""`relay.nn.lrn` on the CPU: rows of the innermost axis, the window's
squares summed in a vectorized `local` row, and `x · exp(-beta · log(base))`
rather than a C library `pow` per element (`te/templates/reduction.py`:
`_lrn_rows`), on the TIR interpreter and compiled for both ISAs, against
the relay interpreter."""

from __future__ import annotations

from collections.abc import Sequence

import isas
import numpy as np
import pytest
from test_lower_te import check_lowering
from xdsl.dialects import math

import hetero
from hetero.context import parse_module
from hetero.dialects import relay, tir
from hetero.driver import lower_to_tir
from hetero.interpreter.relay import run_text

RNG = np.random.default_rng(5)

CASES = [
    ([1, 7, 5, 9], 5, 1),  # AlexNet's: a window of 5 across channels
    ([2, 3, 4], 3, 1),  # a window wider than the channels at both ends
    ([1, 6, 4, 20], 4, 1),  # an even window: one more channel after
    ([1, 5, 3, 3], 1, 1),
    ([2, 4, 3], 3, 0),  # the first axis
    ([2, 3, 6], 3, -1),  # channels innermost: an element at a time
]


def _program(shape: Sequence[int], size: int, axis: int, options: str = "") -> str:
    tensor = f"tensor<{'x'.join(map(str, shape))}xf32>"
    config = f'#target.config<[#target.target<"llvm", {{{options}}}>]>'
    return (
        f"builtin.module attributes {{target.config = {config}}} {{\n"
        f"relay.func @main(%x: {tensor}) -> {tensor} {{\n"
        f"  %0 = relay.nn.lrn %x {{size = {size} : i64, axis = {axis} : i64, "
        f"alpha = 0.2 : f64, beta = 0.75 : f64, bias = 1.5 : f64}} : {tensor}\n"
        f"  relay.return %0 : {tensor}\n}}\n}}"
    )


@pytest.mark.parametrize("shape, size, axis", CASES)
def test_lowering_on_the_tir_interpreter(
    shape: list[int], size: int, axis: int
) -> None:
    check_lowering(
        [shape],
        lambda p: relay.LRNOp(
            p[0], size=size, axis=axis, alpha=0.2, beta=0.75, bias=1.5
        ),
    )


@pytest.mark.parametrize("isa", isas.ISAS)
@pytest.mark.parametrize("shape, size, axis", CASES)
def test_compiled_against_the_interpreter(
    isa: str, shape: list[int], size: int, axis: int
) -> None:
    if not isas.runs_here(isa):
        pytest.skip(f"this host cannot run {isa} code")
    text = _program(shape, size, axis, isas.options(isa))
    x = RNG.standard_normal(shape).astype(np.float32) * 3
    np.testing.assert_allclose(
        hetero.compile(text)(x), run_text(text, x), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("isa", isas.ISAS)
def test_rows_are_vector_code_without_pow(isa: str) -> None:
    """Channels outside the innermost axis: vectorized loops over the rows,
    log and exp (which approximate-math expands), no `powf`."""
    module = parse_module(_program([1, 8, 6, 55], 5, 1, isas.options(isa)))
    lower_to_tir(module)
    [kernel] = [
        op
        for op in module.walk()
        if isinstance(op, tir.PrimFuncOp) and "lrn" in op.sym_name.data
    ]
    ops = [type(op) for op in kernel.walk()]
    assert math.PowFOp not in ops
    assert math.LogOp in ops and math.ExpOp in ops
    loops = [op for op in kernel.walk() if isinstance(op, tir.ForOp)]
    assert sum(op.kind.data == tir.ForKind.VECTORIZED for op in loops) >= 3
