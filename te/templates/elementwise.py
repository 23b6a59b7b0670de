"""The elementwise ops' templates: each op's scalar function on float,
signless integer and `i1` elements (`SCALAR_TABLES`), applied to operands
read at their NumPy-broadcast index; the ops with a per-channel operand
(`bias_add`, `batch_norm`); `where`; and `cast`'s conversions (`CASTS`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import AnyFloat, IntegerType, Signedness
from xdsl.ir import Attribute, Operation, SSAValue

from hetero.dialects import relay
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

Unary = Callable[[Emitter, SSAValue, Operation], SSAValue]
Binary = Callable[[Emitter, SSAValue, SSAValue], SSAValue]


def _tanh(e: Emitter, x: SSAValue, op: Operation) -> SSAValue:
    """`math.tanh` on the CPU (a polynomial there, `approximate-math`, exact
    to ulps near 0 too); elsewhere 1 - 2 / (exp(2x) + 1): exp and divide
    only, saturating cleanly at ±1."""
    if is_cpu(e.target):
        return e.op(math_dialect.TanhOp(x))
    two = e.constant(2.0, x.type)
    exp = e.op(math_dialect.ExpOp(e.op(arith.MulfOp(two, x))))
    ratio = e.op(arith.DivfOp(two, e.op(arith.AddfOp(exp, one(e, x)))))
    return e.op(arith.SubfOp(one(e, x), ratio))


def _sigmoid(e: Emitter, x: SSAValue, op: Operation) -> SSAValue:
    """1 / (1 + exp(-x)) for x ≥ 0, exp(x) / (1 + exp(x)) below: the exp of
    -|x| never overflows (no inf / inf), and a large negative x keeps its
    tiny (denormal) result, to a few ulps, rather than 0."""
    exp = e.op(math_dialect.ExpOp(e.fmin(x, e.op(arith.NegfOp(x)))))
    negative = e.op(arith.CmpfOp(x, e.constant(0.0, x.type), "olt"))
    numerator = e.op(arith.SelectOp(negative, exp, one(e, x)))
    return e.op(arith.DivfOp(numerator, e.op(arith.AddfOp(exp, one(e, x)))))


def _silu(e: Emitter, x: SSAValue, op: Operation) -> SSAValue:
    return e.op(arith.MulfOp(x, _sigmoid(e, x, op)))


def _hard_swish(e: Emitter, x: SSAValue, op: Operation) -> SSAValue:
    sixth, half = e.constant(1 / 6, x.type), e.constant(0.5, x.type)
    gate = e.op(arith.AddfOp(e.op(arith.MulfOp(x, sixth)), half))
    clipped = e.fmin(e.fmax(gate, e.constant(0.0, x.type)), one(e, x))
    return e.op(arith.MulfOp(x, clipped))


def _clip(e: Emitter, x: SSAValue, op: Operation) -> SSAValue:
    assert isinstance(op, relay.ClipOp)
    low = e.fmax(x, e.constant(op.a_min, x.type))
    return e.fmin(low, e.constant(op.a_max, x.type))


UNARY: dict[type[Operation], Unary] = {
    relay.NegativeOp: lambda e, x, op: e.op(arith.NegfOp(x)),
    relay.ExpOp: lambda e, x, op: e.op(math_dialect.ExpOp(x)),
    relay.TanhOp: _tanh,
    relay.SigmoidOp: _sigmoid,
    relay.SiluOp: _silu,
    relay.HardSwishOp: _hard_swish,
    relay.ReluOp: lambda e, x, op: e.fmax(x, e.constant(0.0, x.type)),
    relay.ClipOp: _clip,
    relay.LogOp: lambda e, x, op: e.op(math_dialect.LogOp(x)),
    relay.SqrtOp: lambda e, x, op: e.op(math_dialect.SqrtOp(x)),
    relay.AbsOp: lambda e, x, op: e.op(math_dialect.AbsFOp(x)),
    relay.FloorOp: lambda e, x, op: e.op(math_dialect.FloorOp(x)),
    relay.CeilOp: lambda e, x, op: e.op(math_dialect.CeilOp(x)),
    relay.RoundOp: lambda e, x, op: e.op(math_dialect.RoundEvenOp(x)),
    relay.ErfOp: lambda e, x, op: e.op(math_dialect.ErfOp(x)),
}
"""Elementwise unary op → its scalar function."""


def _arith(op: type[Operation]) -> Binary:
    return lambda e, a, b: e.op(op(a, b))


BINARY: dict[type[Operation], Binary] = {
    relay.AddOp: _arith(arith.AddfOp),
    relay.SubtractOp: _arith(arith.SubfOp),
    relay.MultiplyOp: _arith(arith.MulfOp),
    relay.DivideOp: _arith(arith.DivfOp),
    relay.MaximumOp: Emitter.fmax,
    relay.MinimumOp: Emitter.fmin,
    relay.PowerOp: _arith(math_dialect.PowFOp),
}
"""Elementwise binary op → its scalar function."""


def _int_divide(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """`a / b` truncated toward zero (TVM's `truncdiv`, C's `/`), 0 where
    `b` is 0 and `-a` (wrapping) where `b` is -1: the two cases where x86's
    `idiv` traps, which must not bring the process down."""
    zero, one = e.constant(0, a.type), e.constant(1, a.type)
    minus_one = e.constant(-1, a.type)
    by_zero = e.op(arith.CmpiOp(b, zero, "eq"))
    by_minus_one = e.op(arith.CmpiOp(b, minus_one, "eq"))
    safe = e.op(arith.SelectOp(e.op(arith.OrIOp(by_zero, by_minus_one)), one, b))
    quotient = e.op(arith.DivSIOp(a, safe))
    negated = e.op(arith.SelectOp(by_minus_one, e.op(arith.SubiOp(zero, a)), quotient))
    return e.op(arith.SelectOp(by_zero, zero, negated))


def _int_negative(e: Emitter, x: SSAValue, op: Operation) -> SSAValue:
    return e.op(arith.SubiOp(e.constant(0, x.type), x))


INTEGER_UNARY: dict[type[Operation], Unary] = {
    relay.NegativeOp: _int_negative,
    relay.ReluOp: lambda e, x, op: e.op(arith.MaxSIOp(x, e.constant(0, x.type))),
    relay.AbsOp: lambda e, x, op: e.op(arith.MaxSIOp(x, _int_negative(e, x, op))),
}
"""The unary ops of `UNARY` that signless integers take: their scalar
function on integers (two's complement, wrapping like NumPy's)."""

INTEGER_BINARY: dict[type[Operation], Binary] = {
    relay.AddOp: _arith(arith.AddiOp),
    relay.SubtractOp: _arith(arith.SubiOp),
    relay.MultiplyOp: _arith(arith.MuliOp),
    relay.DivideOp: _int_divide,
    relay.MaximumOp: _arith(arith.MaxSIOp),
    relay.MinimumOp: _arith(arith.MinSIOp),
}
"""The binary ops of `BINARY` that signless integers take (see `INTEGER_UNARY`)."""

COMPARISONS: dict[type[Operation], tuple[str, str]] = {
    relay.EqualOp: ("oeq", "eq"),
    relay.NotEqualOp: ("une", "ne"),
    relay.LessOp: ("olt", "slt"),
    relay.LessEqualOp: ("ole", "sle"),
    relay.GreaterOp: ("ogt", "sgt"),
    relay.GreaterEqualOp: ("oge", "sge"),
}
"""Comparison op → its `arith.cmpf` and `arith.cmpi` predicates (NumPy's:
a NaN compares false, except with `!=`)."""


def _compare(cmp: type[arith.CmpfOp | arith.CmpiOp], predicate: str) -> Binary:
    return lambda e, a, b: e.op(cmp(a, b, predicate))


for _cls, (_ordered, _signed) in COMPARISONS.items():
    BINARY[_cls] = _compare(arith.CmpfOp, _ordered)
    INTEGER_BINARY[_cls] = _compare(arith.CmpiOp, _signed)

BOOLEAN_UNARY: dict[type[Operation], Unary] = {
    relay.LogicalNotOp: lambda e, x, op: e.op(arith.XOrIOp(x, e.constant(1, x.type))),
}
"""Elementwise op → its scalar function on `i1` (booleans)."""

BOOLEAN_BINARY: dict[type[Operation], Binary] = {
    relay.LogicalAndOp: _arith(arith.AndIOp),
    relay.LogicalOrOp: _arith(arith.OrIOp),
    relay.EqualOp: _compare(arith.CmpiOp, "eq"),
    relay.NotEqualOp: _compare(arith.CmpiOp, "ne"),
}
"""Elementwise binary op → its scalar function on `i1` (see `BOOLEAN_UNARY`)."""

SCALAR_TABLES: dict[
    int,
    dict[str, dict[type[Operation], Unary]] | dict[str, dict[type[Operation], Binary]],
] = {
    1: {"float": UNARY, "int": INTEGER_UNARY, "bool": BOOLEAN_UNARY},
    2: {"float": BINARY, "int": INTEGER_BINARY, "bool": BOOLEAN_BINARY},
}
"""The scalar functions of the elementwise ops, by number of operands and
kind of element (`_scalar_function`)."""

KIND_NAMES = {"float": "float", "int": "signless integer (i8 to i64)", "bool": "i1"}


def broadcast_indices(
    indices: Sequence[Index], out_shape: Sequence[int], shape: Sequence[int]
) -> list[Index]:
    """The element of an operand of `shape` that output element `indices`
    reads under NumPy broadcasting (trailing alignment, size-1 repeats)."""
    offset = len(out_shape) - len(shape)
    return [
        0 if dim == 1 and out_shape[offset + i] != 1 else indices[offset + i]
        for i, dim in enumerate(shape)
    ]


def _element_kind(t: Attribute) -> str | None:
    """`float`, `int` (signless, the signed ints of ONNX and NumPy) or
    `bool` (`i1`): what the scalar tables (`SCALAR_TABLES`, `CASTS`) key
    on; None for what lower-te does not compute with (unsigned integers)."""
    if isinstance(t, AnyFloat):
        return "float"
    if not isinstance(t, IntegerType) or t.signedness.data != Signedness.SIGNLESS:
        return None
    return "bool" if t.width.data == 1 else "int"


def _scalar_function(
    op: Operation, element_type: Attribute, arity: int
) -> Callable[..., SSAValue]:
    """The scalar function of elementwise `op` (of `arity` operands) on
    `element_type`: from the float, signless integer or `i1` table
    (`SCALAR_TABLES`); a located error where the op has none for the type
    (`exp` of an integer, arithmetic on booleans or unsigned elements)."""
    kind = _element_kind(element_type)
    table = SCALAR_TABLES[arity].get(kind, {}) if kind else {}
    if (found := table.get(type(op))) is not None:
        return found
    kinds = [k for k, t in SCALAR_TABLES[arity].items() if type(op) in t]
    raise HeteroError(
        f"lower-te: {op.name} on {element_type} elements is not supported "
        f"({op.name} is lowered for {' and '.join(KIND_NAMES[k] for k in kinds)} elements)",
        op,
    )


def _result_element(op: Operation) -> Attribute:
    return op.results[0].type.element_type  # type: ignore[attr-defined]


def _unary(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    (x,) = inputs
    scalar = _scalar_function(op, x.element_type, 1)
    return Tensor(
        x.shape, _result_element(op), lambda e, idx: scalar(e, x.load(e, idx), op)
    )


def _binary(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    lhs, rhs = inputs
    shape = result_shape(op)
    scalar = _scalar_function(op, lhs.element_type, 2)

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        a = lhs.load(e, broadcast_indices(idx, shape, lhs.shape))
        b = rhs.load(e, broadcast_indices(idx, shape, rhs.shape))
        return scalar(e, a, b)

    return Tensor(shape, _result_element(op), load)


def _where(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """`condition ? x : y`, each operand read at its broadcast index."""
    shape = result_shape(op)

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        condition, x, y = (
            t.load(e, broadcast_indices(idx, shape, t.shape)) for t in inputs
        )
        return e.op(arith.SelectOp(condition, x, y))

    return Tensor(shape, _result_element(op), load)


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


TEMPLATES: dict[type[Operation], LazyTemplate] = {
    **{cls: _unary for table in SCALAR_TABLES[1].values() for cls in table},
    **{cls: _binary for table in SCALAR_TABLES[2].values() for cls in table},
    relay.WhereOp: _where,
    relay.BiasAddOp: _bias_add,
    relay.BatchNormOp: _batch_norm,
    relay.CastOp: _cast,
}
"""Elementwise op → template returning its lazy result."""
