"""A wheel of hetero holds every package and data file of the source tree.

The editable install used for development finds any folder, so a package
missing from pyproject.toml would only show in a wheel built for deployment:
this test makes the list and the tree agree.
"""

from __future__ import annotations

import fnmatch
import tomllib

from hetero.tools.layers import OUTSIDE, ROOT

SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _source_packages() -> set[str]:
    return {
        ".".join(("hetero", *init.parent.relative_to(ROOT).parts))
        for init in ROOT.rglob("__init__.py")
        if init.parent == ROOT
        or (
            init.relative_to(ROOT).parts[0] not in OUTSIDE
            and "__pycache__" not in init.parts
        )
    }


def test_every_package_is_listed() -> None:
    assert _source_packages() == set(SETUPTOOLS["packages"])


def test_every_data_file_is_listed() -> None:
    """Non-Python files the package reads at run time (the runtime's LLVM IR)."""
    data = SETUPTOOLS.get("package-data", {})
    for package in _source_packages() - {"hetero"}:  # the root: README, pyproject
        folder = ROOT.joinpath(*package.split(".")[1:])
        for path in folder.iterdir():
            if path.is_file() and path.suffix not in (".py", ".pyc", ".md"):
                patterns = data.get(package, [])
                assert any(fnmatch.fnmatch(path.name, p) for p in patterns), (
                    f"{path.relative_to(ROOT)} is not in package-data of {package}"
                )
