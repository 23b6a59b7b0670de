"""CompilationConfig: the targets of one build and the devices they imply (docs/design.md §2.5).

Built from a list of targets, in the caller's order:

* host target — rule A (the host of the first target that has one), rule B
  (the first CPU/Hexagon target), rule C (a fresh `llvm`);
* primitive targets — every raw target with its host replaced by the host
  target; kind names must be unique, and per device type the first target is
  the regular one and every later one must be external codegen for it;
* default primitive device — rule D (an explicit fallback device type), rule E
  (the one device type all primitive targets share), rule F (CPU).

Targets compare structurally, so canonicalisation only has to fill a missing
target from the device type (the one place device types imply targets).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.target import TargetAttr, VirtualDeviceAttr
from hetero.dialects.target.kind import HOST_DEVICE_TYPES, DeviceType


class ConfigError(ValueError):
    """A target list that does not make a valid compilation configuration."""


@dataclass(frozen=True)
class CompilationConfig:
    host_target: TargetAttr
    primitive_targets: tuple[TargetAttr, ...]
    default_primitive_virtual_device: VirtualDeviceAttr
    host_virtual_device: VirtualDeviceAttr
    optional_homogeneous_target: TargetAttr | None

    @staticmethod
    def from_targets(
        raw_targets: Sequence[TargetAttr], fallback_device_type: int | None = None
    ) -> CompilationConfig:
        if not raw_targets:
            raise ConfigError(
                "a compilation configuration requires at least one target"
            )
        host = _host_target(raw_targets)
        primitives = tuple(t.with_host(host) for t in raw_targets)
        _check_unique_kinds(primitives)
        _check_external_codegen_order(primitives)
        default_type = _default_device_type(primitives, fallback_device_type)
        default_target = _first_of_type(primitives, default_type)
        if default_target is None:
            raise ConfigError(
                f"no target is given for the default device type '{default_type.name}'"
            )
        host_device_target = next(
            (t for t in primitives if t.without_host() == host), host
        )
        return CompilationConfig(
            host_target=host,
            primitive_targets=primitives,
            default_primitive_virtual_device=VirtualDeviceAttr(
                default_type, 0, default_target
            ),
            host_virtual_device=VirtualDeviceAttr(
                host.device_type, 0, host_device_target
            ),
            optional_homogeneous_target=primitives[0] if len(primitives) == 1 else None,
        )

    # -- lookups -------------------------------------------------------------

    def find_primitive_target_for_device(
        self, device_type: DeviceType
    ) -> TargetAttr | None:
        """The first (hence regular) primitive target of `device_type`."""
        return _first_of_type(self.primitive_targets, device_type)

    def find_primitive_target_for_device_or_fail(
        self, device_type: DeviceType
    ) -> TargetAttr:
        target = self.find_primitive_target_for_device(device_type)
        if target is None:
            raise ConfigError(
                f"no target is specified for device type '{device_type.name}'"
            )
        return target

    def find_primitive_target_for_kind(self, kind_name: str) -> TargetAttr | None:
        return next(
            (t for t in self.primitive_targets if t.kind_name.data == kind_name), None
        )

    @lru_cache(maxsize=1024)  # noqa: B019  (configs live as long as their attribute)
    def canonical_target(self, target: TargetAttr) -> TargetAttr:
        """The configured target equal to `target` up to its host, else `target`.

        Primitive targets are preferred to the bare host target, so the host
        device and a CPU primitive device of the same kind are one device.
        """
        bare = target.without_host()
        candidates = (*self.primitive_targets, self.host_target)
        return next((t for t in candidates if t.without_host() == bare), target)

    @lru_cache(maxsize=4096)  # noqa: B019  (as above)
    def canonical_virtual_device(self, vd: VirtualDeviceAttr) -> VirtualDeviceAttr:
        """Fill the target from the device type (or canonicalise a given one)."""
        if vd.target is not None:
            target = self.canonical_target(vd.target)
        elif vd.device_type is not None:
            target = self.find_primitive_target_for_device_or_fail(vd.device_type)
        else:
            return vd
        return VirtualDeviceAttr(
            target.device_type, vd.device_id, target, vd.memory_scope
        )

    def virtual_device_for_kind(
        self, kind_name: str, device_id: int = 0
    ) -> VirtualDeviceAttr:
        target = self.find_primitive_target_for_kind(kind_name)
        if target is None:
            raise ConfigError(f"no target of kind '{kind_name}' in the configuration")
        return VirtualDeviceAttr(target.device_type, device_id, target)


def _host_target(raw: Sequence[TargetAttr]) -> TargetAttr:
    for target in raw:  # rule A
        if target.host is not None:
            return target.host.without_host()
    for target in raw:  # rule B
        if target.device_type in HOST_DEVICE_TYPES:
            return target.without_host()
    return TargetAttr("llvm")  # rule C


def _check_unique_kinds(targets: Sequence[TargetAttr]) -> None:
    seen: set[str] = set()
    for t in targets:
        kind = t.kind_name.data
        if kind in seen:
            raise ConfigError(
                f"multiple targets have been given for the same device kind '{kind}'"
            )
        seen.add(kind)


def _check_external_codegen_order(targets: Sequence[TargetAttr]) -> None:
    first: dict[DeviceType, TargetAttr] = {}
    for t in targets:
        general = first.setdefault(t.device_type, t)
        if general is not t and not t.is_external_codegen_for(general):
            raise ConfigError(
                f"when given multiple targets for the device type '{t.device_type.name}' "
                "the first must be for non external codegen, and all subsequent must be "
                f"for external codegen: '{t.kind_name.data}' is not external codegen for "
                f"'{general.kind_name.data}'"
            )


def _default_device_type(
    targets: Sequence[TargetAttr], fallback: int | None
) -> DeviceType:
    if fallback is not None:  # rule D
        if fallback <= 0:
            raise ConfigError(
                f"the fallback device type must be positive, not {fallback}"
            )
        return DeviceType(fallback)
    types = {t.device_type for t in targets}
    if len(types) == 1:  # rule E
        return types.pop()
    return DeviceType.cpu  # rule F


def _first_of_type(targets: Sequence[TargetAttr], dt: DeviceType) -> TargetAttr | None:
    return next((t for t in targets if t.device_type == dt), None)


def module_config(
    module: ModuleOp,
    targets: str | Sequence[str] | None,
    pass_name: str,
    fallback: DeviceType | None = None,
) -> CompilationConfig:
    """The module's `target.config`; `targets` ("llvm,cuda", target strings:
    `hetero.dialects.target.target_string`; in a sequence, each string is one target)
    and `fallback` (the default device type, rule D) only fill a missing one.

    A configuration given on the command line never overrides the module's own
    (docs/design.md §1): it becomes the module attribute only where there was none.
    """
    from hetero.dialects.target import (
        CONFIG_ATTR_NAME,
        UNCONSTRAINED,
        CompilationConfigAttr,
    )
    from hetero.utils.diagnostics import HeteroError

    attr = module.attributes.get(CONFIG_ATTR_NAME)
    if isinstance(attr, CompilationConfigAttr):
        return attr.config
    if attr is not None:
        raise HeteroError(
            f"'{CONFIG_ATTR_NAME}' must be a #target.config, got {attr}", module
        )
    if not targets:
        raise HeteroError(
            f"{pass_name} needs a compilation configuration: add a `{CONFIG_ATTR_NAME} = "
            f'#target.config<[...]>` module attribute or pass `{pass_name}{{targets="llvm,cuda"}}`',
            module,
        )
    from hetero.dialects.target.target_string import (
        parse_target_list,
        parse_target_string,
    )

    try:
        attr = CompilationConfigAttr(
            parse_target_list(targets)
            if isinstance(targets, str)
            else [parse_target_string(t) for t in targets],
            UNCONSTRAINED if fallback is None else fallback,
        )
    except (ValueError, VerifyException) as e:
        raise HeteroError(f"{pass_name}: bad targets {targets!r}: {e}", module) from e
    module.attributes[CONFIG_ATTR_NAME] = attr
    return attr.config
