"""The `target` dialect: where code runs, as attributes.

Everything a target attribute means lives in this package: the attributes and
the dialect (`attrs`), the registry of target kinds and their option schemas
(`kind`, with hetero's own kinds in `builtin`), target strings such as
`"llvm -mcpu=x86-64-v3"` (`target_string`) and the compilation configuration
a set of targets makes (`config`).  It sits with the other dialects, below
everything that reads targets (see docs/architecture.md).


* `#target.target<"cuda", {arch = "sm_90"}, host = #target.target<"llvm">>` — a
  target: a registered kind name, options checked against the kind's schema,
  and an optional host target (a CPU target that exposes the function).
* `#target.vdevice<cuda:0, target = #target.target<"cuda">, scope = "global">`
  — a virtual device (docs/design.md §2.3): device type, device id, target and memory
  scope, each of which may be unconstrained (`?` for the device part, the
  keyword omitted for target and scope).  Unlike TVM, targets compare
  structurally, so no canonicalisation by pointer is needed for `join`.
* `#target.config<[#target.target<"llvm">, #target.target<"cuda">], fallback = cpu>`
  — a compilation configuration (docs/design.md §2.5); as the module attribute
  `target.config` it makes a `.mlir` file carry its own configuration.
"""

from hetero.dialects.target.attrs import (
    CONFIG_ATTR_NAME,
    UNCONSTRAINED,
    CompilationConfigAttr,
    Target,
    TargetAttr,
    VirtualDeviceAttr,
)

__all__ = [
    "CONFIG_ATTR_NAME",
    "UNCONSTRAINED",
    "CompilationConfigAttr",
    "Target",
    "TargetAttr",
    "VirtualDeviceAttr",
]
