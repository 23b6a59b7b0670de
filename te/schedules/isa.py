"""What the CPU schedules need to know of a target's vector instruction set.

A register tile is sized by the vector registers it may take (its
accumulators, the vectors it loads, the scalar it broadcasts), and a
register tile that needs one register more than the ISA has spills on every
reduction step.  The facts differ per ISA, and a schedule tuned for one
spills or idles on the other:

| ISA | vector bits | registers | FMA takes a broadcast from memory |
|---|---|---|---|
| AVX-512 | 512 | 32 zmm | yes (`vfmadd231ps (mem){1to16}`) |
| AVX2 + FMA | 256 | 16 ymm | no (`vbroadcastss` into a register first) |
| SSE2 | 128 | 16 xmm | no |
| AArch64 NEON | 128 | 32 v | no (see below) |

NEON's by-element `fmla v0.4s, v1.4s, v2.s[0]` multiplies by one lane of a
register, so a broadcast needs no instruction of its own, but no NEON
instruction takes a memory operand: LLVM loads each scalar of a register
tile into a register (`ldr s2, [x0, #8]`, or `ld1r` for the first) and
multiplies by its lane 0.  The scalar takes a register, as with AVX2.
Counted as an operand (no register), the channel-lanes tile grew to 7
pixels x 4 vectors, 28 accumulators + 4 weights + the scalar = 33 of 32
registers, and its reduction step moved accumulators to and from the stack
(a 3x3 conv of 64 channels at 56x56: 7 stack accesses among 28 `fmla`s);
counted as a register, 6 pixels keep all in registers, and pixel tiles are
two vectors wide, each scalar shared by two `fmla`s (LLVM 22's AArch64
code generator, llvmlite 0.50).

The architecture comes from the `llvm` target's `mtriple` (else the host's)
and the width from its `mattr` (else the host's features:
`hetero.targets.cpu.simd_bits`), so a target pinned to
`-avx512f` gets the AVX2 schedules on any host, and one pinned to
`aarch64-linux-gnu` NEON's.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import Attribute

from hetero.dialects.target import TargetAttr
from hetero.targets.cpu import simd_bits, target_arch
from hetero.utils.diagnostics import HeteroError


@dataclass(frozen=True)
class VectorIsa:
    """A CPU's vector registers, as the schedules size tiles by them."""

    bits: int
    """Width of one vector register."""
    registers: int
    """Vector registers a loop may keep values in."""
    broadcast_operand: bool
    """Whether a multiply-add takes a scalar broadcast from memory as its
    operand; if not, each broadcast value takes a register of its own."""

    def lanes(self, element_type: Attribute) -> int:
        """Elements of `element_type` in one vector register."""
        assert isinstance(element_type, AnyFloat)
        return self.bits // element_type.bitwidth

    def broadcast_registers(self) -> int:
        """Registers a register tile's broadcast scalar takes (see above)."""
        return 0 if self.broadcast_operand else 1


VECTOR_ISAS = {
    ("x86_64", 512): VectorIsa(512, 32, True),
    ("x86_64", 256): VectorIsa(256, 16, False),
    ("x86_64", 128): VectorIsa(128, 16, False),
    ("aarch64", 128): VectorIsa(128, 32, False),
}
"""By architecture and vector width (`target_arch`, `simd_bits`): AVX-512,
AVX2, SSE2, NEON."""


def vector_isa(target: TargetAttr | None) -> VectorIsa:
    """The vector ISA code for `target` is generated for."""
    key = (target_arch(target), simd_bits(target))
    if key not in VECTOR_ISAS:
        known = ", ".join(sorted({arch for arch, _ in VECTOR_ISAS}))
        raise HeteroError(
            f"the CPU schedules know no {key[0]} vector ISA (they know {known}): "
            "give the llvm target an mtriple of one of these"
        )
    return VECTOR_ISAS[key]
