"""The `blas` external codegen: dense/matmul partitions as GEMM calls of a CPU BLAS.

Every `Compiler = "blas"` global becomes a public `tir.prim_func` of the same
name and signature style as lower-te's kernels (one memref per parameter,
then the output), for the target of the function's device (the CPU's `llvm`
target: the code around the library call is LLVM code).  The partition's
composites are inlined and its ops lowered in order:

* GEMM ops (`gemm.GEMMS`: `nn.dense`, 2-d `matmul`, 3-d `matmul` with one batch
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

from collections.abc import Sequence
from functools import partial

from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IntegerAttr,
    ModuleOp,
    i1,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue

from hetero.dialects import relay, tir
from hetero.lowering.external.gemm import (
    Gemm,
    PartitionBuilder,
    flattened,
    partition_prim_func,
)
from hetero.runtime import blas as blas_runtime
from hetero.targets.codegen import ExternalCodegen
from hetero.te.emit import Emitter, Tensor, store_all
from hetero.utils.diagnostics import HeteroError

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
"""CBLAS enum values (`CblasRowMajor`, `CblasNoTrans`, `CblasTrans`)."""

PRECISION: dict[type[Attribute], str] = {Float32Type: "s", Float64Type: "d"}
"""Element type → the BLAS precision letter of its GEMM."""


def store_vectorized(e: Emitter, tensor: Tensor, buffer: SSAValue) -> None:
    """Materialise `tensor` into `buffer`: rows in parallel, each row vectorized."""
    if len(tensor.shape) < 2:
        store_all(e, tensor, buffer)
        return
    body, outer = e.nest(tensor.shape[:-1], parallel=True)
    row, j = body.loop(tensor.shape[-1], tir.ForKind.VECTORIZED)
    row.store(tensor.load(row, [*outer, j]), buffer, [*outer, j])


def _emit_call(
    library: blas_runtime.BlasLibrary,
    e: Emitter,
    gemm: Gemm,
    buffers: Sequence[SSAValue],
    op: Operation,
) -> None:
    """`C = A · op(B)` as one library call."""
    element = op.result_types[0].element_type  # type: ignore[attr-defined]
    precision = PRECISION.get(type(element))
    if precision is None:
        raise HeteroError(
            f"blas: no GEMM for {element} elements (f32 and f64 only)", op
        )
    a, b, c = (e.op(memref.ExtractAlignedPointerAsIndexOp.get(v)) for v in buffers)

    def ints(*values: int) -> list[SSAValue]:
        return [e.constant(v, i32) for v in values]

    m, n, k = gemm.m, gemm.n, gemm.k
    trans = TRANS if gemm.trans_b else NO_TRANS
    one, zero = e.constant(1.0, element), e.constant(0.0, element)
    head = [*ints(ROW_MAJOR, NO_TRANS, trans, m, n, k), one]
    ldb = k if gemm.trans_b else n
    if gemm.batch == 1:
        name = f"cblas_{precision}gemm"
        args = [*head, a, *ints(k), b, *ints(ldb), zero, c, *ints(n)]
    else:
        name = f"cblas_{precision}gemm_batch_strided"
        args = [*head, a, *ints(k, m * k), b, *ints(ldb, k * n), zero,
                c, *ints(n, m * n, gemm.batch)]  # fmt: skip
    if not library.has(name):
        raise HeteroError(
            f"blas: {library.path} does not export {library.symbol(name)} "
            f"(needed for {op.name}); upgrade: {blas_runtime.INSTALL}",
            op,
        )
    e.op(tir.CallExternOp(library.symbol(name), args))


def lower_partition(
    func: relay.FuncOp, library: blas_runtime.BlasLibrary
) -> tir.PrimFuncOp:
    """The prim_func computing the `blas` partition `func` with library calls;
    elementwise chains are stored once each, vectorized."""
    prim = partition_prim_func(func, "blas")
    prim.attributes["tir.noalias"] = IntegerAttr(1, i1)
    entry = prim.body.block
    call = partial(_emit_call, library)
    emitter = Emitter(entry, entry, {})
    builder = PartitionBuilder(
        "blas", "BLAS", call, emitter, store_vectorized, eager=True
    )
    builder.lower(flattened(func), entry.args)
    return prim


def generate(
    module: ModuleOp, functions: Sequence[relay.FuncOp]
) -> list[tir.PrimFuncOp]:
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
