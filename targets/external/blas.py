"""The `blas` external codegen: dense/matmul partitions as GEMM calls of a CPU BLAS.

Every `Compiler = "blas"` global becomes a public `tir.prim_func` of the same
name and signature style as lower-te's kernels (one memref per parameter,
then the output), for the target of the function's device (the CPU's `llvm`
target: the code around the library call is LLVM code).  The partition's
composites are inlined and its ops lowered in order:

* GEMM ops (`GEMMS`: `nn.dense`, 2-d `matmul`, 3-d `matmul` with one batch
  size) → one `tir.call_extern` of the library's `cblas_sgemm`/`cblas_dgemm`
  (`cblas_?gemm_batch_strided` for a batch), row-major, shapes as `i32`
  constants, buffers as C pointers (`memref.extract_aligned_pointer_as_index`);
* elementwise ops after a GEMM (the bias and relu of `blas.dense_bias_relu`:
  lower-te's `LAZY_TEMPLATES`) → fused into one loop nest over the result,
  outer loop parallel, inner loop vectorized, run in place in the buffer the
  GEMM wrote (the output itself when the chain ends in the return);
* any other op a pattern table gives `blas` → lower-te's `NEST_TEMPLATES`,
  that is hetero's own loops.

The library is `hetero.runtime.blas` (OpenBLAS from `scipy-openblas32`),
loaded into the process once; the JIT resolves the calls to it directly.
Without it, `available()` says what to install and the kind is not offered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hetero.dialects import relay, tir
from hetero.lowering.te_emit import Emitter, Tensor, store_all
from hetero.lowering.te_templates import BINARY, LAZY_TEMPLATES, NEST_TEMPLATES, UNARY
from hetero.runtime import blas as blas_runtime
from hetero.targets.codegen import ExternalCodegen
from hetero.transforms.byoc import composite_callee, inline_literal_call
from hetero.transforms.lower_te import function_target
from hetero.utils.diagnostics import HeteroError
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    TensorType,
    i1,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
"""CBLAS enum values (`CblasRowMajor`, `CblasNoTrans`, `CblasTrans`)."""

PRECISION: dict[type[Attribute], str] = {Float32Type: "s", Float64Type: "d"}
"""Element type → the BLAS precision letter of its GEMM."""

IN_PLACE: frozenset[type[Operation]] = frozenset({*UNARY, *BINARY, relay.BiasAddOp})
"""Elementwise ops whose result may overwrite their same-shaped operand's buffer:
each output element reads that operand at its own index only."""


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


def buffer_type(type: Attribute, what: str, op: Operation, kind: str = "blas") -> MemRefType:
    """The memref of a partition's tensor; a `kind`-prefixed diagnostic if dynamic."""
    if not isinstance(type, TensorType) or any(d < 0 for d in type.get_shape()):
        raise HeteroError(
            f"{kind}: {what} has type {type}; the {kind} codegen takes static tensors "
            "(dynamic shapes need host shape functions, not supported yet)",
            op,
        )
    return MemRefType(type.element_type, type.get_shape())


def store_vectorized(e: Emitter, tensor: Tensor, buffer: SSAValue) -> None:
    """Materialise `tensor` into `buffer`: rows in parallel, each row vectorized."""
    if len(tensor.shape) < 2:
        store_all(e, tensor, buffer)
        return
    body, outer = e.nest(tensor.shape[:-1], parallel=True)
    row, j = body.loop(tensor.shape[-1], tir.ForKind.VECTORIZED)
    row.store(tensor.load(row, [*outer, j]), buffer, [*outer, j])


@dataclass
class _Builder:
    """Lowers one flattened partition into its prim_func's entry block."""

    library: blas_runtime.BlasLibrary
    emitter: Emitter
    out: SSAValue
    values: dict[SSAValue, Tensor] = field(default_factory=dict)
    buffers: dict[SSAValue, SSAValue] = field(default_factory=dict)
    chains: dict[SSAValue, SSAValue] = field(default_factory=dict)
    """The last value of an in-place chain → the buffer the whole chain uses."""

    def lower(self, func: relay.FuncOp, params: Sequence[SSAValue]) -> None:
        for arg, buffer in zip(func.args, params):
            self._hold(arg, buffer)
        *ops, returned = func.body.block.ops
        for op in ops:
            self._lower_op(op)
        value = returned.operands[0]
        if self.buffers.get(value) is not self.out:
            store_vectorized(self.emitter, self.values[value], self.out)

    def _hold(self, value: SSAValue, buffer: SSAValue) -> None:
        self.values[value] = Tensor.of_buffer(buffer)
        self.buffers[value] = buffer

    def _lower_op(self, op: Operation) -> None:
        result = op.results[0]
        if (gemm := GEMMS.get(type(op))) is not None:
            destination = self._destination(result)
            operands = [self._buffer(v) for v in op.operands]
            self._call(gemm(op), operands, destination, op)
            self._hold(result, destination)
        elif (lazy := LAZY_TEMPLATES.get(type(op))) is not None:
            tensor = lazy(op, [self.values[v] for v in op.operands])
            self.values[result] = tensor
            uses = list(result.uses)
            if len(uses) != 1 or type(uses[0].operation) not in LAZY_TEMPLATES:
                destination = self._destination(result)
                store_vectorized(self.emitter, tensor, destination)
                self._hold(result, destination)
        elif (nest := NEST_TEMPLATES.get(type(op))) is not None:
            destination = self._destination(result)
            nest(self.emitter, op, [self.values[v] for v in op.operands], destination)
            self._hold(result, destination)
        else:
            raise HeteroError(f"blas: {op.name} cannot be compiled by the BLAS codegen", op)

    def _destination(self, value: SSAValue) -> SSAValue:
        """Where `value` is stored: the buffer of the in-place elementwise chain
        it starts (the output when the chain is returned), else a fresh one."""
        while len(uses := list(value.uses)) == 1:
            user = uses[0].operation
            if isinstance(user, relay.ReturnOp):
                return self.out
            if type(user) not in IN_PLACE or user.results[0].type != value.type:
                break
            value = user.results[0]
        if value not in self.chains:
            buffer = buffer_type(value.type, "an intermediate", value.owner)  # type: ignore[arg-type]
            self.chains[value] = self.emitter.alloc(buffer.get_shape(), buffer.element_type)
        return self.chains[value]

    def _buffer(self, value: SSAValue) -> SSAValue:
        """`value` in a buffer, materialising a lazy value first."""
        if value not in self.buffers:
            tensor = self.values[value]
            buffer = self.emitter.alloc(tensor.shape, tensor.element_type)
            store_vectorized(self.emitter, tensor, buffer)
            self._hold(value, buffer)
        return self.buffers[value]

    def _call(self, gemm: Gemm, operands: list[SSAValue], c: SSAValue, op: Operation) -> None:
        """`c = a · op(b)` as one library call."""
        e = self.emitter
        element = op.result_types[0].element_type  # type: ignore[attr-defined]
        precision = PRECISION.get(type(element))
        if precision is None:
            raise HeteroError(f"blas: no GEMM for {element} elements (f32 and f64 only)", op)
        a, b = (e.op(memref.ExtractAlignedPointerAsIndexOp.get(v)) for v in operands)
        pointer_c = e.op(memref.ExtractAlignedPointerAsIndexOp.get(c))

        def ints(*values: int) -> list[SSAValue]:
            return [e.constant(v, i32) for v in values]

        m, n, k = gemm.m, gemm.n, gemm.k
        trans = TRANS if gemm.trans_b else NO_TRANS
        one, zero = e.constant(1.0, element), e.constant(0.0, element)
        head = [*ints(ROW_MAJOR, NO_TRANS, trans, m, n, k), one]
        ldb = k if gemm.trans_b else n
        if gemm.batch == 1:
            name = f"cblas_{precision}gemm"
            args = [*head, a, *ints(k), b, *ints(ldb), zero, pointer_c, *ints(n)]
        else:
            name = f"cblas_{precision}gemm_batch_strided"
            args = [*head, a, *ints(k, m * k), b, *ints(ldb, k * n), zero,
                    pointer_c, *ints(n, m * n, gemm.batch)]  # fmt: skip
        if not self.library.has(name):
            raise HeteroError(
                f"blas: {self.library.path} does not export {self.library.symbol(name)} "
                f"(needed for {op.name}); upgrade: {blas_runtime.INSTALL}",
                op,
            )
        e.op(tir.CallExternOp(self.library.symbol(name), args))


def flattened(func: relay.FuncOp) -> relay.FuncOp:
    """A copy of `func` with its composite calls inlined."""
    flat = func.clone()
    for op in list(flat.body.block.ops):
        if (callee := composite_callee(op)) is not None:
            inline_literal_call(op, callee)  # type: ignore[arg-type]
    return flat


def lower_partition(func: relay.FuncOp, library: blas_runtime.BlasLibrary) -> tir.PrimFuncOp:
    """The prim_func computing the `blas` partition `func` with library calls."""
    inputs = [
        buffer_type(t, f"parameter #{i}", func)
        for i, t in enumerate(func.function_type.inputs.data)
    ]
    output = buffer_type(func.result_type, "the result", func)
    prim = tir.PrimFuncOp(func.sym_name.data, ([*inputs, output], []), target=function_target(func))
    prim.attributes["tir.noalias"] = IntegerAttr(1, i1)
    entry = prim.body.block
    *params, out = entry.args
    _Builder(library, Emitter(entry, entry, {}), out).lower(flattened(func), params)
    return prim


def generate(module: ModuleOp, functions: Sequence[relay.FuncOp]) -> list[tir.PrimFuncOp]:
    """The hook: every `blas` partition of the module, in one go."""
    library = blas_runtime.load_blas()
    return [lower_partition(func, library) for func in functions]


def available() -> str | None:
    try:
        blas_runtime.load_blas()
    except blas_runtime.BlasUnavailable as e:
        return str(e)
    return None


CODEGEN = ExternalCodegen(
    "blas", generate, available, doc="GEMM calls of OpenBLAS (scipy-openblas32)"
)
