"""The `cublas` external codegen: GPU dense/matmul partitions as cuBLAS calls from host code.

Every `Compiler = "cublas"` global becomes a public `tir.prim_func` of the
same name (one memref per parameter, then the output) whose buffers are CUDA
managed memory, as a `GpuProgram`'s host code passes them
(`hetero.runtime.cuda`).  The partition's composites are inlined and its ops
lowered in order:

* GEMM ops (`gemm.GEMMS`: dense, matmul, batched matmul) → one
  `tir.call_extern` of the runtime's stub of `cublasSgemm_v2`/`cublasDgemm_v2`
  (`cublas?gemmStridedBatched` for a batch; `cublasGemmEx` for f16) on the
  buffers' pointers.  cuBLAS is column-major, so the row-major
  `C = A · op(B)` is computed as `Cᵀ = op(B)ᵀ · Aᵀ`: the operands swap, the
  dimensions become `(N, M, K)`, no data moves.  A GEMM writes the output
  itself when its result is returned, directly or through elementwise ops
  (which then run in place), else a fresh buffer (several GEMMs may share a
  partition);
* the bias of the table's `dense_bias` (and any elementwise op) →
  lower-te's lazy templates, materialised by the GPU emitter of lower-te
  (`EMITTERS`): a thread-bound nest, one thread per output element, which
  `split-host-device` turns into a kernel launched after the GEMM;
* other ops a pattern table gives `cublas` → lower-te's nest templates on
  the same emitter.

The function's target is the device's (`cuda` with its host) when it has
such nests, else the host target: a function of host code only must not be
taken for a kernel.  A relu after the bias is not in `cublas`' pattern table:
fuse-ops makes it a hetero GPU kernel of its own after the partition.

`f16` GEMMs are `cublasGemmEx` (f16 data, f32 accumulation); dynamic shapes
are diagnostics.  Without the library the kind is not offered (`available`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    ModuleOp,
    f32,
    f64,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from hetero.dialects import relay, tir
from hetero.dialects.target import TargetAttr
from hetero.dialects.target.config import module_config
from hetero.lowering.external.gemm import (
    Gemm,
    PartitionBuilder,
    flattened,
    partition_prim_func,
)
from hetero.runtime import cublas as cublas_runtime
from hetero.targets.codegen import ExternalCodegen
from hetero.te.emit import Emitter
from hetero.transforms.lower_te import EMITTERS
from hetero.utils.diagnostics import HeteroError

OP_N, OP_T = 0, 1
"""`CUBLAS_OP_N`, `CUBLAS_OP_T`."""

CUDA_R_16F, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT = 2, 68, -1
"""`cudaDataType`, `cublasComputeType_t`, `cublasGemmAlgo_t` of the f16 GEMM."""


@dataclass(frozen=True)
class Precision:
    """How cuBLAS multiplies one element type: the functions, the type of
    `alpha`/`beta`, and what `cublasGemmEx` adds after each matrix (its data
    type) and at the end (compute type, algorithm)."""

    gemm: str
    batched: str
    scalar: Attribute
    matrix: tuple[int, ...] = ()
    tail: tuple[int, ...] = ()


PRECISIONS: dict[type[Attribute], Precision] = {
    Float32Type: Precision("cublasSgemm_v2", "cublasSgemmStridedBatched", f32),
    Float64Type: Precision("cublasDgemm_v2", "cublasDgemmStridedBatched", f64),
    Float16Type: Precision("cublasGemmEx", "cublasGemmStridedBatchedEx", f32,
                           (CUDA_R_16F,), (CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)),
}  # fmt: skip
"""Element type → its GEMM: f16 data is multiplied with f32 accumulation."""


def _emit_call(
    e: Emitter, gemm: Gemm, buffers: Sequence[SSAValue], op: Operation
) -> None:
    """`C = A · op(B)` row-major, as the column-major `Cᵀ = op(B)ᵀ · Aᵀ`."""
    element = op.result_types[0].element_type  # type: ignore[attr-defined]
    precision = PRECISIONS.get(type(element))
    if precision is None:
        raise HeteroError(f"cublas: no GEMM for {element} elements (f16, f32, f64)", op)
    a, b, c = (e.op(memref.ExtractAlignedPointerAsIndexOp.get(v)) for v in buffers)
    alpha, beta = e.constant(1.0, precision.scalar), e.constant(0.0, precision.scalar)

    def ints(*values: int) -> list[SSAValue]:
        return [e.constant(v, i32) for v in values]

    m, n, k = gemm.m, gemm.n, gemm.k
    ldb = k if gemm.trans_b else n
    typed = ints(*precision.matrix)
    head = [*ints(OP_T if gemm.trans_b else OP_N, OP_N, n, m, k), alpha]
    if gemm.batch == 1:
        name = precision.gemm
        args = [
            *head,
            b,
            *typed,
            *ints(ldb),
            a,
            *typed,
            *ints(k),
            beta,
            c,
            *typed,
            *ints(n),
        ]
    else:
        name = precision.batched
        args = [*head, b, *typed, *ints(ldb), e.constant(k * n, i64), a, *typed, *ints(k),
                e.constant(m * k, i64), beta, c, *typed, *ints(n), e.constant(m * n, i64),
                *ints(gemm.batch)]  # fmt: skip
    e.op(
        tir.CallExternOp(
            cublas_runtime.stub_name(name), [*args, *ints(*precision.tail)]
        )
    )


def lower_partition(func: relay.FuncOp, host: TargetAttr) -> tir.PrimFuncOp:
    """The prim_func running the `cublas` partition `func` on managed buffers;
    elementwise ops are GPU nests where they are read (lower-te's `EMITTERS`)."""
    prim = partition_prim_func(func, "cublas")
    device = prim.target
    entry = prim.body.block
    emitter = EMITTERS.get(device.device_type, Emitter)(entry, entry, {})
    builder = PartitionBuilder("cublas", "cuBLAS", _emit_call, emitter)
    builder.lower(flattened(func), entry.args)
    if not any(op.is_thread_bound for op in prim.walk() if isinstance(op, tir.ForOp)):
        prim.target = host
    return prim


def generate(
    module: ModuleOp, functions: Sequence[relay.FuncOp]
) -> list[tir.PrimFuncOp]:
    """The hook: every `cublas` partition of the module, in one go."""
    host = module_config(module, None, "external-codegen").host_target
    return [lower_partition(func, host) for func in functions]


def available() -> str | None:
    """The library's presence decides (looked up at each call, so that a test
    can stand in for it); a GPU is only needed to run the program."""
    return cublas_runtime.unavailable_reason()


CODEGEN = ExternalCodegen(
    "cublas",
    generate,
    available,
    doc="cublasSgemm/cublasDgemm calls from host code on managed buffers",
)
