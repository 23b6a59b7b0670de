"""Pattern tables of the external-codegen target kinds (BYOC, docs/design.md §4.2).

An external codegen (a library: cuBLAS, cuDNN, a CPU BLAS, ...) owns the
parts of a program it has a kernel for.  What it has a kernel for is data: a
*pattern table*, registered under the kind's name, listing named patterns of
relay ops.  `merge-composite` turns every match into a `Composite` function
named `<kind>.<pattern>`; the later BYOC passes read that name.

The pattern language is deliberately small:

* `wildcard()` — any value; it becomes a parameter of the composite function;
* `is_op("nn.bias_add", is_op("nn.dense", wildcard(), wildcard()), wildcard())`
  — an op by its relay name (without the `relay.` prefix) whose operands match
  the given patterns; without operand patterns any operands are accepted;
* `.where(pred, ...)` — predicates on the matched op (shapes, dtypes,
  attributes), e.g. `dtype_in("f32", "f64")`, `rank_in(2)`,
  `attr_in("groups", 1)`.

A table is an ordered list of `CompositePattern(name, pattern)`; order is
priority (put larger patterns first).  Tables come from three places, in this
order: the built-in ones (`hetero.targets.builtin_patterns`), the
`hetero.patterns` entry point group (each entry is named after a kind and
names a sequence of `CompositePattern`s or a zero-argument callable returning
one), and `register_patterns(kind, patterns)`.  Registering for a kind adds
to its table (at the end, or at the front with `first=True`), so a third
party can extend a built-in kind as well as give its own kind a table.  A table that names an unknown op, or a kind that is not
an external codegen, is a `PatternError` when it is registered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Operation, OpResult, SSAValue

from hetero.dialects.target.kind import (
    TargetKind,
    lookup_target_kind,
    registered_kind_names,
)
from hetero.utils.plugins import load_entry_points

ENTRY_POINT_GROUP = "hetero.patterns"

Predicate = Callable[[Operation], bool]
"""A condition on a matched op; True when the library can run it."""


class PatternError(ValueError):
    """A pattern table that cannot be registered, or a predicate that failed."""


# ----------------------------------------------------------------------------
# The pattern language
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Wildcard:
    """Any value: an input of the match (a parameter of the composite function)."""


@dataclass(frozen=True)
class OpPattern:
    """An op named `op` (relay name without `relay.`), its operands matching `operands`.

    `operands=None` accepts any operands, each as an input of the match.
    """

    op: str
    operands: tuple[Pattern, ...] | None = None
    predicates: tuple[Predicate, ...] = ()

    def where(self, *predicates: Predicate) -> OpPattern:
        """The same pattern, also requiring `predicates` of the op."""
        return replace(self, predicates=self.predicates + predicates)

    def op_names(self) -> Iterable[str]:
        """Every op name in the pattern (for validation)."""
        yield self.op
        for operand in self.operands or ():
            if isinstance(operand, OpPattern):
                yield from operand.op_names()


Pattern = Wildcard | OpPattern


def wildcard() -> Wildcard:
    return Wildcard()


def is_op(name: str, *operands: Pattern) -> OpPattern:
    """`name` applied to `operands`; with no operands given, to anything."""
    return OpPattern(name, tuple(operands) if operands else None)


@dataclass(frozen=True)
class CompositePattern:
    """One entry of a pattern table: the composite is called `<kind>.<name>`."""

    name: str
    pattern: OpPattern
    doc: str = field(default="", compare=False)


# ----------------------------------------------------------------------------
# Predicates (shapes, dtypes, attributes)
# ----------------------------------------------------------------------------


def _tensor_types(op: Operation) -> list[TensorType[Any]]:
    types = [*op.operand_types, *op.result_types]
    return [t for t in types if isinstance(t, TensorType)]


def dtype_in(*names: str) -> Predicate:
    """Every tensor operand and result has one of these element types ("f32")."""
    allowed = frozenset(names)

    def check(op: Operation) -> bool:
        return all(str(t.element_type) in allowed for t in _tensor_types(op))

    return check


def rank_in(*ranks: int) -> Predicate:
    """Every tensor operand and result has one of these ranks."""
    return lambda op: all(t.get_num_dims() in ranks for t in _tensor_types(op))


def static_shapes(op: Operation) -> bool:
    """No dynamic (`?`) dimension in any operand or result."""
    return all(DYNAMIC_INDEX not in t.get_shape() for t in _tensor_types(op))


def attr_in(name: str, *values: Any) -> Predicate:
    """The op's attribute `name` (as a Python value, default applied) is one of `values`."""
    return lambda op: getattr(op, name) in values


# ----------------------------------------------------------------------------
# Matching
# ----------------------------------------------------------------------------


@dataclass
class Match:
    """A match of a pattern: its ops (program order) and its input values."""

    root: Operation
    ops: list[Operation]
    inputs: list[SSAValue]


def match(pattern: OpPattern, root: Operation) -> Match | None:
    """Match `pattern` with `root` as its output op, or None.

    The ops under the root must sit in the root's block and be used by the
    match alone, so that the match can move into a function without leaving a
    value behind that something else still needs.  `ops` comes out in
    post-order (operands first), which is a valid order for a block.
    """
    ops: list[Operation] = []
    inputs: list[SSAValue] = []
    if not _match_op(pattern, root, ops, inputs):
        return None
    return Match(root, ops, inputs)


def _match_op(
    pattern: OpPattern, op: Operation, ops: list[Operation], inputs: list[SSAValue]
) -> bool:
    if op.name != f"relay.{pattern.op}" or not _holds(pattern, op):
        return False
    operand_patterns = pattern.operands or (Wildcard(),) * len(op.operands)
    if len(operand_patterns) != len(op.operands):
        return False
    for sub, value in zip(operand_patterns, op.operands):
        if isinstance(sub, Wildcard):
            if value not in inputs:
                inputs.append(value)
            continue
        producer = _inner_producer(value, op)
        if producer is None or not _match_op(sub, producer, ops, inputs):
            return False
    ops.append(op)
    return True


def _inner_producer(value: SSAValue, user: Operation) -> Operation | None:
    """The op producing `value` next to `user`, if `user` alone uses it."""
    if (
        isinstance(value, OpResult)
        and value.op.parent is user.parent
        and all(use.operation is user for use in value.uses)
    ):
        return value.op
    return None


def _holds(pattern: OpPattern, op: Operation) -> bool:
    """All predicates hold; a predicate that raises is a `PatternError` (it is
    third-party code, and its failure must not look like "no match")."""
    for predicate in pattern.predicates:
        try:
            if not predicate(op):
                return False
        except Exception as e:
            name = getattr(predicate, "__name__", repr(predicate))
            raise PatternError(
                f"predicate {name} of a pattern for '{pattern.op}' failed on {op.name}: {e}"
            ) from e
    return True


# ----------------------------------------------------------------------------
# The registry
# ----------------------------------------------------------------------------


def relay_op_names() -> frozenset[str]:
    """The op names a pattern may use: relay's tensor operators, without `relay.`."""
    from hetero.dialects.relay import TENSOR_OPS

    return frozenset(op.name.removeprefix("relay.") for op in TENSOR_OPS)


def _external_kind(kind: str) -> TargetKind:
    target_kind = lookup_target_kind(kind)
    if target_kind is None:
        raise PatternError(
            f"pattern table for unknown target kind '{kind}' "
            f"(known kinds: {', '.join(registered_kind_names())})"
        )
    if not (target_kind.is_external_codegen or target_kind.relay_to_tir):
        raise PatternError(
            f"pattern table for target kind '{kind}', which is not an external codegen"
        )
    return target_kind


def _check_entry(kind: str, entry: CompositePattern, known_ops: frozenset[str]) -> None:
    if not isinstance(entry, CompositePattern) or not isinstance(
        entry.pattern, OpPattern
    ):
        raise PatternError(
            f"pattern table of '{kind}': expected CompositePattern(name, is_op(...)), "
            f"got {entry!r}"
        )
    if not entry.name.isidentifier():
        raise PatternError(
            f"pattern table of '{kind}': pattern name '{entry.name}' must be an "
            "identifier (the composite is named '<kind>.<name>')"
        )
    for op in entry.pattern.op_names():
        if op not in known_ops:
            hint = (
                " (write op names without the 'relay.' prefix)"
                if op.startswith("relay.")
                else ""
            )
            raise PatternError(
                f"pattern '{kind}.{entry.name}' names unknown op '{op}'{hint}"
            )


class PatternRegistry:
    """Kind name → ordered pattern table; filled by `register` and from entry points."""

    def __init__(self, group: str = ENTRY_POINT_GROUP) -> None:
        self._tables: dict[str, list[CompositePattern]] = {}
        self._group = group
        self._loaded = False

    def register(
        self, kind: str, patterns: Iterable[CompositePattern], first: bool = False
    ) -> None:
        """Check `patterns` and add them to the table of `kind`: after its
        patterns, or before them with `first`."""
        _external_kind(kind)
        known_ops = relay_op_names()
        table = self._tables.setdefault(kind, [])
        names = {e.name: e for e in table}
        added: list[CompositePattern] = []
        for entry in patterns:
            _check_entry(kind, entry, known_ops)
            if entry.name in names:
                if names[entry.name] == entry:
                    continue
                raise PatternError(
                    f"pattern '{kind}.{entry.name}' is already registered"
                )
            names[entry.name] = entry
            added.append(entry)
        if first:
            table[:0] = added
        else:
            table.extend(added)

    def table(self, kind: str) -> tuple[CompositePattern, ...]:
        """The patterns of `kind`, highest priority first (empty if none)."""
        self._load()
        return tuple(self._tables.get(kind, ()))

    def _load(self) -> None:
        """Built-in tables, then the entry point group (once)."""
        if self._loaded:
            return
        self._loaded = True
        from hetero.targets.builtin_patterns import BUILTIN_PATTERNS

        for kind, entries in BUILTIN_PATTERNS.items():
            self.register(kind, entries)
        load_entry_points(self._group, self._register_entry, PatternError)

    def _register_entry(self, kind: str, loaded: Any) -> None:
        entries = cast(
            Iterable[CompositePattern], loaded() if callable(loaded) else loaded
        )
        self.register(kind, entries)


REGISTRY = PatternRegistry()


def register_patterns(
    kind: str, patterns: Sequence[CompositePattern], *, first: bool = False
) -> None:
    """Add `patterns` to the table of the external-codegen kind `kind`: after
    its built-in and entry-point patterns, or, with `first`, before them (a
    fusion that must win over the patterns it contains)."""
    REGISTRY.table(kind)  # the built-in and entry-point tables are loaded first
    REGISTRY.register(kind, patterns, first)


def pattern_table(kind: str) -> tuple[CompositePattern, ...]:
    """The pattern table of `kind`, highest priority first."""
    return REGISTRY.table(kind)
