"""`alter-data-layout`: activations between convolutions in the
channel-blocked layout `NCHW<b>c` that the conv2d schedule of their device
wants.

TVM's `AlterOpLayout` turns a conv2d into `conv2d_NCHWc` with
`layout_transform`s on its data and result, and its layout inference carries
the blocked layout through the ops after it, so that the transforms between
two blocked convolutions cancel.  hetero does both in one forward walk over
each function's ops (a value is rewritten before its users), keeping for
each `NCHW` value the blocked value it equals, where one exists:

* a `relay.nn.conv2d` placed on a device (its `vdevice`, from
  `plan-devices`) whose device type has an entry in
  `hetero.te.schedules.DATA_BLOCKS`, which asks for a block `b > 0`
  for this conv (the CPU, where its `llvm` target says `data_layout =
  "NCHWc"`: one vector of channels, groups 1, a float), with
  static shapes, `NCHW` layouts and outside a BYOC `Compiler` function,
  takes its data blocked (`data_layout = "NCHW<b>c"`) where it is known
  blocked, and writes its result blocked (`out_layout`) where the output
  channels fill whole blocks (the query is told whether the data comes
  blocked: the CPU blocks the result of `NCHW` data only after a reduction
  of 64 or more);
* an elementwise op of one tensor, and a binary one (`add`, `subtract`,
  `multiply`, `divide`, `maximum`, `minimum`) of two blocked values of one
  shape, or of a blocked value and a constant that varies at most along
  the channels (a `[C, 1, 1]` bias, a scalar), runs on the blocked values
  (the constant re-laid out as `[1, C / b, 1, 1, b]`);
* `relay.nn.bias_add` along the channels with a constant bias becomes that
  `add`;
* `relay.concatenate` of blocked values along the channels concatenates
  the blocks (each input's channels fill whole blocks);
* a 2-D pooling (`max_pool2d`, `avg_pool2d`, `global_avg_pool2d`) of a
  blocked value pools the blocks (`layout = "NCHW<b>c"`: a pixel's block
  of channels is one vector).

Every other user reads `NCHW`: a `relay.layout_transform` back, made once,
right after the blocked producer, and erased when nothing reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from hetero.dialects import relay
from hetero.dialects.relay import OpPattern, pattern_of
from hetero.interpreter.relay import constant_value
from hetero.te.schedules import DATA_BLOCKS
from hetero.transforms.fold_constant import constant_of

BLOCKED_BINARY: tuple[type[Operation], ...] = (
    relay.AddOp,
    relay.SubtractOp,
    relay.MultiplyOp,
    relay.DivideOp,
    relay.MaximumOp,
    relay.MinimumOp,
)
"""Binary ops that run on blocked values as they are (elementwise, the
operands' layouts alike)."""


def _static_nchw(value: SSAValue) -> bool:
    type = value.type
    if not isinstance(type, TensorType):
        return False
    return type.get_num_dims() == 4 and type.has_static_shape()


def _wanted_block(op: relay.Conv2DOp, data_blocked: bool) -> int:
    """The block the conv2d schedule of `op`'s device wants (0: none), its
    data coming blocked or not."""
    device = op.vdevice
    if device is None or device.target is None:
        return 0
    query = DATA_BLOCKS.get(device.target.device_type)
    weight = op.weight.type
    if query is None or op.data_layout != "NCHW" or op.out_layout != "NCHW":
        return 0
    if op.kernel_layout != "OIHW" or not isinstance(weight, TensorType):
        return 0
    if not (_static_nchw(op.x) and _static_nchw(op.results[0])):
        return 0
    return query(
        weight.get_shape(), op.groups, weight.element_type, device.target, data_blocked
    )


def _layout(block: int) -> str:
    return f"NCHW{block}c" if block else "NCHW"


def _constant(value: SSAValue) -> np.ndarray | None:
    owner = value.owner
    return constant_value(owner) if isinstance(owner, relay.ConstantOp) else None


def _channel_constant(array: np.ndarray | None, block: int) -> np.ndarray | None:
    """A constant operand of an `NCHW` op in `NCHW<block>c` (`[1, C / b, 1,
    1, b]`, or `array` itself where it does not vary along the channels),
    None where it varies along another axis or is not a constant."""
    if array is None or array.ndim > 4:
        return None
    shape = (1,) * (4 - array.ndim) + array.shape
    if shape[0] != 1 or shape[2:] != (1, 1):
        return None
    if shape[1] == 1:
        return array
    channels = shape[1]
    if channels % block:
        return None
    return array.reshape(1, channels // block, block, 1, 1).transpose(0, 1, 3, 4, 2)


@dataclass
class _Blocking:
    """The walk over one block of ops: `blocked` maps an `NCHW` value to the
    blocked value it equals and its block."""

    rewriter: Rewriter
    blocked: dict[SSAValue, tuple[SSAValue, int]]

    def visit(self, op: Operation) -> None:
        for kinds, rule in RULES:
            if isinstance(op, kinds):
                return rule(self, op)
        if pattern_of(op) == OpPattern.ELEMWISE and len(op.operands) == 1:
            self._unary(op)

    def _unary(self, op: Operation) -> None:
        if (known := self.blocked.get(op.operands[0])) is not None:
            self._replace(op, [known[0]], known[1])

    def _pool(self, op: relay.Pool2DOp | relay.GlobalAvgPool2DOp) -> None:
        if op.layout == "NCHW" and (known := self.blocked.get(op.x)) is not None:
            self._replace(op, [known[0]], known[1], {"layout": _layout(known[1])})

    def _conv2d(self, op: relay.Conv2DOp) -> None:
        data = self.blocked.get(op.x)
        block = _wanted_block(op, data is not None)
        if data is not None and data[1] != block:
            # Blocked otherwise than this conv wants: it reads NCHW.
            data, block = None, _wanted_block(op, False)
        if not block:
            return
        if data is None:
            data = (op.x, 0)
        out_channels = op.results[0].type.get_shape()[1]  # type: ignore[attr-defined]
        out_block = 0 if out_channels % block else block
        if data[1] or out_block:
            layouts = {
                "data_layout": _layout(data[1]),
                "out_layout": _layout(out_block),
            }
            self._replace(op, [data[0], op.weight], out_block, layouts)

    def _bias_add(self, op: relay.BiasAddOp) -> None:
        known = self.blocked.get(op.x)
        if known is None or op.axis not in (1, -3):
            return
        bias = _constant(op.bias)
        if bias is None:
            return
        if (blocked := _channel_constant(bias.reshape(-1, 1, 1), known[1])) is None:
            return
        operands = [known[0], self._new_constant(op, blocked)]
        self._replace_with(op, relay.AddOp, operands, known[1])

    def _binary(self, op: Operation) -> None:
        lhs, rhs = op.operands
        left, right = self.blocked.get(lhs), self.blocked.get(rhs)
        if left is not None and right is not None:
            if left[1] == right[1] and lhs.type == rhs.type:
                self._replace(op, [left[0], right[0]], left[1])
            return
        known, other = (left, rhs) if left is not None else (right, lhs)
        if known is None:
            return
        array = _constant(other)
        if (blocked := _channel_constant(array, known[1])) is None:
            return
        operand = other if blocked is array else self._new_constant(op, blocked)
        operands = [known[0], operand]
        self._replace(op, operands if left is not None else operands[::-1], known[1])

    def _concatenate(self, op: relay.ConcatenateOp) -> None:
        inputs = [self.blocked.get(value) for value in op.inputs]
        blocks = {known[1] for known in inputs if known is not None}
        if op.axis not in (1, -3) or None in inputs or len(blocks) != 1:
            return
        values = [known[0] for known in inputs if known]
        self._replace(op, values, blocks.pop(), {"axis": 1})

    def _new_constant(self, op: Operation, array: np.ndarray) -> SSAValue:
        type = op.results[0].type
        assert isinstance(type, TensorType)
        element = type.element_type
        constant = constant_of(array, TensorType(element, array.shape), "blocked")
        if (device := op.properties.get("vdevice")) is not None:
            constant.properties["vdevice"] = device
        self.rewriter.insert_op(constant, InsertPoint.before(op))
        return constant.results[0]

    def _replace(
        self,
        op: Operation,
        operands: Sequence[SSAValue],
        block: int,
        changed: dict[str, str | int] | None = None,
    ) -> None:
        self._replace_with(op, type(op), operands, block, changed)

    def _replace_with(
        self,
        op: Operation,
        kind: type[Operation],
        operands: Sequence[SSAValue],
        block: int,
        changed: dict[str, str | int] | None = None,
    ) -> None:
        """`op` as a `kind` of `operands` with the `changed` attributes (its
        result in `NCHW<block>c`, or `NCHW` when `block` is 0)."""
        properties: dict[str, Attribute] = dict(op.properties)
        for name, value in (changed or {}).items():
            param = getattr(kind, name)
            properties[name] = param.to_attr(value)
        if kind is not type(op):
            properties = {k: v for k, v in properties.items() if k == "vdevice"}
        types = [o.type for o in operands]
        result = kind.infer_result_type(types, properties)  # type: ignore[attr-defined]
        new = kind.create(
            operands=list(operands),
            result_types=[result],
            properties=properties,
            attributes=dict(op.attributes),
        )
        self.rewriter.insert_op(new, InsertPoint.before(op))
        if not block:
            self.rewriter.replace_op(op, [], [new.results[0]])
            return
        back = relay.LayoutTransformOp.create(
            operands=[new.results[0]],
            result_types=[op.results[0].type],
            properties={
                "src_layout": StringAttr(_layout(block)),
                "dst_layout": StringAttr("NCHW"),
                **({"vdevice": d} if (d := op.properties.get("vdevice")) else {}),
            },
        )
        self.rewriter.insert_op(back, InsertPoint.after(new))
        self.rewriter.replace_op(op, [], [back.results[0]])
        self.blocked[back.results[0]] = (new.results[0], block)


Kinds = type[Operation] | tuple[type[Operation], ...]

RULES: tuple[tuple[Kinds, Callable[[_Blocking, Any], None]], ...] = (
    (relay.Conv2DOp, _Blocking._conv2d),
    (relay.BiasAddOp, _Blocking._bias_add),
    (relay.ConcatenateOp, _Blocking._concatenate),
    (BLOCKED_BINARY, _Blocking._binary),
    ((relay.Pool2DOp, relay.GlobalAvgPool2DOp), _Blocking._pool),
)
"""Op kinds → how the walk rewrites them; any other elementwise op of one
tensor runs on the blocks (`_Blocking._unary`), the rest read `NCHW`."""


def _function_blocks(module: ModuleOp) -> list[Block]:
    """The bodies of the relay functions that hetero compiles (not BYOC's)."""
    return [
        function.body.block
        for function in module.walk()
        if isinstance(function, relay.FunctionOpBase)
        and function.compiler is None
        and not function.is_extern
    ]


@dataclass(frozen=True)
class AlterDataLayoutPass(ModulePass):
    """Blocks conv2d activations as the schedules want (module docstring)."""

    name = "alter-data-layout"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for block in _function_blocks(op):
            walk = _Blocking(Rewriter(), {})
            for child in list(block.ops):
                walk.visit(child)
            for back, _ in list(walk.blocked.items()):
                if not back.uses and back.owner.parent is not None:
                    walk.rewriter.erase_op(back.owner)  # type: ignore[arg-type]
