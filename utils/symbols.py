"""Small IR helpers the passes share: fresh symbol names, enclosing ops.

Every pass that adds functions or globals needs a name nothing else has, and
many rewrites need "the function (module, kernel) around this op"; one
definition each keeps the naming schemes and the walk-up loops consistent.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator
from itertools import count
from typing import TypeVar

from xdsl.ir import Operation
from xdsl.traits import SymbolOpInterface, SymbolTable

OpT = TypeVar("OpT", bound=Operation)


def candidate_names(
    stem: str, *, bare: bool = True, separator: str = "_"
) -> Iterator[str]:
    """`stem`, `stem_1`, `stem_2`, ... (`bare`), else `stem_0`, `stem_1`, ...;
    `separator=""` gives `stem0`, `stem1`, ..."""
    if bare:
        yield stem
    for n in count(1 if bare else 0):
        yield f"{stem}{separator}{n}"


def fresh_name(
    stem: str,
    taken: Container[str] | Callable[[str], bool],
    *,
    bare: bool = True,
    separator: str = "_",
) -> str:
    """The first of `candidate_names(stem, ...)` that is not `taken` (a set of
    names or a predicate)."""
    is_taken = taken if callable(taken) else taken.__contains__
    return next(
        name
        for name in candidate_names(stem, bare=bare, separator=separator)
        if not is_taken(name)
    )


def fresh_symbol(
    table: Operation, stem: str, *, bare: bool = True, separator: str = "_"
) -> str:
    """A name no symbol of `table`'s symbol table (its nearest one) has."""
    return fresh_name(
        stem,
        lambda name: SymbolTable.lookup_symbol(table, name) is not None,
        bare=bare,
        separator=separator,
    )


def symbol_names(table: Operation) -> set[str]:
    """The names of the symbols `table` defines, for `fresh_name` when many
    names are made in a row (`fresh_symbol` looks each candidate up)."""
    return set(symbols_of(table))


def symbols_of(table: Operation) -> dict[str, Operation]:
    """The symbols `table` defines, by name: one walk for many lookups
    (`SymbolTable.lookup_symbol` walks the table at each)."""
    found: dict[str, Operation] = {}
    for region in table.regions:
        for block in region.blocks:
            for op in block.ops:
                if (symbol := op.get_trait(SymbolOpInterface)) is not None and (
                    name := symbol.get_sym_attr_name(op)
                ) is not None:
                    found.setdefault(name.data, op)
    return found


def enclosing(op: Operation, kind: type[OpT]) -> OpT | None:
    """The innermost op of type `kind` strictly around `op`, or None."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, kind):
        parent = parent.parent_op()
    return parent


def ancestors(op: Operation) -> Iterator[Operation]:
    """The ops around `op`, innermost first."""
    parent = op.parent_op()
    while parent is not None:
        yield parent
        parent = parent.parent_op()
