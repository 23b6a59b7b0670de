"""The `inline` pass (docs/passes/inline.md) and `hetero.compile` on the
programs of the relay property-test strategy (`relay_programs.py`), whose
result goes through a private `Inline` helper.

Each sampled program compiles and runs like the reference interpreter (its
`relay.if` of a constant condition folded by `fold-constant`, its closures
beta-reduced by `inline`), or stops at a located diagnostic of a genuine
error: conflicting device annotations, which `plan-devices` reports for the
program as written too.  A GPU program is compiled to PTX everywhere and run
where there is a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from relay_programs import programs
from xdsl.context import Context

import hetero
from hetero.context import parse_module
from hetero.dialects.relay import CallOp, FuncOp
from hetero.interpreter.relay import run
from hetero.runtime.cuda import CudaUnavailable
from hetero.transforms.inline import InlinePass
from hetero.transforms.plan_devices import PlanDevicesPass
from hetero.utils.diagnostics import HeteroError


def _inputs(text: str) -> list[np.ndarray]:
    main = next(
        op
        for op in parse_module(text).ops
        if isinstance(op, FuncOp) and op.sym_name.data == "main"
    )
    rng = np.random.default_rng(0)
    return [
        rng.standard_normal(a.type.get_shape()).astype(np.float32) for a in main.args
    ]  # type: ignore[attr-defined]


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(programs())
def test_strategy_programs_compile_like_the_interpreter(text: str) -> None:
    try:
        compiled = hetero.compile(text)
    except HeteroError as e:
        assert e.location is not None, "diagnostics are located"
        assert "conflicting devices" in e.message, e.message
        with pytest.raises(HeteroError, match="conflicting devices"):
            PlanDevicesPass().apply(Context(), parse_module(text))
        return
    inputs = _inputs(text)
    try:
        result = compiled(*inputs)
    except CudaUnavailable:
        return
    np.testing.assert_allclose(
        result, run(parse_module(text), *inputs), rtol=1e-5, atol=1e-5
    )


HELPERS = """builtin.module {
  relay.func private @twice(%x: tensor<4xf32>) -> tensor<4xf32> attributes {Inline} {
    %y = relay.call @negate(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %r = relay.add %y, %y : tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
  relay.func @negate(%x: tensor<4xf32>) -> tensor<4xf32> attributes {Inline} {
    %r = relay.negative %x : tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %c = relay.constant dense<true> : tensor<i1>
    %r = relay.if %c : tensor<i1> -> tensor<4xf32> {
      %a = relay.call @twice(%x) : (tensor<4xf32>) -> tensor<4xf32>
      relay.yield %a : tensor<4xf32>
    } else {
      relay.yield %x : tensor<4xf32>
    }
    %s = relay.call @twice(%r) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %s : tensor<4xf32>
  }
}
"""


def test_inline_functions_are_inlined_through_and_private_ones_erased() -> None:
    """A helper calling a helper, a call inside a branch: no call is left;
    the private helper is gone, the public one stays callable."""
    module = parse_module(HELPERS)
    x = np.arange(4, dtype=np.float32)
    expected = run(module, x)
    InlinePass().apply(Context(), module)
    assert not [op for op in module.walk() if isinstance(op, CallOp)]
    names = [op.sym_name.data for op in module.ops if isinstance(op, FuncOp)]
    assert names == ["negate", "main"]
    np.testing.assert_array_equal(run(module, x), expected)


def test_compile_inlines_inline_functions() -> None:
    """Without the pass `lower-aot-main` met the helper's call unlowered."""
    text = HELPERS.replace(
        "%c = relay.constant dense<true> : tensor<i1>\n", ""
    ).replace(
        HELPERS[HELPERS.index("    %r = relay.if") : HELPERS.index("    %s = ")],
        "    %r = relay.call @twice(%x) : (tensor<4xf32>) -> tensor<4xf32>\n",
    )
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(hetero.compile(text)(x), 4 * x)


def test_compile_folds_constant_ifs_and_reduces_closures() -> None:
    """A helper called in a branch of a constant `relay.if`, a closure applied
    twice: `lower-aot-main` stopped at the if and at the closure."""
    text = HELPERS.replace(
        "    %s = relay.call @twice(%r)",
        """    %f = relay.fn (%p: tensor<4xf32>) -> tensor<4xf32> {
      %q = relay.multiply %p, %x : tensor<4xf32>
      relay.return %q : tensor<4xf32>
    }
    %g = relay.call_indirect %f(%r) : (tensor<4xf32>) -> tensor<4xf32>
    %h = relay.call_indirect %f(%g) : (tensor<4xf32>) -> tensor<4xf32>
    %s = relay.call @twice(%h)""",
    )
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(hetero.compile(text)(x), run(parse_module(text), x))


def test_recursive_inline_function_is_a_located_diagnostic() -> None:
    text = """builtin.module {
  relay.func @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {Inline} {
    %r = relay.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
  relay.func @g(%x: tensor<4xf32>) -> tensor<4xf32> attributes {Inline} {
    %r = relay.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
}
"""
    with pytest.raises(
        HeteroError, match="@f is marked Inline but calls itself through @g"
    ) as info:
        InlinePass().apply(Context(), parse_module(text))
    assert isinstance(info.value.op, CallOp)
