"""The elementwise ops' templates: each op's scalar body on float, signless
integer and `i1` elements (the op's own `SCALAR`, in
`dialects/relay/elementwise.py`, or `TARGET_SCALARS` here), applied to its
operands read at their NumPy-broadcast index; the ops with a per-channel
operand (`bias_add`, `batch_norm`); and `cast`'s conversions (`CASTS`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import AnyFloat, IntegerType, Signedness
from xdsl.ir import Attribute, Operation, SSAValue

from hetero.analysis.shape_functions import Dim, DynamicShapeError, same_size
from hetero.dialects import relay
from hetero.dialects.relay.elementwise import ScalarBody
from hetero.targets.cpu import is_cpu
from hetero.te.emit import Emitter, Index, Tensor
from hetero.te.templates.base import (
    LazyTemplate,
    channel_axis,
    one,
    require_float,
    result_shape,
)
from hetero.utils.diagnostics import HeteroError


def _tanh(e: Emitter, op: Operation, x: SSAValue) -> SSAValue:
    """`math.tanh` on the CPU (a polynomial there, `approximate-math`, exact
    to ulps near 0 too); elsewhere 1 - 2 / (exp(2x) + 1): exp and divide
    only, saturating cleanly at ±1."""
    if is_cpu(e.target):
        return e.op(math_dialect.TanhOp(x))
    two = e.constant(2.0, x.type)
    exp = e.op(math_dialect.ExpOp(e.op(arith.MulfOp(two, x))))
    ratio = e.op(arith.DivfOp(two, e.op(arith.AddfOp(exp, one(e, x)))))
    return e.op(arith.SubfOp(one(e, x), ratio))


TARGET_SCALARS: dict[type[Operation], Mapping[str, ScalarBody]] = {
    relay.TanhOp: {"float": _tanh},
}
"""The scalar bodies that depend on the target, which the dialect cannot
ask: they stand in for the op's `SCALAR`."""

KIND_NAMES = {"float": "float", "int": "signless integer (i8 to i64)", "bool": "i1"}


def scalar_bodies(cls: type[Operation]) -> Mapping[str, ScalarBody]:
    """Element kind → scalar body of the elementwise op class `cls`: its
    `SCALAR` (read when asked, so an op defined after import lowers too) or
    `TARGET_SCALARS`'s; empty for the other ops."""
    return TARGET_SCALARS.get(cls) or getattr(cls, "SCALAR", {})


def broadcast_indices(
    indices: Sequence[Index],
    out_shape: Sequence[int | Dim],
    shape: Sequence[int | Dim],
) -> list[Index]:
    """The element of an operand of `shape` that output element `indices`
    reads under NumPy broadcasting (trailing alignment, size-1 repeats)."""
    offset = len(out_shape) - len(shape)
    return [
        _broadcast_index(indices[offset + i], dim, out_shape[offset + i])
        for i, dim in enumerate(shape)
    ]


def _broadcast_index(index: Index, dim: int | Dim, out: int | Dim) -> Index:
    """The index along one dimension of the operand's (`dim`) that output
    index `index` (along `out`) reads.  Where a size is a `Dim`, known at run
    time only, the operand's dimension must be the result's (the same
    index, whatever the size) or a static 1 (index 0, whatever the
    result's): the shape functions never compile a `?` broadcast from 1."""
    if not isinstance(dim, Dim) and not isinstance(out, Dim):
        return 0 if dim == 1 and out != 1 else index
    if isinstance(dim, Dim) and isinstance(out, Dim) and same_size(dim, out):
        return index
    if isinstance(dim, int) and dim == 1:
        return 0
    raise DynamicShapeError(f"an operand's size {dim} against the result's {out}")


def _element_kind(t: Attribute) -> str | None:
    """`float`, `int` (signless, the signed ints of ONNX and NumPy) or
    `bool` (`i1`): what the scalar bodies (`SCALAR`) and `CASTS` key
    on; None for what lower-te does not compute with (unsigned integers)."""
    if isinstance(t, AnyFloat):
        return "float"
    if not isinstance(t, IntegerType) or t.signedness.data != Signedness.SIGNLESS:
        return None
    return "bool" if t.width.data == 1 else "int"


def _scalar_body(op: Operation, element_type: Attribute) -> ScalarBody:
    """The scalar body of elementwise `op` on `element_type`, its first
    operand's (`scalar_bodies`); a located error where the op has none for
    the type (`exp` of an integer, arithmetic on booleans or unsigned
    elements)."""
    kind = _element_kind(element_type)
    bodies = scalar_bodies(type(op))
    if kind is not None and (found := bodies.get(kind)) is not None:
        return found
    kinds = [name for k, name in KIND_NAMES.items() if k in bodies]
    raise HeteroError(
        f"lower-te: {op.name} on {element_type} elements is not supported "
        f"({op.name} is lowered for {' and '.join(kinds)} elements)",
        op,
    )


def _result_element(op: Operation) -> Attribute:
    return op.results[0].type.element_type  # type: ignore[attr-defined]


def _scalar(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """The template of every op with a scalar body: the body of the operands
    read at their broadcast index."""
    shape = result_shape(op)
    body = _scalar_body(op, inputs[0].element_type)

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        elements = [t.load(e, broadcast_indices(idx, shape, t.shape)) for t in inputs]
        return body(e, op, *elements)

    return Tensor(shape, _result_element(op), load)


def scalar_template(cls: type[Operation]) -> LazyTemplate | None:
    """The template of op class `cls` if it has scalar bodies, else None."""
    return _scalar if scalar_bodies(cls) else None


def _bias_add(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    x, bias = inputs
    require_float(op, x.element_type)
    axis = channel_axis(op, len(x.shape))

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        return e.op(arith.AddfOp(x.load(e, idx), bias.load(e, [idx[axis]])))

    return Tensor(x.shape, x.element_type, load)


def _batch_norm(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """x * scale + (beta - mean * scale), scale = gamma / sqrt(var + eps)."""
    assert isinstance(op, relay.BatchNormOp)
    x, gamma, beta, mean, var = inputs
    require_float(op, x.element_type)
    axis = channel_axis(op, len(x.shape))

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        c = [idx[axis]]
        eps = e.constant(op.epsilon, x.element_type)
        root = e.op(math_dialect.SqrtOp(e.op(arith.AddfOp(var.load(e, c), eps))))
        scale = e.op(arith.DivfOp(gamma.load(e, c), root))
        shift = e.op(
            arith.SubfOp(beta.load(e, c), e.op(arith.MulfOp(mean.load(e, c), scale)))
        )
        return e.op(arith.AddfOp(e.op(arith.MulfOp(x.load(e, idx), scale)), shift))

    return Tensor(x.shape, x.element_type, load)


def _bitwidth(t: Attribute) -> int:
    return t.bitwidth if isinstance(t, AnyFloat) else t.width.data  # type: ignore[attr-defined]


def _resize(wider: type[Operation], narrower: type[Operation]) -> Cast:
    """Between two types of one kind: widened, narrowed or kept."""

    def convert(e: Emitter, x: SSAValue, to: Attribute) -> SSAValue:
        source, target = _bitwidth(x.type), _bitwidth(to)
        if source == target:
            return x
        return e.op((wider if target > source else narrower)(x, to))

    return convert


def _nonzero(e: Emitter, x: SSAValue, to: Attribute) -> SSAValue:
    """Nonzero is true (a NaN too, as NumPy's `astype(bool)`)."""
    if isinstance(x.type, AnyFloat):
        return e.op(arith.CmpfOp(x, e.constant(0.0, x.type), "une"))
    return e.op(arith.CmpiOp(x, e.constant(0, x.type), "ne"))


Cast = Callable[[Emitter, SSAValue, Attribute], SSAValue]

CASTS: dict[tuple[str, str], Cast] = {
    ("float", "float"): _resize(arith.ExtFOp, arith.TruncFOp),
    ("int", "int"): _resize(arith.ExtSIOp, arith.TruncIOp),
    ("bool", "bool"): lambda e, x, to: x,
    ("int", "float"): lambda e, x, to: e.op(arith.SIToFPOp(x, to)),
    ("bool", "float"): lambda e, x, to: e.op(arith.UIToFPOp(x, to)),
    ("float", "int"): lambda e, x, to: e.op(arith.FPToSIOp(x, to)),
    ("bool", "int"): lambda e, x, to: e.op(arith.ExtUIOp(x, to)),
    ("float", "bool"): _nonzero,
    ("int", "bool"): _nonzero,
}
"""(source kind, target kind) of a `relay.cast` → its scalar conversion
(`_element_kind`): NumPy's `astype` on the signed ints and floats."""


def _cast(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    assert isinstance(op, relay.CastOp)
    (x,) = inputs
    to = op.dtype
    kinds = _element_kind(x.element_type), _element_kind(to)
    if None in kinds:
        raise HeteroError(
            f"lower-te: {op.name} from {x.element_type} to {to} is not supported "
            "(integers are lowered signless: the signed ints of ONNX and NumPy)",
            op,
        )
    convert = CASTS[kinds]  # type: ignore[index]
    return Tensor(x.shape, to, lambda e, idx: convert(e, x.load(e, idx), to))


def _arange_like(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """`start + step * i` at position `i`: index arithmetic, then cast from
    `i64` as `relay.cast` does (`CASTS`); the operand is not read."""
    assert isinstance(op, relay.ArangeLikeOp)
    to, i64 = op.dtype, IntegerType(64)
    kind = _element_kind(to)
    if kind not in ("int", "float"):
        raise HeteroError(f"lower-te: {op.name} of {to} is not supported", op)

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        position = e.index(e.add(e.mul(idx[0], op.step), op.start))
        return CASTS["int", kind](e, e.op(arith.IndexCastOp(position, i64)), to)

    return Tensor(result_shape(op), to, load)


TEMPLATES: dict[type[Operation], LazyTemplate] = {
    relay.BiasAddOp: _bias_add,
    relay.BatchNormOp: _batch_norm,
    relay.CastOp: _cast,
    relay.ArangeLikeOp: _arange_like,
}
"""The elementwise ops without scalar bodies → template returning their
lazy result (those with one: `scalar_template`)."""
