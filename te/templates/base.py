"""What every compute template shares: the two kinds of template that
`lower-te` looks ops up in (`LAZY_TEMPLATES`, `NEST_TEMPLATES` of
`hetero.te.templates`), and the small helpers of more than one op family."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import Attribute, Operation, SSAValue

from hetero.te.emit import Emitter, Index, Shape, Tensor, shape_of
from hetero.utils.diagnostics import HeteroError

LazyTemplate = Callable[[Operation, Sequence[Tensor]], Tensor]
NestTemplate = Callable[[Emitter, Operation, Sequence[Tensor], SSAValue], None]


def result_shape(op: Operation) -> Shape:
    """`op`'s result shape (`Dim`s where it is dynamic, `shape_of`)."""
    return shape_of(op.results[0])


def require_float(op: Operation, element_type: Attribute) -> None:
    """Arithmetic templates compute in a float type; say so rather than emit wrong IR."""
    if not isinstance(element_type, AnyFloat):
        raise HeteroError(
            f"lower-te: {op.name} on {element_type} elements is not supported "
            "(arithmetic is lowered for float element types only)",
            op,
        )


def one(e: Emitter, like: SSAValue) -> SSAValue:
    """The constant 1 of `like`'s type."""
    return e.constant(1.0, like.type)


def channel_axis(op: Operation, rank: int) -> int:
    """`op`'s `axis` (of a tensor of `rank`), negative ones counted from the end."""
    axis = op.axis  # type: ignore[attr-defined]
    return axis + rank if axis < 0 else axis


def accumulate(
    e: Emitter,
    out: SSAValue,
    idx: Sequence[Index],
    value: SSAValue,
    combine: type[Operation],
) -> None:
    """out[idx] = combine(out[idx], value)."""
    e.store(e.op(combine(e.load(out, idx), value)), out, idx)
