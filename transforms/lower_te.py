"""`lower-te`: `Primitive` relay functions become `tir.prim_func`s (spec §6.6).

For every global `relay.func` with `Primitive` (and no `Compiler`: those
belong to an external codegen), a public `tir.prim_func @<name>_tir` is built:

* **target** — the target of the function's device, read from the IR (its
  result's `vdevice`, else a parameter's); no device with a target is a
  diagnostic asking for `plan-devices`.  There is no side input (spec §7.8).
* **signature** — destination-passing style: one memref per parameter, then
  the output memref; no results.
* **body** — per-op compute templates (`lowering/te_templates.py`).  An
  elementwise/injective result used once, by another elementwise/injective
  op, is never stored: it is computed inside its consumer's loop body.  Other
  results are materialised: the returned one into the output buffer, the
  rest into a `tir.alloc` intermediate.  Loops are serial except the
  outermost loop over output elements of each nest, which is `parallel`.

Calls keep their relay form, so the module stays verifiable and the relay
interpreter still runs it: each `relay.call` of a lowered function gets the
attribute `lowered = @<name>_tir`, the symbol the AOT step calls with the
arguments and a destination buffer; the relay function is marked with the
same attribute (lowering again skips it).  A call of an `Extern` function
(spec §6.6 case 3) gets `lowered = @<callee>`: the symbol named is the
external codegen's, and that it is a `relay.func` with `Extern` (not a
`tir.prim_func`) is what tells the AOT step to call external code.

Dynamic shapes are diagnosed (host shape functions are not generated yet).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    SymbolRefAttr,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from hetero.dialects import relay
from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import PrimFuncOp
from hetero.lowering.te_emit import Emitter, Tensor, store_all
from hetero.lowering.te_templates import LAZY_TEMPLATES, NEST_TEMPLATES
from hetero.utils.diagnostics import HeteroError

LOWERED = "lowered"
"""Attribute on calls (and lowered functions) naming the symbol to call instead."""


def is_lowerable(func: Operation) -> bool:
    """A fused kernel for hetero's own codegen (not an external one's)."""
    return (
        isinstance(func, relay.FunctionOpBase)
        and func.is_primitive
        and func.compiler is None
        and not func.is_extern
    )


def function_target(func: relay.FunctionOpBase) -> TargetAttr:
    """The target of the function's device, from its result or parameters."""
    for device in (func.result_vdevice, *func.param_vdevices):
        if device is not None and device.target is not None:
            return device.target
    raise HeteroError(
        "lower-te: Primitive function has no device with a target; "
        "run plan-devices (with targets) first",
        func,
    )


def _static_memref(type: Attribute, what: str, op: Operation) -> MemRefType:
    """The buffer type of a tensor parameter or result, which must be static."""
    if not isinstance(type, TensorType):
        raise HeteroError(f"lower-te: {what} must be a tensor, got {type}", op)
    if any(d < 0 for d in type.get_shape()):
        raise HeteroError(
            f"lower-te: {what} has a dynamic shape ({type}); dynamic shapes need "
            "host shape functions, which are not supported yet",
            op,
        )
    return MemRefType(type.element_type, type.get_shape())


def _constant_tensor(op: relay.ConstantOp) -> Tensor:
    """A splat constant reads as its value everywhere; other constants must be
    parameters (fuse-ops leaves them outside the kernels)."""
    value = op.value
    type = op.results[0].type
    assert isinstance(type, TensorType)
    if not isinstance(value, DenseIntOrFPElementsAttr) or not value.is_splat():
        raise HeteroError(
            "lower-te: only splat constants can be inlined into a kernel; "
            "pass this constant as a parameter",
            op,
        )
    scalar = value.get_values()[0]
    return Tensor(
        tuple(type.get_shape()),
        type.element_type,
        lambda e, idx: e.constant(scalar, type.element_type),
    )


@dataclass
class _KernelBuilder:
    """Lowers one Primitive function's body into a prim_func's entry block."""

    func: relay.FuncOp
    out: SSAValue
    emitter: Emitter

    def lower(self, params: Sequence[SSAValue]) -> None:
        values: dict[SSAValue, Tensor] = {
            arg: Tensor.of_buffer(buffer) for arg, buffer in zip(self.func.args, params)
        }
        body = list(self.func.body.block.ops)
        for op in body[:-1]:
            values[op.results[0]] = self._lower_op(op, values)
        returned = body[-1]
        assert isinstance(returned, relay.ReturnOp)
        if not self._written_by_op(returned.value):
            store_all(self.emitter, values[returned.value], self.out)

    def _written_by_op(self, value: SSAValue) -> bool:
        """Op results are materialised into the output buffer by `_destination`;
        a returned parameter or constant still has to be copied there."""
        return isinstance(value, OpResult) and not isinstance(
            value.op, relay.ConstantOp
        )

    def _lower_op(self, op: Operation, values: dict[SSAValue, Tensor]) -> Tensor:
        inputs = [values[v] for v in op.operands]
        if isinstance(op, relay.ConstantOp):
            return _constant_tensor(op)
        if (lazy := LAZY_TEMPLATES.get(type(op))) is not None:
            tensor = lazy(op, inputs)
            if self._stays_lazy(op.results[0]):
                return tensor
            buffer = self._destination(op)
            store_all(self.emitter, tensor, buffer)
            return Tensor.of_buffer(buffer)
        if (nest := NEST_TEMPLATES.get(type(op))) is not None:
            buffer = self._destination(op)
            nest(self.emitter, op, inputs, buffer)
            return Tensor.of_buffer(buffer)
        raise HeteroError(f"lower-te: {op.name} cannot be lowered inside a kernel", op)

    def _stays_lazy(self, value: SSAValue) -> bool:
        """Inlined into its single consumer when that consumer is lazy too."""
        uses = list(value.uses)
        return len(uses) == 1 and type(uses[0].operation) in LAZY_TEMPLATES

    def _is_returned(self, value: SSAValue) -> bool:
        return any(isinstance(u.operation, relay.ReturnOp) for u in value.uses)

    def _destination(self, op: Operation) -> SSAValue:
        """The output buffer for the returned value, else an intermediate."""
        result = op.results[0]
        if self._is_returned(result):
            return self.out
        type = result.type
        assert isinstance(type, TensorType)
        return self.emitter.alloc(type.get_shape(), type.element_type)


def lower_function(func: relay.FuncOp, name: str) -> PrimFuncOp:
    """The prim_func computing `func` in destination-passing style."""
    target = function_target(func)
    inputs = [
        _static_memref(t, f"parameter #{i}", func)
        for i, t in enumerate(func.function_type.inputs.data)
    ]
    output = _static_memref(func.result_type, "the result", func)
    prim = PrimFuncOp(name, ([*inputs, output], []), target=target)
    prim.attributes["tir.noalias"] = IntegerAttr(1, i1)
    entry = prim.body.block
    *params, out = entry.args
    _KernelBuilder(func, out, Emitter(entry, entry, {})).lower(params)
    return prim


def _fresh_name(table: ModuleOp, base: str) -> str:
    name, count = base, 0
    while SymbolTable.lookup_symbol(table, name) is not None:
        count += 1
        name = f"{base}_{count}"
    return name


def _check_no_literals(module: ModuleOp) -> None:
    """Primitive function literals must be outlined (fuse-ops outlines its groups)."""
    for op in module.walk():
        if isinstance(op, relay.FnOp) and is_lowerable(op):
            raise HeteroError(
                "lower-te: a Primitive function literal must be outlined to a "
                "global relay.func first",
                op,
            )


def _mark_calls(module: ModuleOp, symbols: dict[str, str]) -> None:
    """Point each call of a lowered or Extern function at the symbol to call."""
    for op in module.walk():
        if isinstance(op, relay.CallOp) and LOWERED not in op.attributes:
            callee = op.callee.string_value()
            if callee in symbols:
                op.attributes[LOWERED] = SymbolRefAttr(symbols[callee])


@dataclass(frozen=True)
class LowerTEPass(ModulePass):
    """Lower Primitive relay functions to tir.prim_funcs; mark calls."""

    name = "lower-te"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _check_no_literals(op)
        symbols: dict[str, str] = {}
        for func in list(op.ops):
            if not isinstance(func, relay.FuncOp):
                continue
            name = func.sym_name.data
            if func.is_extern:
                symbols[name] = name
            elif isinstance(done := func.attributes.get(LOWERED), SymbolRefAttr):
                symbols[name] = done.string_value()
            elif is_lowerable(func) and LOWERED not in func.attributes:
                prim = lower_function(func, _fresh_name(op, f"{name}_tir"))
                op.body.block.insert_op_after(prim, func)
                func.attributes[LOWERED] = SymbolRefAttr(prim.sym_name.data)
                symbols[name] = prim.sym_name.data
        _mark_calls(op, symbols)
