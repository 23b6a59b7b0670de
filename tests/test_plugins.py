"""`hetero.utils.plugins.load_entry_points`: every registry that third
parties extend through entry points (target kinds, BYOC pattern tables,
external codegens) reports a broken plugin the same way — one error naming
the entry point — instead of a traceback from importlib."""

from __future__ import annotations

import pytest

from hetero.dialects.target.kind import TargetKindRegistry
from hetero.targets.codegen import CodegenRegistry
from hetero.targets.patterns import PatternError, PatternRegistry
from hetero.utils.plugins import load_entry_points


class _BrokenEntryPoint:
    name, value = "npu", "missing_pkg.kinds:NPU"

    def load(self) -> object:
        raise ModuleNotFoundError("No module named 'missing_pkg'")


MESSAGE = "entry point 'npu = missing_pkg.kinds:NPU': No module named 'missing_pkg'"


@pytest.mark.parametrize(
    "group, lookup, error",
    [
        ("hetero.target_kinds", lambda: TargetKindRegistry().get("npu"), ValueError),
        ("hetero.patterns", lambda: PatternRegistry().table("npu"), PatternError),
        ("hetero.codegens", lambda: CodegenRegistry().get("npu"), ValueError),
    ],
)
def test_a_broken_plugin_is_one_error_naming_it(
    monkeypatch: pytest.MonkeyPatch, group: str, lookup, error
) -> None:
    monkeypatch.setattr(
        "importlib.metadata.entry_points",
        lambda group=None, _broken=group: (
            [_BrokenEntryPoint()] if group == _broken else []
        ),
    )
    with pytest.raises(error) as info:
        lookup()
    assert str(info.value) == MESSAGE


def test_registration_errors_name_the_entry_point(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class EntryPoint:
        name, value = "x", "pkg:X"

        def load(self) -> object:
            return 42

    def register(name: str, loaded: object) -> None:
        raise TypeError(f"{loaded!r} is not a plugin")

    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [EntryPoint()])
    with pytest.raises(
        ValueError, match=r"^entry point 'x = pkg:X': 42 is not a plugin$"
    ):
        load_entry_points("group", register)
