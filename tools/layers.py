"""hetero's layers: the order its folders import in, checked and drawn.

    python -m hetero.tools.layers          # imports against the order; exit 1 if any
    python -m hetero.tools.layers --dot    # the layers and their imports, for Graphviz

A module may import only from its own layer and the layers below it,
function-local imports included: a cycle hidden behind a local import is still
a cycle a newcomer has to untangle.  The order and why it is so are in
docs/architecture.md; `tests/test_layers.py` runs the check.  The check reads
the source (`ast`), so it sees every import without running any.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The package directory (the repository root is the package `hetero`)."""

LAYERS: tuple[tuple[str, ...], ...] = (
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
    ("driver", "collage_measure", "__init__"),
    ("tools",),
)
"""Bottom to top.  A name is a folder of the package or a module at its root;
`__init__` is the package's own API (`hetero.compile`, `hetero.load`)."""

RANK = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}

OUTSIDE = ("tests", "bench", "examples", "docs", "build")
"""Folders that use hetero from outside, as a user would: any layer is theirs."""


@dataclass(frozen=True)
class Import:
    """One `import` of a hetero module by a module of the package."""

    path: Path
    line: int
    unit: str
    target: str
    module: str

    @property
    def upward(self) -> bool:
        return RANK[self.target] > RANK[self.unit]

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.unit} -> {self.module}"


def unit_of(parts: tuple[str, ...]) -> str:
    """The unit (folder or root module) of a file, by its path parts."""
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


def imported(node: ast.AST) -> list[str]:
    """The hetero-or-other modules an import statement names."""
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        if node.module == "hetero":
            return [f"hetero.{alias.name}" for alias in node.names]
        return [node.module]
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return []


def target_unit(module: str) -> str | None:
    """The unit a module path lies in; None outside hetero.  `from hetero
    import compile` names the package's own API."""
    parts = module.split(".")
    if parts[0] != "hetero":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in RANK else "__init__"


def modules(root: Path = ROOT) -> list[Path]:
    """The package's own Python files, relative to `root`."""
    return sorted(
        path.relative_to(root)
        for path in root.rglob("*.py")
        if path.relative_to(root).parts[0] not in OUTSIDE
        and not any(part.endswith(".egg-info") for part in path.parts)
    )


def imports(root: Path = ROOT) -> Iterator[Import]:
    """Every import of another unit of hetero, in file order."""
    for path in modules(root):
        unit = unit_of(path.parts)
        tree = ast.parse((root / path).read_text(), str(path))
        for node in ast.walk(tree):
            for module in imported(node):
                target = target_unit(module)
                if target is not None and target != unit:
                    yield Import(path, node.lineno, unit, target, module)


def dot(root: Path = ROOT) -> str:
    """Graphviz text: one row a layer, the lowest at the bottom, an arrow per
    pair of units that import, labelled with how many imports; an arrow
    against the order is red."""
    counts = Counter((i.unit, i.target) for i in imports(root))
    lines = ["digraph layers {", "  node [shape=box]; ranksep=0.6;"]
    for rank, units in reversed(list(enumerate(LAYERS))):
        names = " ".join(f'"{u}"' for u in units)
        lines.append(f'  {{ rank=same; "layer {rank}" [shape=plaintext]; {names} }}')
    chain = " -> ".join(f'"layer {rank}"' for rank in reversed(range(len(LAYERS))))
    lines.append(f"  {chain} [style=invis];")
    for (unit, target), n in sorted(counts.items()):
        colour = ', color="red"' if RANK[target] > RANK[unit] else ""
        lines.append(f'  "{unit}" -> "{target}" [label="{n}"{colour}];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hetero.tools.layers")
    parser.add_argument("--dot", action="store_true", help="print Graphviz text")
    args = parser.parse_args(argv)
    if args.dot:
        sys.stdout.write(dot())
        return 0
    upward = [i for i in imports() if i.upward]
    for i in upward:
        print(f"{i}: imports a higher layer", file=sys.stderr)
    return 1 if upward else 0


if __name__ == "__main__":
    sys.exit(main())
