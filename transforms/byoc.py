"""What the BYOC passes share (docs/passes/byoc.md); not a pass itself.

* Two discardable op attributes carry the partitioning between passes, so
  each pass can be tested on hand-written input:
  `relay.compiler = "<kind>"` (written by `annotate-target`: this op goes to
  that external codegen) and `relay.compiler_region = N` (written by
  `merge-compiler-regions`: annotated ops with the same number in one block
  form one partition).
* A `Compiler` name is the name of a registered external-codegen target kind
  (docs/design.md §4.1); anything else is a located diagnostic.
* `ExternalTargets` answers "which external kinds may take this op": those of
  the compilation config, in config order (the precedence of docs/design.md §2.5),
  that are external codegen *for* the target of the op's device (§2.4, §4.1:
  a partition never moves a value to another device).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from hetero.dialects.relay import CallIndirectOp, FnOp, FuncOp, FunctionOpBase
from hetero.dialects.target import TargetAttr, VirtualDeviceAttr
from hetero.dialects.target.config import CompilationConfig
from hetero.dialects.target.kind import lookup_target_kind, registered_kind_names
from hetero.transforms.plan_devices import is_optimizable
from hetero.utils.diagnostics import HeteroError
from hetero.utils.values import replace_within

COMPILER_ATTR = "relay.compiler"
"""Op attribute: the external-codegen kind that takes the op."""

REGION_ATTR = "relay.compiler_region"
"""Op attribute: the partition (numbered per module) an annotated op belongs to."""


# ----------------------------------------------------------------------------
# Compiler names
# ----------------------------------------------------------------------------


def external_kind_names() -> list[str]:
    """The registered kinds that are external codegens (valid `Compiler` names)."""
    return [name for name in registered_kind_names() if _is_external(name)]


def _is_external(name: str) -> bool:
    kind = lookup_target_kind(name)
    return kind is not None and (kind.is_external_codegen or kind.relay_to_tir)


def check_compiler(name: str, op: Operation, what: str = "compiler") -> str:
    """`name` if it names an external-codegen kind, else a diagnostic at `op`."""
    if not _is_external(name):
        known = ", ".join(external_kind_names())
        raise HeteroError(
            f"unknown {what} '{name}': no external-codegen target kind has that name "
            f"(known: {known})",
            op,
        )
    return name


def compiler_names(names: Sequence[str], op: Operation) -> list[str]:
    """A pass option's compiler names, each checked."""
    return [check_compiler(name, op) for name in names]


# ----------------------------------------------------------------------------
# Which external kinds may take an op
# ----------------------------------------------------------------------------


class ExternalTargets:
    """The external-codegen targets of a configuration, optionally restricted.

    `only` (compiler names, already checked) keeps those kinds for the
    automatic choices; each must be in the configuration.
    """

    def __init__(
        self, config: CompilationConfig, module: ModuleOp, only: Sequence[str]
    ) -> None:
        self.config = config
        self.configured = [
            t for t in config.primitive_targets if t.is_external_codegen()
        ]
        for name in only:
            self._require_configured(name, module)
        self.targets = [
            t for t in self.configured if not only or t.kind_name.data in only
        ]
        self._devices: dict[VirtualDeviceAttr | None, VirtualDeviceAttr] = {}
        self._takers: dict[VirtualDeviceAttr, list[TargetAttr]] = {}

    def device(self, op: Operation) -> VirtualDeviceAttr:
        """Where `op` runs: its `vdevice`, else (unplanned) the default device."""
        vdevice = getattr(op, "vdevice", None)
        if vdevice not in self._devices:
            default = self.config.default_primitive_virtual_device
            device = default if vdevice is None else vdevice.default(default)
            self._devices[vdevice] = self.config.canonical_virtual_device(device)
        return self._devices[vdevice]

    def for_device(self, device: VirtualDeviceAttr) -> list[TargetAttr]:
        """The configured kinds that may take a computation on `device`, in precedence order."""
        if device not in self._takers:
            self._takers[device] = [t for t in self.configured if _takes(t, device)]
        return self._takers[device]

    def chosen_for(self, device: VirtualDeviceAttr) -> list[TargetAttr]:
        """Those of `for_device` that the pass may choose (its `compilers` option)."""
        return [t for t in self.for_device(device) if t in self.targets]

    def check(self, kind: str, op: Operation) -> None:
        """A diagnostic unless `kind` is configured and may take `op` on its device."""
        self._require_configured(kind, op)
        device = self.device(op)
        takers = [t.kind_name.data for t in self.for_device(device)]
        if kind not in takers:
            raise HeteroError(
                f"'{kind}' cannot take {op.name}: it runs on {device}, and '{kind}' is not "
                f"external codegen for that device's target (configured kinds that are: "
                f"{', '.join(takers) or 'none'})",
                op,
            )

    def _require_configured(self, kind: str, op: Operation) -> None:
        names = [t.kind_name.data for t in self.configured]
        if kind not in names:
            raise HeteroError(
                f"compiler '{kind}' is not in the compilation configuration "
                f"(its external kinds: {', '.join(names) or 'none'})",
                op,
            )


def _takes(external: TargetAttr, device: VirtualDeviceAttr) -> bool:
    assert device.target is not None, "canonical devices have a target"
    return serves(external, device.target)


def serves(external: TargetAttr, target: TargetAttr) -> bool:
    """`external` may take what plan-devices placed on `target` (docs/design.md
    §4.1, as Collage's rule: the same target, or external codegen for it)."""
    return (
        external.without_host() == target.without_host()
        or external.is_external_codegen_for(target)
    )


# ----------------------------------------------------------------------------
# Where the BYOC passes look
# ----------------------------------------------------------------------------


def is_opaque(op: Operation) -> bool:
    """Function literals whose bodies belong to someone else: a library
    (`Compiler`, `Extern`), a pattern (`Composite`) or a fused kernel (`Primitive`)."""
    return isinstance(op, FnOp) and (
        op.compiler is not None
        or op.composite is not None
        or op.is_primitive
        or op.is_extern
    )


def open_blocks(root: Block) -> list[Block]:
    """`root` and the blocks nested in it (`if` branches, plain closures),
    parents first, not entering opaque function literals."""
    blocks = [root]
    for block in blocks:  # grows while walked
        for op in block.ops:
            if not is_opaque(op):
                blocks.extend(b for region in op.regions for b in region.blocks)
    return blocks


def program_functions(module: ModuleOp) -> list[FuncOp]:
    """The globals of ordinary program code: optimizable, not kernels."""
    return [
        f
        for f in module.ops
        if isinstance(f, FuncOp) and is_optimizable(f) and not f.is_primitive
    ]


def program_blocks(module: ModuleOp) -> list[Block]:
    """The blocks of ordinary program code: those of optimizable functions."""
    return [
        block for f in program_functions(module) for block in open_blocks(f.body.block)
    ]


def enclosing_function(op: Operation) -> FuncOp:
    """The global function `op` is nested in."""
    parent = op.parent_op()
    while not isinstance(parent, FuncOp):
        assert parent is not None, "relay ops live in relay functions"
        parent = parent.parent_op()
    return parent


def literal_callee(op: Operation) -> FnOp | None:
    """The function literal `op` calls, when it is a `call_indirect` of one."""
    if isinstance(op, CallIndirectOp) and isinstance(op.callee, OpResult):
        callee = op.callee.op
        return callee if isinstance(callee, FnOp) else None
    return None


def composite_callee(op: Operation) -> FnOp | None:
    """The `Composite` function literal `op` calls, if any."""
    callee = literal_callee(op)
    return callee if callee is not None and callee.composite is not None else None


def bind_parameters(function: FnOp, inputs: Sequence[SSAValue]) -> None:
    """Within `function`, its parameters replace the values `inputs` (and are
    named after them).  Walking the function beats scanning all uses of a value
    that is used all over the program."""
    params = function.body.block.args
    mapping: dict[SSAValue, SSAValue] = {}
    for value, param in zip(inputs, params, strict=True):
        param.name_hint = value.name_hint
        mapping[value] = param
    replace_within(function.walk(), mapping)


def inline_body(
    function: FunctionOpBase, call: Operation, args: Sequence[SSAValue]
) -> list[Operation]:
    """Replace `call` by a copy of `function`'s body, its parameters bound to
    `args`; returns the copied ops."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(function.args, args))
    copied: list[Operation] = []
    block = function.body.block
    for op in block.ops:
        if op is block.last_op:  # relay.return
            call.results[0].replace_all_uses_with(
                mapping.get(op.operands[0], op.operands[0])
            )
            break
        new = op.clone(mapping)
        Rewriter.insert_op(new, InsertPoint.before(call))
        copied.append(new)
    Rewriter.erase_op(call)
    return copied


def inline_literal_call(call: CallIndirectOp, callee: FnOp) -> None:
    """Inline a call of a function literal; drop the literal once nothing uses it."""
    inline_body(callee, call, call.args)
    if not callee.result.uses:
        Rewriter.erase_op(callee)
