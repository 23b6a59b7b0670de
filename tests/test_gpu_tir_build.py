"""One-step builds of TIR modules with GPU functions: `compile_cuda` runs the
TIR target passes (private helpers inlined, device regions outlined, kernels
launched), and `hetero-translate` binds missing targets first.

Everything up to PTX happens, and is checked, without a GPU; running a
program needs one (skipped here, saying why).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_tir_target_passes import PIPELINE, device_subroutine, run_pipeline

from hetero.context import parse_module
from hetero.lowering.cuda_codegen import compile_cuda
from hetero.runtime import cuda
from hetero.tools.hetero_translate import main as translate

NO_GPU = cuda.unavailable_reason()
needs_gpu = pytest.mark.skipif(NO_GPU is not None, reason=f"needs a GPU: {NO_GPU}")

GPU_FUNCTION = '#target.target<"cuda", host = #target.target<"llvm">>'

HELPER_IN_THREAD_LOOPS = f"""
tir.prim_func @double(%a: memref<256xf32>, %b: memref<256xf32>) target {GPU_FUNCTION} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  tir.for %bx = %c0 to %c4 step %c1 thread_binding "blockIdx.x" {{
    tir.for %tx = %c0 to %c64 step %c1 thread_binding "threadIdx.x" {{
      %base = arith.muli %bx, %c64 : index
      %i = arith.addi %base, %tx : index
      %x = memref.load %a[%i] : memref<256xf32>
      %y = tir.call @twice(%x) : (f32) -> f32
      memref.store %y, %b[%i] : memref<256xf32>
    }}
  }}
}}
tir.prim_func private @twice(%x: f32) -> f32 {{
  %y = arith.addf %x, %x : f32
  tir.return %y : f32
}}
"""
"""A GPU function calling a private helper (without a target) per thread."""

HELPER_OUTSIDE_THREAD_LOOPS = f"""
tir.prim_func @scale(%a: memref<64xf32>, %s: f32) target {GPU_FUNCTION} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %t = tir.call @twice(%s) : (f32) -> f32
  tir.for %tx = %c0 to %c64 step %c1 thread_binding "threadIdx.x" {{
    %x = memref.load %a[%tx] : memref<64xf32>
    %y = arith.mulf %x, %t : f32
    memref.store %y, %a[%tx] : memref<64xf32>
  }}
}}
tir.prim_func private @twice(%x: f32) -> f32 target #target.target<"cuda"> {{
  %y = arith.addf %x, %x : f32
  tir.return %y : f32
}}
"""
"""The helper's result is needed before the thread loop: a launch cannot
return it, so the helper joins the function (and runs on the host)."""


def test_helper_called_in_thread_loops_is_inlined_into_the_kernel():
    program = compile_cuda(parse_module(HELPER_IN_THREAD_LOOPS))
    ptx = "\n".join(k.ptx for k in program.kernels)
    assert ".visible .entry double_kernel(" in ptx
    assert "twice" not in ptx and "call" not in ptx


def test_helper_called_outside_thread_loops_joins_the_host_code():
    program = compile_cuda(parse_module(HELPER_OUTSIDE_THREAD_LOOPS))
    ptx = "\n".join(k.ptx for k in program.kernels)
    assert ".visible .entry scale_kernel(" in ptx and "twice" not in ptx
    host = program.host.llvm_ir()
    assert "fadd float" in host and "@twice" not in host


@pytest.mark.parametrize("public", [True, False], ids=["external", "internal"])
def test_translate_binds_targets_and_emits_ptx(public: bool, tmp_path: Path, capsys):
    """`--targets cuda` binds `cuda` with host `llvm` where a function has no
    target, as TVM's build does; the host `main` calls its subroutine."""
    path = tmp_path / "subroutine.mlir"
    path.write_text(device_subroutine(public))
    assert translate([str(path), "--emit=ptx", "--targets", "cuda"]) == 0
    kernel = "subroutine_kernel" if public else "main_kernel"
    assert f".visible .entry {kernel}(" in capsys.readouterr().out
    assert translate([str(path), "--emit=llvm-ir", "--targets", "cuda"]) == 0
    host = capsys.readouterr().out
    assert "define void @main(" in host
    assert ("define void @subroutine(" in host) == public


@needs_gpu
@pytest.mark.parametrize("public", [True, False], ids=["external", "internal"])
def test_device_subroutine_runs_on_the_gpu(public: bool):
    """TVM's test_call_to_device_subroutine on cuda: `main` stores 2 * 42."""
    module = run_pipeline(
        parse_module(device_subroutine(public)), PIPELINE.split(",")[0]
    )
    a = np.zeros(1, np.float32)
    compile_cuda(module).function("main")(a)
    print(f"main stored {a[0]}")
    assert a[0] == 84.0
