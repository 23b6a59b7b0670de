"""The `target` dialect's attributes and the dialect itself (`hetero.dialects.target`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, cast

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DictionaryAttr,
    IntAttr,
    IntegerAttr,
    NoneAttr,
    StringAttr,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.target.kind import (
    HOST_DEVICE_TYPES,
    DeviceType,
    TargetKind,
    lookup_target_kind,
    registered_kind_names,
)

if TYPE_CHECKING:
    from hetero.dialects.target.config import CompilationConfig

UNCONSTRAINED = -1


# ----------------------------------------------------------------------------
# Option values: attribute <-> Python
# ----------------------------------------------------------------------------


def _option_to_python(attr: Attribute) -> Any:
    match attr:
        case StringAttr():
            return attr.data
        case IntegerAttr() if attr.type.width.data == 1:  # pyright: ignore
            return bool(attr.value.data)
        case IntegerAttr():
            return attr.value.data
        case ArrayAttr():
            return [_option_to_python(a) for a in attr.data]
        case _:
            return attr


def _option_to_attr(value: Any) -> Attribute:
    match value:
        case bool():
            return BoolAttr.from_bool(value)
        case int():
            return IntegerAttr(value, 64)
        case str():
            return StringAttr(value)
        case list() | tuple():
            return ArrayAttr([_option_to_attr(v) for v in cast(Sequence[Any], value)])
        case _:
            return cast(Attribute, value)


# ----------------------------------------------------------------------------
# #target.target
# ----------------------------------------------------------------------------


@irdl_attr_definition
class TargetAttr(ParametrizedAttribute):
    """A target: kind name, kind options and an optional host target."""

    name = "target.target"

    kind_name: StringAttr
    option_dict: DictionaryAttr
    host_attr: Attribute  # TargetAttr | NoneAttr (self-reference checked in verify)

    def __init__(
        self,
        kind: str,
        options: Mapping[str, Any] | None = None,
        host: TargetAttr | None = None,
    ) -> None:
        opts = {k: _option_to_attr(v) for k, v in (options or {}).items()}
        super().__init__(
            StringAttr(kind), DictionaryAttr(opts), NoneAttr() if host is None else host
        )

    # -- syntax ---------------------------------------------------------------

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            pos = parser.pos
            kind = parser.parse_str_literal("target kind name expected")
            kind_def = lookup_target_kind(kind)
            if kind_def is None:
                parser.raise_error(_unknown_kind_message(kind), pos, parser.pos)
            options = DictionaryAttr({})
            host: Attribute = NoneAttr()
            while parser.parse_optional_punctuation(",") is not None:
                if parser.parse_optional_keyword("host") is not None:
                    parser.parse_punctuation("=")
                    pos = parser.pos
                    host = parser.parse_attribute()
                    if not isinstance(host, TargetAttr):
                        parser.raise_error(
                            "host must be a #target.target", pos, parser.pos
                        )
                    if (why := _host_problem(host)) is not None:
                        parser.raise_error(why, pos, parser.pos)
                else:
                    pos = parser.pos
                    options = DictionaryAttr(
                        parser.parse_optional_dictionary_attr_dict()
                    )
                    why = kind_def.check_options(
                        {k: _option_to_python(v) for k, v in options.data.items()}
                    )
                    if why is not None:
                        parser.raise_error(why, pos, parser.pos)
        return [StringAttr(kind), options, host]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.kind_name.data)
            if self.option_dict.data:
                printer.print_string(", ")
                printer.print_attr_dict(self.option_dict.data)
            if isinstance(self.host_attr, TargetAttr):
                printer.print_string(", host = ")
                printer.print_attribute(self.host_attr)

    def verify(self) -> None:
        kind = lookup_target_kind(self.kind_name.data)
        if kind is None:
            raise VerifyException(_unknown_kind_message(self.kind_name.data))
        if (why := kind.check_options(self.options)) is not None:
            raise VerifyException(why)
        if not isinstance(self.host_attr, (TargetAttr, NoneAttr)):
            raise VerifyException("host must be a #target.target or none")
        if isinstance(self.host_attr, TargetAttr) and (
            why := _host_problem(self.host_attr)
        ):
            raise VerifyException(why)

    # -- model ----------------------------------------------------------------

    @property
    def kind(self) -> TargetKind:
        kind = lookup_target_kind(self.kind_name.data)
        assert kind is not None, "verified on construction"
        return kind

    @property
    def options(self) -> dict[str, Any]:
        return {k: _option_to_python(v) for k, v in self.option_dict.data.items()}

    def option(self, key: str) -> Any:
        """The option's value, else the kind's default for it."""
        if key in self.option_dict.data:
            return _option_to_python(self.option_dict.data[key])
        spec = self.kind.options.get(key)
        return None if spec is None else spec.default

    @property
    def host(self) -> TargetAttr | None:
        return self.host_attr if isinstance(self.host_attr, TargetAttr) else None

    @property
    def device_type(self) -> DeviceType:
        return self.kind.device_type

    @property
    def keys(self) -> tuple[str, ...]:
        return self.kind.keys

    def with_host(self, host: TargetAttr | None) -> TargetAttr:
        return TargetAttr(self.kind_name.data, self.options, host)

    def without_host(self) -> TargetAttr:
        return self if self.host is None else self.with_host(None)

    def is_external_codegen(self) -> bool:
        """The kind is external codegen or brings its own graph-to-loop lowering
        (docs/design.md §2.4)."""
        return self.kind.is_external_codegen or self.kind.relay_to_tir

    def is_external_codegen_for(self, that: TargetAttr) -> bool:
        """Same device type, self external, `that` not (docs/design.md §2.4)."""
        return (
            self.device_type == that.device_type
            and self.is_external_codegen()
            and not that.is_external_codegen()
        )

    def __str__(self) -> str:
        opts = "".join(f" -{k}={v}" for k, v in sorted(self.options.items()))
        host = f" -host={self.host}" if self.host is not None else ""
        return f"{self.kind_name.data}{opts}{host}"


def _unknown_kind_message(kind: str) -> str:
    return f"unknown target kind '{kind}' (registered kinds: {', '.join(registered_kind_names())})"


def _host_problem(host: TargetAttr) -> str | None:
    if host.device_type not in HOST_DEVICE_TYPES:
        return (
            f"host target '{host.kind_name.data}' is not a CPU target: write a CPU "
            'host such as #target.target<"llvm">, or drop the host'
        )
    if host.host is not None:
        return "a host target cannot have a host of its own"
    return None


# ----------------------------------------------------------------------------
# #target.vdevice
# ----------------------------------------------------------------------------


@irdl_attr_definition
class VirtualDeviceAttr(ParametrizedAttribute):
    """A possibly partially constrained virtual device (docs/design.md §2.3)."""

    name = "target.vdevice"

    device_type_attr: IntAttr
    device_id_attr: IntAttr
    target_attr: Attribute  # TargetAttr | NoneAttr
    scope_attr: StringAttr

    def __init__(
        self,
        device_type: DeviceType | int = UNCONSTRAINED,
        device_id: int = UNCONSTRAINED,
        target: TargetAttr | None = None,
        memory_scope: str = "",
    ) -> None:
        super().__init__(
            IntAttr(int(device_type)),
            IntAttr(device_id),
            NoneAttr() if target is None else target,
            StringAttr(memory_scope),
        )

    @staticmethod
    def for_target(target: TargetAttr, device_id: int = 0) -> VirtualDeviceAttr:
        return VirtualDeviceAttr(target.device_type, device_id, target)

    @staticmethod
    def unconstrained() -> VirtualDeviceAttr:
        return VirtualDeviceAttr()

    # -- syntax ---------------------------------------------------------------

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            device_type, device_id = _parse_device(parser)
            target: Attribute = NoneAttr()
            scope = ""
            while parser.parse_optional_punctuation(",") is not None:
                key = parser.parse_keyword_in(("target", "scope"), "in #target.vdevice")
                parser.parse_punctuation("=")
                if key == "target":
                    pos = parser.pos
                    target = parser.parse_attribute()
                    if not isinstance(target, TargetAttr):
                        parser.raise_error("expected a #target.target", pos, parser.pos)
                    if device_type == UNCONSTRAINED:
                        device_type = int(target.device_type)
                    elif device_type != target.device_type:
                        parser.raise_error(
                            f"target '{target.kind_name.data}' is for device type "
                            f"'{target.device_type.name}', not "
                            f"'{DeviceType(device_type).name}'",
                            pos,
                            parser.pos,
                        )
                else:
                    scope = parser.parse_str_literal("memory scope expected")
        return [IntAttr(device_type), IntAttr(device_id), target, StringAttr(scope)]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            dt = self.device_type
            printer.print_string("?" if dt is None else dt.name)
            if self.device_id != UNCONSTRAINED:
                printer.print_string(f":{self.device_id}")
            if self.target is not None:
                printer.print_string(", target = ")
                printer.print_attribute(self.target)
            if self.memory_scope:
                printer.print_string(", scope = ")
                printer.print_string_literal(self.memory_scope)

    def verify(self) -> None:
        dt = self.device_type_attr.data
        if dt != UNCONSTRAINED and DeviceType.by_name(_dt_name(dt)) is None:
            raise VerifyException(f"unknown device type {dt}")
        if self.device_id_attr.data < UNCONSTRAINED:
            raise VerifyException("device id must be -1 (unconstrained) or >= 0")
        if not isinstance(self.target_attr, (TargetAttr, NoneAttr)):
            raise VerifyException("target must be a #target.target or none")
        if (
            isinstance(self.target_attr, TargetAttr)
            and dt != self.target_attr.device_type
        ):
            raise VerifyException(
                f"target '{self.target_attr.kind_name.data}' does not run on device "
                f"type {_dt_name(dt)}"
            )

    # -- model ----------------------------------------------------------------

    @property
    def device_type(self) -> DeviceType | None:
        dt = self.device_type_attr.data
        return None if dt == UNCONSTRAINED else DeviceType(dt)

    @property
    def device_id(self) -> int:
        return self.device_id_attr.data

    @property
    def target(self) -> TargetAttr | None:
        return self.target_attr if isinstance(self.target_attr, TargetAttr) else None

    @property
    def memory_scope(self) -> str:
        return self.scope_attr.data

    def is_fully_unconstrained(self) -> bool:
        return self == _FULLY_UNCONSTRAINED

    def is_fully_constrained(self) -> bool:
        """Target, id and scope known (an empty scope is NOT constrained)."""
        return (
            self.target is not None
            and self.device_id != UNCONSTRAINED
            and self.memory_scope != ""
        )

    def join(self, other: VirtualDeviceAttr) -> VirtualDeviceAttr | None:
        """Most constrained device agreeing with both, or None if they conflict."""
        if self == other or other == _FULLY_UNCONSTRAINED:
            return self
        if self == _FULLY_UNCONSTRAINED:
            return other
        return _join(self, other)

    def _join(self, other: VirtualDeviceAttr) -> VirtualDeviceAttr | None:
        fields: list[Any] = []
        for mine, theirs, free in zip(self._fields, other._fields, _FREE_FIELDS):
            if mine != free and theirs != free and mine != theirs:
                return None
            fields.append(theirs if mine == free else mine)
        dt, did, target, scope = fields
        if target is not None and dt != target.device_type:
            return None
        return VirtualDeviceAttr(dt, did, target, scope)

    def default(self, other: VirtualDeviceAttr) -> VirtualDeviceAttr:
        """Self with each unconstrained field filled from `other` (docs/design.md §2.3).

        The target is only taken from `other` when it runs on the (defaulted)
        device type, so the result always satisfies the invariant.
        """
        return _default(self, other)

    def _default(self, other: VirtualDeviceAttr) -> VirtualDeviceAttr:
        dt, did, target, scope = (
            theirs if mine == free else mine
            for mine, theirs, free in zip(self._fields, other._fields, _FREE_FIELDS)
        )
        if self.target is None and (
            other.target is None or other.target.device_type != dt
        ):
            target = None
        return VirtualDeviceAttr(dt, did, target, scope)

    @property
    def _fields(self) -> tuple[int, int, TargetAttr | None, str]:
        return (
            self.device_type_attr.data,
            self.device_id,
            self.target,
            self.memory_scope,
        )

    def __str__(self) -> str:
        dt = self.device_type
        text = ("?" if dt is None else dt.name) + (
            f":{self.device_id}" if self.device_id != UNCONSTRAINED else ""
        )
        if self.target is not None:
            text += f" ({self.target})"
        if self.memory_scope:
            text += f" scope '{self.memory_scope}'"
        return text


_FREE_FIELDS = (UNCONSTRAINED, UNCONSTRAINED, None, "")
_FULLY_UNCONSTRAINED = VirtualDeviceAttr()

# Building an attribute verifies it, which dominates device planning's time on
# large graphs; the few distinct devices of a program make these caches tiny.
_join = lru_cache(maxsize=4096)(VirtualDeviceAttr._join)
_default = lru_cache(maxsize=4096)(VirtualDeviceAttr._default)


def _dt_name(dt: int) -> str:
    try:
        return DeviceType(dt).name
    except ValueError:
        return str(dt)


def _parse_device(parser: AttrParser) -> tuple[int, int]:
    """`?` | `?:id` | `name` | `name:id`."""
    device_type = UNCONSTRAINED
    if parser.parse_optional_characters("?") is None:
        pos = parser.pos
        name = parser.parse_identifier("device type (e.g. cpu, cuda) or '?' expected")
        dt = DeviceType.by_name(name)
        if dt is None:
            known = ", ".join(DeviceType.__members__)
            parser.raise_error(
                f"unknown device type '{name}' (known: {known})", pos, parser.pos
            )
        device_type = int(dt)
    device_id = UNCONSTRAINED
    if parser.parse_optional_punctuation(":") is not None:
        device_id = parser.parse_integer(allow_boolean=False, allow_negative=False)
    return device_type, device_id


# ----------------------------------------------------------------------------
# #target.config
# ----------------------------------------------------------------------------


@irdl_attr_definition
class CompilationConfigAttr(ParametrizedAttribute):
    """The raw target list of a compilation configuration (docs/design.md §2.5).

    The derived configuration (`.config`) is built and checked on
    construction, so a module carrying an invalid configuration does not
    verify.
    """

    name = "target.config"

    targets: ArrayAttr[TargetAttr]
    fallback_attr: IntAttr  # rule D's `relay.fallback_device_type`, or -1

    def __init__(
        self, targets: Sequence[TargetAttr], fallback: DeviceType | int = UNCONSTRAINED
    ) -> None:
        super().__init__(ArrayAttr(targets), IntAttr(int(fallback)))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            pos = parser.pos
            targets = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_attribute
            )
            if not all(isinstance(t, TargetAttr) for t in targets):
                parser.raise_error("expected a list of #target.target", pos, parser.pos)
            fallback = UNCONSTRAINED
            if parser.parse_optional_punctuation(",") is not None:
                parser.parse_keyword("fallback")
                parser.parse_punctuation("=")
                fallback, _ = _parse_device(parser)
            try:
                attr = CompilationConfigAttr(cast(list[TargetAttr], targets), fallback)
            except VerifyException as e:
                parser.raise_error(str(e), pos, parser.pos)
        return [attr.targets, attr.fallback_attr]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string("[")
            printer.print_list(self.targets.data, printer.print_attribute)
            printer.print_string("]")
            if self.fallback_attr.data != UNCONSTRAINED:
                printer.print_string(
                    f", fallback = {_dt_name(self.fallback_attr.data)}"
                )

    def verify(self) -> None:
        from hetero.dialects.target.config import ConfigError

        try:
            self.config  # noqa: B018  (built for its checks)
        except ConfigError as e:
            raise VerifyException(str(e)) from e

    @property
    def config(self) -> CompilationConfig:
        return _build_config(self)


@lru_cache(maxsize=64)
def _build_config(attr: CompilationConfigAttr) -> CompilationConfig:
    from hetero.dialects.target.config import CompilationConfig

    fallback = attr.fallback_attr.data
    return CompilationConfig.from_targets(
        attr.targets.data, None if fallback == UNCONSTRAINED else fallback
    )


CONFIG_ATTR_NAME = "target.config"
"""The module attribute holding a `#target.config`."""


Target = Dialect("target", [], [TargetAttr, VirtualDeviceAttr, CompilationConfigAttr])
