"""`plan-devices`: decide where every relay value lives (docs/design.md §3).

TVM's PlanDevices, read for SSA and written back as attributes:

0. *normalise* — an `on_device` whose result is what the function returns
   is fixed (the function's result is on that device); a projection of a
   normal `on_device` is moved under it, so that a copy moves one field
   rather than the whole tuple (docs/design.md §3.3).  Relay's third rule
   (let-bound annotations are fixed) has no SSA reading: every value is
   bound, so a normal `on_device` stays a copy point wherever it is.
1. *unification* (§3.4) — a union-find over device domains
   (`hetero.analysis.device_domains`): an op's operands and result share one
   domain (primitives are device-polymorphic per op), every call of a
   function agrees with its one function domain, a call of a `tir.prim_func`
   binds its arguments and result to the prim_func's target and buffer
   scopes, tuples and `if` conditions collapse, annotations and existing
   attributes bind domains.
2. *conflicts* (§3.5) — the edges from a value with several consumers
   to those consumers are unified last, in program order; an edge that
   cannot be unified gets a `device_copy` instead of an error, so a value
   needed on two devices is copied for the later use.  (TVM finds these
   conflicts in a separate pre-pass that only sees annotations; deciding
   them after every other constraint also catches values whose consumers
   are placed by parameters or calls.)  A value with a single consumer that
   cannot agree with it is a genuine conflict.
3. *defaulting* (§3.6) — a free `on_device` joins its body when it can;
   each function's result takes the default device, then its free
   parameters the result's device; an SSA value still free takes the device
   its consumer expects of it, else its function's result device (the SSA
   reading of "a let-bound value takes the let's device").
4. *capture* (§3.7) — the solution becomes attributes: `vdevice` on
   every value-producing op, on every function parameter and result;
   `on_device` ops disappear (a `device_copy` where body and result differ);
   `device_copy` ops get solved endpoints and vanish when those agree.

Re-running the pass on its output changes nothing: every attribute it wrote
reads back as a constraint, and no annotation is left to re-interpret.
Conflicts that no copy can resolve are diagnostics at the op, naming both
devices and where each constraint came from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from hetero.analysis.device_domains import (
    DeviceConflict,
    Domain,
    DomainSolver,
    Origin,
)
from hetero.analysis.devices import buffer_scope
from hetero.dialects.relay import (
    CallIndirectOp,
    CallOp,
    DeviceCopyOp,
    FnOp,
    FuncOp,
    FunctionOpBase,
    GetItemOp,
    IfOp,
    OnDeviceOp,
    ReturnOp,
    ShapeOfOp,
    TupleOp,
    ValueOp,
    YieldOp,
)
from hetero.dialects.target import VirtualDeviceAttr
from hetero.dialects.target.config import CompilationConfig, ConfigError, module_config
from hetero.dialects.target.kind import DeviceType, lookup_target_kind
from hetero.dialects.tir import PrimFuncOp
from hetero.utils.diagnostics import HeteroError, location_of

# ----------------------------------------------------------------------------
# Shared helpers
# ----------------------------------------------------------------------------


def is_optimizable(func: FuncOp) -> bool:
    """Functions owned by an external codegen are left alone (docs/design.md §3.1)."""
    return func.compiler is None and not func.is_extern and not func.skip_optimization


def _body_opaque(op: Operation) -> bool:
    """Primitive function bodies are compiled as a unit: not planned inside."""
    return isinstance(op, FunctionOpBase) and op.is_primitive


def planned_ops(block: Block) -> Iterator[Operation]:
    """Ops of `block` in pre-order, not entering Primitive function bodies."""
    stack = [iter(block.ops)]
    while stack:
        op = next(stack[-1], None)
        if op is None:
            stack.pop()
            continue
        yield op
        if not _body_opaque(op):
            stack.extend(iter(r.block.ops) for r in reversed(op.regions) if r.blocks)


def _where(op: Operation) -> str:
    loc = location_of(op)
    return f"line {loc.line}" if loc is not None else "unknown location"


def _name(value: SSAValue) -> str:
    """`%x`, or what defines an unnamed value: `the result of relay.add (line 4)`."""
    if value.name_hint:
        return f"%{value.name_hint}"
    if isinstance(value, OpResult):
        return f"the result of {value.op.name} ({_where(value.op)})"
    assert isinstance(value, BlockArgument)
    return f"argument #{value.index}"


def _replace(op: Operation, new: Operation, before: Sequence[Operation] = ()) -> None:
    """Replace `op` by `before` + `new`; `new` keeps the source location of `op`."""
    new.location = op.location
    Rewriter.replace_op(op, [*before, new])


def _own_result_device(op: Operation) -> VirtualDeviceAttr | None:
    """The device an op imposes on its own result."""
    if isinstance(op, OnDeviceOp):
        return op.device if op.constrain_result else None
    if isinstance(op, DeviceCopyOp):
        return op.dst
    return getattr(op, "vdevice", None)


# ----------------------------------------------------------------------------
# Phase 0: normalisation
# ----------------------------------------------------------------------------


def normalize(func: FuncOp) -> None:
    for op in list(planned_ops(func.body.block)):
        if isinstance(op, OnDeviceOp) and op.form == "normal":
            if _only_returned(op):
                _replace(op, OnDeviceOp.fixed(op.body, op.virtual_device))
            else:
                _sink_projections(op)


def _only_returned(op: OnDeviceOp) -> bool:
    uses = list(op.result.uses)
    return len(uses) == 1 and isinstance(uses[0].operation, ReturnOp)


def _sink_projections(on_device: OnDeviceOp) -> None:
    """`get_item(on_device(t), i)` → `on_device(get_item(t, i))`: a copy moves one field."""
    for use in list(on_device.result.uses):
        item = use.operation
        if not isinstance(item, GetItemOp):
            continue
        inner = GetItemOp(on_device.body, item.index)
        moved = OnDeviceOp(inner.result, on_device.device)
        inner.location = item.location
        _replace(item, moved, before=[inner])
    if not on_device.result.uses:
        Rewriter.erase_op(on_device)


Describe = str | Callable[[], str]
"""What a constraint is about, for a diagnostic; a callable defers the wording."""


def _after_definition(value: SSAValue) -> InsertPoint:
    if isinstance(value, BlockArgument):
        return InsertPoint.at_start(value.block)
    assert isinstance(value, OpResult)
    return InsertPoint.after(value.op)


# ----------------------------------------------------------------------------
# Phases 1-4: unify, resolve conflicts by copies, default, capture
# ----------------------------------------------------------------------------


class DevicePlanner:
    """Solves the device domains of a module and writes them back."""

    def __init__(self, config: CompilationConfig):
        self.config = config
        self.solver = DomainSolver(config.canonical_virtual_device)
        self.domains: dict[SSAValue, Domain] = {}
        self.globals: dict[str, Domain] = {}
        self.deferred: list[tuple[Operation, int, Domain]] = []
        self.prim_funcs: dict[str, PrimFuncOp] = {}
        self.handlers: dict[type[Operation], Callable[[Operation], None]] = {
            FuncOp: lambda op: None,
            FnOp: self._fn,
            ReturnOp: self._return,
            CallOp: self._call,
            CallIndirectOp: self._call_indirect,
            TupleOp: self._tuple,
            GetItemOp: self._collapse_into_result,
            IfOp: self._if,
            YieldOp: self._yield,
            OnDeviceOp: self._on_device,
            DeviceCopyOp: self._device_copy,
            ShapeOfOp: self._shape_of,
        }

    # -- domains ----------------------------------------------------------------

    def domain_for_type(self, type: Attribute) -> Domain:
        if isinstance(type, FunctionType):
            return self.solver.function(
                [self.domain_for_type(t) for t in type.inputs.data],
                self.domain_for_type(type.outputs.data[0]),
            )
        return self.solver.free()

    def dom(self, value: SSAValue) -> Domain:
        if value not in self.domains:
            self.domains[value] = self.domain_for_type(value.type)
        return self.domains[value]

    def bound(self, device: VirtualDeviceAttr, op: Operation, origin: str) -> Domain:
        """A domain fixed to `device`, or a diagnostic if the config cannot place it."""
        try:
            return self.solver.bound(device, Origin(origin))
        except ConfigError as e:
            raise HeteroError(f"cannot place a value on {device}: {e}", op) from e

    def unify(self, a: Domain, b: Domain, op: Operation, what: Describe) -> None:
        """Unify, or report the conflict at `op` (`what` is only spelled out then)."""
        try:
            self.solver.unify(a, b)
        except DeviceConflict as e:
            text = what if isinstance(what, str) else what()
            raise HeteroError(
                f"conflicting devices for {text}: {e.describe()}", op
            ) from e

    def bind(
        self,
        domain: Domain,
        device: VirtualDeviceAttr | None,
        op: Operation,
        origin: str,
        what: str,
    ) -> None:
        """Bind `domain` to `device`: for a function value, its result only.

        A function value lives where its result does (its `vdevice`, a
        function-typed parameter's or result's); its parameters may be
        elsewhere, so collapsing them onto that device would make a planned
        closure with a parameter on another device unplannable.
        """
        if device is not None:
            self.unify(
                self.solver.result_domain(domain),
                self.bound(device, op, origin),
                op,
                what,
            )

    def bound_value(
        self, type: Attribute, device: VirtualDeviceAttr, op: Operation, origin: str
    ) -> Domain:
        """A domain for a value of `type` held on `device` (see `bind`)."""
        domain = self.domain_for_type(type)
        self.bind(domain, device, op, origin, "the annotated value")
        return domain

    # -- phase 1: collect constraints ------------------------------------------

    def collect(self, module: ModuleOp) -> None:
        self.prim_funcs = {
            op.sym_name.data: op for op in module.ops if isinstance(op, PrimFuncOp)
        }
        funcs = [op for op in module.ops if isinstance(op, FuncOp)]
        for func in funcs:
            self.globals[func.sym_name.data] = self._signature_domain(func)
        for func in funcs:
            if is_optimizable(func) and not func.is_primitive:
                for op in planned_ops(func.body.block):
                    self._constrain(op)

    def _signature_domain(self, func: FunctionOpBase) -> Domain:
        """`fn(params): result`, bound by the function's parameter/result attributes."""
        params = [self.dom(arg) for arg in func.args]
        for arg, device in zip(func.args, func.param_vdevices):
            self.bind(
                self.dom(arg),
                device,
                func,
                f"parameter {_name(arg)}, {_where(func)}",
                f"parameter {_name(arg)}",
            )
        result = self.domain_for_type(func.result_type)
        name = func.sym_name.data if isinstance(func, FuncOp) else "function literal"
        self.bind(
            result,
            func.result_vdevice,
            func,
            f"result of {name}, {_where(func)}",
            f"the result of {name}",
        )
        return self.solver.function(params, result)

    def _constrain(self, op: Operation) -> None:
        handler = self.handlers.get(type(op), self._primitive)
        handler(op)
        if (
            isinstance(op, ValueOp)
            and op.vdevice is not None
            and not isinstance(op, OnDeviceOp)
        ):
            self.bind(
                self.dom(op.result),
                op.vdevice,
                op,
                f"placed at {_where(op)}",
                f"the result of {op.name}",
            )

    def use(self, op: Operation, index: int, expected: Domain, what: Describe) -> None:
        """Operand `index` of `op` is expected in domain `expected`.

        A value with several consumers may be copied for one that wants it
        elsewhere, so its edges are decided later (`resolve_conflicts`); a
        value with a single consumer must agree with it.
        """
        value = op.operands[index]
        if (
            isinstance(value.type, FunctionType)
            or len({u.operation for u in value.uses}) < 2
        ):
            self.unify(self.dom(value), expected, op, what)
        else:
            self.deferred.append((op, index, expected))

    def _primitive(self, op: Operation) -> None:
        """Any other op: operands and result share one domain (fresh per op)."""
        if not op.results:
            return
        shared = self.dom(op.results[0])
        for index, operand in enumerate(op.operands):
            self.use(
                op,
                index,
                shared,
                lambda o=operand: f"{_name(o)}, an operand of {op.name}",
            )

    def _fn(self, op: Operation) -> None:
        assert isinstance(op, FnOp)
        self.unify(
            self.dom(op.result), self._signature_domain(op), op, "the function literal"
        )

    def _function_result(self, op: Operation) -> Domain:
        """The result domain of the function whose body holds `op`."""
        parent = op.parent_op()
        while not isinstance(parent, FunctionOpBase):
            assert parent is not None, "relay ops live in relay functions"
            parent = parent.parent_op()
        domain = (
            self.globals[parent.sym_name.data]
            if isinstance(parent, FuncOp)
            else (self.dom(parent.result) if isinstance(parent, FnOp) else None)
        )
        assert domain is not None
        return self._function_parts(domain)[1]

    def _function_parts(self, domain: Domain) -> tuple[tuple[Domain, ...], Domain]:
        root = self.solver.find(domain)
        assert root.params is not None and root.result is not None
        return root.params, root.result

    def _return(self, op: Operation) -> None:
        assert isinstance(op, ReturnOp)
        self.use(op, 0, self._function_result(op), "the returned value")

    def _call(self, op: Operation) -> None:
        assert isinstance(op, CallOp)
        name = op.callee.string_value()
        callee = self.globals.get(name) or self._prim_func_domain(
            self.prim_funcs[name], op
        )
        self._apply(op, callee, op.args, f"@{name}")

    def _prim_func_domain(self, func: PrimFuncOp, call: CallOp) -> Domain:
        """TVM's `GetPrimFuncArgAndResultConstraints`: a call of a `tir.prim_func`
        constrains each argument and the result to the prim_func's target and
        its buffer's memory scope (`buffer_scope`).

        A fresh domain per call, as for a tensor op: TIR states where it
        runs, nothing more.  Buffers in one scope share a domain (the kernel
        runs on one device); the result's buffers are one, as a tuple's
        fields live together.
        """
        name = func.sym_name.data
        if func.target is not None and (
            self.config.find_primitive_target_for_kind(func.target.kind_name.data)
            is None
        ):
            raise HeteroError(
                f"@{name} runs on '{func.target.kind_name.data}', which the "
                "compilation configuration does not have",
                call,
            )
        groups: dict[str, Domain] = {}
        for arg, type in zip(func.args, func.function_type.inputs.data):
            scope = buffer_scope(type)
            if scope not in groups:
                device = (
                    VirtualDeviceAttr(memory_scope=scope)
                    if func.target is None
                    else VirtualDeviceAttr(
                        func.target.device_type, target=func.target, memory_scope=scope
                    )
                )
                origin = f"buffer {_name(arg)} of @{name}, {_where(func)}"
                groups[scope] = self.bound(device, call, origin)
        domains = [groups[buffer_scope(t)] for t in func.function_type.inputs.data]
        params, outputs = domains[: len(call.args)], domains[len(call.args) :]
        for output in outputs[1:]:
            self.unify(outputs[0], output, call, f"the result of @{name}")
        return self.solver.function(params, outputs[0])

    def _call_indirect(self, op: Operation) -> None:
        assert isinstance(op, CallIndirectOp)
        self._apply(op, self.dom(op.callee), op.args, _name(op.callee))

    def _apply(
        self, op: Operation, callee: Domain, args: Sequence[SSAValue], name: str
    ) -> None:
        """A call: arguments to the parameters, the result to the call's value."""
        params, result = self._function_parts(callee)
        first = len(op.operands) - len(args)
        for i, (arg, param) in enumerate(zip(args, params)):
            self.use(
                op, first + i, param, lambda a=arg: f"argument {_name(a)} of {name}"
            )
        self.unify(self.dom(op.results[0]), result, op, f"the result of {name}")

    def _tuple(self, op: Operation) -> None:
        assert isinstance(op, TupleOp)
        for index, field in enumerate(op.operands):
            self.use(
                op,
                index,
                self.dom(op.result),
                lambda f=field: f"tuple field {_name(f)}",
            )

    def _collapse_into_result(self, op: Operation) -> None:
        self.use(
            op,
            0,
            self.dom(op.results[0]),
            lambda: f"{_name(op.operands[0])}, projected",
        )

    def _if(self, op: Operation) -> None:
        assert isinstance(op, IfOp)
        self.use(op, 0, self.dom(op.result), "the condition")

    def _yield(self, op: Operation) -> None:
        parent = op.parent_op()
        assert isinstance(parent, IfOp)
        self.use(op, 0, self.dom(parent.result), "the branch result")

    def _on_device(self, op: Operation) -> None:
        assert isinstance(op, OnDeviceOp)
        origin = f"annotated at {_where(op)}"
        if op.constrain_body and op.device is not None:
            self.use(
                op,
                0,
                self.bound_value(op.body.type, op.device, op, origin),
                _name(op.body),
            )
        if op.constrain_result:
            self.bind(self.dom(op.result), op.device, op, origin, "the annotated value")

    def _device_copy(self, op: Operation) -> None:
        assert isinstance(op, DeviceCopyOp)
        self.use(
            op,
            0,
            self.bound_value(op.body.type, op.src, op, f"copied from at {_where(op)}"),
            f"the copied value {_name(op.body)}",
        )
        self.bind(
            self.dom(op.result), op.dst, op, f"copied to at {_where(op)}", "the copy"
        )

    def _shape_of(self, op: Operation) -> None:
        """Shapes are host data; the measured tensor stays wherever it is."""
        assert isinstance(op, ShapeOfOp)
        self.bind(
            self.dom(op.result),
            self.config.host_virtual_device,
            op,
            f"host data (a shape) at {_where(op)}",
            "the shape",
        )

    # -- phase 2: a value needed on two devices is copied ----------------------

    def resolve_conflicts(self) -> None:
        """Deferred edges in program order: join where possible, else copy
        (docs/design.md §3.5)."""
        copies: dict[tuple[SSAValue, int], SSAValue] = {}
        for op, index, expected in self.deferred:
            value = op.operands[index]
            if self.solver.can_unify(self.dom(value), expected):
                self.solver.unify(self.dom(value), expected)
                continue
            key = (value, id(self.solver.find(expected)))
            if key not in copies:
                copy = DeviceCopyOp(
                    value,
                    self.solver.device(self.dom(value)),
                    self.solver.device(expected),
                )
                copy.location = op.location
                Rewriter.insert_op(copy, _after_definition(value))
                self.domains[copy.result] = expected
                copies[key] = copy.result
            op.operands[index] = copies[key]

    # -- phase 3: defaults -----------------------------------------------------

    def default(self, module: ModuleOp) -> None:
        funcs = [op for op in module.ops if isinstance(op, FuncOp)]
        for func in funcs:  # free on_device: join body and result where possible
            for op in self._planned(func):
                if isinstance(op, OnDeviceOp) and op.form == "free":
                    body, result = self.dom(op.body), self.dom(op.result)
                    if self.solver.can_unify(body, result):
                        self.solver.unify(body, result)
        default = self.config.default_primitive_virtual_device
        origin = Origin("the default device")
        for func in funcs:
            self.solver.set_result_default_then_params(
                self.globals[func.sym_name.data], default, origin
            )
        for func in funcs:
            self._default_values(func)

    def _planned(self, func: FuncOp) -> Iterator[Operation]:
        if is_optimizable(func) and not func.is_primitive:
            yield from planned_ops(func.body.block)

    def _default_values(self, func: FuncOp) -> None:
        """Values with no device type yet take their consumer's device, else their
        function's result's.

        Consumers come first (reverse program order), and only such free
        domains are filled: a domain that already has a device keeps its
        other fields for the capture's final defaulting, so the outcome does
        not depend on the order in which shared domains are reached — which
        is what makes a second run reproduce the first.
        """
        for op in reversed(list(self._planned(func))):
            for value in op.results:
                domain = self.dom(value)
                if self.solver.device(domain).device_type is not None:
                    continue
                consumer = self._consumer_domain(value)
                if consumer is None or self.solver.device(consumer).device_type is None:
                    consumer = self._function_result(op)
                origin = Origin(f"the device of its use, {_where(op)}")
                self.solver.set_result_default_then_params(
                    domain, self.solver.device(consumer), origin
                )

    def _consumer_domain(self, value: SSAValue) -> Domain | None:
        """The domain the first use of `value` expects it in (None: no use)."""
        for use in value.uses:
            user = use.operation
            if isinstance(user, OnDeviceOp):
                return self.dom(user.result)
            if isinstance(user, ReturnOp):
                return self._function_result(user)
            if isinstance(user, YieldOp) and isinstance(
                parent := user.parent_op(), IfOp
            ):
                return self.dom(parent.result)
            if user.results:
                return self.dom(user.results[0])
        return None

    # -- phase 4: capture ---------------------------------------------------------

    def device(self, value: SSAValue) -> VirtualDeviceAttr:
        return self._finished(self.solver.device(self.dom(value)))

    def _finished(self, device: VirtualDeviceAttr) -> VirtualDeviceAttr:
        """Anything the defaults could not reach (e.g. unused values) → the default."""
        return self.config.canonical_virtual_device(
            device.default(self.config.default_primitive_virtual_device)
        )

    def capture(self, module: ModuleOp) -> None:
        for func in [op for op in module.ops if isinstance(op, FuncOp)]:
            self._capture_signature(func, self.globals[func.sym_name.data])
            for op in list(self._planned(func)):
                self._capture_op(op)

    def _capture_signature(self, func: FunctionOpBase, domain: Domain) -> None:
        root = self.solver.find(domain)
        assert root.params is not None and root.result is not None
        func.set_param_vdevices(
            [self._finished(self.solver.device(p)) for p in root.params]
        )
        func.set_result_vdevice(self._finished(self.solver.device(root.result)))

    def _capture_op(self, op: Operation) -> None:
        if isinstance(op, OnDeviceOp):
            self._replace_on_device(op)
        elif isinstance(op, DeviceCopyOp):
            self._resolve_copy(op)
        else:
            if isinstance(op, FnOp):
                self._capture_signature(op, self.dom(op.result))
            if _has_vdevice(op):
                op.properties["vdevice"] = self.device(op.results[0])

    def _endpoints(
        self, op: OnDeviceOp | DeviceCopyOp
    ) -> tuple[VirtualDeviceAttr, VirtualDeviceAttr] | None:
        """Solved (source, destination) of a device op; None (and the op gone)
        when they agree, since nothing then moves."""
        src, dst = self.device(op.body), self.device(op.result)
        if src != dst:
            return src, dst
        op.result.replace_all_uses_with(op.body)
        Rewriter.erase_op(op)
        return None

    def _replace_on_device(self, op: OnDeviceOp) -> None:
        if (ends := self._endpoints(op)) is not None:
            copy = DeviceCopyOp(op.body, *ends, vdevice=ends[1])
            self.domains[copy.result] = self.dom(op.result)  # later uses still ask
            _replace(op, copy)

    def _resolve_copy(self, op: DeviceCopyOp) -> None:
        if (ends := self._endpoints(op)) is not None:
            op.src, op.dst = ends
            op.vdevice = ends[1]


def _has_vdevice(op: Operation) -> bool:
    return (
        len(op.results) == 1 and "vdevice" in type(op).get_irdl_definition().properties
    )  # type: ignore[attr-defined]


def default_device_type(name: str, module: ModuleOp) -> DeviceType:
    """`default=cuda`: a device type, or a target kind standing for its device
    type (`nvptx` for `cuda`), as TVM's `relay.fallback_device_type` names one."""
    if (device_type := DeviceType.by_name(name)) is not None:
        return device_type
    if (kind := lookup_target_kind(name)) is not None:
        return kind.device_type
    raise HeteroError(
        f"plan-devices: unknown default device '{name}': name a device type "
        f"({', '.join(DeviceType.__members__)}) or a target kind",
        module,
    )


def _check_default(
    config: CompilationConfig, wanted: DeviceType, name: str, module: ModuleOp
) -> None:
    """The module's own configuration wins, so a default it does not have is
    an error rather than an option silently ignored."""
    have = config.default_primitive_virtual_device.device_type
    if have != wanted:
        assert have is not None
        raise HeteroError(
            f"plan-devices{{default={name}}}: the module's target.config puts the "
            f"default device on '{have.name}'; write `fallback = {wanted.name}` in "
            "its #target.config or drop the option",
            module,
        )


@dataclass(frozen=True)
class PlanDevicesPass(ModulePass):
    """Place every relay value on a device; record it as attributes (docs/design.md §3).

    `targets` (e.g. "llvm,cuda") and `default` (the default device: a device
    type such as "cuda", or a target kind) only fill a missing `target.config`
    module attribute, as its targets and `fallback`; an existing one always
    wins, and a `default` it contradicts is an error.
    """

    name = "plan-devices"
    targets: str | None = None
    default: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fallback = (
            None if self.default is None else default_device_type(self.default, op)
        )
        config = module_config(op, self.targets, self.name, fallback)
        if fallback is not None:
            assert self.default is not None
            _check_default(config, fallback, self.default, op)
        optimizable = [
            f
            for f in op.ops
            if isinstance(f, FuncOp) and is_optimizable(f) and not f.is_primitive
        ]
        for func in optimizable:
            normalize(func)
        planner = DevicePlanner(config)
        planner.collect(op)
        planner.resolve_conflicts()
        planner.default(op)
        planner.capture(op)
