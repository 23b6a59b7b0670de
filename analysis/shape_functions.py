"""Host shape functions: the run-time sizes of a relay function's values as
index arithmetic over its inputs' dynamic (`?`) dimensions.

A dynamic dimension of a parameter is a *symbol* (`Symbol`: parameter,
axis), and every other size is a `Dim`, a product `c * s1 * s2 ...` of
symbols (a monomial, which is what dense, reshape and transpose make of a
sequence length).  The shapes are computed by the ops' own `infer_shape`
(the rule the verifier uses, one home per op) run on `Dim`s in place of
`?`, so no op needs a second shape rule.  That is sound by construction:
`Dim` computes exactly, and a question about a size that the symbols do not
decide for every value of theirs (`S == 1`? `S == 768`?) is never guessed.
`function_shapes` runs the rule once per answer (`_explore`, a small
symbolic execution):

* the answers under which the rule succeeds must all give the same shape;
  the program is then compiled once for that shape;
* the answers under which it fails (two `?` that must agree and do not,
  a reshape that does not divide) become `Guard`s, checked at every call
  before any kernel runs (`check_guards`), so such a call is a clean error,
  never a wrong result;
* an equality that every successful answer assumed between two symbols
  (the sequence length of two inputs, of two parameters of a kernel) makes
  them one symbol from then on, the guard checking it at run time.

Whatever cannot be computed this way (a sum of sizes, a division that does
not divide, a size the rule turns into `?`) is a `DynamicShapeError`, which
the compile-once path reports at the op's location.  Sizes are at least 1:
the driver refuses an empty dynamic dimension.

Code generation asks the same questions of the same `Dim`s (`te/`): there,
an undecided question raises, so every loop and index of a kernel is right
for every extent.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from math import prod

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import VerifyException

from hetero.dialects import relay
from hetero.utils.diagnostics import HeteroError

Symbol = tuple[int, int]
"""A dynamic dimension: (parameter index, axis)."""

MAX_ANSWERS = 256
"""The most answer sequences `_explore` tries for one op."""


class DynamicShapeError(Exception):
    """A size that cannot be computed (or a question about it that cannot be
    decided) for every value of the dynamic dimensions."""


@dataclass(frozen=True)
class Dim:
    """`coefficient * product(symbols)`, symbols sorted; at least 1."""

    coefficient: int
    symbols: tuple[Symbol, ...]

    @staticmethod
    def of(coefficient: int, symbols: Sequence[Symbol]) -> int | Dim:
        """The size, a plain int when no symbol is left."""
        if not symbols:
            return coefficient
        return Dim(coefficient, tuple(sorted(symbols)))

    def __str__(self) -> str:
        names = [f"d{p}.{a}" for p, a in self.symbols]
        return "*".join(
            ([str(self.coefficient)] if self.coefficient != 1 else []) + names
        )

    __repr__ = __str__

    # -- arithmetic: exact, or DynamicShapeError ---------------------------

    def __mul__(self, other: object) -> int | Dim:
        if isinstance(other, int):
            if other < 0:
                raise DynamicShapeError(f"{self} * {other} is not a size")
            return Dim.of(self.coefficient * other, self.symbols) if other else 0
        if isinstance(other, Dim):
            return Dim.of(
                self.coefficient * other.coefficient, self.symbols + other.symbols
            )
        return NotImplemented

    __rmul__ = __mul__

    def __floordiv__(self, other: object) -> int | Dim:
        if isinstance(other, int) and other > 0 and self.coefficient % other == 0:
            return Dim.of(self.coefficient // other, self.symbols)
        if isinstance(other, Dim) and (quotient := self._divided(other)) is not None:
            return quotient
        raise DynamicShapeError(f"{self} // {other} is not a product of sizes")

    def __mod__(self, other: object) -> int:
        if isinstance(other, int) and other > 0 and self.coefficient % other == 0:
            return 0
        if isinstance(other, Dim) and self._divided(other) is not None:
            return 0
        raise DynamicShapeError(f"{self} % {other} depends on the sizes")

    def _divided(self, other: Dim) -> int | Dim | None:
        rest = list(self.symbols)
        for s in other.symbols:
            if s not in rest:
                return None
            rest.remove(s)
        if self.coefficient % other.coefficient:
            return None
        return Dim.of(self.coefficient // other.coefficient, rest)

    def _plus_nothing(self, other: object) -> Dim:
        """`self + 0` and `self - 0` (a pad of nothing, a slice from 0)."""
        return self if isinstance(other, int) and other == 0 else self._unsupported()

    def _unsupported(self, *_: object) -> Dim:
        raise DynamicShapeError(f"a sum or difference of sizes with {self}")

    __add__ = __radd__ = __sub__ = _plus_nothing
    __rsub__ = __neg__ = _unsupported
    __rfloordiv__ = __rmod__ = __truediv__ = __rtruediv__ = __pow__ = _unsupported

    def __index__(self) -> int:
        raise DynamicShapeError(f"the size {self} is known at run time only")

    __int__ = __float__ = __index__

    def __bool__(self) -> bool:
        return True  # a size is at least 1

    # -- comparisons: decided, else asked (`_asked`) -----------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, int | Dim):
            return NotImplemented
        decided = _equal(self, other)
        return decided if decided is not None else _asked(self, "==", other)

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash((self.coefficient, self.symbols))

    def __lt__(self, other: object) -> bool:
        return _less(self, other)

    def __gt__(self, other: object) -> bool:
        return _less(other, self)

    def __le__(self, other: object) -> bool:
        return not _less(other, self)

    def __ge__(self, other: object) -> bool:
        return not _less(self, other)

    def value(self, sizes: Mapping[Symbol, int]) -> int:
        """The size for the symbols' run-time values."""
        return self.coefficient * prod(sizes[s] for s in self.symbols)

    def substituted(self, sizes: Mapping[Symbol, int | Dim]) -> int | Dim:
        """The size with symbols replaced (by sizes of another function)."""
        result: int | Dim = self.coefficient
        for s in self.symbols:
            result = result * sizes.get(s, Dim(1, (s,)))
        return result


def _equal(a: int | Dim, b: int | Dim) -> bool | None:
    """`a == b` where every value of the symbols (each at least 1) agrees."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, int):
        a, b = b, a
    assert isinstance(a, Dim)
    if isinstance(b, int):
        return None if b >= a.coefficient and b % a.coefficient == 0 else False
    if a.symbols == b.symbols:
        return a.coefficient == b.coefficient
    return None


def _lower_bound(a: int | Dim) -> int:
    return a if isinstance(a, int) else a.coefficient


SIZE_LIMIT = 2**62
"""No size reaches it (nor could a machine hold such a tensor): a slice's
"to the end" bound."""


def _less(a: object, b: object) -> bool:
    if not isinstance(a, int | Dim) or not isinstance(b, int | Dim):
        return NotImplemented  # type: ignore[return-value]
    if isinstance(b, int) and b >= SIZE_LIMIT:
        return True
    if isinstance(a, int) and a >= SIZE_LIMIT:
        return False
    if isinstance(b, int) and b <= _lower_bound(a):
        return False
    if isinstance(a, int) and a < _lower_bound(b):
        return True
    if isinstance(a, Dim) and isinstance(b, Dim) and a.symbols == b.symbols:
        return a.coefficient < b.coefficient
    return _asked(a, "<", b)


Question = tuple["int | Dim", str, "int | Dim"]
Answer = tuple[Question, bool]

_answers: ContextVar[_Answers | None] = ContextVar("hetero_shape_answers", default=None)


@dataclass
class _Answers:
    """The answers of one run of a shape rule: the `forced` ones first, then
    True for each new question (`_explore` forces the other answer later)."""

    forced: list[bool]
    given: list[Answer] = field(default_factory=list)

    def answer(self, question: Question) -> bool:
        for asked, answer in self.given:
            if _key(asked) == _key(question):
                return answer
        answer = (
            self.forced[len(self.given)]
            if len(self.given) < len(self.forced)
            else _preferred(question)
        )
        self.given.append((question, answer))
        return answer


def _asked(a: int | Dim, relation: str, b: int | Dim) -> bool:
    """An undecided question: answered by the running exploration, else an error."""
    answers = _answers.get()
    if answers is None:
        raise DynamicShapeError(f"whether {a} {relation} {b} is known at run time only")
    return answers.answer((a, relation, b))


RELATIONS: dict[str, Callable[[int, int], bool]] = {"==": operator.eq, "<": operator.lt}


def _value(size: int | Dim, sizes: Mapping[Symbol, int]) -> int:
    return size if isinstance(size, int) else size.value(sizes)


@dataclass(frozen=True)
class Guard:
    """A condition on the symbols that the compiled program relies on: not
    every one of `answers` (the answers under which a shape rule fails)."""

    answers: tuple[Answer, ...]
    what: str
    """The rule's failure, for the message."""
    op: Operation | None = None

    def failing(self) -> str:
        """The sizes it refuses, `d1.0 != d0.0` (`dP.A`: axis A of parameter P)."""
        negated = {"==": "!=", "<": ">="}
        return " and ".join(
            f"{a} {rel if answer else negated[rel]} {b}"
            for (a, rel, b), answer in self.answers
        )

    def holds(self, sizes: Mapping[Symbol, int]) -> bool:
        return not all(
            RELATIONS[rel](_value(a, sizes), _value(b, sizes)) == answer
            for (a, rel, b), answer in self.answers
        )

    def substituted(self, sizes: Mapping[Symbol, int | Dim]) -> Guard | None:
        """The guard over another function's sizes; None where it holds always."""
        answers = []
        for (a, rel, b), answer in self.answers:
            a2, b2 = _substituted(a, sizes), _substituted(b, sizes)
            decided = _decided(a2, rel, b2)
            if decided is None:
                answers.append(((a2, rel, b2), answer))
            elif decided != answer:
                return None  # one answer differs: the failing case cannot happen
        if not answers:
            raise DynamicShapeError(f"the shapes never fit: {self.what}")
        return Guard(tuple(answers), self.what, self.op)


def _decided(a: int | Dim, relation: str, b: int | Dim) -> bool | None:
    if relation == "==":
        return _equal(a, b)
    token = _answers.set(None)
    try:
        return _less(a, b)
    except DynamicShapeError:
        return None
    finally:
        _answers.reset(token)


def _substituted(size: int | Dim, sizes: Mapping[Symbol, int | Dim]) -> int | Dim:
    return size if isinstance(size, int) else size.substituted(sizes)


Shape = tuple["int | Dim", ...]


@dataclass
class FunctionShapes:
    """The sizes of a function's tensor values, over its parameters' symbols."""

    shapes: dict[SSAValue, Shape] = field(default_factory=dict)
    guards: list[Guard] = field(default_factory=list)
    same: dict[Symbol, Symbol] = field(default_factory=dict)
    """Symbols unified with another (their run-time equality a guard)."""

    def shape(self, value: SSAValue) -> Shape:
        return self.shapes[value]

    def check(self, sizes: Mapping[Symbol, int]) -> str | None:
        """Why the symbols' run-time `sizes` do not fit, or None."""
        for guard in self.guards:
            if not guard.holds(sizes):
                return guard.what
        return None


def parameter_shape(type: Attribute, index: int) -> Shape:
    """A parameter's shape: each `?` its own symbol."""
    assert isinstance(type, TensorType)
    return tuple(
        Dim(1, ((index, axis),)) if d < 0 else d
        for axis, d in enumerate(type.get_shape())
    )


Run = tuple["Shape | None", list["Answer"], str]
"""One run of a shape rule: its shape (None: it failed), its answers, and
the failure's message."""


def _explore(rule: Callable[[], Shape]) -> list[Run]:
    """`rule` run under every sequence of answers to its undecided questions,
    depth first from the preferred ones (`_preferred`): the first run is the
    case compiled for."""
    pending: list[list[bool]] = [[]]
    runs: list[Run] = []
    while pending:
        if len(runs) >= MAX_ANSWERS:
            raise DynamicShapeError("too many cases of the dynamic sizes")
        answers = _Answers(pending.pop())
        token = _answers.set(answers)
        try:
            runs.append((rule(), answers.given, ""))
        except VerifyException as e:
            runs.append((None, answers.given, str(e)))
        finally:
            _answers.reset(token)
        given = answers.given
        for i in range(len(given) - 1, len(answers.forced) - 1, -1):
            pending.append([a for _, a in given[:i]] + [not given[i][1]])
    return runs


def _preferred(question: Question) -> bool:
    """The answer compiled for: two sizes are equal (the `?`s of one
    sequence length), a size is not a given number (a `?` is not broadcast
    from 1), and is less than what it is compared with."""
    a, relation, b = question
    return relation == "<" or (isinstance(a, Dim) and isinstance(b, Dim))


def _assumed(answers: Sequence[Answer]) -> dict[Symbol, int | Dim]:
    """The sizes a run's answers fix: a symbol answered equal to a size."""
    sizes: dict[Symbol, int | Dim] = {}
    for (a, rel, b), answer in answers:
        if rel != "==" or not answer:
            continue
        for x, y in ((a, b), (b, a)):
            if isinstance(x, Dim) and x.coefficient == 1 and len(x.symbols) == 1:
                sizes.setdefault(x.symbols[0], y)
                break
    return sizes


def _equal_expressions(answers: Sequence[Answer]) -> dict[object, int | Dim]:
    """The sizes a run's answers make a number: a product answered equal to
    one (`d0.0·d0.1 == 1`), which `_assumed` cannot put in per symbol."""
    equal: dict[object, int | Dim] = {}
    for (a, relation, b), answer in answers:
        if relation == "==" and answer and isinstance(a, Dim) and isinstance(b, int):
            equal[_key(a)] = b
    return equal


def same_size(a: int | Dim, b: int | Dim) -> bool:
    """Whether `a` and `b` are the same expression (so equal at run time);
    False says nothing about their values."""
    return _key(a) == _key(b)


def _fixed(shape: Shape, sizes: Mapping[Symbol, int | Dim]) -> Shape:
    return tuple(_substituted(d, sizes) for d in shape)


def _key(thing: object) -> object:
    """`thing` (sizes, nested in tuples) compared by structure: `==` on a
    `Dim` is a question about run-time sizes, not about the expression."""
    if isinstance(thing, Dim):
        return ("dim", thing.coefficient, thing.symbols)
    if isinstance(thing, tuple):
        return tuple(_key(t) for t in thing)
    return thing


class _Analysis:
    """`function_shapes`' state: the shapes so far and the unified symbols."""

    def __init__(self, module: Operation | None, exact: bool = False) -> None:
        """`exact`: an op whose shape differs under another answer that
        succeeds is unknown (`DynamicShapeError`) instead of guarded: for
        sizes that are used without the guards being checked (`BlockShapes`)."""
        self.module = module
        self.exact = exact
        self.result = FunctionShapes()

    def canonical(self, size: int | Dim) -> int | Dim:
        same = self.result.same
        if isinstance(size, int) or not any(s in same for s in size.symbols):
            return size
        return size.substituted({s: Dim(1, (self._root(s),)) for s in size.symbols})

    def _root(self, symbol: Symbol) -> Symbol:
        while symbol in self.result.same:
            symbol = self.result.same[symbol]
        return symbol

    def unify(self, a: int | Dim, b: int | Dim) -> None:
        """Makes two single symbols one (their equality a guard)."""
        if not (isinstance(a, Dim) and isinstance(b, Dim)):
            return
        if (
            a.coefficient == b.coefficient == 1
            and len(a.symbols) == len(b.symbols) == 1
        ):
            x, y = sorted((self._root(a.symbols[0]), self._root(b.symbols[0])))
            if x != y:
                self.result.same[y] = x

    def guard(self, guards: Sequence[Guard]) -> None:
        self.result.guards.extend(guards)

    def set(self, value: SSAValue, shape: Shape) -> None:
        self.result.shapes[value] = tuple(self.canonical(d) for d in shape)

    def tensor_op(self, op: relay.TensorOp) -> None:
        operands = [self.result.shapes[v] for v in op.operands]
        declared = op.results[0].type
        assert isinstance(declared, TensorType)

        def rule() -> Shape:
            shape = type(op).infer_shape(operands, op.properties)
            _check_declared(shape, declared.get_shape())
            return shape

        runs = _explore(rule)
        shape, main, why = runs[0]
        if shape is None:
            raise DynamicShapeError(
                f"its shape rule fails where sizes known at run time only are "
                f"not 1 and equal to each other ({why})"
            )
        if any(isinstance(d, int) and d < 0 for d in shape):
            raise DynamicShapeError("its shape rule gives a `?` size")
        if self.exact and any(
            run[0] is not None and not self._agrees(shape, run) for run in runs[1:]
        ):
            raise DynamicShapeError("its shape depends on the sizes' values")
        for question, answer in main:
            if question[1] == "==" and answer and isinstance(question[2], Dim):
                self.unify(question[0], question[2])
                what = f"{op.name} needs two of its sizes equal"
                self.guard([Guard(((question, False),), what, op)])
        self.set(op.results[0], shape)
        compiled = self.result.shapes[op.results[0]]
        for run in runs[1:]:
            if not self._agrees(compiled, run):
                why = run[2] or (
                    "a `?` of size 1 broadcast, which compiling once does not do"
                )
                self.guard([Guard(tuple(run[1]), why, op)])

    def _agrees(self, shape: Shape, run: Run) -> bool:
        """Whether `run` of a shape rule succeeded with `shape`, once the
        sizes its answers fix are put in (`x[:2]` of a `[?]` is `?` or 2: the
        runs disagree)."""
        other, answers, _ = run
        if other is None:
            return False
        fixed = {self._root(s): self.canonical(d) for s, d in _assumed(answers).items()}
        equal = _equal_expressions(answers)
        mine, theirs = (
            tuple(
                equal.get(_key(d), d)
                for d in _fixed(tuple(map(self.canonical, x)), fixed)
            )
            for x in (shape, other)
        )
        return _key(mine) == _key(theirs)

    def call(self, op: relay.CallOp) -> None:
        callee = (
            SymbolTable.lookup_symbol(self.module, op.callee) if self.module else None
        )
        if not isinstance(callee, relay.FuncOp):
            raise DynamicShapeError(f"@{op.callee.string_value()} is not a relay.func")
        inner = function_shapes(callee, self.module)
        sizes: dict[Symbol, int | Dim] = {}
        for index, (arg, value) in enumerate(zip(callee.args, op.operands)):
            for axis, d in enumerate(parameter_shape(arg.type, index)):
                if isinstance(d, Dim):
                    sizes[(index, axis)] = self.result.shapes[value][axis]
        guards = [g.substituted(sizes) for g in inner.guards]
        self.guard([g for g in guards if g is not None])
        for y, x in inner.same.items():  # their equality is one of the guards
            self.unify(Dim(1, (x,)).substituted(sizes), Dim(1, (y,)).substituted(sizes))
        returned = callee.body.block.last_op
        assert returned is not None
        result = inner.shapes[returned.operands[0]]
        self.set(op.results[0], tuple(_substituted(d, sizes) for d in result))


def _check_declared(shape: Shape, declared: Sequence[int]) -> None:
    if len(shape) != len(declared) or any(
        d >= 0 and s != d for s, d in zip(shape, declared)
    ):
        raise VerifyException(f"the shape is not the declared {list(declared)}")


PASSING: tuple[type[Operation], ...] = (relay.OnDeviceOp, relay.DeviceCopyOp)
"""Ops whose result has their operand's shape."""


def function_shapes(
    function: relay.FuncOp, module: Operation | None = None
) -> FunctionShapes:
    """The sizes of `function`'s values over its parameters' symbols, with
    the guards its calls must pass (calls of other functions looked up in
    `module`); a `HeteroError` at the op whose sizes cannot be computed."""
    analysis = _Analysis(module)
    for index, arg in enumerate(function.args):
        if isinstance(arg.type, TensorType):
            analysis.set(arg, parameter_shape(arg.type, index))
    for op in function.body.block.ops:
        try:
            _analyse(analysis, op)
        except DynamicShapeError as e:
            raise HeteroError(f"dynamic shapes: {op.name}: {e}", op) from None
    for value in list(analysis.result.shapes):
        analysis.set(value, analysis.result.shapes[value])
    return analysis.result


class BlockShapes:
    """The sizes of a block's values over its arguments' symbols, analysed
    as ops are added to it: the ONNX importer's shape arithmetic on dynamic
    dimensions (`Shape` of a value whose batch is `?`), before the function
    exists.  An op whose sizes cannot be computed leaves its results
    unknown (`shape` raises for them), not the values around it."""

    def __init__(self, block: Block, same: Sequence[Sequence[Symbol]] = ()) -> None:
        """`same`: groups of the arguments' symbols that are one size (the
        model says so: ONNX inputs' dimensions of one name)."""
        self._block = block
        self._analysis = _Analysis(None, exact=True)
        self._seen: Operation | None = None
        for group in same:
            for symbol in group[1:]:
                self._analysis.unify(Dim(1, (group[0],)), Dim(1, (symbol,)))
        for index, arg in enumerate(block.args):
            if isinstance(arg.type, TensorType):
                self._analysis.set(arg, parameter_shape(arg.type, index))

    def shape(self, value: SSAValue) -> Shape:
        """`value`'s sizes (its type's, where static); `DynamicShapeError`
        where they are unknown: no product of the arguments' symbols, or one
        that depends on their values (`_Analysis.exact`)."""
        self._catch_up()
        shapes = self._analysis.result.shapes
        if value in shapes:
            return tuple(map(self.canonical, shapes[value]))
        type_ = value.type
        if isinstance(type_, TensorType) and all(d >= 0 for d in type_.get_shape()):
            return tuple(type_.get_shape())
        raise DynamicShapeError(f"the sizes of {value.type} are not known")

    def canonical(self, size: int | Dim) -> int | Dim:
        """`size` in the symbols unified so far (a size folded before a
        later op made two symbols one)."""
        self._catch_up()
        return self._analysis.canonical(size)

    def _catch_up(self) -> None:
        op = self._block.first_op if self._seen is None else self._seen.next_op
        while op is not None:
            try:
                _analyse(self._analysis, op)
            except (DynamicShapeError, KeyError):
                pass  # its results stay unknown
            self._seen, op = op, op.next_op


def _analyse(analysis: _Analysis, op: Operation) -> None:
    match op:
        case relay.TupleOp() | relay.GetItemOp():
            raise DynamicShapeError("tuples are not supported with dynamic shapes")
        case relay.ReturnOp():
            if not isinstance(op.operands[0].type, TensorType):
                raise DynamicShapeError("only a tensor result is supported")
        case relay.ConstantOp():
            analysis.set(op.results[0], tuple(op.results[0].type.get_shape()))  # type: ignore[attr-defined]
        case relay.CallOp():
            analysis.call(op)
        case relay.TensorOp():
            analysis.tensor_op(op)
        case _ if isinstance(op, PASSING):
            analysis.set(op.results[0], analysis.result.shapes[op.operands[0]])
        case _:
            raise DynamicShapeError("no shape rule for this op")
