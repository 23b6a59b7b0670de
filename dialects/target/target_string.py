"""TVM's target strings: `"cuda -arch=sm_80 -host=llvm"` → `#target.target`.

One syntax wherever a target is written as text: `bind-target{target=...}`,
the `targets` option of the module-level passes (`plan-devices{targets=
"llvm -num_threads=2,cuda -arch=sm_80"}`), `hetero.compile(targets=[...])`
and the tools' `--targets`.  A target is its kind's name, then
`-option=value` flags checked against the kind's option schema (`-host=KIND`
names the host); a list option is comma-separated (`-mattr=+avx2,+fma`).  In
a list of targets a comma separates two targets, except after a list
option's value, where it continues the list.
"""

from __future__ import annotations

from typing import Any

from xdsl.utils.exceptions import VerifyException

from hetero.dialects.target import TargetAttr
from hetero.dialects.target.kind import lookup_target_kind


def parse_target_string(text: str) -> TargetAttr:
    """`"cuda -arch=sm_80 -host=llvm"` → the target attribute (TVM's syntax).

    Raises `ValueError` with the reason when the text is not a valid target.
    """
    if not text.split():
        raise ValueError("expected a target kind name")
    kind_name, *flags = text.split()
    kind = lookup_target_kind(kind_name)
    if kind is None:
        raise ValueError(f"unknown target kind '{kind_name}'")
    options: dict[str, Any] = {}
    host = None
    seen: set[str] = set()
    for flag in flags:
        key, eq, value = flag.removeprefix("-").partition("=")
        if not flag.startswith("-") or not eq or not key or not value:
            raise ValueError(f"expected '-option=value', got '{flag}'")
        if key in seen:
            raise ValueError(f"option '-{key}' is given twice")
        seen.add(key)
        if key == "host":
            host = parse_target_string(value)
            continue
        spec = kind.options.get(key)
        options[key] = _option_value(key, value, spec.type if spec else str)
    try:
        return TargetAttr(kind_name, options, host)
    except VerifyException as e:
        raise ValueError(str(e)) from e


BOOL_SPELLINGS = {"1": True, "true": True, "0": False, "false": False}
"""How a bool option is written (TVM accepts these four)."""


def _option_value(key: str, text: str, type: type) -> Any:
    if type is bool:
        if text not in BOOL_SPELLINGS:
            raise ValueError(f"option '{key}' takes true, false, 1 or 0, not '{text}'")
        return BOOL_SPELLINGS[text]
    if type is list:
        return text.split(",")
    if type is int:
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"option '{key}' takes an integer, not '{text}'") from None
    return text


def parse_target_list(text: str) -> list[TargetAttr]:
    """`"llvm -num_threads=2,cuda"` → its targets, in order (see the module
    docstring for where the list splits).

    Raises `ValueError` with the reason when a target is not valid."""
    targets: list[str] = []
    for piece in text.split(","):
        if targets and _ends_in_list_option(targets[-1]):
            targets[-1] += "," + piece.strip()
        else:
            targets.append(piece.strip())
    return [parse_target_string(t) for t in targets]


def _ends_in_list_option(target: str) -> bool:
    """Whether `target`'s last flag sets an option of type list."""
    kind_name, *flags = target.split() or [""]
    kind = lookup_target_kind(kind_name)
    if kind is None or not flags:
        return False
    spec = kind.options.get(flags[-1].removeprefix("-").partition("=")[0])
    return spec is not None and spec.type is list
