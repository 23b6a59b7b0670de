"""What the GEMM-library codegens (`blas`, `cublas`) share: the GEMM of a relay
op, static buffers, and the builder that lowers a partition around the calls.

A partition is lowered op by op: a GEMM op becomes one call of the kind's
library (the kind's `GemmCall`), elementwise ops after it are lower-te's lazy
templates run in place in the buffer the GEMM wrote, and any other op is a
lower-te nest template.  Only the call and how a lazy value is stored differ
between the kinds, so the builder takes them as parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import MemRefType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from hetero.dialects import relay, tir
from hetero.dialects.relay.functions import tensor_types
from hetero.te.emit import Emitter, Tensor, store_all
from hetero.te.templates import NEST_TEMPLATES, lazy_template
from hetero.te.templates.elementwise import scalar_bodies
from hetero.transforms.byoc import composite_callee, inline_literal_call
from hetero.transforms.lower_aot_main import returned_leaves
from hetero.transforms.lower_te import function_target
from hetero.utils.diagnostics import HeteroError


def _in_place(op: Operation) -> bool:
    """An elementwise op whose result may overwrite its same-shaped operand's
    buffer: each output element reads that operand at its own index only."""
    return bool(scalar_bodies(type(op))) or isinstance(op, relay.BiasAddOp)


@dataclass(frozen=True)
class Gemm:
    """`C[b] = A[b] · op(B[b])` for `b < batch`, row-major, `op` a transpose if `trans_b`."""

    batch: int
    m: int
    n: int
    k: int
    trans_b: bool


def _shapes(op: Operation) -> list[tuple[int, ...]]:
    types = [*op.operand_types, op.result_types[0]]
    return [tuple(t.get_shape()) for t in types if isinstance(t, TensorType)]


def _dense(op: Operation) -> Gemm:
    """`nn.dense`: x[M, K] · w[N, K]ᵀ."""
    (m, k), (n, _), _ = _shapes(op)
    return Gemm(1, m, n, k, trans_b=True)


def _matmul(op: Operation) -> Gemm:
    """`matmul`: a[M, K] · b[K, N], or per batch for one static batch size."""
    a, b, _ = _shapes(op)
    if len(a) == 2 and len(b) == 2:
        return Gemm(1, a[0], b[1], a[1], trans_b=False)
    if len(a) == 3 and len(b) == 3 and a[0] == b[0]:
        return Gemm(a[0], a[1], b[2], a[2], trans_b=False)
    raise HeteroError(
        f"blas: a matmul of shapes {a} and {b} is not one (batched) GEMM; only "
        "2-d operands, or 3-d ones with the same batch size, go to BLAS",
        op,
    )


GEMMS: dict[type[Operation], Callable[[Operation], Gemm]] = {
    relay.DenseOp: _dense,
    relay.MatmulOp: _matmul,
}
"""Relay op → the GEMM computing it."""

GemmCall = Callable[[Emitter, Gemm, Sequence[SSAValue], Operation], None]
"""Emits a kind's library call computing the GEMM op `op` on the buffers `(A, B, C)`."""

Store = Callable[[Emitter, Tensor, SSAValue], None]
"""Materialises a tensor into a buffer."""


def buffer_type(
    type: Attribute, what: str, op: Operation, kind: str = "blas"
) -> MemRefType:
    """The memref of a partition's tensor; a `kind`-prefixed diagnostic if it
    is not a tensor, or has a dynamic shape."""
    if not isinstance(type, TensorType):
        raise HeteroError(
            f"{kind}: {what} has type {type}; the {kind} codegen passes tensors "
            "(and tuples of them as results) only",
            op,
        )
    if any(d < 0 for d in type.get_shape()):
        raise HeteroError(
            f"{kind}: {what} has a dynamic shape ({type}); the {kind} codegen takes "
            "static tensors (dynamic shapes need host shape functions, not supported yet)",
            op,
        )
    return MemRefType(type.element_type, type.get_shape())


def flattened(func: relay.FuncOp) -> relay.FuncOp:
    """A copy of `func` with its composite calls inlined."""
    flat = func.clone()
    for op in list(flat.body.block.ops):
        if (callee := composite_callee(op)) is not None:
            inline_literal_call(op, callee)  # type: ignore[arg-type]
    return flat


def partition_prim_func(func: relay.FuncOp, kind: str) -> tir.PrimFuncOp:
    """The empty prim_func of the partition `func`, for its device's target:
    one memref per parameter, then one per tensor of the result (a partition
    whose values are also used outside it returns a tuple of them), as
    lower-aot-main calls it."""
    inputs = [
        buffer_type(t, f"parameter #{i}", func, kind)
        for i, t in enumerate(func.function_type.inputs.data)
    ]
    outputs = [
        buffer_type(t, f"result #{i}", func, kind)
        for i, t in enumerate(tensor_types(func.result_type))
    ]
    return tir.PrimFuncOp(
        func.sym_name.data, ([*inputs, *outputs], []), target=function_target(func)
    )


@dataclass
class PartitionBuilder:
    """Lowers one flattened partition into its prim_func's entry block."""

    kind: str
    """The kind's name, prefixing its diagnostics."""
    library: str
    """The library's name in diagnostics."""
    call: GemmCall
    emitter: Emitter
    store: Store = store_all
    eager: bool = False
    """Store an elementwise chain where it ends (one loop nest, read from
    memory after), rather than recompute it in each op that reads it."""
    values: dict[SSAValue, Tensor] = field(default_factory=dict)
    buffers: dict[SSAValue, SSAValue] = field(default_factory=dict)
    returned: dict[SSAValue, SSAValue] = field(default_factory=dict)
    """A returned value → the output memref its producer writes."""
    chains: dict[SSAValue, SSAValue] = field(default_factory=dict)
    """The last value of an in-place chain → the buffer the whole chain uses."""

    def lower(self, func: relay.FuncOp, args: Sequence[SSAValue]) -> None:
        """Lower `func` into the prim_func whose arguments are `args`
        (`partition_prim_func`'s: the parameters' memrefs, then the outputs')."""
        params, outputs = args[: len(func.args)], args[len(func.args) :]
        for arg, buffer in zip(func.args, params):
            self._hold(arg, buffer)
        *ops, returned = func.body.block.ops
        value = returned.operands[0]
        leaves = returned_leaves(value)
        for leaf, out in zip(leaves, outputs):
            self.returned.setdefault(leaf, out)
        for op in ops:
            if op is not value.owner or not isinstance(op, relay.TupleOp):
                self._lower_op(op)
        for leaf, out in zip(leaves, outputs):
            if self.buffers.get(leaf) is not out:
                self.store(self.emitter, self.values[leaf], out)

    def _hold(self, value: SSAValue, buffer: SSAValue) -> None:
        self.values[value] = Tensor.of_buffer(buffer)
        self.buffers[value] = buffer

    def _lower_op(self, op: Operation) -> None:
        result = op.results[0]
        if (gemm := GEMMS.get(type(op))) is not None:
            destination = self._destination(result)
            operands = [self._buffer(v) for v in op.operands]
            self.call(self.emitter, gemm(op), [*operands, destination], op)
            self._hold(result, destination)
        elif (lazy := lazy_template(type(op))) is not None:
            tensor = lazy(op, [self.values[v] for v in op.operands])
            self.values[result] = tensor
            uses = list(result.uses)
            if self.eager and (
                len(uses) != 1 or lazy_template(type(uses[0].operation)) is None
            ):
                destination = self._destination(result)
                self.store(self.emitter, tensor, destination)
                self._hold(result, destination)
        elif (nest := NEST_TEMPLATES.get(type(op))) is not None:
            destination = self._destination(result)
            nest(self.emitter, op, [self.values[v] for v in op.operands], destination)
            self._hold(result, destination)
        else:
            raise HeteroError(
                f"{self.kind}: {op.name} cannot be compiled by the {self.library} codegen",
                op,
            )

    def _destination(self, value: SSAValue) -> SSAValue:
        """Where `value` is stored: the buffer of the in-place elementwise chain
        it starts (the output when the chain is returned), else a fresh one.
        A chain runs on through an op's first operand only: two chains meeting
        in a binary op (the sum of two GEMMs) must not share one buffer; and it
        stops at a value with several users (one may be the return), whose
        buffer is read after it is written."""
        while len(uses := list(value.uses)) == 1:
            user = uses[0].operation
            if (
                not _in_place(user)
                or user.operands[0] is not value
                or user.results[0].type != value.type
            ):
                break
            value = user.results[0]
        if (out := self.returned.get(value)) is not None:
            return out
        if value not in self.chains:
            buffer = buffer_type(value.type, "an intermediate", value.owner, self.kind)  # type: ignore[arg-type]
            self.chains[value] = self.emitter.alloc(
                buffer.get_shape(), buffer.element_type
            )
        return self.chains[value]

    def _buffer(self, value: SSAValue) -> SSAValue:
        """`value` in a buffer, materialising a lazy value first."""
        if value not in self.buffers:
            tensor = self.values[value]
            buffer = self.emitter.alloc(tensor.shape, tensor.element_type)
            self.store(self.emitter, tensor, buffer)
            self._hold(value, buffer)
        return self.buffers[value]
