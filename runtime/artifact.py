"""`.hetero` files: a compiled function, written once and run anywhere its CPU can.

    hetero.compile(model).save("model.hetero")     # or: hetero-compile model.onnx -o model.hetero
    f = hetero.load("model.hetero")                # llvmlite and NumPy only: no xDSL, no passes
    y = f(data=x)

A file holds the native code of its target (each object file with its
optimised LLVM IR and the functions it defines), the weights
(the constants the host function takes), the signature (input and output
names, shapes, dtypes, devices) and the target it needs (triple, CPU,
features).  `load` checks that this host can run it -- its architecture,
and every feature the code was compiled with (`+avx512f`, ...) -- and says
which are missing when not; it loads the process's runtimes the code calls
(heap buffers, the thread pool) as a compile does.  A function compiled
once for dynamic shapes is saved with the rules of its sizes
(`hetero.runtime.dynamic.SizeRules`) and loaded as a `LoadedDynamicFunction`,
which checks and sizes each call as the compiled one does.  The layout,
versioned, is in docs/deployment.md.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import llvmlite.binding as llvm
import numpy as np

from hetero.runtime import framing
from hetero.runtime.compiled import CompiledFunction, Signature
from hetero.runtime.cpu import CpuModule, ObjectCode
from hetero.runtime.dynamic import LoadedDynamicFunction, SizeRules
from hetero.runtime.native import Abi, NativeModule, initialize, jit_machine
from hetero.utils.files import write_output

MAGIC = b"hetero\0m"

VERSION = 2
"""The version of the layout.  Version 2 added `dynamic`, the size rules of
a function compiled once for dynamic shapes; a file without them is written
as version 1, its layout unchanged, which hetero before version 2 reads too.
`load` reads both (`READS`)."""

READS = (1, VERSION)

ALIGNMENT = 64
"""Each blob of the payload (object files, weights) starts at a multiple of this."""

SUFFIX = ".hetero"

LEVELS = {
    "x86-64": (),
    "x86-64-v2": ("cx16", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3"),
    "x86-64-v3": (
        "avx",
        "avx2",
        "bmi",
        "bmi2",
        "f16c",
        "fma",
        "lzcnt",
        "movbe",
        "xsave",
    ),
    "x86-64-v4": ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"),
}
"""The x86-64 psABI levels, each with the features it adds to the one
before: an `mcpu` of these without `mattr` (the portable way to compile,
`-mcpu=x86-64-v3`) needs them."""


class ArtifactError(ValueError):
    """A `.hetero` file that cannot be written, read or run on this host."""


def save(
    function: CompiledFunction, path: Path, rules: SizeRules | None = None
) -> None:
    """Write `function` (with the size `rules` of a function compiled once
    for dynamic shapes) to `path` atomically: a temporary file beside it,
    renamed over it once whole (never a half-written file)."""
    native = function.native
    if not isinstance(native, CpuModule):
        raise ArtifactError(
            f"{path}: a program with GPU kernels cannot be saved yet: only "
            "programs compiled for the CPU (llvm targets) can"
        )
    entry = native._functions[function.symbol].abi
    assert entry is not None  # the host function takes arrays, returns nothing
    payload = _Payload()
    code = [_code(payload, o) for o in native.objects]
    constants = [_constant(payload, np.asarray(c)) for c in function.constants]
    version = 1 if rules is None else VERSION
    manifest = {
        "format": version,
        "target": {
            "triple": native._target.machine.triple,
            "mcpu": native.mcpu,
            "mattr": native.mattr,
            "opt_level": native.opt_level,
        },
        "entry": entry._asdict(),
        "inputs": [_signature(s) for s in function.inputs],
        "outputs": [_signature(s) for s in function.outputs],
        "structure": function.structure,
        "memory": function.memory,
        "num_threads": function.num_threads,
        "code": code,
        "constants": constants,
    }
    if rules is not None:
        manifest["dynamic"] = rules.to_json()
    data = framing.pack(
        MAGIC, version, [json.dumps(manifest).encode(), payload.bytes()]
    )
    try:
        write_output(str(path), data)
    except OSError as error:
        raise ArtifactError(f"cannot write {path}: {error.strerror or error}") from None


class _Payload:
    """The blobs after the manifest, each at a multiple of `ALIGNMENT`."""

    def __init__(self) -> None:
        self.blobs: list[bytes] = []
        self.size = 0

    def add(self, blob: bytes) -> list[int]:
        """`blob` appended: its offset and size."""
        offset = -self.size % ALIGNMENT + self.size
        self.blobs.append(bytes(offset - self.size) + blob)
        self.size = offset + len(blob)
        return [offset, len(blob)]

    def bytes(self) -> bytes:
        return b"".join(self.blobs)


def _code(payload: _Payload, code: ObjectCode) -> dict[str, Any]:
    return {
        "functions": {name: info.defined for name, info in code.functions.items()},
        "object": payload.add(code.object),
        "bitcode": payload.add(code.bitcode),
    }


def _constant(payload: _Payload, value: np.ndarray) -> dict[str, Any]:
    data = np.ascontiguousarray(value).tobytes()
    return {
        "dtype": value.dtype.str,
        "shape": list(value.shape),
        "data": payload.add(data),
    }


def _signature(signature: Signature) -> dict[str, Any]:
    return {
        "label": signature.label,
        "name": signature.name,
        "shape": list(signature.shape),
        "dtype": signature.dtype.str,
        "device": "cpu",
    }


def load(path: str | Path) -> CompiledFunction | LoadedDynamicFunction:
    """The function that `CompiledFunction.save` (or a `DynamicFunction`'s
    `save`) wrote to `path`, ready to call; `ArtifactError` if the file is
    not one, or this host cannot run it."""
    start = time.perf_counter()
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ArtifactError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        version = _version(data)
        header, payload = framing.unpack(MAGIC, version, 2, data)
        manifest = json.loads(header)
        dynamic = manifest.get("dynamic")
        if (dynamic is not None) != (version == 2):
            raise ValueError(
                f"version {version} with{'out' if dynamic is None else ''} size rules"
            )
        rules = None if dynamic is None else SizeRules.of_json(dynamic)
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise ArtifactError(f"{path} is not a hetero compiled model: {error}") from None
    target = manifest["target"]
    check_host(target, str(path))
    functions: dict[str, bool] = {}
    for code in manifest["code"]:
        for name, defined in code["functions"].items():
            functions[name] = functions.get(name, False) or defined
    entry = Abi.of_json(manifest["entry"])
    native = NativeModule(
        [_blob(payload, code["object"]) for code in manifest["code"]],
        jit_machine(
            llvm.get_process_triple(),
            target["mcpu"],
            target["mattr"],
            target["opt_level"],
        ),
        functions,
        {entry.name: entry},
    )
    constants = tuple(
        np.frombuffer(_blob(payload, c["data"]), np.dtype(c["dtype"])).reshape(
            c["shape"]
        )
        for c in manifest["constants"]
    )
    function = CompiledFunction(
        native,
        entry.name,
        tuple(_signature_of(s) for s in manifest["inputs"]),
        tuple(_signature_of(s) for s in manifest["outputs"]),
        _structure_of(manifest["structure"]),
        constants,
        {"load": time.perf_counter() - start},
        {device: tuple(sizes) for device, sizes in manifest["memory"].items()},
        None,
        manifest["num_threads"],
    )
    if rules is None:
        return function
    try:
        rules.check(function)
    except ValueError as error:
        raise ArtifactError(
            f"{path}: the size rules do not fit the code: {error}"
        ) from None
    return LoadedDynamicFunction(function, rules)


def _version(data: bytes) -> int:
    """The version `data` says it has where `load` reads that one, else
    `VERSION` (for `framing.unpack` to say what it found)."""
    layout = framing.header(2)
    found = layout.unpack_from(data)[1] if len(data) >= layout.size else VERSION
    return found if found in READS else VERSION


def _blob(payload: bytes, where: Sequence[int]) -> bytes:
    offset, size = where
    return payload[offset : offset + size]


def _signature_of(row: dict[str, Any]) -> Signature:
    return Signature(
        row["label"], tuple(row["shape"]), np.dtype(row["dtype"]), row["name"]
    )


def _structure_of(structure: Any) -> Any:
    """The `Structure` JSON wrote (its tuples as lists)."""
    if isinstance(structure, int):
        return structure
    return tuple(_structure_of(s) for s in structure)


def check_host(target: dict[str, Any], what: str) -> None:
    """Raise `ArtifactError` unless this host runs code compiled for `target`:
    the same architecture, and every CPU feature the code may use."""
    initialize()
    host_triple = llvm.get_process_triple()
    arch, host_arch = target["triple"].split("-")[0], host_triple.split("-")[0]
    if arch != host_arch:
        raise ArtifactError(
            f"{what} is compiled for {target['triple']}; this host is {host_triple}"
        )
    host = llvm.get_host_cpu_features()
    missing = [f for f in required_features(target) if not host.get(f, False)]
    if missing:
        raise ArtifactError(
            f"{what} is compiled for CPU {target['mcpu']} with features this host's "
            f"CPU ({llvm.get_host_cpu_name()}) lacks: {', '.join(missing)}; compile "
            "it for this host, or for a CPU both have (hetero-compile --target "
            "'llvm -mcpu=x86-64-v3', docs/deployment.md)"
        )
    unchecked = not target["mattr"] and target["mcpu"] not in LEVELS
    if unchecked and target["mcpu"] != llvm.get_host_cpu_name():
        raise ArtifactError(
            f"{what} is compiled for CPU {target['mcpu']}, whose features hetero "
            f"cannot check on this host ({llvm.get_host_cpu_name()}): compile it "
            "with an -mattr list, or for an x86-64 level (-mcpu=x86-64-v3)"
        )


def required_features(target: dict[str, Any]) -> list[str]:
    """The CPU features code compiled for `target` may use: its `mattr`'s
    `+` items, and an x86-64 level's (`LEVELS`)."""
    features = [item[1:] for item in target["mattr"].split(",") if item.startswith("+")]
    return sorted({*features, *_level_features(target["mcpu"])})


def _level_features(mcpu: str) -> Iterator[str]:
    """The features of x86-64 level `mcpu` and of the levels below it."""
    if mcpu not in LEVELS:
        return
    for level, features in LEVELS.items():
        yield from features
        if level == mcpu:
            return
