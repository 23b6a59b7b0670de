"""`lower-te`: `Primitive` relay functions become `tir.prim_func`s (docs/design.md §4.6).

For every global `relay.func` with `Primitive` (and no `Compiler`: those
belong to an external codegen), a public `tir.prim_func @<name>_tir` is built:

* **target** — the target of the function's device, read from the IR (its
  result's `vdevice`, else a parameter's); no device with a target is a
  diagnostic asking for `plan-devices`.  There is no side input (docs/design.md §1).
* **signature** — destination-passing style: one memref per parameter, then
  the output memref; no results.
* **body** — per-op compute templates (`te/templates.py`).  An
  elementwise/injective result used once, by another elementwise/injective
  op, is never stored: it is computed inside its consumer's loop body.  Other
  results are materialised: the returned one into the output buffer, the
  rest into a `tir.alloc` intermediate.  Loops are serial except the
  outermost loop over output elements of each nest, which is `parallel`;
  on a GPU target (`EMITTERS`) that nest is one thread per output element
  instead (`te/schedules/gpu.py`).

Calls keep their relay form, so the module stays verifiable and the relay
interpreter still runs it: each `relay.call` of a lowered function gets the
attribute `lowered = @<name>_tir`, the symbol the AOT step calls with the
arguments and a destination buffer; the relay function is marked with the
same attribute (lowering again skips it).  A call of an `Extern` function
(docs/design.md §4.5) gets `lowered = @<callee>`: the symbol named is the
external codegen's, and that it is a `relay.func` with `Extern` (not a
`tir.prim_func`) is what tells the AOT step to call external code.

Function literals called in place are outlined first, as TVM's LowerTE
does: a `Primitive` one to a private global lowered like the others, a
`Compiler` one through the BYOC flow's last steps (outlined, compiled by its
external codegen, marked `Extern`).

A function with dynamic (`?`) dimensions gets a kernel of the same
dynamic memref types: its sizes are read at run time (`memref.dim`), as
docs/dynamic-shapes.md describes; what cannot be compiled that way is a
located error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass

from hetero.analysis.shape_functions import DynamicShapeError, function_shapes
from hetero.dialects import relay
from hetero.dialects.target import TargetAttr
from hetero.dialects.target.kind import DeviceType
from hetero.dialects.tir import PrimFuncOp
from hetero.targets.cpu import is_cpu
from hetero.te.emit import Emitter, Shape, Tensor, dynamic_shapes, store_all
from hetero.te.schedules.gpu import GpuEmitter
from hetero.te.templates import (
    NEST_TEMPLATES,
    VIEW_OPS,
    VIEW_READERS,
    epilogue_of,
    epilogue_ops,
    lazy_template,
)
from hetero.te.templates.base import result_shape
from hetero.transforms.byoc import open_blocks, program_functions
from hetero.transforms.external_codegen import ExternalCodegenPass
from hetero.transforms.fuse_ops import fused_name
from hetero.transforms.mark_compiler_functions_as_extern import (
    MarkCompilerFunctionsAsExternPass,
)
from hetero.transforms.outline_compiler_functions import (
    OutlineCompilerFunctionsPass,
    call_global,
    check_closed,
    compiler_literals,
    lift_literal,
    literal_calls,
)
from hetero.utils.diagnostics import HeteroError
from hetero.utils.symbols import fresh_name, symbol_names

EMITTERS: dict[DeviceType, type[Emitter]] = {DeviceType.cuda: GpuEmitter}
"""Device type → the emitter laying out its parallel nests (default: CPU loops)."""

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


def _memref(type: Attribute, what: str, op: Operation) -> MemRefType:
    """The buffer type of a tensor parameter or result (`?` where dynamic)."""
    if not isinstance(type, TensorType):
        raise HeteroError(f"lower-te: {what} must be a tensor, got {type}", op)
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
    current: Operation | None = None
    """The op being lowered (where a dynamic size is refused)."""

    def lower(self, params: Sequence[SSAValue]) -> None:
        values: dict[SSAValue, Tensor] = {
            arg: Tensor.of_buffer(buffer) for arg, buffer in zip(self.func.args, params)
        }  # after `_sized`: the buffers' shapes are registered
        body = list(self.func.body.block.ops)
        for op in body[:-1]:
            if op.results[0] not in values:  # else fused into its anchor
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
        self.current = op
        inputs = [values[v] for v in op.operands]
        if isinstance(op, relay.ConstantOp):
            return _constant_tensor(op)
        if (lazy := lazy_template(type(op))) is not None:
            tensor = lazy(op, inputs)
            if self._stays_lazy(op.results[0]):
                return tensor
            buffer = self._destination(op)
            store_all(self.emitter, tensor, buffer)
            return Tensor.of_buffer(buffer)
        if (nest := NEST_TEMPLATES.get(type(op))) is not None:
            tail = epilogue_ops(op, values)
            buffer = self._destination(tail[-1] if tail else op)
            if tail:
                epilogue = epilogue_of(op, tail, values)
                nest(self.emitter, op, inputs, buffer, epilogue=epilogue)  # type: ignore[call-arg]
            else:
                nest(self.emitter, op, inputs, buffer)
            for fused in tail:
                values[fused.results[0]] = Tensor.of_buffer(buffer)
            return Tensor.of_buffer(buffer)
        raise HeteroError(f"lower-te: {op.name} cannot be lowered inside a kernel", op)

    def _stays_lazy(self, value: SSAValue) -> bool:
        """Inlined into its single consumer when that consumer is lazy too,
        or when it is a view that an anchor reads (`fuse-ops`' `VIEW_OPS`
        before a matmul)."""
        uses = list(value.uses)
        if len(uses) != 1:
            return False
        consumer = type(uses[0].operation)
        return lazy_template(consumer) is not None or (
            type(value.owner) in VIEW_OPS and consumer in VIEW_READERS
        )

    def _is_returned(self, value: SSAValue) -> bool:
        return any(isinstance(u.operation, relay.ReturnOp) for u in value.uses)

    def _destination(self, op: Operation) -> SSAValue:
        """The output buffer for the returned value, else an intermediate."""
        result = op.results[0]
        if self._is_returned(result):
            return self.out
        type = result.type
        assert isinstance(type, TensorType)
        return self.emitter.alloc(result_shape(op), type.element_type)


def lower_function(func: relay.FuncOp, name: str) -> PrimFuncOp:
    """The prim_func computing `func` in destination-passing style."""
    target = function_target(func)
    inputs = [
        _memref(t, f"parameter #{i}", func)
        for i, t in enumerate(func.function_type.inputs.data)
    ]
    output = _memref(func.result_type, "the result", func)
    prim = PrimFuncOp(name, ([*inputs, output], []), target=target)
    prim.attributes["tir.noalias"] = IntegerAttr(1, i1)
    entry = prim.body.block
    *params, out = entry.args
    emitter = EMITTERS.get(target.device_type, Emitter)(entry, entry, {})
    builder = _KernelBuilder(func, out, emitter)
    if all(t.has_static_shape() for t in (*inputs, output)):
        builder.lower(params)
    else:
        _lower_dynamic(builder, params, target)
    return prim


def _lower_dynamic(
    builder: _KernelBuilder, params: Sequence[SSAValue], target: TargetAttr
) -> None:
    """A kernel whose buffers have `?` dimensions: its values' sizes are
    `Dim`s over its parameters' (`function_shapes`; the host function checks
    the guards at each call), read by `memref.dim` where a loop or an index
    needs them, and every decision a template takes on a size must hold for
    every size (`hetero.analysis.shape_functions`), else the function is
    refused here."""
    func = builder.func
    if not is_cpu(target):
        raise HeteroError(
            f"lower-te: dynamic shapes are compiled for CPU targets only, not "
            f"'{target.kind_name.data}'",
            func,
        )
    try:
        analysis = function_shapes(func)
    except HeteroError as e:
        raise HeteroError(f"lower-te: {e.message}", e.op) from None
    shapes: dict[SSAValue, Shape] = dict(analysis.shapes)
    returned = func.body.block.last_op
    assert returned is not None
    shapes[builder.out] = analysis.shape(returned.operands[0])
    for arg, buffer in zip(func.args, params):
        shapes[buffer] = analysis.shape(arg)
    builder.emitter.bind_sizes(
        {
            (i, axis): (buffer, axis)
            for i, (arg, buffer) in enumerate(zip(func.args, params))
            for axis, d in enumerate(arg.type.get_shape())  # type: ignore[attr-defined]
            if d < 0 and (i, axis) not in analysis.same
        }
    )
    with dynamic_shapes(shapes):
        op: Operation = func
        try:
            builder.lower(params)
        except DynamicShapeError as e:
            op = builder.current or func
            raise HeteroError(
                f"lower-te: {op.name} cannot be compiled for sizes known at run "
                f"time only: {e}",
                op,
            ) from None


def _compile_compiler_literals(ctx: Context, module: ModuleOp) -> None:
    """TVM's LowerTE hands the `Compiler` functions it meets to their external
    codegen: called `Compiler` literals go through the BYOC passes' last steps
    (outlined, structurally equal ones to one shared global; compiled; marked
    `Extern`), so their calls are marked below like any `Extern` call."""
    if not any(
        literal_calls(fn)
        for func in program_functions(module)
        for fn in compiler_literals(func)
    ):
        return
    OutlineCompilerFunctionsPass(structural_cache=True).apply(ctx, module)
    ExternalCodegenPass().apply(ctx, module)
    MarkCompilerFunctionsAsExternPass().apply(ctx, module)


def _outline_primitive_literals(module: ModuleOp, taken: set[str]) -> None:
    """As TVM's LowerTE does, a `Primitive` literal called in place becomes a
    private global (named as `fuse-ops` names its groups, apart from `taken`)
    placed before its caller and called by symbol, so it is lowered, and
    shares kernels, like any other."""
    for func in program_functions(module):
        literals = [
            op
            for block in open_blocks(func.body.block)
            for op in block.ops
            if isinstance(op, relay.FnOp) and is_lowerable(op) and literal_calls(op)
        ]
        for fn in literals:
            check_closed(fn, "Primitive")
            name = fused_name(taken, list(fn.body.block.ops)[:-1])
            lift_literal(fn, name, func).sym_visibility = StringAttr("private")
            call_global(fn, name)


def _check_no_literals(module: ModuleOp) -> None:
    """A `Primitive` or `Compiler` literal left was not called in place (it is
    passed or returned as a value), so it has no call to outline it for."""
    for op in module.walk():
        if isinstance(op, relay.FnOp) and (is_lowerable(op) or op.compiler):
            kind = "Primitive" if is_lowerable(op) else "Compiler"
            raise HeteroError(
                f"lower-te: a {kind} function literal that is not called in place "
                "must be outlined to a global relay.func first",
                op,
            )


def _mark_calls(module: ModuleOp, symbols: dict[str, str]) -> None:
    """Point each call of a lowered or Extern function at the symbol to call."""
    for op in module.walk():
        if isinstance(op, relay.CallOp) and LOWERED not in op.attributes:
            callee = op.callee.string_value()
            if callee in symbols:
                op.attributes[LOWERED] = SymbolRefAttr(symbols[callee])


def _lower_next_to(module: ModuleOp, taken: set[str], func: relay.FuncOp) -> str:
    """Lower `func` to a prim_func placed after it, named apart from the
    symbols `taken` (which gets its name); its symbol."""
    name = fresh_name(f"{func.sym_name.data}_tir", taken)
    taken.add(name)
    module.body.block.insert_op_after(lower_function(func, name), func)
    return name


class KernelCache:
    """TVM's TECompiler cache: a Primitive function structurally equal to one
    already lowered for the same target (same signature, same ops, attributes
    and constants) calls that kernel instead of getting its own — a network
    with repeated blocks compiles each distinct kernel once."""

    def __init__(self) -> None:
        self.buckets: dict[
            tuple[Attribute, Attribute, tuple[str, ...]], list[tuple[relay.FuncOp, str]]
        ] = {}

    @staticmethod
    def _key(func: relay.FuncOp) -> tuple[Attribute, Attribute, tuple[str, ...]]:
        ops = tuple(o.name for o in func.body.walk())
        return func.function_type, function_target(func), ops

    def kernel(self, func: relay.FuncOp, lower: Callable[[], str]) -> str:
        """The kernel of a structurally equal function seen before, else the
        one `lower()` makes (remembered for the functions that follow)."""
        bucket = self.buckets.setdefault(self._key(func), [])
        for seen, symbol in bucket:
            if seen.body.is_structurally_equivalent(func.body):
                return symbol
        bucket.append((func, symbol := lower()))
        return symbol


@dataclass(frozen=True)
class LowerTEPass(ModulePass):
    """Lower Primitive relay functions to tir.prim_funcs; mark calls."""

    name = "lower-te"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _compile_compiler_literals(ctx, op)
        taken = symbol_names(op)
        _outline_primitive_literals(op, taken)
        _check_no_literals(op)
        symbols: dict[str, str] = {}
        cache = KernelCache()
        for func in list(op.ops):
            if not isinstance(func, relay.FuncOp):
                continue
            name = func.sym_name.data
            if func.is_extern:
                symbols[name] = name
            elif isinstance(done := func.attributes.get(LOWERED), SymbolRefAttr):
                symbols[name] = done.string_value()
            elif is_lowerable(func) and LOWERED not in func.attributes:
                symbol = cache.kernel(func, partial(_lower_next_to, op, taken, func))
                func.attributes[LOWERED] = SymbolRefAttr(symbol)
                symbols[name] = symbol
        _mark_calls(op, symbols)
