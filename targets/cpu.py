"""What code generation needs to know of a CPU target: its architecture, its
vector width, its thread count, and the conventions of hetero's CPU code
(buffer alignment, what goes on the stack, how parallel loops are chunked).

The schedules (`hetero.te.schedules`), the TIR passes and the lowering to LLVM
all ask these questions, so they live here, below all of them; the host's own
answers are asked of LLVM once.
"""

from __future__ import annotations

from functools import cache

import llvmlite.binding as llvm

from hetero.dialects.target import TargetAttr
from hetero.dialects.target.kind import DeviceType
from hetero.runtime.parallel import CHUNKS_PER_THREAD
from hetero.utils.cpus import default_threads, triple_arch

ALIGNMENT = 64
"""The least alignment, in bytes, of `memref.alloc` and `memref.alloca` buffers."""

STACK_BYTES = 4096
"""Static non-`local` buffers up to this size go on the stack too."""

SIMD_BITS: tuple[tuple[str, int], ...] = (("avx512f", 512), ("avx2", 256), ("avx", 256))
"""x86 target feature → vector register width; without either, 128 bits (SSE2)."""

ARCH_SIMD_BITS = {"aarch64": 128}
"""Vector register width of the architectures whose features do not change
it (AArch64: NEON; SVE's scalable vectors are not used)."""


def is_cpu(target: TargetAttr | None) -> bool:
    """No target means the host, which is a CPU."""
    return target is None or target.device_type == DeviceType.cpu


@cache
def _host_features() -> dict[str, bool]:
    """This machine's CPU features, asked of LLVM once (each asking costs
    about as much as lowering a small loop)."""
    return {name: bool(on) for name, on in llvm.get_host_cpu_features().items()}


@cache
def _host_arch() -> str:
    """This machine's architecture, asked of LLVM once (8 us an asking)."""
    return triple_arch(llvm.get_process_triple())


def target_arch(target: TargetAttr | None) -> str:
    """The architecture of `target`'s `mtriple`, else the host's."""
    mtriple = target.option("mtriple") if target else None
    return triple_arch(mtriple) if mtriple else _host_arch()


def simd_bits(target: TargetAttr | None) -> int:
    """The vector register width of `target`: its architecture's
    (`ARCH_SIMD_BITS`), else its `mattr`'s, else the host's features where
    the target is the host's architecture and names no `mcpu`."""
    arch = target_arch(target)
    if arch in ARCH_SIMD_BITS:
        return ARCH_SIMD_BITS[arch]
    features: dict[str, bool] = {}
    if (target is None or target.option("mcpu") is None) and arch == target_arch(None):
        features = dict(_host_features())
    for item in (target.option("mattr") if target else None) or []:
        features[item[1:]] = item.startswith("+")
    return next((bits for name, bits in SIMD_BITS if features.get(name)), 128)


def asked_threads(target: TargetAttr | None) -> int | None:
    """The target's `num_threads`: its functions' thread count where their
    caller sets none (`hetero.runtime.parallel.using_threads`); None if unset."""
    return target.option("num_threads") if target else None


def num_threads(target: TargetAttr | None) -> int:
    """How many threads the parallel loops of a function for `target` likely
    take: its `num_threads`, else the default at compile time
    (`default_threads`).  The schedules cut that many times
    `TASKS_PER_THREAD` tasks; the pool reads the actual count at run time,
    and any count runs the code correctly."""
    return asked_threads(target) or default_threads()


def outlines_parallel_loops(target: TargetAttr | None) -> bool:
    """Whether the parallel loops of a function for `target` are outlined and
    run by the thread pool (`lower_parallel`): not where the target pins
    `num_threads = 1`, which no run-time setting then changes."""
    return asked_threads(target) != 1


def parallel_chunk(trips: int, threads: int) -> int:
    """The iterations of each chunk of a parallel loop of `trips` on `threads`:
    its threads take chunks in turn from a shared counter, so a thread on a
    busy core takes fewer."""
    return max(1, trips // (CHUNKS_PER_THREAD * max(1, min(threads, trips))))
