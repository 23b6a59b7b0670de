"""Target kinds: what a target attribute's kind name means.

A target kind is the static description of a code generator: which device type
it compiles for, which options a target of that kind accepts, whether it is an
*external codegen* (a library such as cuBLAS that owns whole partitions,
docs/design.md §4) and whether its code generator can emit calls between
functions (read by `inline-private-functions`, docs/design.md §7.6).

Kinds live in one process-wide registry.  hetero registers its built-in kinds
(`hetero.dialects.target.builtin`); third-party packages add theirs through the
`hetero.target_kinds` entry point group, whose entries name either a
`TargetKind` or a zero-argument callable returning an iterable of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from hetero.utils.plugins import load_entry_points

ENTRY_POINT_GROUP = "hetero.target_kinds"


class DeviceType(IntEnum):
    """DLPack device types (the numbering TVM uses for `DLDeviceType`)."""

    cpu = 1
    cuda = 2
    cuda_host = 3
    opencl = 4
    vulkan = 7
    metal = 8
    vpi = 9
    rocm = 10
    ext_dev = 12
    webgpu = 15
    hexagon = 16

    @classmethod
    def by_name(cls, name: str) -> DeviceType | None:
        return cls.__members__.get(name)


HOST_DEVICE_TYPES = (DeviceType.cpu, DeviceType.hexagon)
"""Device types whose targets may act as a host: without a target that has one,
the first of these in the configuration is the host (docs/design.md §2.5)."""


@dataclass(frozen=True)
class OptionSpec:
    """One option of a target kind: its value type, default and allowed values.

    `type` is one of `str`, `int`, `bool` or `list` (a list of strings).
    """

    type: type
    default: Any = None
    choices: tuple[Any, ...] = ()
    doc: str = ""
    pattern: str = ""
    """A regular expression a `str` value must match in full (e.g. `sm_[0-9]+a?`)."""
    aliases: tuple[str, ...] = ()
    """Other names a target string may give the option: TVM's spellings of the
    same setting (`num-cores` for `num_threads`), so that TVM's target strings
    keep their meaning (`hetero.dialects.target.target_string`)."""

    def check(self, value: Any) -> str | None:
        """Return why `value` is not acceptable, or None if it is."""
        if self.type is list:
            if not isinstance(value, (list, tuple)) or not all(
                isinstance(v, str) for v in value
            ):
                return "expected a list of strings"
            return None
        ok = isinstance(value, self.type) and not (
            self.type is int and isinstance(value, bool)
        )
        if not ok:
            return f"expected a value of type {self.type.__name__}"
        if self.choices and value not in self.choices:
            allowed = ", ".join(repr(c) for c in self.choices)
            return f"expected one of {allowed}"
        if self.pattern and not re.fullmatch(self.pattern, value):
            return f"expected a value matching '{self.pattern}'"
        return None


@dataclass(frozen=True)
class TargetKind:
    """The static description of a code generator (TVM's `TargetKind`)."""

    name: str
    device_type: DeviceType
    options: Mapping[str, OptionSpec] = field(default_factory=dict)
    keys: tuple[str, ...] = ()
    is_external_codegen: bool = False
    """The kind is also a BYOC compiler name (docs/design.md §2.1)."""
    relay_to_tir: bool = False
    """The kind brings its own graph-to-loop lowering; counts as external
    (docs/design.md §2.4)."""
    supports_calls: bool = True
    """Its code generator can emit calls between functions (docs/design.md §7.6)."""
    doc: str = ""

    def option_named(self, name: str) -> str | None:
        """The option `name` sets, by its own name or an alias; None if none."""
        if name in self.options:
            return name
        return next(
            (key for key, spec in self.options.items() if name in spec.aliases), None
        )

    def check_options(self, options: Mapping[str, Any]) -> str | None:
        """Return why `options` do not fit this kind's schema, or None."""
        for key, value in options.items():
            spec = self.options.get(key)
            if spec is None:
                known = ", ".join(sorted(self.options)) or "none"
                return (
                    f"unknown option '{key}' for target kind '{self.name}' "
                    f"(known options: {known})"
                )
            if (why := spec.check(value)) is not None:
                return f"bad value {value!r} for option '{key}' of target kind '{self.name}': {why}"
        return None


class TargetKindRegistry:
    """Name → kind, filled by `register` and lazily from entry points."""

    def __init__(self) -> None:
        self._kinds: dict[str, TargetKind] = {}
        self._entry_points_loaded = False

    def register(self, kind: TargetKind) -> TargetKind:
        if kind.name in self._kinds and self._kinds[kind.name] != kind:
            raise ValueError(f"target kind '{kind.name}' is already registered")
        self._kinds[kind.name] = kind
        return kind

    def get(self, name: str) -> TargetKind | None:
        self._load_entry_points()
        return self._kinds.get(name)

    def names(self) -> list[str]:
        self._load_entry_points()
        return sorted(self._kinds)

    def _load_entry_points(self) -> None:
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        load_entry_points(ENTRY_POINT_GROUP, self._register_entry)

    def _register_entry(self, _name: str, loaded: Any) -> None:
        for kind in _kinds_of(loaded):
            self.register(kind)


def _kinds_of(
    obj: TargetKind | Callable[[], Iterable[TargetKind]],
) -> Iterable[TargetKind]:
    return [obj] if isinstance(obj, TargetKind) else obj()


REGISTRY = TargetKindRegistry()


def register_target_kind(kind: TargetKind) -> TargetKind:
    """Register `kind` in the process-wide registry (error on a clashing name)."""
    return REGISTRY.register(kind)


def lookup_target_kind(name: str) -> TargetKind | None:
    """The registered kind called `name`, or None."""
    from hetero.dialects.target import builtin  # noqa: F401  (registers the built-in kinds)

    return REGISTRY.get(name)


def registered_kind_names() -> list[str]:
    from hetero.dialects.target import builtin  # noqa: F401

    return REGISTRY.names()
