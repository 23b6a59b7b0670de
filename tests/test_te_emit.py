"""`hetero.te.emit.Emitter`: the index arithmetic it folds as it emits."""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block

from hetero.te.emit import Emitter


def _emitter(uniform: bool = False) -> tuple[Emitter, Block]:
    block = Block(arg_types=[IndexType()])
    return Emitter(block, block, {}, uniform), block


def test_a_split_index_joined_again_is_the_index() -> None:
    """`(x / c) * c + x % c` is `x` (truncating division), either way round,
    and the split leaves no op behind; the constant stays (it is shared)."""
    for uniform in (False, True):
        e, block = _emitter(uniform)
        (x,) = block.args
        assert e.add(e.mul(e.div(x, 7), 7), e.rem(x, 7)) is x
        assert e.add(e.rem(x, 7), e.mul(e.div(x, 7), 7)) is x
        assert [op.name for op in block.ops] == ["arith.constant"]


def test_a_split_joined_with_another_row_length_stays() -> None:
    """A plane of another row length (a padded one) needs the arithmetic,
    as does a split by another divisor."""
    e, block = _emitter()
    (x,) = block.args
    wide = e.add(e.mul(e.div(x, 7), 9), e.rem(x, 7))
    assert wide is not x and wide.owner.name == "arith.addi"
    mixed = e.add(e.mul(e.div(x, 7), 7), e.rem(x, 5))
    assert mixed is not x and mixed.owner.name == "arith.addi"


def test_a_split_used_elsewhere_keeps_its_ops() -> None:
    """The row is still wanted (a bound check, say): only the join folds."""
    e, block = _emitter()
    (x,) = block.args
    row = e.div(x, 7)
    e.less(row, 3)
    assert e.add(e.mul(row, 7), e.rem(x, 7)) is x
    assert "arith.divsi" in [op.name for op in block.ops]
