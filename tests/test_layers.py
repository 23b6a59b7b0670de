"""The folders of hetero are layers (docs/architecture.md): a module imports
only from its own layer and those below it, function-local imports included.

The order is `hetero.tools.layers.LAYERS`; a new upward arrow fails here with
the importing line, so a cycle cannot creep back in behind a local import.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hetero.tools import layers


def test_every_unit_has_a_layer() -> None:
    units = {layers.unit_of(path.parts) for path in layers.modules()}
    assert units <= set(layers.RANK), f"no layer for {sorted(units - set(layers.RANK))}"


def test_no_upward_imports() -> None:
    found = [str(i) for i in layers.imports() if i.upward]
    assert not found, "imports against the layer order:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("source", "upward"),
    [
        ("import hetero.driver\n", ["hetero.driver"]),
        ("def f():\n    from hetero.transforms import inline\n", ["hetero.transforms"]),
        ("from hetero import compile\n", ["hetero.compile"]),
        ("from hetero.utils import cpus\nimport numpy\n", []),
        ("from hetero.dialects import tir\n", []),
    ],
)
def test_an_upward_import_is_found(
    tmp_path: Path, source: str, upward: list[str]
) -> None:
    """Module-level, function-local and `from hetero import` imports alike,
    here of a module in `dialects`."""
    (tmp_path / "dialects").mkdir()
    (tmp_path / "dialects" / "x.py").write_text(source)
    found = [i.module for i in layers.imports(tmp_path) if i.upward]
    assert found == upward


def test_the_dot_picture_marks_upward_arrows(tmp_path: Path) -> None:
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "x.py").write_text("from hetero.dialects import tir\n")
    text = layers.dot(tmp_path)
    assert '"utils" -> "dialects" [label="1", color="red"];' in text
    assert text.count("rank=same") == len(layers.LAYERS)


def test_the_architecture_page_names_every_layer_in_order() -> None:
    """docs/architecture.md's layer table lists the units bottom to top."""
    page = (layers.ROOT / "docs" / "architecture.md").read_text()
    rows = re.findall(r"^\| (\d+) \| ([^|]+) \|", page, re.MULTILINE)
    listed = [tuple(re.findall(r"`([\w_]+)`", units)) for _, units in rows]
    assert listed == list(layers.LAYERS)
