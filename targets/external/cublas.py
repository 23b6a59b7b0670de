"""The `cublas` external codegen: GPU dense/matmul partitions as cuBLAS calls from host code.

Every `Compiler = "cublas"` global becomes a public host `tir.prim_func` of
the same name (target: the configuration's host target) whose memref
arguments are *device* buffers, as the host function passes them for values
on the GPU.  Its GEMM (`blas.GEMMS`: dense, matmul, batched matmul) is one
`tir.call_extern` of `cublasSgemm_v2`/`cublasDgemm_v2`
(`cublas?gemmStridedBatched` for a batch) on those pointers, with the
process's handle (`hetero.runtime.cublas`) as a constant and `alpha`/`beta`
in host memory (cuBLAS' default pointer mode).  cuBLAS is column-major, so
the row-major `C = A · op(B)` is computed as `Cᵀ = op(B)ᵀ · Aᵀ`: the operands
swap, the dimensions become `(N, M, K)`, no data moves.

Not yet: epilogues (a bias or relu after the GEMM needs a device kernel or
cuBLASLt's epilogues), several GEMMs in one partition (their intermediates
need device memory), `f16` (`cublasGemmEx`).  Each is a located diagnostic.
Without a GPU or the library the kind is not offered (`available`).
"""

from __future__ import annotations

from collections.abc import Sequence

from hetero.dialects import relay, tir
from hetero.dialects.target import TargetAttr
from hetero.lowering.te_emit import Emitter
from hetero.runtime import cublas as cublas_runtime
from hetero.targets.codegen import ExternalCodegen
from hetero.targets.config import module_config
from hetero.targets.external.blas import GEMMS, Gemm, buffer_type, flattened
from hetero.utils.diagnostics import HeteroError
from xdsl.dialects import memref
from xdsl.dialects.builtin import Float32Type, Float64Type, ModuleOp, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue

OP_N, OP_T = 0, 1
"""`CUBLAS_OP_N`, `CUBLAS_OP_T`."""

PRECISION: dict[type[Attribute], str] = {Float32Type: "S", Float64Type: "D"}


def _gemm_op(func: relay.FuncOp) -> Operation:
    """The partition's one GEMM, whose result is returned."""
    *ops, returned = func.body.block.ops
    if len(ops) != 1 or type(ops[0]) not in GEMMS or returned.operands[0] is not ops[0].results[0]:
        culprit = next((op for op in ops if type(op) not in GEMMS), ops[-1] if ops else func)
        raise HeteroError(
            f"cublas: {culprit.name} in a cuBLAS partition: only one dense/matmul whose "
            "result is returned is supported yet (epilogues and intermediates need "
            "device kernels and device memory)",
            culprit,
        )
    return ops[0]


def _emit_call(
    e: Emitter, gemm: Gemm, element: Attribute, handle: int, buffers: Sequence[SSAValue], op: Operation
) -> None:
    """`C = A · op(B)` row-major, as the column-major `Cᵀ = op(B)ᵀ · Aᵀ`."""
    precision = PRECISION.get(type(element))
    if precision is None:
        raise HeteroError(f"cublas: no GEMM for {element} elements here (f32 and f64)", op)
    a, b, c = (e.op(memref.ExtractAlignedPointerAsIndexOp.get(v)) for v in buffers)
    scalars = []
    for value in (1.0, 0.0):
        cell = e.alloc([1], element, "local")
        e.store(e.constant(value, element), cell, [0])
        scalars.append(e.op(memref.ExtractAlignedPointerAsIndexOp.get(cell)))
    alpha, beta = scalars

    def ints(*values: int) -> list[SSAValue]:
        return [e.constant(v, i32) for v in values]

    m, n, k = gemm.m, gemm.n, gemm.k
    ldb = k if gemm.trans_b else n
    head = [e.constant(handle, i64), *ints(OP_T if gemm.trans_b else OP_N, OP_N, n, m, k), alpha]
    if gemm.batch == 1:
        name = f"cublas{precision}gemm_v2"
        args = [*head, b, *ints(ldb), a, *ints(k), beta, c, *ints(n)]
    else:
        name = f"cublas{precision}gemmStridedBatched"
        args = [*head, b, *ints(ldb), e.constant(k * n, i64), a, *ints(k),
                e.constant(m * k, i64), beta, c, *ints(n), e.constant(m * n, i64),
                *ints(gemm.batch)]  # fmt: skip
    e.op(tir.CallExternOp(name, args, [i32]))


def lower_partition(func: relay.FuncOp, handle: int, host: TargetAttr) -> tir.PrimFuncOp:
    """The host prim_func running the `cublas` partition `func` on device buffers."""
    inputs = [
        buffer_type(t, f"parameter #{i}", func, "cublas")
        for i, t in enumerate(func.function_type.inputs.data)
    ]
    output = buffer_type(func.result_type, "the result", func, "cublas")
    prim = tir.PrimFuncOp(func.sym_name.data, ([*inputs, output], []), target=host)
    entry = prim.body.block
    *params, out = entry.args
    flat = flattened(func)
    op = _gemm_op(flat)
    buffers = [params[flat.args.index(v)] for v in op.operands]  # type: ignore[arg-type]
    element = op.result_types[0].element_type  # type: ignore[attr-defined]
    _emit_call(Emitter(entry, entry, {}), GEMMS[type(op)](op), element, handle, [*buffers, out], op)
    return prim


def generate(module: ModuleOp, functions: Sequence[relay.FuncOp]) -> list[tir.PrimFuncOp]:
    """The hook: every `cublas` partition of the module, in one go."""
    host = module_config(module, None, "external-codegen").host_target
    handle = cublas_runtime.handle()
    return [lower_partition(func, handle, host) for func in functions]


CODEGEN = ExternalCodegen(
    "cublas",
    generate,
    cublas_runtime.unavailable_reason,
    doc="cublasSgemm/cublasDgemm calls from host code on device buffers",
)
