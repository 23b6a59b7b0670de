"""hetero's `reconcile-unrealized-casts` (the casts offered to xDSL's pattern,
not every op) leaves what xDSL's pass of the name leaves."""

import pytest
from xdsl.context import Context
from xdsl.transforms.reconcile_unrealized_casts import (
    ReconcileUnrealizedCastsPass as XdslPass,
)

from hetero.context import parse_module
from hetero.lowering.reconcile_unrealized_casts import ReconcileUnrealizedCastsPass

# A chain that cancels out (index -> i64 -> index), a dead chain, a cast an
# op uses (kept) and a round trip that does not cancel (i32 -> i64 -> index:
# kept); xDSL's pattern warns of the last two.
PROGRAM = """
func.func @f(%a: index, %b: i32) -> (index, i64, index) {
  %0 = builtin.unrealized_conversion_cast %a : index to i64
  %1 = builtin.unrealized_conversion_cast %0 : i64 to index
  %2 = builtin.unrealized_conversion_cast %a : index to i64
  %3 = builtin.unrealized_conversion_cast %2 : i64 to index
  %4 = builtin.unrealized_conversion_cast %a : index to i64
  %5 = arith.addi %4, %4 : i64
  %6 = builtin.unrealized_conversion_cast %b : i32 to i64
  %7 = builtin.unrealized_conversion_cast %6 : i64 to index
  func.return %1, %5, %7 : index, i64, index
}
"""


def test_the_same_casts_go_as_with_xdsls_pass():
    ours, theirs = parse_module(PROGRAM), parse_module(PROGRAM)
    with pytest.warns(UserWarning, match="Unable to remove cast"):
        ReconcileUnrealizedCastsPass().apply(Context(), ours)
    with pytest.warns(UserWarning, match="Unable to remove cast"):
        XdslPass().apply(Context(), theirs)
    assert str(ours) == str(theirs)
    assert str(ours).count("unrealized_conversion_cast") == 3
