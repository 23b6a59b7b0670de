"""Compute templates of `lower-te`: relay op class → loop-level code.

Two tables, by what an op's result needs:

* `LAZY_TEMPLATES` — elementwise and injective ops.  The template returns a
  `Tensor` whose `load` emits the element's computation at the point of use,
  reading the operands through their own `load`s, so a chain of such ops
  becomes one expression inside its consumer's loop body (no intermediate
  buffers).
* `NEST_TEMPLATES` — reductions and anchors (dense, matmul, conv2d, pools,
  softmax).  The template emits a loop nest that writes the result into a
  given buffer; the outermost loop runs over output elements, so it is
  marked `parallel`; reductions are inner serial loops accumulating in the
  destination element.

Arithmetic is on float element types (the relay ops' domain), and the
elementwise ops that integers have a meaning for (`INTEGER_UNARY`,
`INTEGER_BINARY`) also take signless integers (the signed ints of ONNX and
NumPy); other integer tensors are accepted by the injective templates only,
which merely move elements.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import product

from xdsl.dialects import arith
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from hetero.dialects import relay
from hetero.dialects.tir import ForKind
from hetero.targets.cpu import is_cpu
from hetero.te.emit import Emitter, Index, Tensor, store_all
from hetero.te.schedules import problem_schedule, spreads_transposed
from hetero.te.schedules.isa import vector_isa
from hetero.te.schedules.problems import Conv2D, Gemm, Pool2D, Store
from hetero.utils.diagnostics import HeteroError
from hetero.utils.winograd import TRANSFORMS, Transforms

LazyTemplate = Callable[[Operation, Sequence[Tensor]], Tensor]
NestTemplate = Callable[[Emitter, Operation, Sequence[Tensor], SSAValue], None]


def result_shape(op: Operation) -> tuple[int, ...]:
    type = op.results[0].type
    assert isinstance(type, TensorType)
    return tuple(type.get_shape())


def _require_float(op: Operation, element_type: Attribute) -> None:
    """Arithmetic templates compute in a float type; say so rather than emit wrong IR."""
    if not isinstance(element_type, AnyFloat):
        raise HeteroError(
            f"lower-te: {op.name} on {element_type} elements is not supported "
            "(arithmetic is lowered for float element types only)",
            op,
        )


# ----------------------------------------------------------------------------
# Scalar functions of the elementwise ops
# ----------------------------------------------------------------------------

Unary = Callable[[Emitter, SSAValue, Operation], SSAValue]
Binary = Callable[[Emitter, SSAValue, SSAValue], SSAValue]


def _one(e: Emitter, like: SSAValue) -> SSAValue:
    return e.constant(1.0, like.type)


def _tanh(e: Emitter, x: SSAValue, op: Operation) -> SSAValue:
    """`math.tanh` on the CPU (a polynomial there, `approximate-math`, exact
    to ulps near 0 too); elsewhere 1 - 2 / (exp(2x) + 1): exp and divide
    only, saturating cleanly at ±1."""
    if is_cpu(e.target):
        return e.op(math_dialect.TanhOp(x))
    two = e.constant(2.0, x.type)
    exp = e.op(math_dialect.ExpOp(e.op(arith.MulfOp(two, x))))
    ratio = e.op(arith.DivfOp(two, e.op(arith.AddfOp(exp, _one(e, x)))))
    return e.op(arith.SubfOp(_one(e, x), ratio))


def _sigmoid(e: Emitter, x: SSAValue, op: Operation) -> SSAValue:
    """1 / (1 + exp(-x)) for x ≥ 0, exp(x) / (1 + exp(x)) below: the exp of
    -|x| never overflows (no inf / inf), and a large negative x keeps its
    tiny (denormal) result, to a few ulps, rather than 0."""
    exp = e.op(math_dialect.ExpOp(e.fmin(x, e.op(arith.NegfOp(x)))))
    negative = e.op(arith.CmpfOp(x, e.constant(0.0, x.type), "olt"))
    numerator = e.op(arith.SelectOp(negative, exp, _one(e, x)))
    return e.op(arith.DivfOp(numerator, e.op(arith.AddfOp(exp, _one(e, x)))))


def _silu(e: Emitter, x: SSAValue, op: Operation) -> SSAValue:
    return e.op(arith.MulfOp(x, _sigmoid(e, x, op)))


def _hard_swish(e: Emitter, x: SSAValue, op: Operation) -> SSAValue:
    sixth, half = e.constant(1 / 6, x.type), e.constant(0.5, x.type)
    gate = e.op(arith.AddfOp(e.op(arith.MulfOp(x, sixth)), half))
    clipped = e.fmin(e.fmax(gate, e.constant(0.0, x.type)), _one(e, x))
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


# ----------------------------------------------------------------------------
# Lazy (inlined) templates
# ----------------------------------------------------------------------------


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


def channel_axis(op: Operation, rank: int) -> int:
    """`op`'s `axis` (of a tensor of `rank`), negative ones counted from the end."""
    axis = op.axis  # type: ignore[attr-defined]
    return axis + rank if axis < 0 else axis


def _bias_add(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    x, bias = inputs
    _require_float(op, x.element_type)
    axis = channel_axis(op, len(x.shape))

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        return e.op(arith.AddfOp(x.load(e, idx), bias.load(e, [idx[axis]])))

    return Tensor(x.shape, x.element_type, load)


def _batch_norm(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """x * scale + (beta - mean * scale), scale = gamma / sqrt(var + eps)."""
    assert isinstance(op, relay.BatchNormOp)
    x, gamma, beta, mean, var = inputs
    _require_float(op, x.element_type)
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


def _strides(shape: Sequence[int]) -> list[int]:
    """Row-major element strides."""
    return [math.prod(shape[i + 1 :]) for i in range(len(shape))]


def reshape_groups(
    source: Sequence[int], target: Sequence[int]
) -> list[tuple[list[int], list[int]]]:
    """The dimensions of `source` and of `target` (shapes of one size) in
    consecutive groups of equal size, as small as can be: a reshape maps
    each group of `target` onto the same group of `source` alone
    (`[N, C, H, W]` to `[N, g, C/g, H, W]`: `C` to `g, C/g`, the others
    one to one).  A dimension of size 1 left over is a group of its own."""
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(source) or j < len(target):
        a: list[int] = []
        b: list[int] = []
        size_a = size_b = 1
        if i < len(source):
            a.append(i)
            size_a, i = source[i], i + 1
        if j < len(target):
            b.append(j)
            size_b, j = target[j], j + 1
        while size_a != size_b:
            if size_a < size_b:
                a.append(i)
                size_a, i = size_a * source[i], i + 1
            else:
                b.append(j)
                size_b, j = size_b * target[j], j + 1
        groups.append((a, b))
    return groups


def _reshape(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """Same row-major order, group by group (`reshape_groups`): a dimension
    kept as it is keeps its index (an image's rows and columns stay affine,
    for the vectorizer); within a group the output index is linearised and
    split for the input."""
    (x,) = inputs
    shape = result_shape(op)
    groups = reshape_groups(x.shape, shape) if math.prod(shape) else None

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        if groups is None:  # no element is ever read
            return x.load(e, [0] * len(x.shape))
        source: list[Index] = [0] * len(x.shape)
        for a, b in groups:
            if len(a) == 1 and len(b) == 1:
                source[a[0]] = idx[b[0]]
                continue
            flat: Index = 0
            for d, stride in zip(b, _strides([shape[d] for d in b])):
                flat = e.add(flat, e.mul(idx[d], stride))
            for d, stride in zip(a, _strides([x.shape[d] for d in a])):
                source[d] = e.rem(e.div(flat, stride), x.shape[d])
        return x.load(e, source)

    return Tensor(shape, x.element_type, load)


def _nchw(tensor: Tensor, layout: str) -> Tensor:
    """`tensor`, in data layout `layout` (`relay.DATA_LAYOUT`), read as `NCHW`."""
    if not (block := relay.data_block(layout)):
        return tensor
    n, blocks, h, w, _ = tensor.shape
    return Tensor(
        (n, blocks * block, h, w),
        tensor.element_type,
        lambda e, idx: tensor.load(
            e, [idx[0], e.div(idx[1], block), *idx[2:], e.rem(idx[1], block)]
        ),
    )


def _blocked_index(e: Emitter, idx: Sequence[Index], layout: str) -> list[Index]:
    """Where `NCHW` element `idx` lies in data layout `layout`."""
    if not (block := relay.data_block(layout)):
        return list(idx)
    n, c, y, x = idx
    return [n, e.div(c, block), y, x, e.rem(c, block)]


def _layout_transform(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    assert isinstance(op, relay.LayoutTransformOp)
    source = _nchw(inputs[0], op.src_layout)
    if not (block := relay.data_block(op.dst_layout)):
        return Tensor(result_shape(op), source.element_type, source.load)
    return Tensor(
        result_shape(op),
        source.element_type,
        lambda e, idx: source.load(
            e, [idx[0], e.add(e.mul(idx[1], block), idx[4]), *idx[2:4]]
        ),
    )


def _transpose(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    assert isinstance(op, relay.TransposeOp)
    (x,) = inputs
    rank = len(x.shape)
    axes = [a + rank if a < 0 else a for a in (op.axes or reversed(range(rank)))]

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        source: list[Index] = [0] * rank
        for out_dim, in_dim in enumerate(axes):
            source[in_dim] = idx[out_dim]
        return x.load(e, source)

    return Tensor(result_shape(op), x.element_type, load)


def _take(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """Output element `idx` reads `data` at `idx` with the `indices` element
    at `idx[axis : axis + rank(indices)]` in place of those dimensions,
    that index counted from the end if negative and clamped into the axis
    (`relay.take`), so no element is read out of bounds."""
    assert isinstance(op, relay.TakeOp)
    data, indices = inputs
    axis = op.axis % len(data.shape)
    rank, extent = len(indices.shape), data.shape[axis]

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        raw = indices.load(e, idx[axis : axis + rank])
        picked = e.op(arith.IndexCastOp(raw, IndexType()))
        negative = e.op(arith.CmpiOp(picked, e.index(0), "slt"))
        wrapped = e.op(arith.SelectOp(negative, e.index(e.add(picked, extent)), picked))
        low = e.op(arith.MaxSIOp(wrapped, e.index(0)))
        clamped = e.op(arith.MinSIOp(low, e.index(extent - 1)))
        return data.load(e, [*idx[:axis], clamped, *idx[axis + rank :]])

    return Tensor(result_shape(op), data.element_type, load)


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


def _squeeze(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """The dropped dimensions have size 1: read them at 0."""
    (x,) = inputs
    kept = [i for i, d in enumerate(x.shape) if d != 1]
    axis = op.axis  # type: ignore[attr-defined]
    if axis is not None:
        dropped = {a + len(x.shape) if a < 0 else a for a in axis}
        kept = [i for i in range(len(x.shape)) if i not in dropped]

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        source: list[Index] = [0] * len(x.shape)
        for out_dim, in_dim in enumerate(kept):
            source[in_dim] = idx[out_dim]
        return x.load(e, source)

    return Tensor(result_shape(op), x.element_type, load)


def _expand_dims(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """The new dimensions have size 1: skip their indices."""
    assert isinstance(op, relay.ExpandDimsOp)
    (x,) = inputs
    at = op.axis + len(x.shape) + 1 if op.axis < 0 else op.axis
    count = op.num_newaxis

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        return x.load(e, [*idx[:at], *idx[at + count :]])

    return Tensor(result_shape(op), x.element_type, load)


def _concatenate(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """Read in place, which input an element comes from is decided by
    `scf.if`s on the axis index, so only the chosen input is read; stored
    whole, the inputs are its parts (one branch-free copy each)."""
    shape = result_shape(op)
    axis = channel_axis(op, len(shape))
    starts = [0]
    for x in inputs:
        starts.append(starts[-1] + x.shape[axis])

    def load_from(e: Emitter, idx: Sequence[Index], k: int) -> SSAValue:
        local = [*idx[:axis], e.sub(idx[axis], starts[k]), *idx[axis + 1 :]]
        if k == len(inputs) - 1:
            return inputs[k].load(e, local)
        before_next = e.op(
            arith.CmpiOp(e.index(idx[axis]), e.index(starts[k + 1]), "slt")
        )
        return e.choose(
            before_next,
            inputs[k].element_type,
            lambda t: inputs[k].load(t, local),
            lambda f: load_from(f, idx, k + 1),
        )

    parts = tuple(
        (x, tuple(start if i == axis else 0 for i in range(len(shape))))
        for x, start in zip(inputs, starts)
    )
    return Tensor(
        shape, inputs[0].element_type, lambda e, idx: load_from(e, idx, 0), parts
    )


LAZY_TEMPLATES: dict[type[Operation], LazyTemplate] = {
    **{cls: _unary for table in SCALAR_TABLES[1].values() for cls in table},
    **{cls: _binary for table in SCALAR_TABLES[2].values() for cls in table},
    relay.WhereOp: _where,
    relay.BiasAddOp: _bias_add,
    relay.BatchNormOp: _batch_norm,
    relay.ReshapeOp: _reshape,
    relay.FlattenOp: _reshape,
    relay.TransposeOp: _transpose,
    relay.LayoutTransformOp: _layout_transform,
    relay.TakeOp: _take,
    relay.CastOp: _cast,
    relay.SqueezeOp: _squeeze,
    relay.ExpandDimsOp: _expand_dims,
    relay.ConcatenateOp: _concatenate,
}
"""Elementwise/injective op → template returning its lazy result."""


# ----------------------------------------------------------------------------
# Loop-nest templates (reductions and anchors)
# ----------------------------------------------------------------------------


def _accumulate(
    e: Emitter,
    out: SSAValue,
    idx: Sequence[Index],
    value: SSAValue,
    combine: type[Operation],
) -> None:
    """out[idx] = combine(out[idx], value)."""
    e.store(e.op(combine(e.load(out, idx), value)), out, idx)


@dataclass(frozen=True)
class Epilogue:
    """A fused elementwise tail of an anchor: (indices, computed element) →
    the element to store (see `lower-te`: bias_add, relu, ... after
    dense/conv2d)."""

    apply: Callable[[Emitter, Sequence[Index], SSAValue], SSAValue]
    flat_pixels: bool = False
    """It reads the same elements at `[..., 0, y * W + x]` as at `[..., y,
    x]` (its other operands are buffers as wide and high as the result, or
    broadcast along both, or per channel): a schedule may address the
    result as one flattened image (`Conv2D.flat_store`)."""

    def __call__(self, e: Emitter, idx: Sequence[Index], element: SSAValue) -> SSAValue:
        return self.apply(e, idx, element)


def _store_into(out: SSAValue, epilogue: Epilogue | None) -> Store:
    """The schedules' output writer: the epilogue, then a store into `out`."""
    if epilogue is None:
        return lambda e, idx, value: e.store(value, out, idx)
    return lambda e, idx, value: e.store(epilogue(e, idx, value), out, idx)


def _finish(
    e: Emitter, out: SSAValue, shape: Sequence[int], epilogue: Epilogue | None
) -> None:
    """Without a schedule, the epilogue runs over the finished output, in place."""
    if epilogue is not None:
        body, idx = e.nest(shape, parallel=True)
        body.store(epilogue(body, idx, body.load(out, idx)), out, idx)


def _plain_gemm(
    e: Emitter,
    out: SSAValue,
    shape: Sequence[int],
    extent: int,
    element_type: Attribute,
    operands: Callable[[Emitter, Sequence[Index], Index], tuple[SSAValue, SSAValue]],
    epilogue: Epilogue | None,
) -> None:
    """Without a schedule: out[idx] = sum_k a·b over `k < extent`, accumulated in
    `out`, where `operands(e, idx, k)` loads the pair `(a, b)` multiplied."""
    body, idx = e.nest(shape, parallel=True)
    body.store(body.constant(0.0, element_type), out, idx)
    inner, k = body.loop(extent)
    product = inner.op(arith.MulfOp(*operands(inner, idx, k)))
    _accumulate(inner, out, idx, product, arith.AddfOp)
    _finish(e, out, shape, epilogue)


def _dense(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """out[m, n] = sum_k x[m, k] * w[n, k] (`w` read through its panels
    when packed, `NK<b>n`)."""
    assert isinstance(op, relay.DenseOp)
    x, packed = inputs
    _require_float(op, x.element_type)
    (m, n), k = result_shape(op), x.shape[1]
    w = _nk(op, packed)
    if (schedule := problem_schedule(e.target, Gemm)) is not None:
        problem = Gemm(
            1,
            m,
            n,
            k,
            x.element_type,
            lambda e, _, i, kk: x.load(e, [i, kk]),
            lambda e, _, kk, j: w.load(e, [j, kk]),
            lambda e, idx, value: _store_into(out, epilogue)(e, idx[1:], value),
            b_along_k=True,
            packed_b=packed if w is not packed else None,
        )
        return schedule(e, problem, e.target)

    def operands(
        e: Emitter, idx: Sequence[Index], kk: Index
    ) -> tuple[SSAValue, SSAValue]:
        return x.load(e, [idx[0], kk]), w.load(e, [idx[1], kk])

    _plain_gemm(e, out, (m, n), k, x.element_type, operands, epilogue)


def _nk(op: relay.DenseOp, weight: Tensor) -> Tensor:
    """The dense weight as `NK` (`[N, K]`), whatever its `weight_layout`."""
    block = relay.dense_block(op.weight_layout)
    return _unblocked(weight, op.units, block) if block else weight


VIEW_OPS: frozenset[type[Operation]] = frozenset(
    {
        relay.ReshapeOp,
        relay.TransposeOp,
        relay.FlattenOp,
        relay.SqueezeOp,
        relay.ExpandDimsOp,
    }
)
"""Injective ops that only renumber their input's elements: inside a
kernel, index arithmetic on the way to a load."""

VIEW_READERS: frozenset[type[Operation]] = frozenset({relay.MatmulOp, relay.DenseOp})
"""Anchors whose schedule reads each operand element through a loader
(`Gemm.a`, `Gemm.b`, once per element when packing), so that a view of a
buffer fused before them (`fuse-ops`) is read in place, never copied."""


def _contiguous_axis(value: SSAValue) -> int | None:
    """The axis along which neighbouring elements of `value` lie next to
    each other in memory as a kernel reads it: the last one of a buffer (a
    parameter, a materialised result), permuted by transposes and kept by
    other views that keep the last axis contiguous; None if no axis is."""
    rank = len(value.type.get_shape())  # type: ignore[attr-defined]
    owner = value.owner
    if type(owner) not in VIEW_OPS:
        return rank - 1
    assert isinstance(owner, Operation)
    source = owner.operands[0]
    inner = _contiguous_axis(source)
    if isinstance(owner, relay.TransposeOp):
        axes = owner.axes or tuple(reversed(range(rank)))
        return None if inner is None else [a % rank for a in axes].index(inner)
    last = len(source.type.get_shape()) - 1  # type: ignore[attr-defined]
    return rank - 1 if inner == last else None


def _matmul(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """out[..., m, n] = sum_k a[..., m, k] * b[..., k, n], batch dims broadcast;
    `b` read along `k` where that is its contiguous axis (`Kᵀ` as a
    transposed view of `K`, `VIEW_READERS`)."""
    a, b = inputs
    _require_float(op, a.element_type)
    shape = result_shape(op)
    batch_shape = shape[:-2]
    if (schedule := problem_schedule(e.target, Gemm)) is not None:

        def operand(x: Tensor, e: Emitter, flat: Index) -> list[Index]:
            return broadcast_indices(
                e.unflatten(flat, batch_shape), batch_shape, x.shape[:-2]
            )

        problem = Gemm(
            math.prod(batch_shape),
            shape[-2],
            shape[-1],
            a.shape[-1],
            a.element_type,
            lambda e, t, i, k: a.load(e, [*operand(a, e, t), i, k]),
            lambda e, t, k, j: b.load(e, [*operand(b, e, t), k, j]),
            lambda e, idx, value: _store_into(out, epilogue)(
                e, [*e.unflatten(idx[0], batch_shape), *idx[1:]], value
            ),
            b_along_k=_contiguous_axis(op.operands[1]) == len(b.shape) - 2,
        )
        return schedule(e, problem, e.target)

    def operands(
        e: Emitter, idx: Sequence[Index], k: Index
    ) -> tuple[SSAValue, SSAValue]:
        batch, (m, n) = idx[:-2], idx[-2:]
        a_idx = broadcast_indices(batch, batch_shape, a.shape[:-2]) + [m, k]
        b_idx = broadcast_indices(batch, batch_shape, b.shape[:-2]) + [k, n]
        return a.load(e, a_idx), b.load(e, b_idx)

    _plain_gemm(e, out, shape, a.shape[-1], a.element_type, operands, epilogue)


def _window_tap(
    e: Emitter, out_pos: Index, tap: Index, stride: int, dilation: int, pad: int
) -> Index:
    """The input row (column) a window tap reads: out * stride + tap * dilation - pad."""
    return e.sub(e.add(e.mul(out_pos, stride), e.mul(tap, dilation)), pad)


def _oihw(op: relay.Conv2DOp, weight: Tensor) -> Tensor:
    """The weight as `OIHW` (`[O, I, KH, KW]`), whatever its `kernel_layout`."""
    block = relay.kernel_block(op.kernel_layout)
    if tile := relay.winograd_tile(op.kernel_layout):
        return _spatial_view(weight, TRANSFORMS[tile], op.channels, block)
    return _unblocked(weight, op.channels, block) if block else weight


def _unblocked(weight: Tensor, count: int, block: int) -> Tensor:
    """A weight blocked along its first axis (`[blocks, ..., block]`:
    `OIHW<b>o`, `NK<b>n`) read as `[count, ...]`."""
    return Tensor(
        (count, *weight.shape[1:-1]),
        weight.element_type,
        lambda e, idx: weight.load(
            e, [e.div(idx[0], block), *idx[1:], e.rem(idx[0], block)]
        ),
    )


def _spatial_view(
    weight: Tensor, transforms: Transforms, channels: int, block: int
) -> Tensor:
    """A weight in the Winograd domain (`winograd<m>_OI<b>o`) read as `OIHW`:
    `w[o, i, ky, kx] = sum L[ky, u] L[kx, v] U[u, v, o, i]` over the nonzero
    terms of the left inverse `L` of `G`, each chosen by `(ky, kx)` with a
    select (folded away where the tap is a constant).  For schedules that
    read `OIHW`; the Winograd schedule reads the weight as it is."""
    alpha = transforms.alpha
    terms = [
        (k, u, coefficient)
        for k, row in enumerate(transforms.left)
        for u, coefficient in enumerate(row)
        if coefficient
    ]

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        o, i, ky, kx = idx
        element = weight.element_type
        zero = e.constant(0.0, element)
        total: SSAValue | None = None
        at = [e.div(o, block), i, e.rem(o, block)]
        for (row, u, cu), (col, v, cv) in product(terms, terms):
            if any(isinstance(t, int) and t != k for t, k in ((ky, row), (kx, col))):
                continue
            stored = weight.load(e, [u * alpha + v, *at])
            term = e.op(arith.MulfOp(stored, e.constant(cu * cv, element)))
            for tap, k in ((ky, row), (kx, col)):
                if not isinstance(tap, int):
                    hit = e.op(arith.CmpiOp(tap, e.index(k), "eq"))
                    term = e.op(arith.SelectOp(hit, term, zero))
            total = term if total is None else e.op(arith.AddfOp(total, term))
        return total if total is not None else zero

    return Tensor((channels, weight.shape[2], 3, 3), weight.element_type, load)


def _conv2d(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """The target's conv2d schedule, else `_direct_conv` (with an `OIHW`
    view of a packed weight, and an `NCHW` view of blocked data and result)."""
    assert isinstance(op, relay.Conv2DOp)
    stored, packed = inputs
    _require_float(op, stored.element_type)
    weight = _oihw(op, packed)
    data = _nchw(stored, op.data_layout)
    out_shape = relay.nchw_shape(result_shape(op), op.out_layout, "the result")
    store = _store_into(out, epilogue)
    blocked = relay.data_block(op.out_layout)
    flat_store = not blocked and (epilogue is None or epilogue.flat_pixels)
    if (schedule := problem_schedule(e.target, Conv2D)) is not None:
        problem = Conv2D(
            data,
            weight,
            tuple(out_shape),
            op.strides,
            op.dilation,
            op.padding,
            op.groups,
            lambda e, idx, v: store(e, _blocked_index(e, idx, op.out_layout), v),
            packed=packed if weight is not packed else None,
            blocked_data=stored if data is not stored else None,
            blocked_store=store if blocked else None,
            out_block=blocked,
            winograd=relay.winograd_tile(op.kernel_layout),
            flat_store=flat_store,
        )
        return schedule(e, problem, e.target)
    _direct_conv(
        e,
        op,
        data,
        weight,
        out,
        epilogue,
        out_shape,
        lambda e, idx: _blocked_index(e, idx, op.out_layout),
    )


def _conv3d(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """conv2d's sum over one more spatial axis (no schedule: `_direct_conv`)."""
    assert isinstance(op, relay.Conv3DOp)
    data, weight = inputs
    _require_float(op, data.element_type)
    _direct_conv(e, op, data, weight, out, epilogue)


def _direct_conv(
    e: Emitter,
    op: relay.Conv2DOp | relay.Conv3DOp,
    data: Tensor,
    weight: Tensor,
    out: SSAValue,
    epilogue: Epilogue | None,
    out_shape: Sequence[int] | None = None,
    place: Callable[[Emitter, list[Index]], list[Index]] = lambda e, idx: idx,
) -> None:
    """out[n, o, *p] = sum_{c, *k} in[n, g*C/G + c, *(p * s + k * d - pad)] *
    w[o, c, *k] over the taps inside the input (padding reads as 0), g = o //
    (O/G), for any number of spatial axes: one parallel nest over the output.
    `out_shape` is the `NCHW` shape of an output stored in another layout,
    `place` where its element `[n, o, *p]` lies."""
    out_channels, group_channels, *kernel = weight.shape
    sizes = data.shape[2:]
    body, (n, o, *position) = e.nest(out_shape or result_shape(op), parallel=True)
    at = place(body, [n, o, *position])
    body.store(body.constant(0.0, data.element_type), out, at)
    group = 0 if op.groups == 1 else body.div(o, out_channels // op.groups)
    base = body.mul(group, group_channels)
    c_body, (c, *taps) = body.nest([group_channels, *kernel])
    source = _window_taps(c_body, op, position, taps)
    inside = c_body.all_of(
        [c_body.in_range(i, 0, size) for i, size in zip(source, sizes)]
    )
    if (tap := c_body.when(inside)) is not None:
        pixel = data.load(tap, [n, tap.add(base, c), *source])
        product = tap.op(arith.MulfOp(pixel, weight.load(tap, [o, c, *taps])))
        _accumulate(tap, out, at, product, arith.AddfOp)
    _finish(e, out, result_shape(op), epilogue)


def _window_taps(
    e: Emitter, op: Operation, position: Sequence[Index], taps: Sequence[Index]
) -> list[Index]:
    """The input element each spatial axis of a window tap reads (`_window_tap`
    with the op's strides, dilation and starting padding)."""
    strides, dilation, padding = op.strides, op.dilation, op.padding  # type: ignore[attr-defined]
    return [
        _window_tap(e, p, k, s, d, pad)
        for p, k, s, d, pad in zip(position, taps, strides, dilation, padding)
    ]


def _conv2d_transpose(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """Through the target's conv2d schedule where it has one
    (`_transposed_as_conv2d`), else in gather form: out[n, o, y, x] =
    sum_{c, ky, kx} in[n, g*C/G + c, iy, ix] * w[g*C/G + c, o % (O/G), ky, kx]
    over the taps whose input pixel exists: `iy * sh = y + pt - ky * dh` (a
    whole multiple of the stride, inside the image), likewise `ix` (no two
    taps write one element at once, unlike the scatter)."""
    assert isinstance(op, relay.Conv2DTransposeOp)
    data, weight = inputs
    _require_float(op, data.element_type)
    if _transposed_as_conv2d(e, op, data, weight, out, epilogue):
        return
    (sh, sw), (dh, dw), (pt, pl, _, _) = op.strides, op.dilation, op.padding
    channels, out_per_group, kh, kw = weight.shape
    group_channels = channels // op.groups
    height, width = data.shape[2:]
    body, (n, o, y, x) = e.nest(result_shape(op), parallel=True)
    body.store(body.constant(0.0, data.element_type), out, [n, o, y, x])
    group = 0 if op.groups == 1 else body.div(o, out_per_group)
    base = body.mul(group, group_channels)
    o_in_group = o if op.groups == 1 else body.rem(o, out_per_group)
    c_body, (c, ky, kx) = body.nest([group_channels, kh, kw])
    row = c_body.sub(c_body.add(y, pt), c_body.mul(ky, dh))
    col = c_body.sub(c_body.add(x, pl), c_body.mul(kx, dw))
    inside = c_body.all_of(
        [
            c_body.in_range(row, 0, (height - 1) * sh + 1),
            c_body.in_range(col, 0, (width - 1) * sw + 1),
            *(_multiple(c_body, v, s) for v, s in ((row, sh), (col, sw)) if s > 1),
        ]
    )
    if (tap := c_body.when(inside)) is not None:
        channel = tap.add(base, c)
        pixel = data.load(tap, [n, channel, tap.div(row, sh), tap.div(col, sw)])
        weighted = weight.load(tap, [channel, o_in_group, ky, kx])
        _accumulate(
            tap, out, [n, o, y, x], tap.op(arith.MulfOp(pixel, weighted)), arith.AddfOp
        )
    _finish(e, out, result_shape(op), epilogue)


def _transposed_as_conv2d(
    e: Emitter,
    op: relay.Conv2DTransposeOp,
    data: Tensor,
    weight: Tensor,
    out: SSAValue,
    epilogue: Epilogue | None,
) -> bool:
    """Runs `op` through the target's conv2d schedule, if it has one: a
    transposed convolution is the conv2d, stride 1 and the op's dilation,
    of its input spread out (`strides - 1` zeros between the pixels) and
    padded by `dilation * (kernel - 1) - padding` (plus `output_padding` at
    the end), with the weight flipped along both window axes and its input
    and output channels exchanged (TVM's generic `conv2d_transpose`).  The
    spread input is one buffer; the zeros cost multiply-adds (a stride of
    2 makes 4 of them per real one), which the register-tiled schedule
    still does faster than the direct nest.  False (nothing emitted) where
    there is no schedule, the padding exceeds the window's reach, or the op
    is strided and the target's schedule does not take spread inputs
    (`schedules.SPREADS_TRANSPOSED`)."""
    schedule = problem_schedule(e.target, Conv2D)
    (sh, sw), (dh, dw) = op.strides, op.dilation
    (pt, pl, pb, pr), (oph, opw) = op.padding, op.output_padding
    channels, out_per_group, kh, kw = weight.shape
    reach_h, reach_w = dh * (kh - 1), dw * (kw - 1)
    padding = (reach_h - pt, reach_w - pl, reach_h - pb + oph, reach_w - pr + opw)
    strided = (sh, sw) != (1, 1)
    if (
        schedule is None
        or min(padding) < 0
        or (strided and not spreads_transposed(e.target))
    ):
        return False
    element = data.element_type
    batch, _, height, width = data.shape
    if strided:
        spread_shape = (batch, channels, (height - 1) * sh + 1, (width - 1) * sw + 1)

        def spread_load(r: Emitter, idx: Sequence[Index]) -> SSAValue:
            n, c, y, x = idx
            value = data.load(r, [n, c, r.div(y, sh), r.div(x, sw)])
            on_grid = r.all_of(
                [_multiple(r, v, s) for v, s in ((y, sh), (x, sw)) if s > 1]
            )
            return r.op(arith.SelectOp(on_grid, value, r.constant(0.0, element)))

        spread = e.alloc(list(spread_shape), element)
        store_all(e, Tensor(spread_shape, element, spread_load), spread)
        data = Tensor.of_buffer(spread)
    group_channels = channels // op.groups

    def flipped(r: Emitter, idx: Sequence[Index]) -> SSAValue:
        o, c, ky, kx = idx
        group = 0 if op.groups == 1 else r.div(o, out_per_group)
        within = o if op.groups == 1 else r.rem(o, out_per_group)
        return weight.load(
            r,
            [
                r.add(r.mul(group, group_channels), c),
                within,
                r.sub(kh - 1, ky),
                r.sub(kw - 1, kx),
            ],
        )

    problem = Conv2D(
        data,
        Tensor((out_per_group * op.groups, group_channels, kh, kw), element, flipped),
        result_shape(op),
        (1, 1),
        (dh, dw),
        padding,
        op.groups,
        _store_into(out, epilogue),
    )
    schedule(e, problem, e.target)
    return True


def _multiple(e: Emitter, value: Index, stride: int) -> SSAValue:
    """Whether `value` (not negative) is a whole multiple of `stride`."""
    remainder = e.index(e.rem(value, stride))
    return e.op(arith.CmpiOp(remainder, e.index(0), "eq"))


def _pool_window(
    e: Emitter, op: relay.Pool2DOp | relay.Pool3DOp, position: Sequence[Index]
) -> tuple[Emitter, list[Index], list[Index]]:
    """Loops over a pooling window: the body, the input element on each
    spatial axis, and the tap's offsets from the padded origin (for
    `count_include_pad`)."""
    body, taps = e.nest(op.pool_size)
    source = _window_taps(body, op, position, taps)
    return body, source, [body.add(i, pad) for i, pad in zip(source, op.padding)]


def _scheduled_pool(
    e: Emitter,
    op: Operation,
    data: Tensor,
    out: SSAValue,
    epilogue: Epilogue | None,
    average: bool,
) -> bool:
    """Hands a pooling to the target's `Pool2D` schedule, if it has one (a
    global pooling as a window over the whole plane)."""
    if (schedule := problem_schedule(e.target, Pool2D)) is None:
        return False
    window = (
        (op.pool_size, op.strides, op.dilation, op.padding)
        if isinstance(op, relay.Pool2DOp)
        else (data.shape[2:], (1, 1), (1, 1), (0, 0, 0, 0))
    )
    include_pad = isinstance(op, relay.AvgPool2DOp) and op.count_include_pad
    store = _store_into(out, epilogue)
    problem = Pool2D(data, result_shape(op), average, *window, include_pad, store)
    schedule(e, problem, e.target)
    return True


def _max_pool(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """out = max over the window's taps inside the input (padding never
    wins); 2-D through the target's pooling schedule where it has one."""
    assert isinstance(op, relay.MaxPool2DOp | relay.MaxPool3DOp)
    (data,) = inputs
    _require_float(op, data.element_type)
    if block := _pool_block(op):
        return _blocked_max_pool(e, op, data, out, epilogue, block)
    if isinstance(op, relay.MaxPool2DOp) and _scheduled_pool(
        e, op, data, out, epilogue, average=False
    ):
        return
    body, (n, c, *position) = e.nest(result_shape(op), parallel=True)
    at = [n, c, *position]
    body.store(body.constant(-math.inf, data.element_type), out, at)
    window, source, _ = _pool_window(body, op, position)
    inside = window.all_of(
        [window.in_range(i, 0, size) for i, size in zip(source, data.shape[2:])]
    )
    if (tap := window.when(inside)) is not None:
        _accumulate(tap, out, at, data.load(tap, [n, c, *source]), arith.MaximumfOp)
    _finish(e, out, result_shape(op), epilogue)


def _blocked_max_pool(
    e: Emitter,
    op: relay.MaxPool2DOp,
    data: Tensor,
    out: SSAValue,
    epilogue: Epilogue | None,
    block: int,
) -> None:
    """Max pooling of blocked data: per output pixel, the vectors of its
    block of channels at the window's taps (unrolled), maxed in a register.
    Where every window is dense and has a tap inside the input
    (`_clamps_safely`), a tap outside reads the nearest pixel inside
    instead, another tap of its window, which cannot change the maximum: no
    branch; otherwise the taps outside are skipped."""
    body, (n, c, *position) = _pool_nest(e, op)
    acc = body.alloc([block], data.element_type, "local")
    init, ci = _lanes(body, block)
    init.store(init.constant(-math.inf, data.element_type), acc, ci)
    taps, window = [], body
    for extent in op.pool_size:
        window, tap = window.loop(extent, ForKind.UNROLLED)
        taps.append(tap)
    sizes = data.shape[2:4]
    source = _window_taps(window, op, position, taps)
    tap_body: Emitter | None = window
    if _clamps_safely(op, sizes, result_shape(op)[2:4]):
        source = [
            window.min(window.max(i, 0), size - 1) for i, size in zip(source, sizes)
        ]
    else:
        inside = [window.in_range(i, 0, size) for i, size in zip(source, sizes)]
        tap_body = window.when(window.all_of(inside))
    if tap_body is not None:
        lane, ci = _lanes(tap_body, block)
        value = lane.fmaximum(lane.load(acc, ci), data.load(lane, [n, c, *source, *ci]))
        lane.store(value, acc, ci)
    lane, ci = _lanes(body, block)
    _store_into(out, epilogue)(lane, [n, c, *position, *ci], lane.load(acc, ci))


def _clamps_safely(
    op: relay.MaxPool2DOp, sizes: Sequence[int], out_sizes: Sequence[int]
) -> bool:
    """Whether clamping a max pooling's taps into the input keeps its
    result: no dilation (a window's taps are consecutive, so the nearest
    pixel inside is a tap of it) and, along each axis, every window has a
    tap inside (none lies wholly in the padding)."""
    if any(d != 1 for d in op.dilation):
        return False
    return all(
        y * stride - pad + extent > 0 and y * stride - pad < size
        for size, out_size, extent, stride, pad in zip(
            sizes, out_sizes, op.pool_size, op.strides, op.padding
        )
        for y in range(out_size)
    )


def _pool_block(op: Operation) -> int:
    """The channel block of a pooling's blocked layout (0: none)."""
    return relay.data_block(getattr(op, "layout", "NCHW"))


def _pool_nest(e: Emitter, op: Operation) -> tuple[Emitter, list[Index]]:
    """The parallel nest over a pooling's output pixels (a blocked layout's
    channels of a pixel are the vector lanes of `_lanes`)."""
    shape = result_shape(op)
    return e.nest(shape[:-1] if _pool_block(op) else shape, parallel=True)


def _lanes(e: Emitter, block: int) -> tuple[Emitter, list[Index]]:
    """A vectorized loop over the channels of a block (blocked layouts: the
    index to append to a pixel's), else nothing."""
    if not block:
        return e, []
    lane, ci = e.loop(block, ForKind.VECTORIZED)
    return lane, [ci]


def _avg_pool(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """Sum of the taps inside the input divided by the number of counted taps:
    those inside the input, or with `count_include_pad` inside the explicitly
    padded input (never the rows `ceil_mode` adds); at least 1."""
    assert isinstance(op, relay.AvgPool2DOp | relay.AvgPool3DOp)
    (data,) = inputs
    element = data.element_type
    _require_float(op, element)
    block = _pool_block(op)
    if (
        not block
        and isinstance(op, relay.AvgPool2DOp)
        and _scheduled_pool(e, op, data, out, epilogue, average=True)
    ):
        return
    rank = len(op.pool_size)
    sizes = data.shape[2 : 2 + rank]
    body, (n, c, *position) = _pool_nest(e, op)
    zero, one = body.constant(0.0, element), body.constant(1.0, element)
    count = body.alloc([1], element, "local")
    init, ci = _lanes(body, block)
    init.store(zero, out, [n, c, *position, *ci])
    body.store(zero, count, [0])
    window, source, padded = _pool_window(body, op, position)
    inside = window.all_of(
        [window.in_range(i, 0, size) for i, size in zip(source, sizes)]
    )
    if (tap := window.when(inside)) is not None:
        lane, ci = _lanes(tap, block)
        value = data.load(lane, [n, c, *source, *ci])
        _accumulate(lane, out, [n, c, *position, *ci], value, arith.AddfOp)
    counted = inside
    if op.count_include_pad:
        extents = [op.padding[d] + sizes[d] + op.padding[rank + d] for d in range(rank)]
        counted = window.all_of(
            [window.in_range(i, 0, extent) for i, extent in zip(padded, extents)]
        )
    if (tally := window.when(counted)) is not None:
        _accumulate(tally, count, [0], one, arith.AddfOp)
    divisor = body.op(arith.MaximumfOp(body.load(count, [0]), one))
    lane, ci = _lanes(body, block)
    at = [n, c, *position, *ci]
    lane.store(lane.op(arith.DivfOp(lane.load(out, at), divisor)), out, at)
    _finish(e, out, result_shape(op), epilogue)


def _global_avg_pool2d(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """out[n, c, 0, 0] = mean of in[n, c, :, :]."""
    (data,) = inputs
    _require_float(op, data.element_type)
    block = _pool_block(op)
    if not block and _scheduled_pool(e, op, data, out, epilogue, average=True):
        return
    height, width = data.shape[2:4]
    body, (n, c, _, _) = _pool_nest(e, op)
    init, ci = _lanes(body, block)
    init.store(init.constant(0.0, data.element_type), out, [n, c, 0, 0, *ci])
    window, (row, col) = body.nest([height, width])
    lane, ci = _lanes(window, block)
    value = data.load(lane, [n, c, row, col, *ci])
    _accumulate(lane, out, [n, c, 0, 0, *ci], value, arith.AddfOp)
    lane, ci = _lanes(body, block)
    at = [n, c, 0, 0, *ci]
    size = lane.constant(float(height * width), data.element_type)
    lane.store(lane.op(arith.DivfOp(lane.load(out, at), size)), out, at)
    _finish(e, out, result_shape(op), epilogue)


@dataclass(frozen=True)
class _RowNormalization:
    """What a softmax-like op makes of a row's maximum `m` and the sum `s`
    of `exp(x - m)` (`relay.RowNormalizationOp`)."""

    keeps_exp: bool
    """The sum's pass stores `exp(x - m)` as the output, which the last pass
    reads back (else it reads `x - m`)."""
    of_sum: Callable[[Emitter, SSAValue], SSAValue]
    """The row's constant, computed once from `s`."""
    element: Callable[[Emitter, SSAValue, SSAValue], SSAValue]
    """(stored `exp(x - m)` or `x - m`, the row's constant) → the result."""


ROW_NORMALIZATIONS: dict[type[Operation], _RowNormalization] = {
    relay.SoftmaxOp: _RowNormalization(
        True,
        lambda e, s: e.op(arith.DivfOp(_one(e, s), s)),
        lambda e, v, c: e.op(arith.MulfOp(v, c)),
    ),
    relay.LogSoftmaxOp: _RowNormalization(
        False,
        lambda e, s: e.op(math_dialect.LogOp(s)),
        lambda e, v, c: e.op(arith.SubfOp(v, c)),
    ),
}


def _softmax(
    e: Emitter, op: Operation, inputs: Sequence[Tensor], out: SSAValue
) -> None:
    """Softmax and log-softmax in three passes over each row along `axis`
    (a maximum, a sum of `exp(x - max)`, the result), in parallel over the
    rows.  On a CPU each pass is vectorized: along the row when `axis` is
    the innermost one (`_softmax_along`), else across the innermost axis,
    neighbouring rows in the lanes (`_softmax_across`).  A row holding NaN
    or +inf, or only -inf, is NaN (its maximum is)."""
    (data,) = inputs
    _require_float(op, data.element_type)
    axis = channel_axis(op, len(data.shape))
    kind = ROW_NORMALIZATIONS[type(op)]
    if axis == len(data.shape) - 1:
        return _softmax_along(e, kind, data, out)
    _softmax_across(e, kind, data, out, axis)


SOFTMAX_VECTORS = 4
"""Vectors of partial results a softmax row keeps on a CPU: independent
chains of maxima and sums, which leave AVX2 registers for `exp`'s
constants.  One AVX-512 vector (16 lanes) took 0.58 ms for 1x12x256x256
on one Zen 4 core, four 0.43-0.46 ms."""


def _row_lanes(e: Emitter, element: Attribute, size: int) -> int:
    """Partial results a softmax row keeps: `SOFTMAX_VECTORS` vectors on a
    CPU, one on a GPU (whose threads are its lanes)."""
    if not is_cpu(e.target):
        return 1
    return min(SOFTMAX_VECTORS * vector_isa(e.target).lanes(element), size)


def _softmax_along(
    e: Emitter, kind: _RowNormalization, data: Tensor, out: SSAValue
) -> None:
    """Rows along the innermost axis: the maximum and the sum each kept in
    `lanes` partial results (`_lanes_over`), then `_halve`d."""
    element, (*outer, size) = data.element_type, data.shape
    body, (row,) = e.nest([math.prod(outer)], parallel=True)
    at = body.unflatten(row, outer)
    lanes = _row_lanes(body, element, size)
    peak, total = _partials(body, lanes, element, -math.inf, 0.0)

    def fold_peak(e: Emitter, p: Index, j: Index) -> None:
        value = data.load(e, [*at, p])
        e.store(e.fmaximum(e.load(peak, [j]), value), peak, [j])

    _lanes_over(body, size, lanes, fold_peak)
    _halve(body, [peak], lanes, Emitter.fmaximum)
    top = body.load(peak, [0])

    def add_exp(e: Emitter, p: Index, j: Index) -> None:
        value = e.op(
            math_dialect.ExpOp(e.op(arith.SubfOp(data.load(e, [*at, p]), top)))
        )
        if kind.keeps_exp:
            e.store(value, out, [*at, p])
        _accumulate(e, total, [j], value, arith.AddfOp)

    _lanes_over(body, size, lanes, add_exp)
    _halve(body, [total], lanes)
    constant = kind.of_sum(body, body.load(total, [0]))
    lane, p = body.loop(size, ForKind.VECTORIZED)
    if kind.keeps_exp:
        value = lane.load(out, [*at, p])
    else:
        value = lane.op(arith.SubfOp(data.load(lane, [*at, p]), top))
    lane.store(kind.element(lane, value, constant), out, [*at, p])


def _softmax_across(
    e: Emitter, kind: _RowNormalization, data: Tensor, out: SSAValue, axis: int
) -> None:
    """Rows along an outer axis: a task takes `lanes` neighbouring rows
    (consecutive along the innermost axis) and runs each pass over `axis`
    with them in the vector lanes, a maximum, a sum and then the row's
    constant per lane; the last block of the innermost axis may be
    narrower."""
    element, shape = data.element_type, data.shape
    lanes = _row_lanes(e, element, shape[-1])
    blocks, rest = -(-shape[-1] // lanes), shape[-1] % lanes
    outer = [1 if i == axis else d for i, d in enumerate(shape[:-1])]
    body, (task,) = e.nest([math.prod(outer) * blocks], parallel=True)
    *idx, block = body.unflatten(task, [*outer, blocks])
    first = body.mul(block, lanes)

    def rows(width: int) -> Callable[[Emitter], None]:
        def emit(at: Emitter) -> None:
            peak, total = _partials(at, width, element, -math.inf, 0.0)

            def each(
                visit: Callable[[Emitter, list[Index], Index], None],
            ) -> None:
                step, k = at.loop(shape[axis])
                lane, j = step.loop(width, ForKind.VECTORIZED)
                place = [k if i == axis else v for i, v in enumerate(idx)]
                visit(lane, [*place, lane.add(first, j)], j)

            def fold_peak(e: Emitter, where: list[Index], j: Index) -> None:
                value = data.load(e, where)
                e.store(e.fmaximum(e.load(peak, [j]), value), peak, [j])

            def shifted(e: Emitter, where: list[Index], j: Index) -> SSAValue:
                return e.op(arith.SubfOp(data.load(e, where), e.load(peak, [j])))

            def add_exp(e: Emitter, where: list[Index], j: Index) -> None:
                value = e.op(math_dialect.ExpOp(shifted(e, where, j)))
                if kind.keeps_exp:
                    e.store(value, out, where)
                _accumulate(e, total, [j], value, arith.AddfOp)

            def finish(e: Emitter, where: list[Index], j: Index) -> None:
                value = e.load(out, where) if kind.keeps_exp else shifted(e, where, j)
                e.store(kind.element(e, value, e.load(total, [j])), out, where)

            each(fold_peak)
            each(add_exp)
            lane, j = at.loop(width, ForKind.VECTORIZED)
            lane.store(kind.of_sum(lane, lane.load(total, [j])), total, [j])
            each(finish)

        return emit

    if not rest:
        return rows(lanes)(body)
    if (full := body.when(body.less(block, blocks - 1))) is not None:
        rows(lanes)(full)
    if (last := body.when(body.less(blocks - 2, block))) is not None:
        rows(rest)(last)


def is_epilogue(op: Operation) -> bool:
    """An elementwise op that an anchor can apply to each computed element
    and store where the anchor would (of the anchor's element type: not a
    comparison)."""
    arithmetic = (type(op) in UNARY or type(op) in BINARY) and type(
        op
    ) not in COMPARISONS
    return arithmetic or isinstance(op, relay.BiasAddOp | relay.BatchNormOp)


EPILOGUE_ANCHORS: frozenset[type[Operation]] = frozenset(
    {
        relay.DenseOp,
        relay.MatmulOp,
        relay.Conv2DOp,
        relay.Conv2DTransposeOp,
        relay.Conv3DOp,
        relay.MaxPool2DOp,
        relay.MaxPool3DOp,
        relay.AvgPool3DOp,
        relay.AvgPool2DOp,
        relay.GlobalAvgPool2DOp,
        relay.LayerNormOp,
    }
)
"""Nest templates taking `epilogue=`: they apply it once per output element,
where the element is computed (a schedule: per register tile)."""

NEST_TEMPLATES: dict[type[Operation], NestTemplate] = {
    relay.DenseOp: _dense,
    relay.MatmulOp: _matmul,
    relay.Conv2DOp: _conv2d,
    relay.Conv2DTransposeOp: _conv2d_transpose,
    relay.Conv3DOp: _conv3d,
    relay.MaxPool2DOp: _max_pool,
    relay.AvgPool2DOp: _avg_pool,
    relay.MaxPool3DOp: _max_pool,
    relay.AvgPool3DOp: _avg_pool,
    relay.GlobalAvgPool2DOp: _global_avg_pool2d,
    relay.SoftmaxOp: _softmax,
    relay.LogSoftmaxOp: _softmax,
}
"""Reduction/anchor op → template writing its result into a buffer."""


# ----------------------------------------------------------------------------
# Operators added for the ONNX frontend (pad, lrn, strided_slice, log, ...)
# ----------------------------------------------------------------------------

UNARY.update(
    {
        relay.LogOp: lambda e, x, op: e.op(math_dialect.LogOp(x)),
        relay.SqrtOp: lambda e, x, op: e.op(math_dialect.SqrtOp(x)),
        relay.AbsOp: lambda e, x, op: e.op(math_dialect.AbsFOp(x)),
        relay.FloorOp: lambda e, x, op: e.op(math_dialect.FloorOp(x)),
        relay.CeilOp: lambda e, x, op: e.op(math_dialect.CeilOp(x)),
        relay.RoundOp: lambda e, x, op: e.op(math_dialect.RoundEvenOp(x)),
        relay.ErfOp: lambda e, x, op: e.op(math_dialect.ErfOp(x)),
    }
)
INTEGER_UNARY[relay.AbsOp] = lambda e, x, op: e.op(
    arith.MaxSIOp(x, _int_negative(e, x, op))
)
BINARY[relay.PowerOp] = _arith(math_dialect.PowFOp)


def _edge_index(e: Emitter, i: Index, size: int) -> Index:
    """`clamp(i, 0, size - 1)`: the `edge` mode of pad."""
    low = e.op(arith.MaxSIOp(e.index(i), e.index(0)))
    return e.op(arith.MinSIOp(low, e.index(size - 1)))


def _abs_index(e: Emitter, i: Index) -> Index:
    return e.op(arith.MaxSIOp(e.index(i), e.index(e.sub(0, i))))


def _reflect_index(e: Emitter, i: Index, size: int) -> Index:
    """`(size-1) - |(size-1) - |i||`: mirror without repeating the edge, for
    -size < i < 2*size - 1 (the verifier keeps pads below the size)."""
    return e.sub(size - 1, _abs_index(e, e.sub(size - 1, _abs_index(e, i))))


_PAD_SOURCE: dict[str, Callable[[Emitter, Index, int], Index]] = {
    "edge": _edge_index,
    "reflect": _reflect_index,
}


def _pad(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """`constant`: the input element when every index is inside it (an
    `scf.if`, so nothing is read out of bounds), else `pad_value`; `edge`
    and `reflect`: the input element at a remapped index."""
    assert isinstance(op, relay.PadOp)
    (x,) = inputs
    before = op.pad_width[::2]
    mode = op.pad_mode

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        local = [e.sub(i, b) for i, b in zip(idx, before)]
        if mode in _PAD_SOURCE:
            remap = _PAD_SOURCE[mode]
            return x.load(e, [remap(e, i, n) for i, n in zip(local, x.shape)])
        inside = e.all_of([e.in_range(i, 0, n) for i, n in zip(local, x.shape)])
        if isinstance(inside, bool):
            if inside:
                return x.load(e, local)
            return e.constant(op.pad_value, x.element_type)
        return e.choose(
            inside,
            x.element_type,
            lambda t: x.load(t, local),
            lambda f: f.constant(op.pad_value, x.element_type),
        )

    return Tensor(result_shape(op), x.element_type, load)


def _strided_slice(op: Operation, inputs: Sequence[Tensor]) -> Tensor:
    """Output index i reads input index begin + i * stride."""
    assert isinstance(op, relay.StridedSliceOp)
    (x,) = inputs
    strides = op.strides or (1,) * len(x.shape)

    def load(e: Emitter, idx: Sequence[Index]) -> SSAValue:
        return x.load(
            e, [e.add(b, e.mul(i, s)) for i, b, s in zip(idx, op.begin, strides)]
        )

    return Tensor(result_shape(op), x.element_type, load)


def _lrn(e: Emitter, op: Operation, inputs: Sequence[Tensor], out: SSAValue) -> None:
    """out = x / (bias + alpha / size * sum of x² over the channel window) ** beta,
    the window spanning (size-1)//2 channels before and size//2 after."""
    assert isinstance(op, relay.LRNOp)
    (x,) = inputs
    element = x.element_type
    _require_float(op, element)
    axis = channel_axis(op, len(x.shape))
    body, idx = e.nest(result_shape(op), parallel=True)
    body.store(body.constant(0.0, element), out, idx)
    window, k = body.loop(op.size)
    channel = window.sub(window.add(idx[axis], k), (op.size - 1) // 2)
    at = [channel if i == axis else v for i, v in enumerate(idx)]
    if (tap := window.when(window.in_range(channel, 0, x.shape[axis]))) is not None:
        value = x.load(tap, at)
        _accumulate(tap, out, idx, tap.op(arith.MulfOp(value, value)), arith.AddfOp)
    scale = body.constant(op.alpha / op.size, element)
    base = body.op(
        arith.AddfOp(
            body.constant(op.bias, element),
            body.op(arith.MulfOp(scale, body.load(out, idx))),
        )
    )
    power = body.op(math_dialect.PowFOp(base, body.constant(op.beta, element)))
    body.store(body.op(arith.DivfOp(x.load(body, idx), power)), out, idx)


def _reduce(e: Emitter, op: Operation, inputs: Sequence[Tensor], out: SSAValue) -> None:
    """out[kept] = sum (or mean) of x over the reduced dimensions: a parallel
    nest over the output, an inner serial nest over the reduced extents."""
    assert isinstance(op, relay.ReduceOp)
    (x,) = inputs
    element = x.element_type
    _require_float(op, element)
    rank = len(x.shape)
    reduced = set(range(rank)) if op.axis is None else {a % rank for a in op.axis}
    kept = [i for i in range(rank) if i not in reduced]
    body, idx = e.nest(result_shape(op), parallel=True)
    kept_idx = [idx[i] for i in kept] if op.keepdims else idx
    body.store(body.constant(0.0, element), out, idx)
    inner, taps = body.nest([x.shape[i] for i in sorted(reduced)])
    source: list[Index] = [0] * rank
    for i, v in zip(kept, kept_idx):
        source[i] = v
    for i, v in zip(sorted(reduced), taps):
        source[i] = v
    _accumulate(inner, out, idx, x.load(inner, source), arith.AddfOp)
    if isinstance(op, relay.MeanOp):
        count = body.constant(float(math.prod(x.shape[i] for i in reduced)), element)
        body.store(body.op(arith.DivfOp(body.load(out, idx), count)), out, idx)


LAZY_TEMPLATES.update(
    {
        relay.LogOp: _unary,
        relay.SqrtOp: _unary,
        relay.AbsOp: _unary,
        relay.FloorOp: _unary,
        relay.CeilOp: _unary,
        relay.RoundOp: _unary,
        relay.ErfOp: _unary,
        relay.PowerOp: _binary,
        relay.PadOp: _pad,
        relay.StridedSliceOp: _strided_slice,
    }
)
NEST_TEMPLATES.update({relay.LRNOp: _lrn, relay.SumOp: _reduce, relay.MeanOp: _reduce})


# ----------------------------------------------------------------------------
# Layer normalisation
# ----------------------------------------------------------------------------

NORM_LANES = 16
"""Partial sums a `layer_norm` row keeps (`local`): a multiple of every CPU
target's f32 vector width, so each loop over them is whole vectors."""


def _layer_norm(
    e: Emitter,
    op: Operation,
    inputs: Sequence[Tensor],
    out: SSAValue,
    epilogue: Epilogue | None = None,
) -> None:
    """One kernel, a parallel loop over the rows (the axes before `axis`).
    Per row, one vectorized pass adds `d = x - x[0]` and `d²` into
    `NORM_LANES` partial sums each, which are then halved to one; a second
    vectorized pass stores `(d - mean(d)) * rstd * gamma + beta` through the
    epilogue.  Working on `d`, shifted by the row's first element, keeps
    `E[d²] - E[d]²` from cancelling and the centred values exact when the
    mean is large next to the spread (a residual stream's rows)."""
    assert isinstance(op, relay.LayerNormOp)
    x, gamma, beta = inputs
    element = x.element_type
    _require_float(op, element)
    axis = channel_axis(op, len(x.shape))
    outer, inner = x.shape[:axis], x.shape[axis:]
    size = math.prod(inner)
    body, (row,) = e.nest([math.prod(outer)], parallel=True)
    at = body.unflatten(row, outer)

    def element_at(e: Emitter, p: Index) -> list[Index]:
        return [*at, *e.unflatten(p, inner)]

    shift = x.load(body, element_at(body, 0))
    lanes = min(NORM_LANES, size)
    sums = _partials(body, lanes, element, 0.0, 0.0)

    def add_terms(e: Emitter, p: Index, j: Index) -> None:
        d = e.op(arith.SubfOp(x.load(e, element_at(e, p)), shift))
        for partial, term in zip(sums, (d, e.op(arith.MulfOp(d, d)))):
            _accumulate(e, partial, [j], term, arith.AddfOp)

    _lanes_over(body, size, lanes, add_terms)
    _halve(body, sums, lanes)
    count = body.constant(float(size), element)
    mean, square = (body.op(arith.DivfOp(body.load(s, [0]), count)) for s in sums)
    variance = body.fmax(
        body.op(arith.SubfOp(square, body.op(arith.MulfOp(mean, mean)))),
        body.constant(0.0, element),
    )
    spread = body.op(arith.AddfOp(variance, body.constant(op.epsilon, element)))
    rstd = body.op(
        arith.DivfOp(body.constant(1.0, element), body.op(math_dialect.SqrtOp(spread)))
    )
    lane, p = body.loop(size, ForKind.VECTORIZED)
    d = lane.op(arith.SubfOp(x.load(lane, element_at(lane, p)), shift))
    normal = lane.op(arith.MulfOp(lane.op(arith.SubfOp(d, mean)), rstd))
    index = lane.unflatten(p, inner)
    scaled = lane.op(arith.MulfOp(normal, gamma.load(lane, index)))
    value = lane.op(arith.AddfOp(scaled, beta.load(lane, index)))
    _store_into(out, epilogue)(lane, element_at(lane, p), value)


def _partials(
    e: Emitter, lanes: int, element: Attribute, *starts: float
) -> list[SSAValue]:
    """A `local` row of `lanes` partial results for each of `starts`, filled
    with it (a row reduction's accumulators, one per lane)."""
    rows = [e.alloc([lanes], element, "local") for _ in starts]
    fill, j = e.loop(lanes, ForKind.VECTORIZED)
    for row, start in zip(rows, starts):
        fill.store(fill.constant(start, element), row, [j])
    return rows


def _lanes_over(
    e: Emitter, size: int, lanes: int, visit: Callable[[Emitter, Index, Index], None]
) -> None:
    """`visit(e, p, j)` for each `p < size`, `j` the partial result it goes
    into (`p % lanes`): vectorized loops of `lanes` over the whole chunks,
    then one over the rest."""
    whole, rest = divmod(size, lanes)
    chunks, c = e.loop(whole)
    lane, j = chunks.loop(lanes, ForKind.VECTORIZED)
    visit(lane, lane.add(lane.mul(c, lanes), j), j)
    if rest:
        lane, j = e.loop(rest, ForKind.VECTORIZED)
        visit(lane, lane.add(j, whole * lanes), j)


def _add(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return e.op(arith.AddfOp(a, b))


def _halve(
    e: Emitter,
    partials: Sequence[SSAValue],
    live: int,
    combine: Callable[[Emitter, SSAValue, SSAValue], SSAValue] = _add,
) -> None:
    """Each `local` row of partial results combined (added) into its element
    0, halving the live elements with one vectorized loop a step."""
    while live > 1:
        half = (live + 1) // 2
        lane, j = e.loop(live - half, ForKind.VECTORIZED)
        for partial in partials:
            other = lane.load(partial, [lane.add(j, half)])
            lane.store(combine(lane, lane.load(partial, [j]), other), partial, [j])
        live = half


NEST_TEMPLATES[relay.LayerNormOp] = _layer_norm
