"""Object code for the host CPU, loaded and called on NumPy arrays.

    module = compile_llvm(lower_to_llvm(parse(text)))   # hetero.lowering.llvm_codegen
    saxpy = module.function("saxpy")
    saxpy(2.0, x, y)                                    # x, y: float32 arrays

The compiler (`hetero.lowering.llvm_codegen.CpuTarget`) makes an
`ObjectCode` of each `llvm`-dialect module: an object file, its optimised
LLVM IR as bitcode and, for each function, a `FunctionInfo` whose `Abi` says
how Python passes its arguments; all of it plain data, which compile workers
send, the compile cache keeps (`ObjectCode.parts`) and `.hetero` files store.
`CpuModule.load` loads the object files of one or several modules with MCJIT
as one module (`hetero.runtime.native`), for the CPU a `CpuMachine`
describes.  `function(name)` returns a `CpuFunction` that follows the memref
ABI of `convert-memref-to-llvm`: a memref parameter takes a C-contiguous
array of the element's dtype, whose rank and static dimensions are checked
before the call and whose dynamic dimensions are passed as sizes.  Scalars
are Python numbers (range-checked integers); results come back as Python
scalars, several as a tuple.  Every wrong argument raises `ArgumentError` (a
`ValueError` and a `TypeError`) before any native code runs; a heap
allocation that failed in the native code raises `MemoryError` after it
(`hetero.runtime.buffers`).  Nothing here imports the compiler or xDSL.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

import llvmlite.binding as llvm

from hetero.runtime.native import Abi, NativeFunction, NativeModule
from hetero.runtime.native import initialize as _initialize
from hetero.runtime.parallel import runtime_object
from hetero.utils.cpus import triple_arch


@cache
def _initialize_cross() -> None:
    """LLVM's other targets (AArch64 on an x86-64 host, ...), for `mtriple`."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


CODEGEN_FLAGS: dict[str, tuple[str, str]] = {
    "-disable-lsr": ("true", "false"),
    "-enable-misched": ("false", "true"),
}
"""LLVM command-line options set while CPU machine code is generated, each
with hetero's value and LLVM's default.  Loop strength reduction took half
the code generator's time on ONNX networks to turn hetero's
`base + i*stride` addresses, which x86 addressing modes take as they are,
into pointer increments, and the networks ran no faster for it.  The
machine scheduler before register allocation hoisted every broadcast of a
channel-lanes register tile to the top of the reduction step, which with 28
accumulators made LLVM spill and rotate registers inside the loop (stores
and reloads of the stack whose cost varied from process to process);
without it (SelectionDAG's order kept) ResNet-50 ran faster and SqueezeNet
about as fast."""


@contextmanager
def codegen_flags() -> Iterator[None]:
    """`CODEGEN_FLAGS` in force for the block, LLVM's defaults after it:
    the options are global to the process, which other llvmlite users
    (Numba) share."""
    for flag, (ours, _) in CODEGEN_FLAGS.items():
        llvm.set_option("hetero", f"{flag}={ours}")
    try:
        yield
    finally:
        for flag, (_, default) in CODEGEN_FLAGS.items():
            llvm.set_option("hetero", f"{flag}={default}")


class FunctionInfo(NamedTuple):
    """What calling a function from Python needs to know of it: plain,
    picklable data, so that a compile worker can send it with the object code."""

    name: str
    linkage: str
    defined: bool
    symbol: str
    """The symbol ctypes calls: the function, or a wrapper that returns its
    results through a pointer (a struct return does not follow the C ABI)."""
    abi: Abi | None = None
    """How Python calls it, for a public function whose types Python can pass."""
    unpassable: str | None = None
    """Why Python cannot pass its types, for a public function without `abi`."""

    @property
    def problem(self) -> str | None:
        """Why Python cannot call it, or None."""
        if not self.defined:
            return "is only declared"
        if self.linkage != "external":
            return f"has {self.linkage} linkage (it is private)"
        return None

    def as_json(self) -> dict[str, Any]:
        """This info as JSON data (`of_json` reads it back)."""
        return {
            **self._asdict(),
            "abi": None if self.abi is None else self.abi._asdict(),
        }

    @classmethod
    def of_json(cls, row: dict[str, Any]) -> FunctionInfo:
        """The `FunctionInfo` whose `as_json` read back as `row`."""
        abi = None if row["abi"] is None else Abi.of_json(row["abi"])
        return cls(**{**row, "abi": abi})


CpuFunction = NativeFunction
"""A compiled function, called with NumPy arrays and Python scalars."""


@dataclass(frozen=True)
class ObjectCode:
    """An `llvm`-dialect module compiled for a CPU: picklable, so that
    compile workers can send it (`hetero.lowering.parallel_compile`)."""

    object: bytes
    """The machine code, an object file for MCJIT."""
    bitcode: bytes
    """The optimised LLVM IR, as bitcode (for `llvm_ir()` and `assembly()`)."""
    functions: dict[str, FunctionInfo]
    timings: dict[str, float]

    def parts(self) -> tuple[bytes, bytes, bytes]:
        """This code as three parts, its timings left out: its functions as
        JSON, the object file, the bitcode (the compile cache's entries)."""
        rows = [info.as_json() for info in self.functions.values()]
        return json.dumps({"functions": rows}).encode(), self.object, self.bitcode

    @classmethod
    def of_parts(cls, parts: Sequence[bytes]) -> ObjectCode:
        """The `ObjectCode` whose `parts` these are (no timings)."""
        functions, object_file, bitcode = parts
        rows = json.loads(functions)["functions"]
        infos = [FunctionInfo.of_json(row) for row in rows]
        return cls(object_file, bitcode, {i.name: i for i in infos}, {})


class CpuMachine:
    """The CPU code is generated for.

    `mcpu`/`mattr` default to the host's (`llvm.get_host_cpu_name()` and its
    features); `mattr` is LLVM's `"+avx2,-avx512f"` or a list of such items
    (an `mcpu` without `mattr` gets that CPU's default features).
    `opt_level` (0-3) picks the `default<On>` pipeline and the code
    generator's level.  `mtriple` (default: the host's) may name another
    architecture (`aarch64-linux-gnu` on an x86-64 host): its code is then
    written out, not run (`native`), and `mcpu` defaults to `generic`."""

    def __init__(
        self,
        mcpu: str | None = None,
        mattr: str | Sequence[str] | None = None,
        opt_level: int = 3,
        mtriple: str | None = None,
    ):
        if opt_level not in (0, 1, 2, 3):
            raise ValueError(f"opt_level must be 0, 1, 2 or 3, got {opt_level}")
        _initialize()
        host = llvm.get_process_triple()
        self.native = mtriple is None or triple_arch(mtriple) == triple_arch(host)
        """Whether this host runs the code (`CpuModule` loads it)."""
        if not self.native:
            _initialize_cross()
        self.mcpu = mcpu or (llvm.get_host_cpu_name() if self.native else "generic")
        if mattr is None:
            host_cpu = mcpu is None and self.native
            mattr = llvm.get_host_cpu_features().flatten() if host_cpu else ""
        self.mattr = mattr if isinstance(mattr, str) else ",".join(mattr)
        self.opt_level = opt_level
        try:
            self._target = llvm.Target.from_triple(mtriple or host)
        except RuntimeError as e:
            from hetero.utils.diagnostics import HeteroError  # it imports xDSL

            raise HeteroError(f"LLVM has no target for mtriple {mtriple!r}: {e}") from e
        self.machine = self.jit_machine()
        """Generates the code MCJIT loads."""
        self.object_machine = self._target.create_target_machine(
            cpu=self.mcpu, features=self.mattr, opt=opt_level, reloc="pic"
        )
        """Generates position-independent code, to write out."""

    def jit_machine(self) -> llvm.TargetMachine:
        """A new target machine for MCJIT: an engine owns (and frees) its own."""
        return self._target.create_target_machine(
            cpu=self.mcpu,
            features=self.mattr,
            opt=self.opt_level,
            codemodel="jitdefault",
            jit=True,
        )


class CpuModule(NativeModule):
    """The object code of `llvm`-dialect modules, loaded for a CPU.

    `CpuModule.load` makes one of several modules compiled apart
    (`hetero.lowering.parallel_compile`).  `objects` keeps their code, for
    `hetero.runtime.artifact` to write out."""

    @classmethod
    def load(cls, target: CpuMachine, objects: Sequence[ObjectCode]) -> CpuModule:
        """The module of the `objects` compiled for `target`, whose calls of
        one another's functions resolve as if they were one module."""
        native = cls.__new__(cls)
        native._load(target, objects)
        return native

    def _load(self, target: CpuMachine, objects: Sequence[ObjectCode]) -> None:
        self._target = target
        self.mcpu, self.mattr, self.opt_level = (
            target.mcpu,
            target.mattr,
            target.opt_level,
        )
        self.objects = tuple(objects)
        self._bitcode = [o.bitcode for o in objects]
        self._functions: dict[str, FunctionInfo] = {}
        for o in objects:  # a function defined in one is declared in others
            for name, info in o.functions.items():
                if info.defined or name not in self._functions:
                    self._functions[name] = info
        self.timings: dict[str, float] = {}
        """Seconds of each stage: translation to LLVM IR, optimisation, machine
        code (summed over the `objects`; loading them counts as machine code)."""
        for o in objects:
            for stage, seconds in o.timings.items():
                self.timings[stage] = self.timings.get(stage, 0.0) + seconds
        self._compiled: dict[str, CpuFunction] = {}
        if not target.native:  # another architecture's code: written out only
            return
        start = time.perf_counter()
        defined = {name: info.defined for name, info in self._functions.items()}
        code = [o.object for o in objects]
        NativeModule.__init__(self, code, target.jit_machine(), defined, {})
        self.timings["llvm-codegen"] = (
            self.timings.get("llvm-codegen", 0.0) + time.perf_counter() - start
        )

    def _abi(self, name: str) -> Abi:
        """The `Abi` of the public function `name`, or why Python cannot call it."""
        info = self._functions.get(name)
        if info is None:
            known = ", ".join(
                f"@{n}" for n, i in self._functions.items() if i.problem is None
            )
            raise ValueError(
                f"no function @{name} in the module (callable: {known or 'none'})"
            )
        if (problem := info.problem) is not None:
            raise ValueError(f"@{name} {problem}: it cannot be called from Python")
        if not self._target.native:
            raise ValueError(
                f"@{name} is compiled for {self._target.machine.triple}, which this "
                f"host ({llvm.get_process_triple()}) does not run: write it out "
                "(assembly(), emit_object(); hetero-translate --emit=asm/obj)"
            )
        if info.abi is None:
            raise ValueError(info.unpassable)
        return info.abi

    def _linked(self) -> llvm.ModuleRef:
        """The optimised LLVM IR, as one module."""
        first, *rest = (llvm.parse_bitcode(b) for b in self._bitcode)
        for module in rest:
            first.link_in(module)
        return first

    def llvm_ir(self) -> str:
        """The optimised LLVM IR, as text."""
        return str(self._linked())

    def assembly(self) -> str:
        """The machine code, as assembly text."""
        with codegen_flags():
            return self._target.object_machine.emit_assembly(self._linked())

    def emit_object(self) -> bytes:
        """The machine code as a relocatable (position-independent) object file."""
        with codegen_flags():
            return self._target.object_machine.emit_object(self._linked())

    def runtime_object(self) -> bytes:
        """The runtime that `emit_object`'s code calls (thread pool, heap
        buffers), an object file for the same target to link it with
        outside Python (`hetero.runtime.parallel.runtime_object`)."""
        return runtime_object(self._target.object_machine)
