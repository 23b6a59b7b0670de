"""The `cublas` external codegen (docs/external-codegens.md).

Without a GPU (CI, this machine) the kind is not offered, with the reason;
the generated host code is still compiled and run against stand-ins for
`cublasSgemm_v2`/`cublasSgemmStridedBatched` that compute on host memory
with NumPy, column-major as cuBLAS does, which checks the row-major →
column-major argument mapping.  With a GPU and NVIDIA's wheel the real
library runs the same code on device buffers.
"""

from __future__ import annotations

import ctypes
import warnings

import hetero
import numpy as np
import pytest
from hetero.context import parse_module
from hetero.dialects import relay
from hetero.dialects.target import TargetAttr
from hetero.lowering.cpu_codegen import compile_cpu
from hetero.runtime import cublas as cublas_runtime
from hetero.targets.codegen import unavailable_reason
from hetero.targets.external.cublas import lower_partition
from hetero.transforms.annotate_target import AnnotateTargetPass
from hetero.transforms.merge_compiler_regions import MergeCompilerRegionsPass
from hetero.transforms.merge_composite import MergeCompositePass
from hetero.transforms.outline_compiler_functions import OutlineCompilerFunctionsPass
from hetero.transforms.partition_graph import PartitionGraphPass
from hetero.transforms.plan_devices import PlanDevicesPass
from hetero.utils.diagnostics import HeteroError
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

NO_CUBLAS = cublas_runtime.unavailable_reason()
FAKE_HANDLE = 0x5EED


def gpu_program(body: str, inputs: list[str], result: str) -> str:
    params = ", ".join(f"%{chr(ord('a') + i)}: {t}" for i, t in enumerate(inputs))
    return (
        'builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, '
        '#target.target<"cuda">, #target.target<"cublas">]>} {\n'
        f"  relay.func @main({params}) -> {result} {{\n    {body}\n"
        f"    %g = relay.on_device %r to #target.vdevice<cuda> : {result}\n"
        f"    relay.return %g : {result}\n  }}\n}}\n"
    )


DENSE = gpu_program(
    "%r = relay.nn.dense %a, %b : (tensor<5x3xf32>, tensor<4x3xf32>) -> tensor<5x4xf32>",
    ["tensor<5x3xf32>", "tensor<4x3xf32>"], "tensor<5x4xf32>",
)
MATMUL = gpu_program(
    "%r = relay.matmul %a, %b : (tensor<5x3xf32>, tensor<3x7xf32>) -> tensor<5x7xf32>",
    ["tensor<5x3xf32>", "tensor<3x7xf32>"], "tensor<5x7xf32>",
)
BATCH = gpu_program(
    "%r = relay.matmul %a, %b : (tensor<2x5x3xf32>, tensor<2x3x7xf32>) -> tensor<2x5x7xf32>",
    ["tensor<2x5x3xf32>", "tensor<2x3x7xf32>"], "tensor<2x5x7xf32>",
)


def cublas_functions(text: str) -> list[relay.FuncOp]:
    """The outlined `Compiler = "cublas"` partitions of `text`."""
    module = parse_module(text)
    for stage in (PlanDevicesPass(), MergeCompositePass(), AnnotateTargetPass(),
                  MergeCompilerRegionsPass(), PartitionGraphPass(), OutlineCompilerFunctionsPass()):
        stage.apply(Context(), module)
    return [op for op in module.ops if isinstance(op, relay.FuncOp) and op.compiler == "cublas"]


# Host-memory stand-ins with cuBLAS' signatures (column-major; status 0).
_F, _I, _P, _L = ctypes.c_float, ctypes.c_int, ctypes.c_void_p, ctypes.c_longlong
_GEMM = ctypes.CFUNCTYPE(_I, _P, _I, _I, _I, _I, _I, ctypes.POINTER(_F), _P, _I, _P, _I,
                         ctypes.POINTER(_F), _P, _I)
_BATCHED = ctypes.CFUNCTYPE(_I, _P, _I, _I, _I, _I, _I, ctypes.POINTER(_F), _P, _I, _L, _P, _I,
                            _L, ctypes.POINTER(_F), _P, _I, _L, _I)


def _column_major(address: int, rows: int, cols: int, ld: int) -> np.ndarray:
    flat = np.ctypeslib.as_array((_F * (ld * cols)).from_address(address))
    return flat.reshape(cols, ld)[:, :rows].T


def _gemm(handle, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) -> int:
    assert handle == FAKE_HANDLE
    op_a = _column_major(a, *((k, m) if ta else (m, k)), lda)
    op_b = _column_major(b, *((n, k) if tb else (k, n)), ldb)
    out = _column_major(c, m, n, ldc)
    out[...] = alpha[0] * ((op_a.T if ta else op_a) @ (op_b.T if tb else op_b)) + beta[0] * out
    return 0


def _batched(handle, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, count) -> int:
    for i in range(count):
        _gemm(handle, ta, tb, m, n, k, alpha, a + 4 * i * sa, lda, b + 4 * i * sb, ldb, beta,
              c + 4 * i * sc, ldc)
    return 0


STAND_INS = {"cublasSgemm_v2": _GEMM(_gemm), "cublasSgemmStridedBatched": _BATCHED(_batched)}


@pytest.mark.skipif(NO_CUBLAS is None, reason="the real cuBLAS is loaded; stand-ins would shadow it")
@pytest.mark.parametrize("text", [DENSE, MATMUL, BATCH], ids=["dense", "matmul", "batch matmul"])
def test_generated_host_code_calls_cublas_with_the_column_major_mapping(text: str):
    import llvmlite.binding as llvm

    for name, function in STAND_INS.items():
        llvm.add_symbol(name, ctypes.cast(function, ctypes.c_void_p).value)
    (func,) = cublas_functions(text)
    prim = lower_partition(func, FAKE_HANDLE, TargetAttr("llvm"))
    native = compile_cpu(ModuleOp([prim]))
    main = next(op for op in parse_module(text).ops if isinstance(op, relay.FuncOp))
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(a.type.get_shape()).astype(np.float32) for a in main.args]  # type: ignore[attr-defined]
    out = np.zeros(main.result_type.get_shape(), np.float32)  # type: ignore[attr-defined]
    native.function(prim.sym_name.data)(*inputs, out)
    expected = inputs[0] @ inputs[1].T if "dense" in text else inputs[0] @ inputs[1]
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_epilogues_are_not_supported_yet():
    text = gpu_program(
        "%d = relay.nn.dense %a, %b : (tensor<5x3xf32>, tensor<4x3xf32>) -> tensor<5x4xf32>\n"
        "    %r = relay.nn.bias_add %d, %c : (tensor<5x4xf32>, tensor<4xf32>) -> tensor<5x4xf32>",
        ["tensor<5x3xf32>", "tensor<4x3xf32>", "tensor<4xf32>"], "tensor<5x4xf32>",
    )
    (func,) = cublas_functions(text)
    with pytest.raises(HeteroError, match="cublas: relay.nn.bias_add in a cuBLAS partition: only one dense/matmul"):
        lower_partition(func, FAKE_HANDLE, TargetAttr("llvm"))


@pytest.mark.skipif(NO_CUBLAS is None, reason="a GPU with cuBLAS is present")
def test_without_gpu_the_kind_is_not_offered():
    assert unavailable_reason("cublas") == NO_CUBLAS
    assert NO_CUBLAS.startswith("cuBLAS needs a CUDA GPU") or "hetero[cublas]" in NO_CUBLAS
    text = (
        'builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, '
        '#target.target<"cuda">, #target.target<"cublas">]>} {\n'
        "  relay.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {\n"
        "    %r = relay.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>\n"
        "    relay.return %r : tensor<2x4xf32>\n  }\n}\n"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = hetero.compile(text)
    assert any("'cublas' is not offered" in str(w.message) for w in caught)
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    np.testing.assert_allclose(compiled(a, b), a @ b)


@pytest.mark.skipif(NO_CUBLAS is not None, reason=f"no cuBLAS here: {NO_CUBLAS}")
@pytest.mark.parametrize("text", [DENSE, MATMUL, BATCH], ids=["dense", "matmul", "batch matmul"])
def test_cublas_partition_runs_on_the_gpu(text: str):
    from hetero.runtime.cuda import DeviceArray

    (func,) = cublas_functions(text)
    prim = lower_partition(func, cublas_runtime.handle(), TargetAttr("llvm"))
    native = compile_cpu(ModuleOp([prim]))
    main = next(op for op in parse_module(text).ops if isinstance(op, relay.FuncOp))
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(a.type.get_shape()).astype(np.float32) for a in main.args]  # type: ignore[attr-defined]
    out = DeviceArray(main.result_type.get_shape(), np.float32)  # type: ignore[attr-defined]
    device = [DeviceArray.from_numpy(x) for x in inputs]
    address = native._engine.get_function_address(prim.sym_name.data)
    ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 3)(address)(*(int(d.pointer) for d in [*device, out]))
    expected = inputs[0] @ inputs[1].T if "dense" in text else inputs[0] @ inputs[1]
    np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-4, atol=1e-5)
