"""plan-devices on random programs with random device annotations.

For every generated program, planning either stops with a located diagnostic
(the annotations can genuinely conflict) or produces a module that
(1) verifies and passes `verify-devices`, (2) is a fixed point of the pass
(idempotence), and (3) computes exactly what the unplanned program computes in
the reference interpreter.  Closures carry annotations inside them, so their
parameters and results often end up on different devices (which planning the
planned module again once rejected).  Also: deep chains neither recurse nor
stall.
"""

from io import StringIO

import numpy as np
from hypothesis import HealthCheck, given, settings
from relay_programs import programs
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.printer import Printer

from hetero.context import parse_module
from hetero.dialects.relay import ExpOp, FuncOp, ReturnOp
from hetero.dialects.target import CONFIG_ATTR_NAME, CompilationConfigAttr, TargetAttr
from hetero.interpreter.relay import run
from hetero.transforms.plan_devices import PlanDevicesPass
from hetero.transforms.verify_devices import VerifyDevicesPass
from hetero.utils.diagnostics import HeteroError, verify_module


def _text(module: ModuleOp) -> str:
    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def _inputs(module: ModuleOp) -> list[np.ndarray]:
    main = next(
        op for op in module.ops if isinstance(op, FuncOp) and op.sym_name.data == "main"
    )
    rng = np.random.default_rng(0)
    shapes = [
        tuple(t.get_shape())
        for t in main.function_type.inputs.data
        if isinstance(t, TensorType)
    ]
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _plan(module: ModuleOp) -> None:
    PlanDevicesPass().apply(Context(), module)
    verify_module(module)
    VerifyDevicesPass().apply(Context(), module)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_planning_is_valid_idempotent_and_preserves_values(text: str):
    module = parse_module(text)
    inputs = _inputs(module)
    expected = run(module, *inputs)
    try:
        _plan(module)
    except HeteroError as e:
        assert e.op is not None and e.location is not None, "conflicts are located"
        assert "conflicting devices" in e.message or "cannot place" in e.message
        return
    planned = _text(module)
    again = parse_module(planned)
    _plan(again)
    assert _text(again) == planned
    np.testing.assert_array_equal(run(module, *inputs), expected)


def _chain(length: int) -> ModuleOp:
    t = TensorType(f32, [4])
    func = FuncOp("main", [t], t)
    value = func.args[0]
    for _ in range(length):
        op = ExpOp(value)
        func.body.block.add_op(op)
        value = op.result
    func.body.block.add_op(ReturnOp(value))
    module = ModuleOp([func])
    module.attributes[CONFIG_ATTR_NAME] = CompilationConfigAttr([TargetAttr("llvm")])
    return module


def test_a_chain_of_ten_thousand_ops_is_planned():
    module = _chain(10_000)
    _plan(module)
    last = module.body.block.first_op.body.block.last_op.prev_op
    assert last.vdevice is not None and last.vdevice.device_id == 0
