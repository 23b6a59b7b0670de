"""The `blas` external codegen (docs/external-codegens.md): partitions run as OpenBLAS calls.

* An MLP (dense+bias+relu ×3, softmax) compiled with `targets=["llvm", "blas"]`
  partitions its dense layers to BLAS (Extern functions, `cblas_sgemm` calls
  in the machine code) and equals the reference interpreter; without the
  kind it runs on hetero's own loops, with the same result.
* Odd shapes, f64, 2-d and batched matmul (`cblas_sgemm_batch_strided`).
* Without the library the kind is not offered: a warning names what to
  install and the program compiles on `llvm`; `external-codegen` itself
  reports the missing library at the function.
* The hook registry: IRModule-at-a-time calls, entry points, bad hooks.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np
import pytest
from byoc_programs import program, random_inputs
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

import hetero
from hetero.context import parse_module
from hetero.dialects import relay, tir
from hetero.dialects.target.kind import DeviceType, TargetKind, register_target_kind
from hetero.interpreter.relay import run
from hetero.runtime import blas as blas_runtime
from hetero.targets import codegen
from hetero.targets.codegen import CodegenRegistry, ExternalCodegen, register_codegen
from hetero.targets.patterns import CompositePattern, is_op, register_patterns, wildcard
from hetero.transforms.annotate_target import AnnotateTargetPass
from hetero.transforms.external_codegen import ExternalCodegenPass, external_modules
from hetero.transforms.merge_compiler_regions import MergeCompilerRegionsPass
from hetero.transforms.merge_composite import MergeCompositePass
from hetero.transforms.outline_compiler_functions import OutlineCompilerFunctionsPass
from hetero.transforms.partition_graph import PartitionGraphPass
from hetero.transforms.plan_devices import PlanDevicesPass
from hetero.utils.diagnostics import HeteroError
from hetero.utils.programs import mlp

pytest.importorskip(
    "scipy_openblas32", reason="the blas kind needs scipy-openblas32 (hetero[blas])"
)


def reference(text: str, inputs: Sequence[np.ndarray]) -> np.ndarray:
    return run(parse_module(text), *inputs)


def partitioned(text: str, targets: str = "llvm,blas") -> ModuleOp:
    """The module after the BYOC passes and `external-codegen`."""
    module = parse_module(text)
    for stage in (
        PlanDevicesPass(targets=targets),
        MergeCompositePass(),
        AnnotateTargetPass(),
        MergeCompilerRegionsPass(),
        PartitionGraphPass(),
        OutlineCompilerFunctionsPass(),
        ExternalCodegenPass(),
    ):
        stage.apply(Context(), module)
    return module


def blas_calls(compiled: hetero.driver.CompiledFunction) -> set[str]:
    """The library functions the optimised machine code calls (LLVM may have
    inlined the generated functions into the host function)."""
    return {
        line.split("@")[1].split("(")[0]
        for line in compiled.native.llvm_ir().splitlines()
        if "call " in line and "@scipy_cblas_" in line
    }


# ----------------------------------------------------------------------------
# End to end
# ----------------------------------------------------------------------------

MLP = mlp(16, [64, 128, 96, 10])


def test_mlp_partitions_its_dense_layers_to_blas():
    module = partitioned(MLP)
    functions = [
        op
        for op in module.ops
        if isinstance(op, relay.FuncOp) and op.compiler == "blas"
    ]
    composites = [
        op.composite for f in functions for op in f.walk() if isinstance(op, relay.FnOp)
    ]
    assert composites == ["blas.dense_bias_relu"] * 3
    generated = [op.sym_name.data for op in external_modules(module)["blas"].ops]
    assert generated == [f.sym_name.data for f in functions]


def test_mlp_on_blas_equals_the_reference():
    inputs = random_inputs(MLP)
    compiled = hetero.compile(MLP, targets=["llvm", "blas"])
    assert blas_calls(compiled) == {"scipy_cblas_sgemm"}
    np.testing.assert_allclose(
        compiled(*inputs), reference(MLP, inputs), rtol=1e-5, atol=1e-6
    )


def test_mlp_without_the_blas_kind_runs_on_hetero_loops_with_the_same_result():
    inputs = random_inputs(MLP)
    with_blas = hetero.compile(MLP, targets=["llvm", "blas"])(*inputs)
    compiled = hetero.compile(MLP, targets=["llvm"])
    assert blas_calls(compiled) == set()
    result = compiled(*inputs)
    np.testing.assert_allclose(result, reference(MLP, inputs), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(result, with_blas, rtol=1e-5, atol=1e-6)


CASES = {
    "odd dense": (
        "%r = relay.nn.dense %a, %b : (tensor<7x13xf32>, tensor<5x13xf32>) -> tensor<7x5xf32>",
        ["tensor<7x13xf32>", "tensor<5x13xf32>"],
        "tensor<7x5xf32>",
        ["scipy_cblas_sgemm"],
    ),
    "dense f64": (
        "%r = relay.nn.dense %a, %b : (tensor<3x9xf64>, tensor<11x9xf64>) -> tensor<3x11xf64>",
        ["tensor<3x9xf64>", "tensor<11x9xf64>"],
        "tensor<3x11xf64>",
        ["scipy_cblas_dgemm"],
    ),
    "dense bias, bias on axis -1": (
        (
            "%d = relay.nn.dense %a, %b : (tensor<1x3xf32>, tensor<17x3xf32>) -> tensor<1x17xf32>\n"
            "    %r = relay.nn.bias_add %d, %c {axis = -1 : i64} : (tensor<1x17xf32>, tensor<17xf32>) -> tensor<1x17xf32>"
        ),
        ["tensor<1x3xf32>", "tensor<17x3xf32>", "tensor<17xf32>"],
        "tensor<1x17xf32>",
        ["scipy_cblas_sgemm"],
    ),
    "matmul": (
        "%r = relay.matmul %a, %b : (tensor<3x17xf32>, tensor<17x11xf32>) -> tensor<3x11xf32>",
        ["tensor<3x17xf32>", "tensor<17x11xf32>"],
        "tensor<3x11xf32>",
        ["scipy_cblas_sgemm"],
    ),
    "batch matmul": (
        "%r = relay.matmul %a, %b : (tensor<3x5x7xf32>, tensor<3x7x4xf32>) -> tensor<3x5x4xf32>",
        ["tensor<3x5x7xf32>", "tensor<3x7x4xf32>"],
        "tensor<3x5x4xf32>",
        ["scipy_cblas_sgemm_batch_strided"],
    ),
    "two gemms in one partition": (
        (
            "%m = relay.matmul %a, %b : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>\n"
            "    %r = relay.matmul %m, %c : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>"
        ),
        ["tensor<4x6xf32>", "tensor<6x5xf32>", "tensor<5x3xf32>"],
        "tensor<4x3xf32>",
        ["scipy_cblas_sgemm"],
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_shapes_and_precisions_match_the_reference(name: str):
    body, inputs, result, calls = CASES[name]
    text = program(body, inputs, result)
    values = random_inputs(text, seed=3)
    compiled = hetero.compile(text, targets=["llvm", "blas"])
    assert blas_calls(compiled) == set(calls)
    tolerance = 1e-12 if "f64" in result else 1e-5
    np.testing.assert_allclose(
        compiled(*values), reference(text, values), rtol=tolerance, atol=tolerance
    )


def test_broadcast_batch_matmul_stays_with_llvm():
    """`[1, M, K] x [B, K, N]` is not one batched GEMM: the pattern leaves it alone."""
    text = program(
        "%r = relay.matmul %a, %b : (tensor<1x2x3xf32>, tensor<4x3x5xf32>) -> tensor<4x2x5xf32>",
        ["tensor<1x2x3xf32>", "tensor<4x3x5xf32>"],
        "tensor<4x2x5xf32>",
    )
    values = random_inputs(text)
    compiled = hetero.compile(text, targets=["llvm", "blas"])
    assert blas_calls(compiled) == set()
    np.testing.assert_allclose(
        compiled(*values), reference(text, values), rtol=1e-5, atol=1e-6
    )


def test_other_ops_of_a_partition_run_on_hetero_templates():
    """A partition made by hand (or by a third party's table) may hold ops BLAS
    has no call for: the softmax after the GEMM is lower-te's loop nest."""
    device = '{vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}'
    text = f"""builtin.module {{
  relay.func @blas_main_0(%x: tensor<3x4xf32> {device}, %w: tensor<5x4xf32> {device}) -> (tensor<3x5xf32> {device}) attributes {{Compiler = "blas", global_symbol = "blas_main_0"}} {{
    %d = relay.nn.dense %x, %w : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
    %s = relay.nn.softmax %d : tensor<3x5xf32>
    relay.return %s : tensor<3x5xf32>
  }}
  relay.func @main(%x: tensor<3x4xf32>, %w: tensor<5x4xf32>) -> tensor<3x5xf32> {{
    %r = relay.call @blas_main_0(%x, %w) : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
    relay.return %r : tensor<3x5xf32>
  }}
}}"""
    values = random_inputs(text)
    compiled = hetero.compile(text, targets=["llvm", "blas"])
    assert blas_calls(compiled) == {"scipy_cblas_sgemm"}
    np.testing.assert_allclose(
        compiled(*values), reference(text, values), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("tail", ["", "softmax"])
def test_two_gemms_meeting_in_an_add_keep_their_own_buffers(tail: str):
    """`d + e` of two GEMMs runs in place in one of them only: were both
    chains given the buffer of the sum, the second GEMM would overwrite the
    first (returned, or read by a softmax after)."""
    device = '{vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}'
    t, x, w = "tensor<3x5xf32>", "tensor<3x4xf32>", "tensor<5x4xf32>"
    result = "%s"
    if tail:
        result = "%t"
        tail = f"%t = relay.nn.softmax %s : {t}"
    text = f"""builtin.module {{
  relay.func @blas_main_0(%x: {x} {device}, %w: {w} {device}, %v: {w} {device}) -> ({t} {device}) attributes {{Compiler = "blas", global_symbol = "blas_main_0"}} {{
    %d = relay.nn.dense %x, %w : ({x}, {w}) -> {t}
    %e = relay.nn.dense %x, %v : ({x}, {w}) -> {t}
    %s = relay.add %d, %e : ({t}, {t}) -> {t}
    {tail}
    relay.return {result} : {t}
  }}
  relay.func @main(%x: {x}, %w: {w}, %v: {w}) -> {t} {{
    %r = relay.call @blas_main_0(%x, %w, %v) : ({x}, {w}, {w}) -> {t}
    relay.return %r : {t}
  }}
}}"""
    values = random_inputs(text)
    compiled = hetero.compile(text, targets=["llvm", "blas"])
    assert blas_calls(compiled) == {"scipy_cblas_sgemm"}
    np.testing.assert_allclose(
        compiled(*values), reference(text, values), rtol=1e-5, atol=1e-6
    )


SHARED = {
    "read by a GEMM and returned": (
        "%d = relay.nn.dense %a, %b : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>\n"
        "    %e = relay.nn.dense %d, %b : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>\n"
        "    %r = relay.add %e, %d : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>"),
    "read by two GEMMs": (
        "%d = relay.nn.dense %a, %b : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>\n"
        "    %e = relay.nn.dense %d, %b : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>\n"
        "    %f = relay.nn.dense %d, %c : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>\n"
        "    %r = relay.add %e, %f : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>"),
    "bias chain read by a GEMM and returned": (
        "%d = relay.nn.dense %a, %b : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>\n"
        "    %g = relay.nn.bias_add %d, %c {axis = -1 : i64} : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>\n"
        "    %e = relay.nn.dense %g, %b : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>\n"
        "    %r = relay.subtract %e, %g : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>"),
}  # fmt: skip


@pytest.mark.parametrize("name", SHARED)
def test_a_gemm_with_two_users_makes_a_partition_of_several_results(name: str):
    """A value of the partition that is also used outside it is one of the
    partition's results (a tuple): one output memref each, written by its
    producer and read by later GEMMs of the partition."""
    third = "tensor<4xf32>" if "bias" in name else "tensor<4x4xf32>"
    text = program(
        SHARED[name], ["tensor<3x4xf32>", "tensor<4x4xf32>", third], "tensor<3x4xf32>"
    )
    module = partitioned(text)
    (function,) = [
        op
        for op in module.ops
        if isinstance(op, relay.FuncOp) and op.compiler == "blas"
    ]
    assert "tuple<" in str(function.result_type)
    (generated,) = external_modules(module)["blas"].ops
    assert len(generated.body.block.args) == len(function.args) + 2
    values = random_inputs(text, seed=5)
    compiled = hetero.compile(text, targets=["llvm", "blas"])
    assert blas_calls(compiled) == {"scipy_cblas_sgemm"}
    np.testing.assert_allclose(
        compiled(*values), reference(text, values), rtol=1e-5, atol=1e-6
    )


DEVICE = '{vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}'


@pytest.mark.parametrize(
    ("parameter", "message"),
    [
        ("tuple<tensor<3x4xf32>>",
         r"blas: parameter #0 has type tuple<tensor<3x4xf32>>; the blas codegen passes tensors"),
        ("tensor<?x4xf32>",
         r"blas: parameter #0 has a dynamic shape \(tensor<\?x4xf32>\); the blas codegen takes static"),
    ],
    ids=["tuple parameter", "dynamic"],
)  # fmt: skip
def test_what_blas_cannot_pass_is_a_located_diagnostic(parameter: str, message: str):
    """Hand-made partitions (the BYOC passes give neither): the message names
    what is unsupported, not dynamic shapes for every type."""
    text = f"""builtin.module {{
  relay.func @blas_main_0(%x: {parameter} {DEVICE}, %w: tensor<5x4xf32> {DEVICE}) -> tensor<5x4xf32> attributes {{Compiler = "blas", global_symbol = "blas_main_0"}} {{
    relay.return %w : tensor<5x4xf32>
  }}
}}"""
    with pytest.raises(HeteroError, match=message) as info:
        ExternalCodegenPass().apply(Context(), parse_module(text))
    assert isinstance(info.value.op, relay.FuncOp)


# ----------------------------------------------------------------------------
# Without the library
# ----------------------------------------------------------------------------


@pytest.fixture
def no_openblas(monkeypatch: pytest.MonkeyPatch):
    """`scipy_openblas32` cannot be imported (as if not installed)."""
    monkeypatch.setitem(sys.modules, "scipy_openblas32", None)
    blas_runtime.load_blas.cache_clear()
    yield
    blas_runtime.load_blas.cache_clear()


def test_missing_library_is_not_offered_and_the_program_still_compiles(no_openblas):
    inputs = random_inputs(MLP)
    with pytest.warns(
        UserWarning, match=r"'blas' is not offered: .*pip install 'hetero\[blas\]'"
    ):
        compiled = hetero.compile(MLP, targets=["llvm", "blas"])
    assert blas_calls(compiled) == set()
    np.testing.assert_allclose(
        compiled(*inputs), reference(MLP, inputs), rtol=1e-5, atol=1e-6
    )


def test_missing_library_is_a_located_error_of_external_codegen(no_openblas):
    text = program(
        "%r = relay.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>",
        ["tensor<2x3xf32>", "tensor<3x4xf32>"],
        "tensor<2x4xf32>",
    )
    with pytest.raises(
        HeteroError, match="'blas' cannot compile here: .*needs scipy-openblas32"
    ) as info:
        partitioned(text)
    assert isinstance(info.value.op, relay.FuncOp)


# ----------------------------------------------------------------------------
# The hook registry
# ----------------------------------------------------------------------------

ONCE = TargetKind("blas_once_test", DeviceType.cpu, is_external_codegen=True)


def test_a_hook_sees_all_functions_of_its_kind_at_once():
    register_target_kind(ONCE)
    register_patterns(ONCE.name, [CompositePattern("exp", is_op("exp", wildcard()))])
    calls: list[list[str]] = []

    def generate(
        module: ModuleOp, functions: Sequence[relay.FuncOp]
    ) -> list[tir.PrimFuncOp]:
        calls.append([f.sym_name.data for f in functions])
        return [tir.PrimFuncOp(f.sym_name.data, ([], [])) for f in functions]

    register_codegen(ExternalCodegen(ONCE.name, generate))
    text = program(
        "%e = relay.exp %a : tensor<4xf32>\n    %t = relay.tanh %e : tensor<4xf32>\n"
        "    %r = relay.exp %t : tensor<4xf32>",
        ["tensor<4xf32>"],
        "tensor<4xf32>",
    )
    module = partitioned(text, targets=f"llvm,{ONCE.name}")
    assert calls == [[f"{ONCE.name}_main_0", f"{ONCE.name}_main_1"]]
    ExternalCodegenPass().apply(Context(), module)  # already generated: not again
    assert len(calls) == 1
    with pytest.raises(ValueError, match="already registered"):
        register_codegen(ExternalCodegen(ONCE.name, generate))


def test_a_hook_returning_other_functions_is_a_diagnostic():
    kind = TargetKind("blas_wrong_test", DeviceType.cpu, is_external_codegen=True)
    register_target_kind(kind)
    register_patterns(kind.name, [CompositePattern("exp", is_op("exp", wildcard()))])
    register_codegen(ExternalCodegen(kind.name, lambda module, functions: []))
    text = program(
        "%r = relay.exp %a : tensor<4xf32>", ["tensor<4xf32>"], "tensor<4xf32>"
    )
    with pytest.raises(
        HeteroError,
        match=r"returned \[\] for the functions \['blas_wrong_test_main_0'\]",
    ):
        partitioned(text, targets=f"llvm,{kind.name}")


def test_codegens_only_for_external_kinds():
    with pytest.raises(
        ValueError, match="'llvm', which is not a registered external-codegen"
    ):
        CodegenRegistry().register(
            ExternalCodegen("llvm", lambda module, functions: [])
        )


def test_entry_point_codegens(monkeypatch: pytest.MonkeyPatch):
    hook = ExternalCodegen("blas_ep_test", lambda module, functions: [])
    register_target_kind(
        TargetKind("blas_ep_test", DeviceType.cpu, is_external_codegen=True)
    )

    class EntryPoint:
        def __init__(self, name: str):
            self.name, self.value = name, "pkg:HOOK"

        def load(self) -> object:
            return lambda: hook

    monkeypatch.setattr(
        "importlib.metadata.entry_points", lambda group: [EntryPoint("blas_ep_test")]
    )
    assert CodegenRegistry().get("blas_ep_test") is hook
    monkeypatch.setattr(
        "importlib.metadata.entry_points", lambda group: [EntryPoint("other")]
    )
    with pytest.raises(ValueError, match="the entry's name must be its kind"):
        CodegenRegistry().get("blas_ep_test")


def test_builtin_hooks_are_registered_by_name():
    assert codegen.codegen_for("blas") is not None
    assert codegen.codegen_for("cutlass") is None
    assert (
        codegen.unavailable_reason("cutlass")
        == "no codegen is registered for the external kind 'cutlass'"
    )


def test_dynamic_batch_mlp_specializes_and_runs_on_blas():
    """A `?` batch: each input shape is specialized, partitioned and compiled
    once (docs/passes/specialize-shapes.md); every layer still goes to BLAS."""
    text = MLP.replace("tensor<16x", "tensor<?x")
    compiled = hetero.compile(text, targets=["llvm", "blas"])
    for batch in (3, 9):
        inputs = random_inputs(
            MLP.replace("tensor<16x", f"tensor<{batch}x"), seed=batch
        )
        np.testing.assert_allclose(
            compiled(*inputs), reference(text, inputs), rtol=1e-4, atol=1e-5
        )
    assert len(compiled.compiled) == 2
    assert all(
        blas_calls(f) == {"scipy_cblas_sgemm"} for f in compiled.compiled.values()
    )
