"""Calls of a function compiled once for dynamic (`?`) input dimensions.

`hetero.compile(..., dynamic="once")` returns a `hetero.driver.DynamicFunction`,
whose output shapes and guards are the shape analysis's `Dim`s and `Guard`s
(`hetero.analysis.shape_functions`, docs/dynamic-shapes.md): objects of the
compiler, which need xDSL.  A call needs only what they evaluate to, which is
`SizeRules`: each size a plain product `coefficient * symbols`, each guard
the relations it refuses, both JSON.  The compiled function and a `.hetero`
file's (`hetero.load`, `LoadedDynamicFunction`) are called by one
implementation, `DynamicCalls`, so they check and refuse alike.

A symbol is a dynamic dimension, `(input, axis)`; every size is at least 1.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from math import prod
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hetero.runtime.compiled import (
    CompiledFunction,
    CompiledFunctionError,
)
from hetero.utils.max_sizes import oversized

if TYPE_CHECKING:
    from hetero.runtime.profiler import Profile

Symbol = tuple[int, int]
"""A dynamic dimension: (input index, axis)."""


@dataclass(frozen=True)
class Product:
    """`coefficient * product(symbols)`: a size as a call computes it (the
    analysis's `Dim` without its exact arithmetic and questions)."""

    coefficient: int
    symbols: tuple[Symbol, ...]

    def value(self, sizes: Mapping[Symbol, int]) -> int:
        return self.coefficient * prod(sizes[s] for s in self.symbols)


Size = int | Product

RELATIONS: dict[str, Callable[[int, int], bool]] = {"==": operator.eq, "<": operator.lt}
"""The relations a guard's answers are about."""


def _value(size: Size, sizes: Mapping[Symbol, int]) -> int:
    return size if isinstance(size, int) else size.value(sizes)


@dataclass(frozen=True)
class SizeGuard:
    """A condition the compiled code relies on: the sizes must not answer
    every one of `answers` (`a relation b`, answer) as given."""

    answers: tuple[tuple[Size, str, Size, bool], ...]
    what: str
    """The shape rule's failure the guard prevents."""
    failing: str
    """The sizes it refuses, `d0.0 != d1.0` (`dI.A`: axis A of input #I)."""

    def holds(self, sizes: Mapping[Symbol, int]) -> bool:
        return not all(
            RELATIONS[rel](_value(a, sizes), _value(b, sizes)) == answer
            for a, rel, b, answer in self.answers
        )


@dataclass(frozen=True)
class SizeRules:
    """What a call checks and computes from its inputs' sizes: the symbols'
    sizes, which the guards and `max_sizes` must admit, give the outputs'
    shapes."""

    symbols: tuple[Symbol, ...]
    outputs: tuple[tuple[Size, ...], ...]
    guards: tuple[SizeGuard, ...]
    max_sizes: Mapping[Symbol, int]

    @staticmethod
    def of(
        symbols: Sequence[Symbol],
        outputs: Sequence[Sequence[Any]],
        guards: Sequence[Any],
        max_sizes: Mapping[Symbol, int],
    ) -> SizeRules:
        """The rules of the shape analysis's output shapes (ints and `Dim`s)
        and `Guard`s, read through their fields."""
        return SizeRules(
            tuple(symbols),
            tuple(tuple(map(_size, shape)) for shape in outputs),
            tuple(
                SizeGuard(
                    tuple(
                        (_size(a), rel, _size(b), ans) for (a, rel, b), ans in g.answers
                    ),
                    g.what,
                    g.failing(),
                )
                for g in guards
            ),
            dict(max_sizes),
        )

    def to_json(self) -> dict[str, Any]:
        """The rules as JSON: a size is an int, or `[coefficient, [[input,
        axis], ...]]`."""
        return {
            "symbols": [list(s) for s in self.symbols],
            "outputs": [[_size_json(d) for d in shape] for shape in self.outputs],
            "guards": [
                {
                    "answers": [
                        [_size_json(a), rel, _size_json(b), answer]
                        for a, rel, b, answer in g.answers
                    ],
                    "what": g.what,
                    "failing": g.failing,
                }
                for g in self.guards
            ],
            "max_sizes": [[*s, most] for s, most in self.max_sizes.items()],
        }

    @staticmethod
    def of_json(fields: Mapping[str, Any]) -> SizeRules:
        """The rules `to_json` wrote; ValueError where they are not such."""
        guards = tuple(
            SizeGuard(
                tuple(
                    (_size_of(a), _relation(rel), _size_of(b), bool(answer))
                    for a, rel, b, answer in g["answers"]
                ),
                str(g["what"]),
                str(g["failing"]),
            )
            for g in fields["guards"]
        )
        return SizeRules(
            tuple(_symbol(s) for s in fields["symbols"]),
            tuple(tuple(map(_size_of, shape)) for shape in fields["outputs"]),
            guards,
            {_symbol((i, a)): int(most) for i, a, most in fields["max_sizes"]},
        )

    def check(self, function: CompiledFunction) -> None:
        """A `ValueError` unless these are rules of `function` (a `.hetero`
        file's, read back): its inputs' `?` dimensions are the symbols, each
        output has its signature's rank and static sizes, every size is a
        positive product of symbols, `max_sizes` and the guards name symbols
        only."""
        symbols = [
            (i, axis)
            for i, s in enumerate(function.inputs)
            for axis, d in enumerate(s.shape)
            if d < 0
        ]
        if list(self.symbols) != symbols:
            raise ValueError(
                f"symbols {list(self.symbols)}, the inputs' ? are {symbols}"
            )
        if len(self.outputs) != len(function.outputs):
            raise ValueError(
                f"{len(self.outputs)} output shapes for {len(function.outputs)} outputs"
            )
        known = set(symbols)
        sizes = [d for shape in self.outputs for d in shape]
        sizes += [d for g in self.guards for a, _, b, _ in g.answers for d in (a, b)]
        for size in sizes:
            if isinstance(size, bool) or (isinstance(size, int) and size < 1):
                raise ValueError(f"size {size!r} is no size")
            if isinstance(size, Product) and (
                size.coefficient < 1 or not set(size.symbols) <= known
            ):
                raise ValueError(f"size {size} is no product of the symbols")
        for shape, signature in zip(self.outputs, function.outputs):
            if len(shape) != len(signature.shape) or any(
                d >= 0 and d != size for d, size in zip(signature.shape, shape)
            ):
                raise ValueError(
                    f"{signature.label}: shape {shape} for {signature.shape}"
                )
        if (
            not set(self.max_sizes) <= known
            or min(self.max_sizes.values(), default=1) < 1
        ):
            raise ValueError(f"max_sizes {self.max_sizes} of symbols {symbols}")

    def shapes(
        self, function: CompiledFunction, arrays: Sequence[np.ndarray]
    ) -> list[tuple[int, ...]]:
        """The output shapes of `function` called on `arrays`, whose sizes
        must fit: every dynamic dimension at least 1, none beyond
        `max_sizes`, every guard holding (a `CompiledFunctionError` saying
        which fails)."""
        sizes = {}
        for index, axis in self.symbols:
            if (size := arrays[index].shape[axis]) < 1:
                raise CompiledFunctionError(
                    f"{function.inputs[index].label}: dimension {axis} is empty; "
                    "a dynamic dimension must have at least one element"
                )
            sizes[index, axis] = size
        shapes = [a.shape for a in arrays]
        if (why := oversized(self.max_sizes, shapes)) is not None:
            raise CompiledFunctionError(f"@{function.symbol}: {why}")
        for guard in self.guards:
            if not guard.holds(sizes):
                raise CompiledFunctionError(
                    f"@{function.symbol}: the input shapes {shapes} do not fit, "
                    f"{guard.failing} (dI.A: axis A of input #I): {guard.what}"
                )
        return [tuple(_value(d, sizes) for d in shape) for shape in self.outputs]


def _size(size: Any) -> Size:
    """An int, or a product of a `Dim`'s coefficient and symbols."""
    if isinstance(size, int):
        return size
    return Product(size.coefficient, tuple(size.symbols))


def _size_json(size: Size) -> Any:
    if isinstance(size, int):
        return size
    return [size.coefficient, [list(s) for s in size.symbols]]


def _size_of(value: Any) -> Size:
    if isinstance(value, int):
        return value
    coefficient, symbols = value
    return Product(int(coefficient), tuple(map(_symbol, symbols)))


def _symbol(value: Any) -> Symbol:
    index, axis = value
    return int(index), int(axis)


def _relation(name: Any) -> str:
    if name not in RELATIONS:
        raise ValueError(f"unknown relation {name!r} in a guard")
    return str(name)


class DynamicCalls:
    """`f(*inputs)` and `f.save(path)` of a function compiled once for
    dynamic shapes, for a class holding its `compiled` function, its size
    `rules` and its `num_threads`."""

    compiled: CompiledFunction
    """The native function; `?` sizes are -1 in its signatures."""
    rules: SizeRules
    num_threads: int | None

    def __call__(
        self,
        *inputs: object,
        out: np.ndarray | Sequence[np.ndarray] | None = None,
        num_threads: int | None = None,
        **named: object,
    ) -> Any:
        """`CompiledFunction.__call__`, the sizes checked and the outputs
        sized for these inputs."""
        arrays, outs = self._arguments(inputs, named, out)
        return self.compiled.run(arrays, outs, self._threads(num_threads))

    def profile(
        self, *inputs: object, num_threads: int | None = None, **named: object
    ) -> Profile:
        """`CompiledFunction.profile` at these inputs' sizes."""
        arrays, outs = self._arguments(inputs, named, None)
        return self.compiled.replay(arrays, outs, self._threads(num_threads))

    def _threads(self, call: int | None) -> int | None:
        """A call's thread count, else this function's."""
        return self.num_threads if call is None else call

    def _arguments(
        self,
        inputs: Sequence[object],
        named: Mapping[str, object],
        out: np.ndarray | Sequence[np.ndarray] | None,
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """The checked inputs of a call and its output arrays, of the sizes
        the rules give them."""
        shapes = partial(self.rules.shapes, self.compiled)
        return self.compiled.arguments(inputs, named, out, shapes)

    def save(self, path: str | Path) -> None:
        """Write this function and its size rules to `path` as a `.hetero`
        file, which `hetero.load` runs without the compiler
        (docs/deployment.md)."""
        from hetero.runtime.artifact import save

        save(self.compiled, Path(path), self.rules)

    @property
    def timings(self) -> dict[str, float]:
        return self.compiled.timings

    @property
    def memory(self) -> dict[str, tuple[int, int]]:
        return self.compiled.memory


@dataclass
class LoadedDynamicFunction(DynamicCalls):
    """What `hetero.load` reads from the `.hetero` file of a function
    compiled once for dynamic shapes: called as its `DynamicFunction` was."""

    compiled: CompiledFunction
    rules: SizeRules
    num_threads: int | None = None
