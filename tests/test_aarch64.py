"""AArch64 as a target on any host: an `llvm` target with `mtriple =
"aarch64-linux-gnu"` gets the NEON schedules (128-bit vectors, 32
registers, `te/schedules/isa.py`) and AArch64 machine code, checked
as assembly on any host through LLVM's cross targets.  The code runs outside
Python, linked with a C harness and the runtime (`runtime_object`): on this
host with its C compiler, and under `qemu-aarch64` where Debian's
`qemu-user` and `gcc-aarch64-linux-gnu` are installed (skipped elsewhere)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import f32

import hetero
from hetero.context import parse_module
from hetero.dialects.target import TargetAttr
from hetero.interpreter.relay import run
from hetero.lowering.llvm_codegen import CpuTarget
from hetero.targets import cpu as cpu_target
from hetero.targets.cpu import simd_bits
from hetero.te.schedules.cpu_conv2d_lanes import lane_tiles
from hetero.te.schedules.cpu_tiles import tiles
from hetero.te.schedules.isa import VectorIsa, vector_isa
from hetero.utils.diagnostics import HeteroError

AARCH64 = "aarch64-linux-gnu"
NEON = TargetAttr("llvm", {"mtriple": AARCH64})
RNG = np.random.default_rng(0)

X86 = re.compile(r"%(r[a-z0-9]+|e[a-z]x|[xyz]mm\d+)\b|\bv(fmadd|broadcast|mov)\w*")
"""x86 registers and AVX mnemonics in assembly text."""

FMLA = re.compile(r"\bfmla\tv\d+\.4s, v\d+\.4s, v\d+\.(4s|s\[\d\])")
"""A NEON multiply-add of four f32 lanes, by a vector or by one lane."""


def _t(shape: tuple[int, ...]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def _program(params: str, result: str, body: str, triple: str = AARCH64) -> str:
    """`@main(params) -> result { body }` for an `llvm` target of `triple`
    (empty: the host's) and two threads."""
    options = f'mtriple = "{triple}", ' if triple else ""
    target = f'#target.target<"llvm", {{{options}num_threads = 2}}>'
    return (
        f"builtin.module attributes {{target.config = #target.config<[{target}]>}} {{\n"
        f"  relay.func @main({params}) -> {result} {{\n    {body}\n"
        f"    relay.return %r : {result}\n  }}\n}}\n"
    )


def _constant(name: str, shape: tuple[int, ...]) -> str:
    """`%name = relay.constant` of random values (constant weights are
    packed for the schedules, as a network's are)."""
    value = RNG.standard_normal(shape).astype(np.float32)
    hexed = "0x" + np.ascontiguousarray(value, "<f4").tobytes().hex().upper()
    return f'%{name} = relay.constant dense<"{hexed}"> : {_t(shape)}'


def _reduction_step(assembly: str) -> str:
    """The basic block of `assembly` with the most `fmla`s, up to its branch."""
    blocks = re.split(r"\n\.LBB\S*:", assembly)
    step = max(blocks, key=lambda block: len(FMLA.findall(block)))
    return re.split(r"\n\t(?:b|b\.\w+|cbn?z|tbn?z)\t", step)[0]


def test_neon_isa_on_any_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """An aarch64 target is NEON's 128 bits and 32 registers whatever the
    host's features (here made to look AVX-512) or an x86 `mattr` say, and
    its GEMM tile is 12 rows of two vectors."""
    monkeypatch.setattr(cpu_target, "_host_features", lambda: {"avx512f": True})
    for target in (
        NEON,
        TargetAttr("llvm", {"mtriple": AARCH64, "mattr": ["+avx512f"]}),
    ):
        assert simd_bits(target) == 128
        assert vector_isa(target) == VectorIsa(128, 32, False)
    t = tiles(NEON, f32)
    assert (t.lanes, t.mr, t.nr) == (4, 12, 8)


def test_compile_cache_key_has_the_triple() -> None:
    """The host's code and AArch64's are cached apart (`cache_key` hashes
    the target machine's triple)."""
    from hetero.lowering.compile_cache import cache_key

    module = parse_module("tir.prim_func @f(%x: memref<4xf32>) {\n}")
    assert cache_key(module, CpuTarget()) != cache_key(
        module, CpuTarget(mtriple=AARCH64)
    )


def test_unknown_architecture_is_a_diagnostic() -> None:
    riscv = TargetAttr("llvm", {"mtriple": "riscv64-linux-gnu"})
    with pytest.raises(HeteroError, match="know no riscv64 vector ISA"):
        vector_isa(riscv)
    with pytest.raises(HeteroError, match="LLVM has no target for mtriple 'nowhere-x'"):
        CpuTarget(mtriple="nowhere-x")


def test_gemm_micro_kernel_is_neon_fmla() -> None:
    """The GEMM's reduction step is the register tile's FMAs on `v`
    registers, each `a` scalar multiplied as a lane (`v.s[0]`), and no
    register to or from the stack; nothing of x86 in the whole module."""
    t = tiles(NEON, f32)
    a, b = (5 * t.mr, 64), (64, 4 * t.nr)  # whole row tiles: `gemm` keeps `mr` rows
    out = (a[0], b[1])
    body = f"%r = relay.matmul %a, %b : ({_t(a)}, {_t(b)}) -> {_t(out)}"
    assembly = hetero.compile(
        _program(f"%a: {_t(a)}, %b: {_t(b)}", _t(out), body)
    ).native.assembly()
    step = _reduction_step(assembly)
    assert len(FMLA.findall(step)) == t.mr * t.nr // t.lanes
    assert re.search(r"\.s\[0\]", step)
    assert "[sp" not in step
    assert not X86.search(assembly)


@pytest.mark.parametrize(
    "x, w, attrs",
    [
        # ResNet-50's strided 3x3 (channels in the lanes, stride-phase planes)
        (
            (1, 128, 56, 56),
            (128, 128, 3, 3),
            "strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>",
        ),
        # a 1x1 convolution with a long reduction
        ((1, 1024, 14, 14), (256, 1024, 1, 1), ""),
    ],
)
def test_conv2d_reduction_step_stays_in_registers(
    x: tuple[int, ...], w: tuple[int, ...], attrs: str
) -> None:
    """A conv2d's reduction step is one `fmla` per accumulator vector of its
    channel-lanes tile (up to 6 pixels x 4 vectors), with no stack access:
    the NEON tile counts a register for each pixel's scalar (7 pixels,
    counting none, spilled)."""
    stride = 2 if "strides" in attrs else 1
    out = (1, w[0], x[2] // stride, x[3] // stride)
    row_width = out[3] if "padding" in attrs else 0  # tiles within a row
    body = (
        f"{_constant('w', w)}\n"
        f"    %r = relay.nn.conv2d %x, %w {{{attrs}}} : ({_t(x)}, {_t(w)}) -> {_t(out)}"
    )
    assembly = hetero.compile(_program(f"%x: {_t(x)}", _t(out), body)).native.assembly()
    step = _reduction_step(assembly)
    t = lane_tiles(NEON, f32, out[2] * out[3], row_width=row_width)
    assert len(FMLA.findall(step)) == t.mr * t.nr // t.lanes
    assert "[sp" not in step
    assert not X86.search(assembly)


X, OUT = (1, 8, 16, 16), (1, 32)
NETWORK = f"""{_constant("w1", (16, 8, 3, 3))}
    {_constant("b1", (16,))}
    {_constant("w2", (16, 16, 3, 3))}
    {_constant("w3", (32, 256))}
    %half = relay.constant dense<0.5> : tensor<f32>
    %0 = relay.nn.conv2d %x, %w1 {{padding = array<i64: 1, 1, 1, 1>}} : ({_t(X)}, {_t((16, 8, 3, 3))}) -> {_t((1, 16, 16, 16))}
    %1 = relay.nn.bias_add %0, %b1 : ({_t((1, 16, 16, 16))}, {_t((16,))}) -> {_t((1, 16, 16, 16))}
    %2 = relay.relu %1 : {_t((1, 16, 16, 16))}
    %3 = relay.nn.max_pool2d %2 {{pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}} : ({_t((1, 16, 16, 16))}) -> {_t((1, 16, 8, 8))}
    %4 = relay.nn.conv2d %3, %w2 {{padding = array<i64: 1, 1, 1, 1>}} : ({_t((1, 16, 8, 8))}, {_t((16, 16, 3, 3))}) -> {_t((1, 16, 8, 8))}
    %5 = relay.sigmoid %4 : {_t((1, 16, 8, 8))}
    %6 = relay.nn.avg_pool2d %5 {{pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}} : ({_t((1, 16, 8, 8))}) -> {_t((1, 16, 4, 4))}
    %7 = relay.flatten %6 : ({_t((1, 16, 4, 4))}) -> {_t((1, 256))}
    %8 = relay.nn.dense %7, %w3 : ({_t((1, 256))}, {_t((32, 256))}) -> {_t(OUT)}
    %9 = relay.erf %8 : {_t(OUT)}
    %10 = relay.tanh %9 : {_t(OUT)}
    %11 = relay.exp %10 : {_t(OUT)}
    %12 = relay.multiply %11, %half : ({_t(OUT)}, tensor<f32>) -> {_t(OUT)}
    %r = relay.nn.softmax %12 : {_t(OUT)}"""
"""Convolutions (direct and Winograd), pools, a dense layer, inline math
(`approximate-math`) and a softmax."""


def test_network_compiles_to_aarch64_code() -> None:
    """The whole program is AArch64 code with NEON arithmetic and no call of
    the C library's math; the object is an AArch64 ELF file; calling it
    here is refused with the reason."""
    compiled = hetero.compile(_program(f"%x: {_t(X)}", _t(OUT), NETWORK))
    assembly = compiled.native.assembly()
    assert FMLA.search(assembly)
    assert not re.search(r"\bbl\t(expf|logf|tanhf|erff)\b", assembly)
    assert not X86.search(assembly)
    elf = compiled.native.emit_object()
    assert elf[:4] == b"\x7fELF" and int.from_bytes(elf[18:20], "little") == 183
    with pytest.raises(ValueError, match=f"compiled for {AARCH64}, which this host"):
        compiled(np.zeros(X, np.float32))


HARNESS = """#include <stdio.h>
#include <stdlib.h>
void {symbol}({params});
static const long bytes[{count}] = {{{sizes}}};
int main(int argc, char **argv) {{
  void *args[{count}];
  FILE *in = fopen(argv[1], "rb"), *out = fopen(argv[2], "wb");
  for (int i = 0; i < {count}; i++) {{
    args[i] = aligned_alloc(64, (bytes[i] + 63) / 64 * 64);
    if (i < {inputs} && fread(args[i], 1, bytes[i], in) != (size_t)bytes[i]) return 2;
  }}
  {symbol}({call});
  for (int i = {inputs}; i < {count}; i++) fwrite(args[i], 1, bytes[i], out);
  return fclose(out) != 0;
}}
"""
"""A C program that calls a compiled host function with buffers read from
a file (inputs, then constants) and writes its outputs to another."""


def _run_outside_python(
    triple: str, compiler: list[str], runner: list[str], tmp_path: Path
) -> None:
    """Compile `NETWORK` for `triple`, link its object with `HARNESS` and the
    runtime, run it with `runner` and compare with the interpreter."""
    text = _program(f"%x: {_t(X)}", _t(OUT), NETWORK, triple)
    compiled = hetero.compile(text)
    x = RNG.standard_normal(X).astype(np.float32)
    inputs = [x, *compiled.constants]
    sizes = [a.nbytes for a in inputs] + [4 * int(np.prod(OUT))]
    (tmp_path / "main.c").write_text(
        HARNESS.format(
            symbol=compiled.symbol,
            params=", ".join(["void *"] * len(sizes)),
            count=len(sizes),
            sizes=", ".join(map(str, sizes)),
            inputs=len(inputs),
            call=", ".join(f"args[{i}]" for i in range(len(sizes))),
        )
    )
    (tmp_path / "model.o").write_bytes(compiled.native.emit_object())
    (tmp_path / "runtime.o").write_bytes(compiled.native.runtime_object())
    (tmp_path / "in.bin").write_bytes(b"".join(a.tobytes() for a in inputs))
    files = [str(tmp_path / name) for name in ("main.c", "model.o", "runtime.o")]
    program = str(tmp_path / "program")
    subprocess.run([*compiler, "-o", program, *files, "-lpthread"], check=True)
    subprocess.run(
        [*runner, program, str(tmp_path / "in.bin"), str(tmp_path / "out.bin")],
        check=True,
        timeout=120,
    )
    got = np.fromfile(tmp_path / "out.bin", np.float32).reshape(OUT)
    np.testing.assert_allclose(got, run(parse_module(text), x), rtol=1e-4, atol=1e-6)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc)")
def test_host_object_runs_outside_python(tmp_path: Path) -> None:
    """The host's object and `runtime_object`, linked by the C compiler."""
    _run_outside_python("", ["cc"], [], tmp_path)


@pytest.mark.skipif(
    shutil.which("qemu-aarch64") is None
    or shutil.which("aarch64-linux-gnu-gcc") is None,
    reason="needs qemu-aarch64 and aarch64-linux-gnu-gcc "
    "(apt-get install qemu-user gcc-aarch64-linux-gnu)",
)
def test_aarch64_object_runs_under_qemu(tmp_path: Path) -> None:
    """The AArch64 object and runtime, linked by the cross compiler, run
    under qemu-aarch64 (its parallel loops on two threads)."""
    _run_outside_python(
        AARCH64,
        ["aarch64-linux-gnu-gcc"],
        ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"],
        tmp_path,
    )
