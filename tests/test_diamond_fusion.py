"""Diamonds after an anchor (issue 34): a value that feeds two elementwise
ops meeting again (SiLU's `y * sigmoid(y)`, GELU with erf, a residual
`y + relu(y)`, squeeze-and-excitation's broadcast gate) is one kernel with
its anchor, the DAG applied as the anchor's tiles are stored, each op once
per element; results against the reference interpreter, both ISAs pinned,
with `simplify-activations` off (it would make SiLU one op)."""

from __future__ import annotations

import isas
import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import math
from xdsl.dialects.builtin import MemRefType

import hetero
from hetero.context import parse_module
from hetero.dialects import relay, tir
from hetero.interpreter.relay import run
from hetero.te.emit import Emitter, Tensor
from hetero.te.templates import epilogue_of, epilogue_ops
from hetero.transforms.fuse_ops import FuseOpsPass
from hetero.transforms.lower_te import LowerTEPass
from hetero.transforms.plan_devices import PlanDevicesPass
from hetero.transforms.simplify_activations import SimplifyActivationsPass

RNG = np.random.default_rng(0)

X, W, G = "tensor<1x8x6x6xf32>", "tensor<16x8x3x3xf32>", "tensor<1x16x1x1xf32>"
Y = "tensor<1x16x6x6xf32>"
CONV = (
    f"%y = relay.nn.conv2d %x, %w {{padding = array<i64: 1, 1, 1, 1>}} "
    f": ({X}, {W}) -> {Y}"
)
DENSE_Y = "tensor<5x24xf32>"
DENSE = (
    "%d = relay.nn.dense %x, %w : (tensor<5x12xf32>, tensor<24x12xf32>) -> "
    f"{DENSE_Y}\n    %y = relay.nn.bias_add %d, %b : ({DENSE_Y}, tensor<24xf32>) "
    f"-> {DENSE_Y}"
)

EXAMPLES = {
    "silu": (
        CONV,
        [f"%s = relay.sigmoid %y : {Y}", f"%r = relay.multiply %y, %s : {Y}"],
    ),
    "residual_relu": (
        CONV,
        [f"%s = relay.relu %y : {Y}", f"%r = relay.add %y, %s : {Y}"],
    ),
    "gelu_erf": (
        CONV,
        [
            "%half = relay.constant dense<0.5> : tensor<f32>",
            "%one = relay.constant dense<1.0> : tensor<f32>",
            "%root2 = relay.constant dense<1.41421354> : tensor<f32>",
            f"%0 = relay.divide %y, %root2 : ({Y}, tensor<f32>) -> {Y}",
            f"%1 = relay.erf %0 : {Y}",
            f"%2 = relay.add %1, %one : ({Y}, tensor<f32>) -> {Y}",
            f"%3 = relay.multiply %y, %half : ({Y}, tensor<f32>) -> {Y}",
            f"%r = relay.multiply %3, %2 : {Y}",
        ],
    ),
    "excitation_gate": (
        CONV,
        [
            f"%0 = relay.multiply %y, %g : ({Y}, {G}) -> {Y}",
            f"%1 = relay.sigmoid %0 : {Y}",
            f"%r = relay.multiply %y, %1 : {Y}",
        ],
    ),
    "dense_tanh_gate": (
        DENSE,
        [f"%t = relay.tanh %y : {DENSE_Y}", f"%r = relay.multiply %t, %y : {DENSE_Y}"],
    ),
}
"""Name → (anchor, diamond after it ending in `%r`)."""


def _program(name: str, isa: str) -> str:
    anchor, diamond = EXAMPLES[name]
    if anchor is CONV:
        params, result = f"%x: {X}, %w: {W}, %g: {G}", Y
    else:
        params, result = (
            "%x: tensor<5x12xf32>, %w: tensor<24x12xf32>, %b: tensor<24xf32>",
            DENSE_Y,
        )
    target = f'#target.target<"llvm", {{{isas.options(isa)}}}>'
    return (
        f"builtin.module attributes {{target.config = #target.config<[{target}]>}} {{\n"
        f"  relay.func @main({params}) -> {result} {{\n    {anchor}\n    "
        + "\n    ".join(diamond)
        + "\n"
        f"    relay.return %r : {result}\n  }}\n}}\n"
    )


def _inputs(module: object) -> list[np.ndarray]:
    main = next(f for f in module.ops if isinstance(f, relay.FuncOp))  # type: ignore[attr-defined]
    return [
        RNG.standard_normal(a.type.get_shape()).astype(np.float32) for a in main.args
    ]


@pytest.fixture
def no_simplify_activations(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pipeline without `simplify-activations`: the general fusion alone."""
    monkeypatch.setattr(SimplifyActivationsPass, "apply", lambda *_: None)


@pytest.mark.usefixtures("no_simplify_activations")
@pytest.mark.parametrize("isa", isas.ISAS)
@pytest.mark.parametrize("name", EXAMPLES)
def test_diamond_is_the_anchors_epilogue(name: str, isa: str) -> None:
    """One kernel, with no buffer of the anchor's result in it (the diamond
    is applied as the tiles are stored), matching the interpreter."""
    text = _program(name, isa)
    module = parse_module(text)
    main = module.ops.first
    assert isinstance(main, relay.FuncOp)
    shape = main.result_type.get_shape()  # type: ignore[attr-defined]  # the anchor's
    for p in (PlanDevicesPass(), FuseOpsPass(), LowerTEPass()):
        p.apply(Context(), module)
    (kernel,) = [f for f in module.ops if isinstance(f, tir.PrimFuncOp)]
    assert shape not in [
        op.buffer.type.get_shape()
        for op in kernel.walk()
        if isinstance(op, tir.AllocOp)
    ]
    if isas.runs_here(isa):
        inputs = _inputs(parse_module(text))
        expected = run(parse_module(text), *inputs)
        np.testing.assert_allclose(
            hetero.compile(text)(*inputs), expected, rtol=1e-5, atol=1e-5
        )


def test_each_op_of_the_epilogue_is_computed_once() -> None:
    """erf(y) * erf(y) + y: the erf, read twice, is computed once per element."""
    y = "tensor<4x8xf32>"
    func = parse_module(
        f"""builtin.module {{
  relay.func @f(%x: tensor<4x3xf32>, %w: tensor<8x3xf32>) -> {y} {{
    %y = relay.nn.dense %x, %w : (tensor<4x3xf32>, tensor<8x3xf32>) -> {y}
    %e = relay.erf %y : {y}
    %s = relay.multiply %e, %e : {y}
    %r = relay.add %s, %y : {y}
    relay.return %r : {y}
  }}
}}"""
    ).ops.first
    assert isinstance(func, relay.FuncOp)
    anchor = func.body.block.first_op
    assert anchor is not None
    buffers = [MemRefType(a.type.element_type, a.type.get_shape()) for a in func.args]  # type: ignore[attr-defined]
    prim = tir.PrimFuncOp("k", (buffers, []))
    values = {a: Tensor.of_buffer(b) for a, b in zip(func.args, prim.args)}
    tail = epilogue_ops(anchor, values)
    assert [op.name for op in tail] == ["relay.erf", "relay.multiply", "relay.add"]
    e = Emitter(prim.body.block, prim.body.block, {})
    epilogue_of(anchor, tail, values)(e, [1, 2], e.load(prim.args[0], [1, 2]))
    assert sum(isinstance(op, math.ErfOp) for op in prim.walk()) == 1
