"""hetero-translate: relay and tir modules to LLVM IR, assembly and objects."""

from pathlib import Path

from hetero.tools.hetero_translate import main

VADD = """
tir.prim_func @vadd(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>) {
  %lo = arith.constant 0 : index
  %hi = arith.constant 64 : index
  %one = arith.constant 1 : index
  tir.for %i = %lo to %hi step %one vectorized {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = memref.load %b[%i] : memref<64xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %c[%i] : memref<64xf32>
  }
}
"""

RELAY = """
relay.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = relay.nn.softmax %x : tensor<4x8xf32>
  relay.return %0 : tensor<4x8xf32>
}
"""


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "in.mlir"
    path.write_text(text)
    return str(path)


def test_relay_module_goes_through_the_whole_pipeline(tmp_path: Path, capsys):
    assert main([_file(tmp_path, RELAY), "--emit=llvm-ir"]) == 0
    ir = capsys.readouterr().out
    assert "define void @main_host(" in ir and "@fused_nn_softmax_tir(" in ir


def test_tir_module_to_vector_assembly(tmp_path: Path, capsys):
    out = tmp_path / "vadd.s"
    assert main([_file(tmp_path, VADD), "--emit=asm", "-o", str(out)]) == 0
    assembly = out.read_text()
    assert "vadd:" in assembly and "vaddps" in assembly


def test_object_file(tmp_path: Path):
    out = tmp_path / "vadd.o"
    assert main([_file(tmp_path, VADD), "--emit=obj", "-o", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x7fELF"


def test_errors_are_located_and_write_nothing(tmp_path: Path, capsys):
    out = tmp_path / "never.ll"
    bad = VADD.replace("arith.addf %x, %y : f32", "arith.addf %x, %nope : f32")
    assert main([_file(tmp_path, bad), "--emit=llvm-ir", "-o", str(out)]) == 1
    assert "in.mlir:" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob(".hetero-*"))


GPU = """
builtin.module attributes {target.config = #target.config<[#target.target<"cuda">, #target.target<"llvm">], fallback = cuda>} {
  relay.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %0 = relay.nn.softmax %x : tensor<4x8xf32>
    relay.return %0 : tensor<4x8xf32>
  }
}
"""


def test_gpu_program_kernels_as_ptx_and_host_as_llvm_ir(tmp_path: Path, capsys):
    assert main([_file(tmp_path, GPU), "--emit=ptx"]) == 0
    ptx = capsys.readouterr().out
    assert (
        ".target sm_90" in ptx and ".visible .entry fused_nn_softmax_tir_kernel(" in ptx
    )
    assert main([_file(tmp_path, GPU), "--emit=llvm-ir"]) == 0
    assert "define void @main_host(" in capsys.readouterr().out


def test_ptx_of_a_cpu_only_module_is_an_error(tmp_path: Path, capsys):
    assert main([_file(tmp_path, VADD), "--emit=ptx"]) == 1
    assert "no GPU functions" in capsys.readouterr().err


def test_dynamic_shapes_ask_for_specialization(tmp_path: Path, capsys):
    text = RELAY.replace("4x8", "?x8")
    assert main([_file(tmp_path, text), "--emit=llvm-ir"]) == 1
    assert "specialize-shapes" in capsys.readouterr().err
