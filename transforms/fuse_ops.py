"""`fuse-ops`: group the tensor ops of one device into `Primitive` functions.

TVM's operator fusion, read for SSA blocks and decided by the pattern each
relay tensor op declares (`OpPattern`).  Ops are visited in block order;
each tensor op either joins the group of one of its producers or starts a
new group:

* an elementwise/broadcast op joins a producer's group unless that group is
  `OPAQUE` — so anchors (`nn.conv2d`, `nn.dense`, `matmul`) and reductions
  take elementwise epilogues (conv2d + bias_add + relu);
* an injective op (reshape, transpose, concatenate, ...) joins a producer's
  group only while the group is itself at most injective;
* anchors, reductions and opaque ops start a group (their producers stay
  outside and become parameters) — except that an anchor reading its
  operands through a schedule's loaders (`VIEW_READERS`: a matmul) takes
  in the producer groups that are only views of their inputs (`VIEW_OPS`:
  reshape, transpose, ...) and feed it alone, so that it reads the view in
  place of a copy (attention's `Q·Kᵀ` reads `K` transposed).

A group has exactly one result, its last op's: an op joins a producer group
only when that group's result is used by this op alone, or when it lies in a
**diamond** the group has taken.  A value with several users (`x` of SiLU's
`x * sigmoid(x)`, GELU's `0.5 * x * (1 + erf(x / √2))`, a residual
`x + relu(x)`) is joined with everything up to its immediate
post-dominator in the block, TVM's post-dominator reasoning: when every path
from its users meets at one op and every op on those paths is elementwise or
broadcast (`_diamond`), those ops join the group as they are visited.  Any
other value needed outside the group **stops the fusion** (the group ends
there and the value becomes a parameter of its consumers' groups) rather
than becoming an extra group output.  This also rules out cycles: the only
edge leaving a group is its result.

Never fused: ops of different devices (the `vdevice` of the ops; in an
unplanned module all ops count as one device), `relay.device_copy` and every
non-tensor op (calls, tuples, constants, `on_device`, `if`).

Each group is **outlined** to a private global `relay.func @fused_<ops>`
with `Primitive`, its parameters and result carrying the group's `vdevice`,
and replaced by a `relay.call` at the position of its last op.  Globals
(rather than `relay.fn` literals) are what `lower-te` lowers and what its
call marking (`lowered = @...`) refers to, with no closure to analyse.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass

from hetero.dialects import relay
from hetero.dialects.relay import OpPattern, pattern_of
from hetero.dialects.target import VirtualDeviceAttr
from hetero.te.templates import VIEW_OPS, VIEW_READERS
from hetero.utils.symbols import fresh_name, symbol_names


@dataclass
class _Group:
    """Ops fused into one kernel, in block order; the last one's result is the output."""

    ops: list[Operation]
    pattern: OpPattern
    device: VirtualDeviceAttr | None
    diamonds: set[Operation] = field(default_factory=set)
    """Ops still to come that join the group: the diamonds of its values."""

    @property
    def root(self) -> Operation:
        return self.ops[-1]


def _can_join(op: Operation, group: _Group) -> bool:
    """Whether `op`, the only consumer of `group`'s result, may be fused into it."""
    return all(use.operation is op for use in group.root.results[0].uses) and _fits(
        op, group
    )


def _fits(op: Operation, group: _Group) -> bool:
    """Whether `op`'s pattern and device let it join `group`."""
    pattern = pattern_of(op)
    if getattr(op, "vdevice", None) != group.device:
        return False
    if pattern <= OpPattern.BROADCAST:
        return group.pattern != OpPattern.OPAQUE
    if pattern == OpPattern.INJECTIVE:
        return group.pattern <= OpPattern.INJECTIVE
    return False


def _diamond(
    value: SSAValue, group: _Group, position: dict[Operation, int]
) -> list[Operation]:
    """The ops from `value`'s users to their immediate post-dominator in the
    block (`position`: its ops' order), if every path from the users meets
    there with only elementwise/broadcast ops that may join `group` on the
    way; else none.  Ops are taken in block order, so each after every path
    reaching it: the diamond closes at the first op after which no use-edge
    of the values taken is open but its own (a use in another block or by
    a non-tensor op, such as `relay.return`, never closes)."""
    open_edges = value.uses.get_length()
    if open_edges < 2:
        return []
    waiting = {use.operation for use in value.uses}
    inside = {value}
    diamond: list[Operation] = []
    while waiting:
        op = min(waiting, key=lambda o: position.get(o, -1))
        waiting.remove(op)
        if (
            op not in position
            or pattern_of(op) > OpPattern.BROADCAST
            or not _fits(op, group)
        ):
            return []
        open_edges -= sum(operand in inside for operand in op.operands)
        diamond.append(op)
        if open_edges == 0:
            return diamond
        result = op.results[0]
        inside.add(result)
        open_edges += result.uses.get_length()
        waiting.update(use.operation for use in result.uses)
    return []


def _is_view_of(group: _Group, op: Operation) -> bool:
    """Whether `group` is views only, on `op`'s device, read by `op` alone."""
    return (
        all(type(inner) in VIEW_OPS for inner in group.ops)
        and group.device == getattr(op, "vdevice", None)
        and all(use.operation is op for use in group.root.results[0].uses)
    )


@dataclass
class _BlockFusion:
    """The groups of one block."""

    position: dict[Operation, int]
    """The block's ops in order."""
    groups: list[_Group] = field(default_factory=list)
    group_of: dict[Operation, _Group] = field(default_factory=dict)

    claimed: dict[Operation, _Group] = field(default_factory=dict)
    """The group whose diamonds hold each op: an op may join one group only."""

    def visit(self, op: Operation) -> None:
        if not isinstance(op, relay.TensorOp):
            return
        group = self._producer_group(op)
        if group is None:
            group = self._start(op)
        else:
            group.ops.append(op)
            group.pattern = max(group.pattern, pattern_of(op))
            group.diamonds.discard(op)
            self.group_of[op] = group
        diamond = _diamond(op.results[0], group, self.position)
        if all(self.claimed.get(o, group) is group for o in diamond):
            # Two values' diamonds may meet at one op (an op that takes both
            # and whose result is unused closes either): the first group
            # takes it, and the other's value stays a result of its own.
            group.diamonds.update(diamond)
            self.claimed.update(dict.fromkeys(diamond, group))

    def _producer_group(self, op: Operation) -> _Group | None:
        """The group `op` joins: one whose diamond it lies in, else that of
        a producer whose result only `op` uses (`_can_join`)."""
        producers = [
            (operand.owner, self.group_of[operand.owner])
            for operand in op.operands
            if isinstance(operand, OpResult) and operand.owner in self.group_of
        ]
        for _, producer in producers:
            if op in producer.diamonds:
                return producer
        for owner, producer in producers:
            if producer.root is owner and _can_join(op, producer):
                return producer
        return None

    def _start(self, op: Operation) -> _Group:
        """A new group of `op`, with the views it reads in place."""
        group = _Group([op], pattern_of(op), getattr(op, "vdevice", None))
        views = self._views_read_by(op)
        group.ops[:0] = [inner for view in views for inner in view.ops]
        for view in views:
            self.groups.remove(view)
        self.groups.append(group)
        for inner in group.ops:
            self.group_of[inner] = group
        return group

    def _views_read_by(self, op: Operation) -> list[_Group]:
        """The producer groups a `VIEW_READERS` anchor takes in (`_is_view_of`)."""
        if type(op) not in VIEW_READERS:
            return []
        views: list[_Group] = []
        for operand in op.operands:
            if not isinstance(operand, OpResult):
                continue
            producer = self.group_of.get(operand.owner)
            if (
                producer is not None
                and producer not in views
                and producer.root is operand.owner
                and _is_view_of(producer, op)
            ):
                views.append(producer)
        return views


def fused_name(taken: set[str], ops: Sequence[Operation]) -> str:
    """`fused_nn_conv2d_nn_bias_add_relu` for a kernel of these ops, made
    unique among the module's symbols (`taken`, which gets it): a set, as a
    network's groups share a few stems (ResNet-50 has 33
    `fused_nn_conv2d_nn_bias_add_relu`s)."""
    name = fresh_name(
        "fused_"
        + "_".join(op.name.removeprefix("relay.").replace(".", "_") for op in ops),
        taken,
    )
    taken.add(name)
    return name


def _parameters(group: _Group) -> list[SSAValue]:
    """Values the group reads from outside, in order of first use."""
    inside = set(group.ops)
    params: list[SSAValue] = []
    for op in group.ops:
        for operand in op.operands:
            if operand.owner not in inside and operand not in params:
                params.append(operand)
    return params


def _outline(module: ModuleOp, taken: set[str], group: _Group) -> None:
    """Move the group into a Primitive global (named apart from `taken`) and
    call it where its result was."""
    params = _parameters(group)
    root = group.root
    func = relay.FuncOp(
        fused_name(taken, group.ops),
        [p.type for p in params],
        root.results[0].type,
        private=True,
        param_vdevices=[group.device] * len(params) if group.device else (),
        result_vdevice=group.device,
        attributes={"Primitive": UnitAttr()},
    )
    mapping: dict[SSAValue, SSAValue] = dict(zip(params, func.args))
    for op in group.ops:
        func.body.block.add_op(op.clone(mapping))
    func.body.block.add_op(relay.ReturnOp(mapping[root.results[0]]))
    module.body.block.add_op(func)
    call = relay.CallOp(func, params, vdevice=group.device)
    assert root.parent is not None
    root.parent.insert_op_before(call, root)
    root.results[0].replace_all_uses_with(call.result)
    for op in reversed(group.ops):
        op.detach()
        op.erase()


def _fusable_functions(module: ModuleOp) -> list[relay.FuncOp]:
    """Functions whose bodies hetero compiles op by op (not kernels, not
    external-codegen or pattern functions)."""
    return [
        f
        for f in module.ops
        if isinstance(f, relay.FuncOp)
        and not (f.is_primitive or f.is_extern or f.compiler or f.composite)
    ]


def _blocks(func: relay.FuncOp) -> list[Block]:
    """The function's blocks, nested ones included, not entering kernels."""
    blocks = [func.body.block]
    for op in func.walk():
        if isinstance(op, relay.FnOp) and (
            op.is_primitive or op.compiler or op.composite
        ):
            continue
        for region in op.regions:
            blocks.extend(region.blocks)
    return [b for b in dict.fromkeys(blocks) if not _inside_kernel(b)]


def _inside_kernel(block: Block) -> bool:
    op = block.parent_op()
    while op is not None:
        if isinstance(op, relay.FnOp) and (
            op.is_primitive or op.compiler or op.composite
        ):
            return True
        op = op.parent_op()
    return False


@dataclass(frozen=True)
class FuseOpsPass(ModulePass):
    """Outline groups of fusable tensor ops into Primitive functions."""

    name = "fuse-ops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        taken = symbol_names(op)
        for func in _fusable_functions(op):
            for block in _blocks(func):
                fusion = _BlockFusion({op: i for i, op in enumerate(block.ops)})
                for inner in list(block.ops):
                    fusion.visit(inner)
                for group in fusion.groups:
                    _outline(op, taken, group)
