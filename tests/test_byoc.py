"""BYOC partitioning (docs/passes/byoc.md): values, pattern tables, caches.

* The end-to-end program of the issue computes the same values before and
  after partitioning, outlining and marking extern (and after inlining the
  partitions back), in the reference interpreter, on random inputs.
* Random annotated programs: merged regions never create a cycle, so the
  partitioned module verifies and computes what the original computes.
* Pattern tables: the registration API and its errors, a third party's
  kind and table found through entry points by `hetero-opt`, predicates.
* The structural cache of `outline-compiler-functions`.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from hetero.context import parse_module
from hetero.dialects.relay import FnOp, FuncOp
from hetero.dialects.target.kind import DeviceType, TargetKind, register_target_kind
from hetero.interpreter.relay import run
from hetero.targets import patterns
from hetero.targets.patterns import (
    CompositePattern,
    PatternError,
    PatternRegistry,
    attr_in,
    dtype_in,
    is_op,
    match,
    pattern_table,
    register_patterns,
    static_shapes,
    wildcard,
)
from hetero.transforms.annotate_target import AnnotateTargetPass
from hetero.transforms.inline_compiler_functions_bound_to import (
    InlineCompilerFunctionsBoundToPass,
)
from hetero.transforms.mark_compiler_functions_as_extern import (
    MarkCompilerFunctionsAsExternPass,
)
from hetero.transforms.merge_compiler_regions import MergeCompilerRegionsPass
from hetero.transforms.merge_composite import MergeCompositePass
from hetero.transforms.outline_compiler_functions import OutlineCompilerFunctionsPass
from hetero.transforms.partition_graph import PartitionGraphPass
from hetero.transforms.plan_devices import PlanDevicesPass
from hetero.transforms.verify_devices import VerifyDevicesPass
from hetero.utils.diagnostics import HeteroError, verify_module

CONFIG = (
    '#target.config<[#target.target<"llvm">, #target.target<"cuda">, '
    '#target.target<"cublas">, #target.target<"cudnn">, #target.target<"blas">]>'
)

PROGRAM = f"""
builtin.module attributes {{target.config = {CONFIG}}} {{
  relay.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %bias: tensor<16xf32>, %k: tensor<2x1x3x3xf32>, %kb: tensor<2xf32>, %a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tuple<tensor<1x2x2x14xf32>, tensor<2x3x5xf32>> {{
    %d = relay.nn.dense %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    %db = relay.nn.bias_add %d, %bias : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
    %r = relay.relu %db : tensor<4x16xf32>
    %s = relay.reshape %r {{newshape = array<i64: 1, 1, 4, 16>}} : (tensor<4x16xf32>) -> tensor<1x1x4x16xf32>
    %c = relay.nn.conv2d %s, %k : (tensor<1x1x4x16xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x2x14xf32>
    %cb = relay.nn.bias_add %c, %kb : (tensor<1x2x2x14xf32>, tensor<2xf32>) -> tensor<1x2x2x14xf32>
    %cr = relay.relu %cb : tensor<1x2x2x14xf32>
    %cg = relay.on_device %cr to #target.vdevice<cuda> : tensor<1x2x2x14xf32>
    %m = relay.matmul %a, %b : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
    %t = relay.tuple(%cg, %m) : tuple<tensor<1x2x2x14xf32>, tensor<2x3x5xf32>>
    relay.return %t : tuple<tensor<1x2x2x14xf32>, tensor<2x3x5xf32>>
  }}
}}
"""

BYOC = [
    PlanDevicesPass(),
    MergeCompositePass(),
    AnnotateTargetPass(),
    MergeCompilerRegionsPass(),
    PartitionGraphPass(),
    OutlineCompilerFunctionsPass(),
    MarkCompilerFunctionsAsExternPass(),
]


def _apply(module: ModuleOp, passes: list[ModulePass]) -> ModuleOp:
    for p in passes:
        p.apply(Context(), module)
        verify_module(module)
    return module


def _inputs(module: ModuleOp, seed: int) -> list[np.ndarray]:
    main = next(
        f for f in module.ops if isinstance(f, FuncOp) and f.sym_name.data == "main"
    )
    rng = np.random.default_rng(seed)
    types = main.function_type.inputs.data
    return [
        rng.standard_normal(t.get_shape()).astype(np.float32)
        for t in types
        if isinstance(t, TensorType)
    ]


def _same(a: object, b: object) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and all(
            _same(x, y) for x, y in zip(a, b, strict=True)
        )
    return np.array_equal(a, b)  # type: ignore[arg-type]


def _globals(module: ModuleOp) -> dict[str, FuncOp]:
    return {f.sym_name.data: f for f in module.ops if isinstance(f, FuncOp)}


# ----------------------------------------------------------------------------
# End to end
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_partitioning_preserves_values(seed: int):
    original = parse_module(PROGRAM)
    partitioned = _apply(parse_module(PROGRAM), BYOC)
    inputs = _inputs(original, seed)
    assert _same(run(original, *inputs), run(partitioned, *inputs))


def test_end_to_end_partitions():
    module = _apply(parse_module(PROGRAM), [*BYOC, VerifyDevicesPass()])
    functions = _globals(module)
    assert set(functions) == {"main", "cublas_main_0", "cudnn_main_0", "blas_main_0"}
    composites = {
        name: [fn.composite for fn in f.walk() if isinstance(fn, FnOp)]
        for name, f in functions.items()
        if name != "main"
    }
    assert composites == {
        "cublas_main_0": ["cublas.dense_bias"],
        "cudnn_main_0": ["cudnn.conv2d_bias_relu"],
        "blas_main_0": ["blas.batch_matmul"],
    }
    for name in composites:
        assert dict(functions[name].attributes).keys() == {"Extern"}


def test_inlining_the_partitions_back_preserves_values():
    module = _apply(parse_module(PROGRAM), BYOC)
    names = tuple(n for n in _globals(module) if n != "main")
    _apply(module, [InlineCompilerFunctionsBoundToPass(globals=names)])
    assert list(_globals(module)) == ["main"]
    assert not [op for op in module.walk() if isinstance(op, FnOp)]
    inputs = _inputs(module, 7)
    assert _same(run(parse_module(PROGRAM), *inputs), run(module, *inputs))


# ----------------------------------------------------------------------------
# Random annotated programs: regions never make cycles
# ----------------------------------------------------------------------------


def _random_program(rng: np.random.Generator, size: int) -> str:
    """Elementwise ops on earlier values, each annotated for blas or not."""
    names = ["%x", "%y"]
    lines = []
    for i in range(size):
        note = ' {relay.compiler = "blas"}' if rng.random() < 0.6 else ""
        if rng.random() < 0.5:
            op = rng.choice(["exp", "tanh", "negative", "relu"])
            lines.append(
                f"    %v{i} = relay.{op} {rng.choice(names)}{note} : tensor<3xf32>"
            )
        else:
            op = rng.choice(["add", "multiply", "maximum"])
            a, b = rng.choice(names, 2)
            lines.append(f"    %v{i} = relay.{op} {a}, {b}{note} : tensor<3xf32>")
        names.append(f"%v{i}")
    body = "\n".join(lines)
    last = ", ".join(names[-3:])
    return f"""
builtin.module attributes {{target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>}} {{
  relay.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tuple<tensor<3xf32>, tensor<3xf32>, tensor<3xf32>> {{
{body}
    %t = relay.tuple({last}) : tuple<tensor<3xf32>, tensor<3xf32>, tensor<3xf32>>
    relay.return %t : tuple<tensor<3xf32>, tensor<3xf32>, tensor<3xf32>>
  }}
}}
"""


@pytest.mark.parametrize("seed", range(40))
def test_merged_regions_partition_without_cycles(seed: int):
    text = _random_program(np.random.default_rng(seed), 14)
    module = _apply(
        parse_module(text),
        [
            MergeCompilerRegionsPass(),
            PartitionGraphPass(),
            OutlineCompilerFunctionsPass(structural_cache=True),
            MarkCompilerFunctionsAsExternPass(),
        ],
    )
    assert "relay.compiler" not in str(module)
    inputs = _inputs(module, seed)
    assert _same(run(parse_module(text), *inputs), run(module, *inputs))


# ----------------------------------------------------------------------------
# Pattern tables
# ----------------------------------------------------------------------------

TEST_KIND = TargetKind(
    "byoc_testlib", DeviceType.cpu, keys=("cpu",), is_external_codegen=True
)
register_target_kind(TEST_KIND)


def test_built_in_tables_put_larger_patterns_first():
    assert [p.name for p in pattern_table("blas")] == [
        "dense_bias_relu",
        "dense_bias",
        "dense",
        "batch_matmul",
        "matmul",
    ]
    assert [p.name for p in pattern_table("cudnn")] == [
        "conv2d_bias_relu",
        "conv2d_bias",
        "conv2d",
    ]
    assert pattern_table("llvm") == ()


def test_registering_a_table_for_a_new_kind_makes_merge_composite_use_it():
    register_patterns(
        "byoc_testlib",
        [
            CompositePattern(
                "softmax", is_op("nn.softmax").where(attr_in("axis", -1, 1))
            ),
        ],
    )
    text = """
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"byoc_testlib">]>} {
  relay.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %s = relay.nn.softmax %x : tensor<2x3xf32>
    %t = relay.nn.softmax %s {axis = 0 : i64} : tensor<2x3xf32>
    relay.return %t : tensor<2x3xf32>
  }
}
"""
    module = _apply(parse_module(text), [MergeCompositePass()])
    literals = [op for op in module.walk() if isinstance(op, FnOp)]
    assert [f.composite for f in literals] == [
        "byoc_testlib.softmax"
    ]  # axis 0 rejected
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    assert _same(run(parse_module(text), x), run(module, x))


def test_first_puts_a_fusion_before_the_patterns_it_contains():
    register_patterns("byoc_testlib", [CompositePattern("tanh", is_op("tanh"))])
    register_patterns(
        "byoc_testlib",
        [CompositePattern("exp_tanh", is_op("tanh", is_op("exp")))],
        first=True,
    )
    assert [p.name for p in pattern_table("byoc_testlib")][:1] == ["exp_tanh"]
    module = _apply(
        parse_module("""
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"byoc_testlib">]>} {
  relay.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %e = relay.exp %x : tensor<2xf32>
    %t = relay.tanh %e : tensor<2xf32>
    %u = relay.tanh %t : tensor<2xf32>
    relay.return %u : tensor<2xf32>
  }
}"""),
        [MergeCompositePass()],
    )
    composites = [op.composite for op in module.walk() if isinstance(op, FnOp)]
    assert composites == ["byoc_testlib.exp_tanh", "byoc_testlib.tanh"]


@pytest.mark.parametrize(
    ("kind", "entries", "message"),
    [
        (
            "blas",
            [CompositePattern("bad", is_op("nn.dence"))],
            "pattern 'blas.bad' names unknown op 'nn.dence'",
        ),
        (
            "blas",
            [CompositePattern("bad", is_op("relay.nn.dense"))],
            "names unknown op 'relay.nn.dense' (write op names without the 'relay.' prefix)",
        ),
        (
            "blas",
            [
                CompositePattern(
                    "bad", is_op("nn.bias_add", is_op("nn.dens"), wildcard())
                )
            ],
            "unknown op 'nn.dens'",
        ),
        ("nosuchkind", [], "pattern table for unknown target kind 'nosuchkind'"),
        (
            "llvm",
            [],
            "pattern table for target kind 'llvm', which is not an external codegen",
        ),
        (
            "blas",
            [CompositePattern("a.b", is_op("relu"))],
            "pattern name 'a.b' must be an identifier",
        ),
        ("blas", ["relu"], "expected CompositePattern(name, is_op(...)), got 'relu'"),
        (
            "blas",
            [CompositePattern("dense", is_op("relu"))],
            "pattern 'blas.dense' is already registered",
        ),
    ],
)
def test_bad_tables_are_rejected_at_registration(
    kind: str, entries: list, message: str
):
    registry = PatternRegistry(group="hetero.patterns.none")
    registry.table("blas")  # built-ins first
    with pytest.raises(PatternError) as info:
        registry.register(kind, entries)
    assert message in str(info.value)


def test_a_third_party_kind_and_table_through_entry_points(tmp_path: Path):
    """A package that `pip` would install: a kind and its table, found by `hetero-opt`."""
    (tmp_path / "vendorlib.py").write_text(
        "from hetero.dialects.target.kind import DeviceType, TargetKind\n"
        "from hetero.targets.patterns import CompositePattern, dtype_in, is_op, wildcard\n"
        "KIND = TargetKind('vendorlib', DeviceType.cpu, keys=('cpu',), is_external_codegen=True)\n"
        "def patterns():\n"
        "    ok = dtype_in('f32')\n"
        "    return [CompositePattern('gemm_relu', is_op('relu', is_op('matmul', wildcard(), wildcard()).where(ok)))]\n"
    )
    info = tmp_path / "vendorlib-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: vendorlib\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[hetero.target_kinds]\nvendorlib = vendorlib:KIND\n\n"
        "[hetero.patterns]\nvendorlib = vendorlib:patterns\n"
    )
    program = """
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"vendorlib">]>} {
  relay.func @main(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
    %m = relay.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
    %r = relay.relu %m : tensor<3x5xf32>
    relay.return %r : tensor<3x5xf32>
  }
}
"""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(tmp_path), os.environ.get("PYTHONPATH", "")]
        ),
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "hetero.tools.hetero_opt",
            "-p",
            "merge-composite,annotate-target,partition-graph,outline-compiler-functions",
        ],
        input=program,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert 'Composite = "vendorlib.gemm_relu"' in proc.stdout
    assert "relay.func @vendorlib_main_0(" in proc.stdout


def test_a_bad_table_from_an_entry_point_is_a_pass_diagnostic(
    monkeypatch: pytest.MonkeyPatch,
):
    class BadEntryPoint:
        name, value = "blas", "badpkg:PATTERNS"

        def load(self) -> list[CompositePattern]:
            return [CompositePattern("oops", is_op("nn.dence"))]

    module = parse_module(
        f"builtin.module attributes {{target.config = {CONFIG}}} {{}}"
    )
    monkeypatch.setattr(
        patterns, "REGISTRY", PatternRegistry(group="test.bad.patterns")
    )
    real = importlib.metadata.entry_points
    monkeypatch.setattr(
        "importlib.metadata.entry_points",
        lambda group: (
            [BadEntryPoint()] if group == "test.bad.patterns" else real(group=group)
        ),
    )
    with pytest.raises(HeteroError) as info:
        MergeCompositePass().apply(Context(), module)
    assert info.value.op is module
    assert (
        "entry point 'blas = badpkg:PATTERNS': pattern 'blas.oops' names unknown op 'nn.dence'"
        in info.value.message
    )


# ----------------------------------------------------------------------------
# Predicates
# ----------------------------------------------------------------------------


def _binary(op: str, lhs: str, rhs: str, result: str) -> Operation:
    """The op `relay.<op> %x, %w` of a one-op function."""
    module = parse_module(f"""
builtin.module {{
  relay.func @main(%x: {lhs}, %w: {rhs}) -> {result} {{
    %d = relay.{op} %x, %w : ({lhs}, {rhs}) -> {result}
    relay.return %d : {result}
  }}
}}""")
    func = next(f for f in module.ops if isinstance(f, FuncOp))
    return func.body.block.ops.first  # type: ignore[return-value]


DENSE = "nn.dense", "tensor<4x8x{t}>", "tensor<16x8x{t}>", "tensor<4x16x{t}>"


def _dense(t: str) -> Operation:
    op, *types = DENSE
    return _binary(op, *(ty.format(t=t) for ty in types))


@pytest.mark.parametrize(
    ("kind", "pattern", "op", "matches"),
    [
        ("blas", "dense", lambda: _dense("f32"), True),
        ("blas", "dense", lambda: _dense("f64"), True),
        ("blas", "dense", lambda: _dense("f16"), False),
        ("blas", "dense", lambda: _dense("i32"), False),
        ("cublas", "dense", lambda: _dense("f16"), True),
        (
            "blas",
            "batch_matmul",
            lambda: _binary(
                "matmul", "tensor<2x3x4xf32>", "tensor<2x4x5xf32>", "tensor<2x3x5xf32>"
            ),
            True,
        ),
        (
            "blas",
            "batch_matmul",  # broadcasting the batch is not one gemm_batched
            lambda: _binary(
                "matmul", "tensor<2x3x4xf32>", "tensor<1x4x5xf32>", "tensor<2x3x5xf32>"
            ),
            False,
        ),
        (
            "blas",
            "batch_matmul",
            lambda: _binary(
                "matmul", "tensor<?x3x4xf32>", "tensor<?x4x5xf32>", "tensor<?x3x5xf32>"
            ),
            False,
        ),
        (
            "blas",
            "matmul",
            lambda: _binary(
                "matmul", "tensor<2x3x4xf32>", "tensor<2x4x5xf32>", "tensor<2x3x5xf32>"
            ),
            False,
        ),
        (
            "tensorrt",
            "add",
            lambda: _binary(
                "add", "tensor<?x3xf32>", "tensor<?x3xf32>", "tensor<?x3xf32>"
            ),
            False,
        ),
        (
            "tensorrt",
            "add",
            lambda: _binary(
                "add", "tensor<2x3xf32>", "tensor<2x3xf32>", "tensor<2x3xf32>"
            ),
            True,
        ),
    ],
)
def test_predicates_on_shapes_and_dtypes(
    kind: str, pattern: str, op: Callable[[], Operation], matches: bool
):
    entry = next(p for p in pattern_table(kind) if p.name == pattern)
    assert (match(entry.pattern, op()) is not None) is matches


def test_predicate_helpers():
    dense = _binary(
        "nn.dense", "tensor<4x?xf32>", "tensor<16x8xf32>", "tensor<4x16xf32>"
    )
    assert dtype_in("f32")(dense) and not dtype_in("f64")(dense)
    assert not static_shapes(dense)
    bias = _binary(
        "nn.bias_add", "tensor<4x16xf32>", "tensor<16xf32>", "tensor<4x16xf32>"
    )
    assert attr_in("axis", 1)(bias) and not attr_in("axis", 0)(bias)


def test_a_failing_predicate_is_a_located_diagnostic():
    def broken(op: object) -> bool:
        raise KeyError("shape")

    register_patterns(
        "byoc_testlib",
        [CompositePattern("broken_sigmoid", is_op("sigmoid").where(broken))],
    )
    module = parse_module("""
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"byoc_testlib">]>} {
  relay.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %t = relay.sigmoid %x : tensor<2xf32>
    relay.return %t : tensor<2xf32>
  }
}""")
    with pytest.raises(HeteroError) as info:
        MergeCompositePass().apply(Context(), module)
    assert (
        "predicate broken of a pattern for 'sigmoid' failed on relay.sigmoid"
        in info.value.message
    )
    assert info.value.op is not None and info.value.op.name == "relay.sigmoid"


# ----------------------------------------------------------------------------
# The structural cache
# ----------------------------------------------------------------------------

TWO_DENSES = f"""
builtin.module attributes {{target.config = {CONFIG}}} {{
  relay.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {{
    %a = relay.nn.dense %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %r = relay.relu %a : tensor<4x8xf32>
    %b = relay.nn.dense %r, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    relay.return %b : tensor<4x8xf32>
  }}
}}
"""


@pytest.mark.parametrize(("structural", "expected"), [(False, 2), (True, 1)])
def test_structurally_equal_partitions_share_one_global(
    structural: bool, expected: int
):
    passes = [*BYOC[:5], OutlineCompilerFunctionsPass(structural_cache=structural)]
    module = _apply(parse_module(TWO_DENSES), passes)
    outlined = [n for n in _globals(module) if n != "main"]
    assert len(outlined) == expected
    assert outlined[0] == "blas_main_0"
    inputs = _inputs(module, 3)
    assert _same(run(parse_module(TWO_DENSES), *inputs), run(module, *inputs))
