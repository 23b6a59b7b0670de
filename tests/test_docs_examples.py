"""Every complete module shown in the README and docs/ parses and verifies;
the README's first command succeeds."""

import re
import subprocess
from pathlib import Path

import pytest

from hetero.context import parse_module

ROOT = Path(__file__).parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCKS = [
    (doc.relative_to(ROOT), i, block)
    for doc in DOCS
    for i, block in enumerate(
        re.findall(r"```mlir\n(.*?)```", doc.read_text(), re.DOTALL)
    )
    if block.lstrip().startswith("builtin.module") and "..." not in block
]


@pytest.mark.parametrize(
    "doc, index, block", BLOCKS, ids=[f"{d}#{i}" for d, i, _ in BLOCKS]
)
def test_documented_module_parses(doc, index, block):
    parse_module(block, f"{doc}#{index}")


def test_readme_first_command_succeeds(tmp_path):
    """The README's first command after its install, its files in `tmp_path`:
    hetero-run --check passes on this host, against the reference
    interpreter and against onnxruntime."""
    pytest.importorskip("onnxruntime")
    first = re.search(r"```sh\n(.*?)\n", (ROOT / "README.md").read_text()).group(1)
    install, command = first.split(" && ", 1)
    assert install.startswith("pip install")
    run = subprocess.run(
        ["bash", "-c", command.replace("/tmp/", f"{tmp_path}/")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "check result 0: ok" in run.stdout
    assert "onnxruntime check result 0: ok" in run.stdout
