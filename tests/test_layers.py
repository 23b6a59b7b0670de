"""The folders of hetero are layers: a module imports only from its own layer
and the layers below it, function-local imports included (docs/architecture.md).

The order is a table here and a picture there; a new upward arrow fails this
test with the importing line, so a cycle cannot creep back in behind a
function-local import.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

LAYERS = (
    ("utils",),
    ("runtime",),
    ("dialects",),
    ("universe", "context"),
    ("interpreter", "analysis"),
    ("targets",),
    ("te",),
    ("transforms",),
    ("lowering",),
    ("frontends",),
    ("driver", "__init__"),
    ("tools",),
)
"""Bottom to top.  A name is a folder of the package or a module at its root."""

RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
NOT_PACKAGE = ("tests", "bench", "examples", "docs", "build")
"""Folders that use hetero from outside: they may import any layer."""


def _unit(parts: tuple[str, ...]) -> str:
    """The layer name of a module given by its path parts below the root."""
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        if node.module == "hetero":
            return [f"hetero.{a.name}" for a in node.names]
        return [node.module]
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    return []


def _target_unit(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "hetero":
        return None
    # `from hetero import compile` names the package's own API (`__init__`)
    return parts[1] if len(parts) > 1 and parts[1] in RANK else "__init__"


def _modules() -> list[Path]:
    return sorted(
        p
        for p in ROOT.rglob("*.py")
        if p.relative_to(ROOT).parts[0] not in NOT_PACKAGE
        and not any(part.endswith(".egg-info") for part in p.parts)
    )


KNOWN = {
    "runtime/artifact.py: runtime -> hetero.lowering.compile_cache",
    "runtime/cuda.py: runtime -> hetero.dialects",
    "runtime/cuda.py: runtime -> hetero.lowering.convert_tir_to_gpu",
    "runtime/cuda.py: runtime -> hetero.lowering.convert_tir_to_scf",
    "runtime/cuda.py: runtime -> hetero.lowering.cpu_codegen",
    "runtime/cuda.py: runtime -> hetero.lowering.gpu_codegen",
    "runtime/cuda.py: runtime -> hetero.lowering.lower_gpu_launch",
    "runtime/cuda.py: runtime -> hetero.lowering.parallel_launchers",
    "runtime/cuda.py: runtime -> hetero.lowering.pipeline",
    "runtime/cuda.py: runtime -> hetero.transforms.annotate_device_regions",
    "runtime/cuda.py: runtime -> hetero.transforms.inline_private_functions",
    "runtime/cuda.py: runtime -> hetero.transforms.lower_device_kernel_launch",
    "runtime/cuda.py: runtime -> hetero.transforms.split_host_device",
    "runtime/llvmir.py: runtime -> hetero.dialects",
    "runtime/llvmir.py: runtime -> hetero.dialects.llvm_attrs",
    "runtime/parallel.py: runtime -> hetero.targets.cpu",
    "runtime/profiler.py: runtime -> hetero.dialects",
    "runtime/profiler.py: runtime -> hetero.interpreter.relay",
    "transforms/collage_partition.py: transforms -> hetero",
    "transforms/collage_partition.py: transforms -> hetero.lowering.compile_cache",
}
"""Upward imports being removed (issue 38); this set only shrinks."""


def upward_imports() -> list[str]:
    """Every import of a higher layer, as `file:line: unit -> unit`."""
    found = []
    for path in _modules():
        rel = path.relative_to(ROOT)
        unit = _unit(rel.parts)
        for node in ast.walk(ast.parse(path.read_text(), str(rel))):
            for module in _imported(node):
                target = _target_unit(module)
                if target is None or target == unit:
                    continue
                if RANK[target] > RANK[unit]:
                    found.append(f"{rel}:{node.lineno}: {unit} -> {module}")
    return found


def test_every_unit_has_a_layer() -> None:
    units = {_unit(p.relative_to(ROOT).parts) for p in _modules()}
    assert units <= set(RANK), f"no layer for {sorted(units - set(RANK))}"


def test_no_upward_imports() -> None:
    found = [f for f in upward_imports() if re.sub(r":\d+:", ":", f) not in KNOWN]
    assert not found, "imports against the layer order:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import hetero.driver\n", 1),
        ("def f():\n    from hetero.transforms import inline\n", 1),
        ("from hetero import compile\n", 1),
        ("from hetero.utils import cpus\n", 0),
    ],
)
def test_an_upward_import_is_found(tmp_path: Path, source: str, expected: int) -> None:
    """The check sees module-level, function-local and `from hetero import`
    imports alike (a module in `dialects` importing upward)."""
    module = ast.parse(source)
    found = [
        m
        for node in ast.walk(module)
        for m in _imported(node)
        if (t := _target_unit(m)) and RANK[t] > RANK["dialects"]
    ]
    assert len(found) == expected
