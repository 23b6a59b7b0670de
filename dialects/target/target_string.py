"""TVM's target strings: `"cuda -arch=sm_80 -host=llvm"` → `#target.target`.

One syntax wherever a target is written as text: `bind-target{target=...}`,
the `targets` option of the module-level passes (`plan-devices{targets=
"llvm -num_threads=2,cuda -arch=sm_80"}`), `hetero.compile(targets=[...])`
and the tools' `--targets`.  A target is its kind's name, then
`-option=value` flags checked against the kind's option schema (`-host=KIND`
names the host); a list option is comma-separated (`-mattr=+avx2,+fma`).  In
a list of targets a comma separates two targets, except after a list
option's value, where it continues the list.

A target string written for TVM keeps its meaning here, or is refused with
what to write instead (docs/dialects/target.md lists every spelling):

* TVM's names of hetero's options are the options' aliases
  (`OptionSpec.aliases`: `-num-cores` sets `num_threads`);
* TVM's options hetero has no counterpart for (`FOREIGN_OPTIONS`) are
  dropped with a warning where the code still means what was asked (a
  tuning hint, a label), dropped silently where their value is what hetero
  always does (`-thread_warp_size=32`), and refused otherwise;
* a TVM kind is a hetero kind under another name (`KIND_SPELLINGS`) or is
  refused with the kind to use (`REFUSED_KINDS`);
* TVM's tags of NVIDIA GPUs (`TARGET_TAGS`) stand for their `cuda` target;
  flags after a tag override its options.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.utils.exceptions import VerifyException

from hetero.dialects.target import TargetAttr
from hetero.dialects.target.attrs import _unknown_kind_message
from hetero.dialects.target.kind import (
    HOST_DEVICE_TYPES,
    TargetKind,
    lookup_target_kind,
    registered_kind_names,
)
from hetero.utils.diagnostics import warn


@dataclass(frozen=True)
class ForeignOption:
    """An option of TVM's kind that hetero's kind has no counterpart for."""

    advice: str
    """What hetero does instead, or what to write; `{kind}`, `{keys}`,
    `{external}` (the external codegen kinds) and `{kinds}` are filled in."""
    refused: bool = False
    """Whether the target is refused (honouring it would change what the code
    does) rather than the option dropped with a warning."""
    implied: tuple[str, ...] = ()
    """The values that ask for what hetero always does: dropped without a word."""
    type: type = str
    """`list` where a comma continues the value in a list of targets."""


_FAST_MATH = ForeignOption(
    "hetero's CPU code keeps IEEE semantics (no fast-math flags): results are "
    "as precise or more",
    implied=("0", "false"),
)
_UNREAD_BY_SCHEDULES = ForeignOption("hetero's GPU schedules do not read it")
_ONE_MODULE = ForeignOption(
    "hetero builds one kind of module: hetero.compile loads it, hetero-compile "
    "writes it out as a .hetero artifact (docs/deployment.md)",
    refused=True,
)

COMMON_FOREIGN_OPTIONS = {
    "keys": ForeignOption(
        "a kind's keys are its own ({keys}); hetero picks schedules by kind and "
        "-mtriple",
        implied=("{keys}",),
        type=list,
    ),
    "tag": ForeignOption("write the tag itself as the target, e.g. nvidia/nvidia-a100"),
    "device": ForeignOption("hetero picks schedules by kind and -mtriple"),
    "model": ForeignOption("hetero picks schedules by kind and -mtriple"),
    "libs": ForeignOption(
        "hetero links no library into a target: a library is an external codegen "
        "kind, a target of its own listed after '{kind}', e.g. targets "
        "'cuda,cudnn,cublas' or 'llvm,blas' (external kinds: {external})",
        refused=True,
        type=list,
    ),
    "link-params": ForeignOption(
        "hetero always compiles a model's constants into its module",
        implied=("1", "true"),
    ),
    "system-lib": _ONE_MODULE,
    "runtime": _ONE_MODULE,
    "executor": _ONE_MODULE,
}
"""TVM's options of every kind, by name."""

FOREIGN_OPTIONS: dict[str, dict[str, ForeignOption]] = {
    "llvm": {
        "mfloat-abi": ForeignOption(
            "the float ABI follows -mtriple, e.g. -mtriple=armv7a-linux-gnueabihf",
            refused=True,
        ),
        "mabi": ForeignOption(
            "the ABI follows -mtriple, e.g. -mtriple=riscv64-linux-gnu", refused=True
        ),
        "fast-math": _FAST_MATH,
        **{
            f"fast-math-{flag}": _FAST_MATH
            for flag in ("nnan", "ninf", "nsz", "arcp", "contract", "reassoc")
        },
        "cl-opt": ForeignOption(
            "hetero passes LLVM no command-line options", type=list
        ),
        "jit": ForeignOption("hetero's CPU code is loaded by its own runtime"),
        "vector-width": ForeignOption(
            "hetero's vector width follows -mattr (+avx512f: 512 bits, +avx2: 256)"
        ),
    },
    "cuda": {
        "thread_warp_size": ForeignOption(
            "NVIDIA GPUs run warps of 32 threads", refused=True, implied=("32",)
        ),
        "registers_per_block": _UNREAD_BY_SCHEDULES,
        "l2_cache_size_bytes": _UNREAD_BY_SCHEDULES,
        "mtriple": ForeignOption(
            "hetero's cuda kind emits PTX for nvptx64-nvidia-cuda only",
            refused=True,
            implied=("nvptx64-nvidia-cuda",),
        ),
    },
}
"""TVM's options of one kind (by hetero's name for it), by name."""

KIND_SPELLINGS = {"nvptx": "cuda"}
"""TVM kinds that are a hetero kind under another name: `nvptx` is TVM's
GPU backend through LLVM's NVPTX, which is what hetero's `cuda` is (TVM's
`-mcpu=sm_80` is then `cuda`'s `arch`, through its alias)."""

_NO_CODE_GENERATOR = "hetero has no code generator for it (its kinds: {kinds})"

REFUSED_KINDS = {
    "c": "hetero has no C source backend: write 'llvm' for native CPU code "
    "(-mcpu, -mattr and -mtriple are llvm's options too)",
    "ext_dev": "hetero has no ext_dev kind: an accelerator or library is an "
    "external codegen kind, so write its name (external kinds: {external}) or "
    "register a kind of your own (the hetero.target_kinds entry point group)",
    **dict.fromkeys(
        ("rocm", "opencl", "metal", "vulkan", "webgpu", "hexagon"), _NO_CODE_GENERATOR
    ),
}
"""TVM kinds hetero has no counterpart for, with what to write instead."""

NVIDIA_ARCHS = {
    "nvidia/nvidia-b100": "sm_100a",
    "nvidia/nvidia-h200": "sm_90a",
    "nvidia/nvidia-h100": "sm_90a",
    "nvidia/nvidia-a100": "sm_80",
    "nvidia/nvidia-a40": "sm_86",
    "nvidia/nvidia-a30": "sm_80",
    "nvidia/nvidia-a10": "sm_86",
    "nvidia/nvidia-a10g": "sm_86",
    "nvidia/nvidia-a16": "sm_86",
    "nvidia/nvidia-a2": "sm_86",
    "nvidia/nvidia-t4": "sm_75",
    "nvidia/nvidia-v100": "sm_70",
    "nvidia/rtx-a6000": "sm_86",
    "nvidia/geforce-rtx-5060-ti": "sm_120",
    "nvidia/geforce-rtx-4090": "sm_89",
    "nvidia/geforce-rtx-3090-ti": "sm_86",
    "nvidia/geforce-rtx-3090": "sm_86",
    "nvidia/geforce-rtx-3080-ti": "sm_86",
    "nvidia/geforce-rtx-3080": "sm_86",
    "nvidia/geforce-rtx-3070-ti": "sm_86",
    "nvidia/geforce-rtx-3070": "sm_86",
    "nvidia/geforce-rtx-3060": "sm_86",
    "nvidia/nvidia-titan-rtx": "sm_75",
    "nvidia/geforce-rtx-2080-ti": "sm_75",
    "nvidia/geforce-rtx-2080": "sm_75",
    "nvidia/geforce-rtx-2070": "sm_75",
    "nvidia/geforce-rtx-2060": "sm_75",
    "nvidia/nvidia-titan-v": "sm_70",
}
"""TVM's tags of NVIDIA GPUs from Volta on, and their SM architecture
(`nvidia/nvidia-h200` is hetero's: TVM has none for the H200)."""

TARGET_TAGS = {
    tag: f"cuda -arch={arch} -max_threads_per_block=1024 "
    "-max_shared_memory_per_block=49152"
    for tag, arch in NVIDIA_ARCHS.items()
}
"""Tag → its target string: the limits TVM's tags give every NVIDIA GPU
(1024 threads and 48 KiB of static shared memory a block)."""


def parse_target_string(text: str) -> TargetAttr:
    """`"cuda -arch=sm_80 -host=llvm"` → the target attribute (TVM's syntax).

    Raises `ValueError` with the reason when the text is not a valid target.
    """
    if not text.split():
        raise ValueError("expected a target kind name")
    name, *flags = text.split()
    kind, preset = _resolve_kind(name)
    options, _ = _parse_flags(kind, preset)
    given, host = _parse_flags(kind, flags)
    try:
        return TargetAttr(kind.name, {**options, **given}, host)
    except VerifyException as e:
        raise ValueError(str(e)) from e


def _resolve_kind(name: str) -> tuple[TargetKind, list[str]]:
    """The kind `name` (a kind, a tag or TVM's name of a kind) stands for, and
    the flags it implies."""
    preset: list[str] = []
    if name in TARGET_TAGS:
        name, *preset = TARGET_TAGS[name].split()
    kind = lookup_target_kind(KIND_SPELLINGS.get(name, name))
    if kind is not None:
        return kind, preset
    if name in REFUSED_KINDS:
        raise ValueError(
            f"TVM's target kind '{name}': {REFUSED_KINDS[name].format(**_names())}"
        )
    raise ValueError(_unknown_kind_message(name))


def _parse_flags(
    kind: TargetKind, flags: list[str]
) -> tuple[dict[str, Any], TargetAttr | None]:
    """The options `flags` set (by name or alias) and the `-host` they name."""
    options: dict[str, Any] = {}
    setters: dict[str, str] = {}
    seen: set[str] = set()
    host = None
    for flag in flags:
        name, eq, value = flag.removeprefix("-").partition("=")
        if not flag.startswith("-") or not eq or not name or not value:
            raise ValueError(f"expected '-option=value', got '{flag}'")
        if name in seen:
            raise ValueError(f"option '-{name}' is given twice")
        seen.add(name)
        if name == "host":
            host = _parse_host(value)
            continue
        key = kind.option_named(name)
        if key is None:
            _drop_foreign_option(kind, name, value)
            continue
        parsed = _option_value(key, value, kind.options[key].type)
        if key in options and options[key] != parsed:
            raise ValueError(
                f"'-{setters[key]}' and '-{name}' set option '{key}' of target "
                f"kind '{kind.name}' to different values"
            )
        options[key], setters[key] = parsed, name
    return options, host


def _parse_host(text: str) -> TargetAttr:
    """The host `-host=text` names: a CPU target, which TVM would put in
    place of any other without a word, and hetero asks for instead."""
    host = parse_target_string(text)
    if host.device_type not in HOST_DEVICE_TYPES:
        raise ValueError(
            f"host target '{text}' is not a CPU target: write -host=llvm, or drop "
            "-host to let the configuration pick the host (its first CPU target, "
            "else llvm); hetero does not replace a device host with a CPU one "
            "as TVM does"
        )
    return host


def _drop_foreign_option(kind: TargetKind, name: str, value: str) -> None:
    """Drop TVM's option `-name=value`, which hetero's `kind` has no
    counterpart for: silently where hetero always does what it asks, with a
    warning where the code still means the same; else refuse it."""
    foreign = _foreign_option(kind, name)
    if foreign is None:
        raise ValueError(kind.check_options({name: value}))
    fields = {"kind": kind.name, "keys": ",".join(kind.keys), **_names()}
    if value in (implied.format(**fields) for implied in foreign.implied):
        return
    why = f"-{name}={value}: {foreign.advice.format(**fields)}"
    if foreign.refused:
        raise ValueError(f"target kind '{kind.name}' takes no option {why}")
    warn(f"target kind '{kind.name}' ignores TVM's option {why}", stacklevel=4)


def _foreign_option(kind: TargetKind, name: str) -> ForeignOption | None:
    """TVM's option `name` of `kind`, or of every kind; None if TVM has none."""
    return FOREIGN_OPTIONS.get(kind.name, {}).get(name) or COMMON_FOREIGN_OPTIONS.get(
        name
    )


def _names() -> dict[str, str]:
    """The registered kinds and the external codegen kinds, for messages."""
    kinds = [lookup_target_kind(name) for name in registered_kind_names()]
    external = [
        k.name for k in kinds if k and (k.is_external_codegen or k.relay_to_tir)
    ]
    return {
        "kinds": ", ".join(k.name for k in kinds if k),
        "external": ", ".join(external),
    }


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
    """Whether `target`'s last flag sets an option of type list (its own,
    by name or alias, or one of TVM's)."""
    name, *flags = target.split() or [""]
    try:
        kind, _ = _resolve_kind(name)
    except ValueError:
        return False
    if not flags:
        return False
    option = flags[-1].removeprefix("-").partition("=")[0]
    key = kind.option_named(option)
    if key is not None:
        return kind.options[key].type is list
    foreign = _foreign_option(kind, option)
    return foreign is not None and foreign.type is list
