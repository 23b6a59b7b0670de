"""Every complete module shown in the README and docs/ parses and verifies."""

import re
from pathlib import Path

import pytest

from hetero.context import parse_module

ROOT = Path(__file__).parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCKS = [
    (doc.relative_to(ROOT), i, block)
    for doc in DOCS
    for i, block in enumerate(re.findall(r"```mlir\n(.*?)```", doc.read_text(), re.S))
    if block.lstrip().startswith("builtin.module") and "..." not in block
]


@pytest.mark.parametrize("doc, index, block", BLOCKS, ids=[f"{d}#{i}" for d, i, _ in BLOCKS])
def test_documented_module_parses(doc, index, block):
    parse_module(block, f"{doc}#{index}")
