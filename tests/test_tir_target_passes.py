"""The TIR target passes keep what programs compute, and their documented
pipeline produces exactly what docs/passes/tir-target-passes.md shows.

Modules run before and after the passes, in the TIR interpreter or as native
code, and both are compared with NumPy.
"""

import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline

from hetero.context import make_context, parse_module
from hetero.dialects.target.kind import (
    DeviceType,
    OptionSpec,
    TargetKind,
    register_target_kind,
)
from hetero.dialects.target.target_string import parse_target_string
from hetero.interpreter.tir import run_prim_func
from hetero.lowering.cpu_codegen import compile_cpu
from hetero.universe import HETERO_UNIVERSE

DOC = Path(__file__).parent.parent / "docs" / "passes" / "tir-target-passes.md"
PIPELINE = (
    'bind-target{target="cuda -host=llvm"},annotate-device-regions,'
    "split-host-device,lower-device-kernel-launch,inline-private-functions"
)
RNG = np.random.default_rng(6)


def run_pipeline(module: ModuleOp, spec: str) -> ModuleOp:
    passes = {name: factory for name, factory in HETERO_UNIVERSE.all_passes.items()}
    PassPipeline.parse_spec(passes, spec).apply(make_context(), module)
    module.verify()
    return module


def documented_pipeline() -> tuple[str, str]:
    section = DOC.read_text().split("## A pipeline over CPU and GPU functions")[1]
    before, after = re.findall(r"```mlir\n(.*?)```", section, re.DOTALL)[:2]
    return before, after


def test_documented_pipeline_output():
    assert PIPELINE in DOC.read_text()
    before, after = documented_pipeline()
    assert str(run_pipeline(parse_module(before), PIPELINE)) == after.rstrip()


def test_documented_pipeline_keeps_results():
    """Interpreted, the launch runs the kernel's thread loops serially."""
    before, _ = documented_pipeline()
    a = RNG.standard_normal(256).astype(np.float32)
    c = RNG.standard_normal(64).astype(np.float32)
    for module in (parse_module(before), run_pipeline(parse_module(before), PIPELINE)):
        b = np.zeros(256, np.float32)
        run_prim_func(module, "gpu_add", a.copy(), b)
        np.testing.assert_allclose(b, 2 * a, rtol=1e-6)
        scaled = c.copy()
        run_prim_func(module, "cpu_scale", scaled, 1.5)
        np.testing.assert_allclose(scaled, 1.5 * c, rtol=1e-6)


CPU_REGION = """
tir.prim_func @saxpy(%x: memref<37xf32>, %y: memref<37xf32>, %s: f32) target #target.target<"llvm"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 37 : index
  tir.target_region #target.target<"llvm"> {
    tir.for %i = %c0 to %n step %c1 parallel {
      %a = memref.load %x[%i] : memref<37xf32>
      %b = memref.load %y[%i] : memref<37xf32>
      %p = arith.mulf %a, %s : f32
      %q = arith.addf %p, %b : f32
      memref.store %q, %y[%i] : memref<37xf32>
    }
  }
}
"""


def test_cpu_kernel_outlining_runs_natively():
    """A CPU kernel returns an error code the host asserts; compiled, the
    outlined program computes what the original did."""
    x = RNG.standard_normal(37).astype(np.float32)
    y = RNG.standard_normal(37).astype(np.float32)
    split = run_pipeline(parse_module(CPU_REGION), "split-host-device")
    assert "cf.assert" in str(split) and "@saxpy_kernel" in str(split)
    for module in (parse_module(CPU_REGION), split):
        out = y.copy()
        compile_cpu(module).function("saxpy")(x, out, 2.0)
        np.testing.assert_allclose(out, 2.0 * x + y, rtol=1e-5, atol=1e-6)


def test_folding_keeps_results():
    text = (
        Path(__file__).parent
        / "filecheck"
        / "transforms"
        / "fold-device-call-results-launch.mlir"
    ).read_text()
    a = RNG.standard_normal(512).astype(np.float32)
    for module in (
        parse_module(text),
        run_pipeline(parse_module(text), "fold-device-call-results"),
    ):
        out = a.copy()
        run_prim_func(module, "main", out)
        np.testing.assert_allclose(out, 2 * a, rtol=1e-6)


def device_subroutine(public: bool) -> str:
    """TVM's test_call_to_device_subroutine for cuda: a host `main` calls a
    subroutine whose thread-bound loop stores `2 * val`."""
    visibility = "" if public else "private "
    return f"""
tir.prim_func @main(%a: memref<1xf32>) {{
  %v = arith.constant 42.0 : f32
  tir.call @subroutine(%a, %v) : (memref<1xf32>, f32) -> ()
}}
tir.prim_func {visibility}@subroutine(%a: memref<1xf32>, %v: f32) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tir.for %i = %c0 to %c1 step %c1 thread_binding "threadIdx.x" {{
    %two = arith.constant 2.0 : f32
    %x = arith.mulf %two, %v : f32
    memref.store %x, %a[%c0] : memref<1xf32>
  }}
}}
"""


@pytest.mark.parametrize("public", [True, False], ids=["external", "internal"])
def test_host_main_calls_a_device_subroutine(public: bool):
    """A public subroutine is entered through the host API: `main` keeps
    calling it on the host and it launches its own kernel; a private one is
    part of `main`'s kernel."""
    module = run_pipeline(parse_module(device_subroutine(public)), PIPELINE)
    main = next(op for op in module.ops if op.sym_name.data == "main")
    if public:
        assert "tir.call @subroutine" in str(main) and "tir.target_region" not in str(
            main
        )
        assert "tir.launch @subroutine_kernel" in str(module)
    else:
        assert "tir.launch @main_kernel" in str(main) and "@subroutine" not in str(
            module
        )
    a = np.zeros(1, np.float32)
    run_prim_func(module, "main", a)
    assert a[0] == 84.0


def test_cpu_calls_ext_dev_by_symbol():
    """TVM PR #14985: a CPU caller reaches an `ext_dev` callee with an
    extern call, not a launch (no built-in kind is `ext_dev`, so one is made)."""
    register_target_kind(TargetKind("test_ext_dev", DeviceType.ext_dev, keys=("cpu",)))
    module = parse_module(
        """
        tir.prim_func @main(%a: memref<4xf32>) target #target.target<"llvm"> {
          tir.call @accel(%a) : (memref<4xf32>) -> ()
        }
        tir.prim_func private @accel(%a: memref<4xf32>) target #target.target<"test_ext_dev"> {
        }
        """
    )
    text = str(run_pipeline(module, "lower-device-kernel-launch"))
    assert 'tir.call_extern "accel"(%a)' in text
    assert "tir.prim_func @accel" in text and "tir.launch" not in text


def test_bind_target_bool_options_are_spelled_out():
    """A bool option is `true`/`false`/`1`/`0`; anything else is an error, not
    a silent false (no built-in kind has a bool option, so one is made)."""
    register_target_kind(
        TargetKind("test_bool_kind", DeviceType.cpu, {"fast": OptionSpec(bool)})
    )
    for text, value in (("true", True), ("1", True), ("false", False), ("0", False)):
        target = parse_target_string(f"test_bool_kind -fast={text}")
        assert target.options["fast"] is value  # type: ignore[index]
    with pytest.raises(
        ValueError, match="option 'fast' takes true, false, 1 or 0, not 'yes'"
    ):
        parse_target_string("test_bool_kind -fast=yes")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("llvm,cuda", [("llvm", {}), ("cuda", {})]),
        # a comma after a list option's value continues the list
        (
            "llvm -mattr=+avx2,+fma -num_threads=2,cuda -arch=sm_80",
            [
                ("llvm", {"mattr": ["+avx2", "+fma"], "num_threads": 2}),
                ("cuda", {"arch": "sm_80"}),
            ],
        ),
    ],
)
def test_target_lists_use_the_target_string_syntax(
    text: str, expected: list[tuple[str, dict[str, object]]]
) -> None:
    """`plan-devices{targets=...}` and `hetero.compile(targets=...)` take the
    same target strings as `bind-target` (hetero.dialects.target.target_string)."""
    from hetero.dialects.target.target_string import parse_target_list

    assert [(t.kind_name.data, t.options) for t in parse_target_list(text)] == expected


def test_compile_targets_take_options() -> None:
    """`hetero.compile(targets=[...])` fills the configuration with options."""
    import numpy as np

    import hetero
    from hetero.utils.diagnostics import HeteroError

    text = (
        "builtin.module {\n  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "    %r = relay.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
        "    relay.return %r : tensor<4xf32>\n  }\n}\n"
    )
    compiled = hetero.compile(text, targets=["llvm -num_threads=2 -opt_level=2"])
    np.testing.assert_array_equal(
        compiled(np.ones(4, np.float32)), np.full(4, 2, np.float32)
    )
    with pytest.raises(
        HeteroError, match="unknown option 'threads' for target kind 'llvm'"
    ):
        hetero.compile(text, targets=["llvm -threads=2"])
