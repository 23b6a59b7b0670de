"""Loops that LLVM unrolls: `convert-tir-to-scf` annotates small constant
`unrolled` loops `#llvm.loop_annotation<unroll = #llvm.loop_unroll<full =
true>>`, and `convert-scf-to-cf`, `convert-cf-to-llvm` and
`hetero.lowering.llvmir` carry the annotation to `!llvm.loop` metadata on the
loop's back edge.  The FileCheck tests show each step (lowering/
lower-to-llvm-loop-annotation.mlir, tools/hetero-translate-loop-*.mlir,
tools/hetero-translate-unroll.mlir); here: the attribute's syntax, the
`scf` → `cf` step alone, a bad annotation, register tiles against NumPy, and
a GPU kernel's PTX."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import cf, scf
from xdsl.dialects.builtin import UnitAttr
from xdsl.parser import Parser

from hetero.context import parse_module
from hetero.dialects.llvm_attrs import (
    FULL_UNROLL,
    LOOP_ANNOTATION,
    LoopAnnotationAttr,
    LoopUnrollAttr,
)
from hetero.lowering.convert_scf_to_cf import ConvertScfToCfPass
from hetero.lowering.convert_tir_to_scf import ConvertTirToScfPass
from hetero.lowering.cpu_codegen import compile_cpu
from hetero.lowering.gpu_codegen import compile_gpu
from hetero.lowering.llvmir import to_llvmlite
from hetero.lowering.scf_loops import MAX_UNROLL
from hetero.utils.diagnostics import HeteroError

RNG = np.random.default_rng(7)


def test_annotation_prints_and_parses_as_in_mlir() -> None:
    text = "#llvm.loop_annotation<unroll = #llvm.loop_unroll<full = true>>"
    assert str(FULL_UNROLL) == text
    ctx = Context()
    ctx.load_attr_or_type(LoopUnrollAttr)
    ctx.load_attr_or_type(LoopAnnotationAttr)
    assert Parser(ctx, text).parse_attribute() == FULL_UNROLL


UNROLLED = """
tir.prim_func @f(%a: memref<4xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  tir.for %i = %c0 to %c4 step %c1 unrolled {
    memref.store %x, %a[%i] : memref<4xf32>
  }
}
"""


def test_scf_to_cf_moves_llvm_attributes_to_the_back_edge() -> None:
    module = parse_module(UNROLLED)
    ConvertTirToScfPass().apply(Context(), module)
    (loop,) = [op for op in module.walk() if isinstance(op, scf.ForOp)]
    loop.attributes["not_for_llvm"] = UnitAttr()
    ConvertScfToCfPass().apply(Context(), module)
    branches = [op for op in module.walk() if isinstance(op, cf.BranchOp)]
    entry, back_edge = branches
    # The entry branch and the back edge both go to the loop header.
    assert entry.successor is back_edge.successor
    assert back_edge.attributes == {LOOP_ANNOTATION: FULL_UNROLL}
    assert entry.attributes == {}


def test_translation_rejects_a_loop_annotation_of_another_kind() -> None:
    module = parse_module(
        "llvm.func @f() {\n"
        "  llvm.br ^bb1 {loop_annotation = 1 : i64}\n"
        "^bb1:\n"
        "  llvm.return\n"
        "}\n",
        "bad.mlir",
    )
    with pytest.raises(HeteroError, match="expected a #llvm.loop_annotation") as e:
        to_llvmlite(module, triple="x86_64-unknown-linux-gnu")
    assert "bad.mlir:2" in str(e.value)


TILE = """
tir.prim_func @tile(%a: memref<?x{m}xf32>, %b: memref<?x{n}xf32>, %c: memref<{m}x{n}xf32>, %k: index) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = arith.constant {m} : index
  %n = arith.constant {n} : index
  %zero = arith.constant 0.0 : f32
  %acc = tir.alloc : memref<{m}x{n}xf32, "local">
  tir.for %i = %c0 to %m step %c1 unrolled {{
    tir.for %j = %c0 to %n step %c1 vectorized {{
      memref.store %zero, %acc[%i, %j] : memref<{m}x{n}xf32, "local">
    }}
  }}
  tir.for %p = %c0 to %k step %c1 {{
    tir.for %i = %c0 to %m step %c1 unrolled {{
      %x = memref.load %a[%p, %i] : memref<?x{m}xf32>
      tir.for %j = %c0 to %n step %c1 vectorized {{
        %y = memref.load %b[%p, %j] : memref<?x{n}xf32>
        %t = arith.mulf %x, %y fastmath<contract> : f32
        %s = memref.load %acc[%i, %j] : memref<{m}x{n}xf32, "local">
        %u = arith.addf %s, %t fastmath<contract> : f32
        memref.store %u, %acc[%i, %j] : memref<{m}x{n}xf32, "local">
      }}
    }}
  }}
  tir.for %i = %c0 to %m step %c1 unrolled {{
    tir.for %j = %c0 to %n step %c1 vectorized {{
      %s = memref.load %acc[%i, %j] : memref<{m}x{n}xf32, "local">
      memref.store %s, %c[%i, %j] : memref<{m}x{n}xf32>
    }}
  }}
}}
"""


@pytest.mark.parametrize(
    "m, n",
    [(1, 8), (12, 32), (6, 19), (MAX_UNROLL + 4, 16)],  # the last: not annotated
)
def test_register_tile_matches_numpy(m: int, n: int) -> None:
    k = 37
    a = RNG.standard_normal((k, m)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    compile_cpu(parse_module(TILE.format(m=m, n=n))).function("tile")(a, b, c, k)
    np.testing.assert_allclose(c, a.T @ b, rtol=1e-4, atol=1e-4)


DIVISIONS = 60
"""A loop body this long is too long for LLVM's unrolling heuristics."""

GPU_KERNEL = """
tir.prim_func @k(%a: memref<64x8xf32>, %o: memref<64xf32>) target #target.target<"cuda", {{arch = "sm_80"}}> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  tir.for %tx = %c0 to %c64 step %c1 thread_binding "threadIdx.x" {{
    tir.for %u = %c0 to %c8 step %c1 {kind} {{
      %v = memref.load %a[%tx, %u] : memref<64x8xf32>
      %s0 = memref.load %o[%tx] : memref<64xf32>
{body}
      memref.store %s{n}, %o[%tx] : memref<64xf32>
    }}
  }}
}}
"""


@pytest.mark.parametrize("kind, copies, branches", [("unrolled", 8, 0), ("", 1, 1)])
def test_gpu_kernel_loop_is_unrolled_by_llvm(
    kind: str, copies: int, branches: int
) -> None:
    """The annotation reaches LLVM's NVPTX pipeline too; a serial loop of the
    same body stays a loop."""
    body = "\n".join(
        f"      %s{i + 1} = arith.divf %s{i}, %v : f32" for i in range(DIVISIONS)
    )
    text = GPU_KERNEL.format(kind=kind, body=body, n=DIVISIONS)
    [ptx] = compile_gpu(parse_module(text))
    assert ptx.ptx.count("div.rn.f32") == copies * DIVISIONS
    assert ptx.ptx.count("bra") == branches
