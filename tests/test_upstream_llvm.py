"""The `llvm`-dialect modules hetero emits for a compiled program are upstream
MLIR that `mlir-translate-22 --mlir-to-llvmir` accepts, for AVX2 and AVX-512
targets alike (AVX-512's masked remainders included), three programs chosen
for their remainders and a sample of the relay property-test strategy's, and
hetero's own
translation to LLVM IR writes the masked intrinsics in the signature of
llvmlite's LLVM (docs/lowering.md, on masked remainders).

The `mlir-translate` tests skip where the tool is not installed
(`apt-get install mlir-22-tools`).
"""

from __future__ import annotations

import shutil
import subprocess
from io import StringIO

import pytest
from hypothesis import HealthCheck, assume, given, settings
from isas import ISAS, options
from relay_programs import programs
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from hetero.context import parse_module
from hetero.dialects import tir
from hetero.driver import lower_to_tir
from hetero.lowering.convert_tir_to_scf import ConvertTirToScfPass
from hetero.lowering.cuda_codegen import has_gpu_functions
from hetero.lowering.llvmir import ALIGN_ATTRIBUTE, to_llvmlite
from hetero.lowering.parallel_launchers import define_launchers
from hetero.lowering.pipeline import lower_to_llvm
from hetero.utils.diagnostics import HeteroError

MLIR_TRANSLATE = shutil.which("mlir-translate-22")

PROGRAMS = {
    "exp, dense, softmax": (
        "%x: tensor<3x23xf32>, %w: tensor<5x23xf32>",
        "tensor<3x5xf32>",
        """%e = relay.exp %x : tensor<3x23xf32>
    %d = relay.nn.dense %e, %w : (tensor<3x23xf32>, tensor<5x23xf32>) -> tensor<3x5xf32>
    %r = relay.nn.softmax %d : tensor<3x5xf32>""",
    ),
    "conv2d, relu, max_pool2d": (
        "%x: tensor<1x3x13x13xf32>, %w: tensor<8x3x3x3xf32>",
        "tensor<1x8x5x5xf32>",
        """%c = relay.nn.conv2d %x, %w : (tensor<1x3x13x13xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x11x11xf32>
    %a = relay.relu %c : tensor<1x8x11x11xf32>
    %r = relay.nn.max_pool2d %a {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x8x11x11xf32>) -> tensor<1x8x5x5xf32>""",
    ),
    "integer cast, odd rows": (
        "%x: tensor<2x37xf32>",
        "tensor<2x37xi32>",
        "%r = relay.cast %x {dtype = i32} : (tensor<2x37xf32>) -> tensor<2x37xi32>",
    ),
}
"""Programs with rows no vector width divides: AVX-512 masks their remainders."""


def llvm_dialect(name: str, isa: str) -> ModuleOp:
    """The CPU code of `PROGRAMS[name]` for `isa` (`cpu_code`)."""
    params, result, body = PROGRAMS[name]
    config = f'#target.config<[#target.target<"llvm", {{{options(isa)}}}>]>'
    module = parse_module(
        f"builtin.module attributes {{target.config = {config}}} {{\n"
        f"  relay.func @main({params}) -> {result} {{\n    {body}\n"
        f"    relay.return %r : {result}\n  }}\n}}\n"
    )
    lower_to_tir(module)
    return cpu_code(module)


def cpu_code(module: ModuleOp) -> ModuleOp:
    """The `tir.prim_func`s of a lowered relay `module` as `compile_cpu`
    lowers them before LLVM: kernels, host function and parallel launchers."""
    code = ModuleOp([op.clone() for op in module.ops if isinstance(op, tir.PrimFuncOp)])
    ConvertTirToScfPass().apply(Context(), code)
    lower_to_llvm(code)
    define_launchers(code)
    return code


def generic(module: ModuleOp) -> str:
    out = StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    return out.getvalue()


def translate(code: ModuleOp) -> str:
    """`mlir-translate-22 --mlir-to-llvmir` of `code`: the LLVM IR it writes
    (a failed translation fails the test with the tool's message)."""
    assert MLIR_TRANSLATE is not None
    result = subprocess.run(
        [MLIR_TRANSLATE, "--mlir-to-llvmir"],
        input=generic(code),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.skipif(MLIR_TRANSLATE is None, reason="mlir-translate-22 is not installed")
@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("name", PROGRAMS)
def test_mlir_translate_accepts_the_emitted_llvm_dialect(name: str, isa: str) -> None:
    result = translate(llvm_dialect(name, isa))
    masked = "@llvm.masked.store" in result
    assert masked == (isa == "avx512"), "AVX-512 masks the remainders, AVX2 does not"


@pytest.mark.skipif(MLIR_TRANSLATE is None, reason="mlir-translate-22 is not installed")
@pytest.mark.parametrize("isa", ISAS)
@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(text=programs())
def test_mlir_translate_accepts_the_strategy_programs_cpu_code(
    isa: str, text: str
) -> None:
    """The property-test strategy's programs (`relay_programs.py`), their
    `llvm` target pinned to `isa`: those that compile for the CPU alone
    (no conflicting annotations, no CUDA device) are upstream-valid too."""
    pinned = f'#target.target<"llvm", {{{options(isa)}}}>'
    module = parse_module(text.replace('#target.target<"llvm">', pinned))
    try:
        lower_to_tir(module)
    except HeteroError as e:
        assume("conflicting devices" not in e.message)
        raise
    assume(not has_gpu_functions(module))
    translate(cpu_code(module))


@pytest.mark.parametrize("name", PROGRAMS)
def test_llvmlite_translation_writes_this_llvms_masked_signature(name: str) -> None:
    """LLVM 21 on: `ptr align 4` and no alignment operand (the older form
    parses there by auto-upgrade only); before: the `i32` operand."""
    text = str(
        to_llvmlite(llvm_dialect(name, "avx512"), triple="x86_64-unknown-linux-gnu")
    )
    calls = [
        line for line in text.splitlines() if "call" in line and "llvm.masked." in line
    ]
    assert calls
    for call in calls:
        assert ("ptr align " in call) == ALIGN_ATTRIBUTE, call
        assert (", i32 " in call) != ALIGN_ATTRIBUTE, call
