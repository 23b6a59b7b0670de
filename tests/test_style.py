"""The tree stays formatted and lint-clean (docs/architecture.md, "Style").

ruff is pinned in the `test` extra: another version may format differently, so
the check skips where the installed ruff is not the pinned one.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from hetero.tools.layers import ROOT


def _ruff() -> str:
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    pinned = re.search(r'"ruff==([\d.]+)"', (ROOT / "pyproject.toml").read_text())
    assert pinned is not None, "pyproject.toml pins ruff in the test extra"
    version = subprocess.run(
        [ruff, "--version"], check=True, capture_output=True, text=True
    )
    if version.stdout.split()[-1] != pinned[1]:
        pytest.skip(f"ruff {version.stdout.split()[-1]} is not the pinned {pinned[1]}")
    return ruff


@pytest.mark.parametrize("command", [["format", "--check"], ["check"]])
def test_ruff(command: list[str]) -> None:
    done = subprocess.run(
        [_ruff(), *command, "."], check=False, cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
