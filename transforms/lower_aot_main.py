"""`lower-aot-main`: the lowered relay entry function becomes a host `tir.prim_func`.

After `lower-te`, the entry function (`@main`) is a straight-line sequence of
`relay.call @k(...) {lowered = @k_tir}` calls.  This pass writes the same
sequence as TVM's AOT executor does, as a public `tir.prim_func
@<entry>_host` for the configuration's host target:

* **parameters** — the relay parameters, then one memref per `relay.constant`
  the function uses (the runtime feeds them, like TVM's params; their values,
  in parameter order, are the attribute `hetero.constants`), then one output
  memref per tensor of the result, a tuple result flattened in order
  (destination-passing style, like the kernels);
* **body** — a `tir.alloc` per intermediate (tagged with the `vdevice` it
  lives on, for `plan-memory`), a `tir.call @k_tir(args...,
  destination)` per lowered call in program order (`tir.call_extern` for an
  `Extern` function, the external codegen's symbol), a copy loop nest per
  `relay.device_copy` between CPU devices.  Each value returned is written
  straight into its output memref by its producer; a returned parameter or
  constant, or a value returned twice, is copied there.  A returned reshape
  is a view: the producer of its input writes into the output memref
  reinterpreted with the input's shape, and the reshape kernel (a copy) is
  not called, when that input is a kernel's static result read by nothing
  else, on the CPU.  Tuples and
  `relay.get_item` only regroup buffers: they cost nothing at run time.

The relay functions stay (the module still verifies and interprets); only the
`tir.prim_func`s need to be compiled.  An entry function with dynamic (`?`) input dimensions gets a host function
of dynamic memrefs whose intermediates are sized at run time by its shape
functions (`hetero.analysis.shape_functions`, docs/dynamic-shapes.md).
Anything the host function cannot express yet (control flow, closures,
unlowered ops, copies to non-CPU devices) is a located `HeteroError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from math import prod

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    SymbolRefAttr,
    TensorType,
    TupleType,
    UnitAttr,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from hetero.analysis.devices import device_of
from hetero.analysis.shape_functions import Dim, DynamicShapeError, function_shapes
from hetero.dialects import relay, tir
from hetero.dialects.relay.functions import tensor_types, unflatten
from hetero.dialects.target import TargetAttr, VirtualDeviceAttr
from hetero.dialects.target.config import module_config
from hetero.dialects.target.kind import DeviceType
from hetero.te.emit import Emitter, Shape, Tensor, dynamic_shapes, store_all
from hetero.transforms.lower_te import LOWERED
from hetero.transforms.plan_memory import VDEVICE
from hetero.utils.diagnostics import HeteroError
from hetero.utils.symbols import symbols_of

CONSTANTS = "hetero.constants"
"""Host-function attribute: the constants' values, in parameter order."""

PASS = "lower-aot-main"


def _buffer_type(type: Attribute, what: str, op: Operation) -> MemRefType:
    """The memref of a relay value (`?` where its shape is dynamic)."""
    if not isinstance(type, TensorType):
        raise HeteroError(
            f"{PASS}: {what} has type {type}; the host function passes tensors only "
            "(functions are not supported yet)",
            op,
        )
    return MemRefType(type.element_type, type.get_shape())


HOST_ACCESSIBLE = (DeviceType.cpu, DeviceType.cuda)
"""Devices whose buffers the host function's copy loops can read and write:
the CPU, and CUDA GPUs, whose buffers in a host function are managed memory
(`hetero.runtime.cuda`)."""


RESHAPES = (
    relay.ReshapeOp,
    relay.ReshapeLikeOp,
    relay.FlattenOp,
    relay.SqueezeOp,
    relay.ExpandDimsOp,
)
"""The ops that keep the row-major order of the elements: a kernel of one of
them only copies (`reshape_like` reads its second operand's shape only)."""


def _check_cpu(device: VirtualDeviceAttr, op: Operation) -> None:
    """Host-side copies are plain loops, so both ends must be host-accessible."""
    if device.device_type not in HOST_ACCESSIBLE:
        raise HeteroError(
            f"{PASS}: a device_copy to or from a non-CPU device ({device}) is not "
            "yet supported",
            op,
        )


def returned_leaves(value: SSAValue) -> list[SSAValue]:
    """The values a return of `value` writes, in output order, looking through
    the tuples built for it."""
    if isinstance(value.owner, relay.TupleOp):
        return [leaf for v in value.owner.operands for leaf in returned_leaves(v)]
    return [value]


def _flatten(buffers: Buffers) -> list[SSAValue]:
    if isinstance(buffers, tuple):
        return [leaf for b in buffers for leaf in _flatten(b)]
    return [buffers]


Buffers = SSAValue | tuple["Buffers", ...]
"""A relay value's storage: a memref, or (for a tuple) its elements' storage."""


@dataclass
class _HostBuilder:
    """Writes the body of the host function for one relay entry function."""

    callees: Mapping[str, Operation]
    """The module's symbols (`symbols_of`: one walk for every call)."""
    main: relay.FuncOp
    emitter: Emitter
    outputs: tuple[SSAValue, ...]
    buffers: dict[SSAValue, Buffers] = field(default_factory=dict)
    returned: dict[SSAValue, Buffers] = field(default_factory=dict)
    """Values that their producer writes straight into output memrefs (a
    tuple returned whole, such as a prim_func's results, into several)."""
    skipped: set[Operation] = field(default_factory=set)
    """Calls of reshape kernels whose input is written into their output."""
    shapes: dict[SSAValue, Shape] = field(default_factory=dict)
    """The sizes of the relay values and buffers of dynamic shape
    (`function_shapes`), read at run time."""

    def lower(
        self, params: tuple[SSAValue, ...], constants: tuple[SSAValue, ...]
    ) -> None:
        """Map parameters and constants to host parameters, then emit each op."""
        self.buffers.update(zip(self.main.args, params))
        ops = list(self.main.body.block.ops)
        const_ops = [op for op in ops if isinstance(op, relay.ConstantOp)]
        self.buffers.update((c.result, p) for c, p in zip(const_ops, constants))
        terminator = self.main.body.block.last_op
        assert isinstance(terminator, relay.ReturnOp)
        outputs = iter(self.outputs)
        for leaf in returned_leaves(terminator.operands[0]):
            self.returned.setdefault(leaf, unflatten(leaf.type, outputs))
        for leaf, output in list(self.returned.items()):
            self._view_reshaped(leaf, output)
        for op in ops:
            self._lower_op(op)

    def _lower_op(self, op: Operation) -> None:
        match op:
            case relay.ConstantOp():
                pass  # a host parameter already
            case relay.OnDeviceOp():
                self.buffers[op.results[0]] = self.buffers[op.operands[0]]
            case relay.CallOp() if op in self.skipped:
                self.buffers[op.results[0]] = self.returned[op.results[0]]
            case relay.CallOp() if (symbol := self._kernel(op)) is not None:
                self._call(op, symbol)
            case relay.CallOp():
                raise HeteroError(
                    f"{PASS}: call of @{op.callee.string_value()} is not lowered; "
                    "run fuse-ops and lower-te first",
                    op,
                )
            case relay.DeviceCopyOp():
                _check_cpu(op.src, op)
                _check_cpu(op.dst, op)
                self._copy(self.buffers[op.body], self._destination(op))
            case relay.TupleOp():
                self.buffers[op.results[0]] = tuple(
                    self.buffers[v] for v in op.operands
                )
            case relay.GetItemOp():
                self.buffers[op.results[0]] = self.buffers[op.operands[0]][op.index]  # type: ignore[index]
            case relay.ReturnOp():
                for value, out in zip(
                    _flatten(self.buffers[op.operands[0]]), self.outputs
                ):
                    if value is not out:
                        self._copy(value, out)
            case _:
                raise HeteroError(
                    f"{PASS}: '{op.name}' cannot be compiled into the host function "
                    "(only lowered calls, constants and CPU device copies are supported)",
                    op,
                )

    def _view_reshaped(self, leaf: SSAValue, output: Buffers) -> None:
        """A returned reshape is a view: its input's producer writes into
        `output` viewed with the input's shape (of run-time sizes too: a
        dense's `[b·s, N]` rows returned as `[b, s, N]` by `reshape_like`),
        and the reshape's copy kernel is not called.  Only for a kernel's
        result that nothing else reads (a parameter or constant must still be
        copied)."""
        call, source = leaf.owner, None
        if isinstance(call, relay.CallOp) and self._is_reshape(call):
            source = call.operands[0]
        if source is None or source in self.returned or not source.has_one_use():
            return
        producer = source.owner
        if not isinstance(producer, relay.CallOp) or self._kernel(producer) is None:
            return
        t, out_type = source.type, output.type  # type: ignore[union-attr]
        if not isinstance(t, TensorType) or not isinstance(out_type, MemRefType):
            return
        device = device_of(source)
        if device and device.device_type != DeviceType.cpu:
            return
        shape = t.get_shape() if t.has_static_shape() else self.shapes[source]
        strides = [prod(shape[d + 1 :]) for d in range(len(shape))]
        view = memref.ReinterpretCastOp.from_dynamic(
            output,  # type: ignore[arg-type]
            [0],
            [self.emitter.index(d) if isinstance(d, Dim) else d for d in shape],
            [self.emitter.index(d) if isinstance(d, Dim) else d for d in strides],
            MemRefType(t.element_type, t.get_shape()),
        )
        self.returned[source] = self.emitter.op(view)
        self.skipped.add(call)

    def _is_reshape(self, call: relay.CallOp) -> bool:
        """Whether `call` runs a kernel lowered from a function that is one
        reshape of its parameters (`reshape_like`'s second only gives the
        shape)."""
        if self._kernel(call) is None:
            return False
        function = self.callees.get(call.callee.string_value())
        if not isinstance(function, relay.FuncOp):
            return False
        ops = list(function.body.block.ops)
        return (
            len(ops) == 2
            and type(ops[0]) in RESHAPES
            and tuple(ops[0].operands) == tuple(function.args)
            and tuple(ops[1].operands) == tuple(ops[0].results)
        )

    def _kernel(self, op: relay.CallOp) -> SymbolRefAttr | None:
        """What a call runs: the symbol lower-te marked it with, or the callee
        itself when relay calls a `tir.prim_func` (TVM's `call_lowered`)."""
        if isinstance(symbol := op.attributes.get(LOWERED), SymbolRefAttr):
            return symbol
        callee = self.callees.get(op.callee.string_value())
        return op.callee if isinstance(callee, tir.PrimFuncOp) else None

    def _call(self, op: relay.CallOp, symbol: SymbolRefAttr) -> None:
        """A kernel call (or an external codegen's function) in destination style."""
        args = [self.buffers[v] for v in op.operands]
        args.extend(_flatten(self._destination(op)))
        callee = self.callees.get(symbol.string_value())
        if isinstance(callee, tir.PrimFuncOp):
            # Out of line: the kernel stays a public function (the runtime and
            # other calls may use it), so LLVM inlining it into the host
            # would optimise and compile its code twice, to save one call.
            callee.attributes[tir.NO_INLINE] = UnitAttr()
            self.emitter.op(tir.CallOp(symbol, args))
        elif isinstance(callee, relay.FuncOp) and callee.is_extern:
            self.emitter.op(tir.CallExternOp(symbol.string_value(), args))
        else:
            raise HeteroError(
                f"{PASS}: the lowered symbol @{symbol.string_value()} is neither a "
                "tir.prim_func nor an Extern relay.func",
                op,
            )

    def _destination(self, op: Operation) -> Buffers:
        """The output memref of a returned value, else a fresh intermediate; a
        memref per tensor of a tuple (an external codegen's partition whose
        values are also used outside it)."""
        result = op.results[0]
        buffer = self.returned.get(result) or self._alloc(result.type, result, op)
        self.buffers[result] = buffer
        return buffer

    def _alloc(self, type: Attribute, result: SSAValue, op: Operation) -> Buffers:
        """A fresh intermediate of `type` on `result`'s device (a tuple's
        elements each in their own)."""
        if isinstance(type, TupleType):
            return tuple(self._alloc(t, result, op) for t in type.types.data)
        buffer_type = _buffer_type(type, f"the result of {op.name}", op)
        if buffer_type.has_static_shape():
            alloc = tir.AllocOp(buffer_type)
        else:  # sized at each call by the shape functions, on the heap
            shape = self.shapes[result]
            sizes = [self.emitter.index(d) for d in shape if isinstance(d, Dim)]
            alloc = tir.AllocOp(buffer_type, sizes)
            self.shapes[alloc.buffer] = shape
        if (device := device_of(result)) is not None:
            alloc.attributes[VDEVICE] = device
        return self.emitter.op(alloc)

    def _copy(self, source: SSAValue, destination: SSAValue) -> None:
        store_all(self.emitter, Tensor.of_buffer(source), destination)


def build_host_function(
    module: ModuleOp, main: relay.FuncOp, name: str, target: TargetAttr
) -> tir.PrimFuncOp:
    """The host prim_func `name` running `main`'s lowered calls."""
    constants = [op for op in main.body.block.ops if isinstance(op, relay.ConstantOp)]
    inputs = [
        _buffer_type(t, f"parameter #{i}", main)
        for i, t in enumerate(main.function_type.inputs.data)
    ]
    constant_types = [_buffer_type(c.result.type, "a constant", c) for c in constants]
    outputs = [
        _buffer_type(t, f"result #{i}", main)
        for i, t in enumerate(tensor_types(main.result_type))
    ]
    host = tir.PrimFuncOp(
        name, ([*inputs, *constant_types, *outputs], []), target=target
    )
    host.attributes["tir.is_entry_func"] = IntegerAttr(1, i1)
    host.attributes[CONSTANTS] = ArrayAttr([c.value for c in constants])
    entry = host.body.block
    params = entry.args[: len(inputs)]
    constant_params = entry.args[len(inputs) : len(inputs) + len(constants)]
    output_params = entry.args[len(inputs) + len(constants) :]
    builder = _HostBuilder(
        symbols_of(module), main, Emitter(entry, entry, {}), output_params
    )
    if all(t.has_static_shape() for t in (*inputs, *outputs)):
        builder.lower(params, constant_params)
        return host
    _lower_dynamic(module, builder, params, constant_params)
    return host


def _lower_dynamic(
    module: ModuleOp,
    builder: _HostBuilder,
    params: Sequence[SSAValue],
    constants: Sequence[SSAValue],
) -> None:
    """The host function of an entry function with dynamic (`?`)
    dimensions: the shape functions (`function_shapes`) size each
    intermediate from the parameters' sizes (`memref.dim`), allocated per
    call; the driver checks their guards and sizes the outputs before the
    call (docs/dynamic-shapes.md)."""
    main = builder.main
    for op in main.body.block.ops:
        callee = (
            builder.callees.get(op.callee.string_value())
            if isinstance(op, relay.CallOp)
            else None
        )
        if isinstance(callee, relay.FuncOp) and callee.is_extern:
            raise HeteroError(
                f"{PASS}: @{callee.sym_name.data} is an external codegen's, compiled "
                "for static shapes only: compile this program per shape "
                '(hetero.compile\'s dynamic="specialize")',
                op,
            )
    try:
        analysis = function_shapes(main, module)
    except HeteroError as e:
        raise HeteroError(f"{PASS}: {e.message}", e.op) from None
    builder.shapes.update(analysis.shapes)
    terminator = main.body.block.last_op
    assert terminator is not None
    leaves = returned_leaves(terminator.operands[0])
    builder.shapes.update(
        (out, analysis.shape(leaf)) for out, leaf in zip(builder.outputs, leaves)
    )
    builder.shapes.update((p, analysis.shape(arg)) for p, arg in zip(params, main.args))
    builder.emitter.bind_sizes(
        {
            (i, axis): (buffer, axis)
            for i, (arg, buffer) in enumerate(zip(main.args, params))
            for axis, d in enumerate(arg.type.get_shape())  # type: ignore[attr-defined]
            if d < 0 and (i, axis) not in analysis.same
        }
    )
    with dynamic_shapes(builder.shapes):
        try:
            builder.lower(tuple(params), tuple(constants))
        except DynamicShapeError as e:
            raise HeteroError(f"{PASS}: {e}", main) from None


@dataclass(frozen=True)
class LowerAotMainPass(ModulePass):
    """Turn the lowered relay entry function into a host `tir.prim_func`."""

    name = "lower-aot-main"

    entry: str = "main"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        main = SymbolTable.lookup_symbol(op, self.entry)
        if not isinstance(main, relay.FuncOp):
            raise HeteroError(f"{PASS}: no relay.func @{self.entry} in the module", op)
        name = f"{self.entry}_host"
        if SymbolTable.lookup_symbol(op, name) is not None:
            raise HeteroError(f"{PASS}: the module already has a symbol @{name}", op)
        target = module_config(op, None, PASS).host_target
        host = build_host_function(op, main, name, target)
        op.body.block.insert_op_after(host, main)
