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

The width comes from the `llvm` target's `mattr` (else the host's features:
`hetero.lowering.convert_tir_to_scf.simd_bits`), so a target pinned to
`-avx512f` gets the AVX2 schedules on any host.
"""

from __future__ import annotations

from dataclasses import dataclass

from hetero.dialects.target import TargetAttr
from hetero.lowering.convert_tir_to_scf import simd_bits
from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import Attribute


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
    512: VectorIsa(512, 32, True),
    256: VectorIsa(256, 16, False),
    128: VectorIsa(128, 16, False),
}
"""By vector width (`simd_bits`): AVX-512, AVX2, SSE2."""


def vector_isa(target: TargetAttr | None) -> VectorIsa:
    """The vector ISA code for `target` is generated for."""
    return VECTOR_ISAS[simd_bits(target)]
