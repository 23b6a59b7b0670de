"""`Param`s: the attributes of a relay op as typed Python values.

A `Param` in an op class declares the IRDL property of its name and reads
it back as a Python value with a documented default, so the constructors,
the verifier and the type inference all see one description of it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Generic, TypeVar, cast

from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.relay.layouts import LAYOUT_FORMS
from hetero.dialects.relay.shapes import attr_text

_T = TypeVar("_T")
_REQUIRED: Any = object()
NO_ATTRIBUTES: Mapping[str, Attribute] = MappingProxyType({})


class Param(property, Generic[_T]):
    """An op attribute seen from Python: `op.strides -> (1, 1)`.

    A `Param` in the body of a `ValueOp` subclass declares the IRDL property
    of the same name (see `ValueOp.__init_subclass__`) and is the accessor
    that converts it to a Python value, or gives the default when it is
    absent.  It is a `property` so that IRDL accepts it in an op class.
    `read` does the same on a bare attribute mapping: type inference runs
    before the op exists.  A `Param` without a default is required.
    """

    def __init__(self, default: _T = _REQUIRED) -> None:
        super().__init__(self._read_op)
        self.name = ""
        self.default = default

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    def _read_op(self, op: Operation) -> _T:
        return self.read(op.properties)

    def read(self, attributes: Mapping[str, Attribute]) -> _T:
        """The Python value of this attribute in `attributes`; raises if it is invalid."""
        attr = attributes.get(self.name)
        if attr is not None:
            return self.from_attr(attr)
        if self.required:
            raise VerifyException(f"missing required attribute '{self.name}'")
        return self.default

    def from_attr(self, attr: Attribute) -> _T:
        raise NotImplementedError

    def to_attr(self, value: _T) -> Attribute:
        raise NotImplementedError

    def _wrong_kind(self, expected: str, attr: Attribute) -> VerifyException:
        return VerifyException(
            f"'{self.name}' must be {expected}, got {attr_text(attr)}"
        )


def check_minimum(name: str, values: Sequence[int], minimum: int | None) -> None:
    if minimum is not None and any(v < minimum for v in values):
        shown = values[0] if len(values) == 1 else list(values)
        raise VerifyException(f"'{name}' must be >= {minimum}, got {shown}")


class IntParam(Param[int]):
    """An integer, stored as an `i64` `IntegerAttr` (`axis = 1`)."""

    def __init__(self, default: int = _REQUIRED, *, minimum: int | None = None) -> None:
        super().__init__(default)
        self.minimum = minimum

    def from_attr(self, attr: Attribute) -> int:
        if not isinstance(attr, IntegerAttr) or attr.type == i1:
            raise self._wrong_kind("an integer", attr)
        value = cast(int, attr.value.data)
        check_minimum(self.name, [value], self.minimum)
        return value

    def to_attr(self, value: int) -> Attribute:
        return IntegerAttr(value, i64)


def _ints_from_attr(
    name: str, attr: Attribute, length: int | None, minimum: int | None
) -> tuple[int, ...]:
    """The values of an `array<i64: ...>` attribute, checked."""
    if not isinstance(attr, DenseArrayBase) or attr.elt_type != i64:
        raise VerifyException(
            f"'{name}' must be an array<i64: ...>, got {attr_text(attr)}"
        )
    values = cast(tuple[int, ...], attr.get_values())
    if length is not None and len(values) != length:
        raise VerifyException(f"'{name}' must have {length} values, got {len(values)}")
    check_minimum(name, values, minimum)
    return values


class IntsParam(Param[tuple[int, ...]]):
    """A list of integers, stored as `array<i64: ...>`, with an optional fixed length."""

    def __init__(
        self,
        default: tuple[int, ...] = _REQUIRED,
        *,
        length: int | None = None,
        minimum: int | None = None,
    ) -> None:
        super().__init__(default)
        self.length = length
        self.minimum = minimum

    def from_attr(self, attr: Attribute) -> tuple[int, ...]:
        return _ints_from_attr(self.name, attr, self.length, self.minimum)

    def to_attr(self, value: tuple[int, ...]) -> Attribute:
        return DenseArrayBase.from_list(i64, list(value))


class OptionalIntsParam(Param[tuple[int, ...] | None]):
    """A list of integers whose absence means something no list says (e.g. "all")."""

    def __init__(self) -> None:
        super().__init__(None)

    def from_attr(self, attr: Attribute) -> tuple[int, ...]:
        return _ints_from_attr(self.name, attr, None, None)

    def to_attr(self, value: tuple[int, ...] | None) -> Attribute:
        assert value is not None, "absent values are not stored"
        return DenseArrayBase.from_list(i64, list(value))


class FloatParam(Param[float]):
    """A float, stored as a `FloatAttr` (`f64` when built from Python)."""

    def from_attr(self, attr: Attribute) -> float:
        if not isinstance(attr, FloatAttr):
            raise self._wrong_kind("a float", attr)
        return float(attr.value.data)

    def to_attr(self, value: float) -> Attribute:
        return FloatAttr(value, 64)


class BoolParam(Param[bool]):
    """A flag, stored as `true` / `false` (an `i1` `IntegerAttr`)."""

    def from_attr(self, attr: Attribute) -> bool:
        if not isinstance(attr, IntegerAttr) or attr.type != i1:
            raise self._wrong_kind("true or false", attr)
        return bool(attr.value.data)

    def to_attr(self, value: bool) -> Attribute:
        return IntegerAttr.from_bool(value)


class LayoutParam(Param[str]):
    """A layout (`KERNEL_LAYOUT` or `DATA_LAYOUT`: `pattern`), stored as a string."""

    def __init__(self, pattern: re.Pattern[str], default: str = _REQUIRED) -> None:
        super().__init__(default)
        self.pattern = pattern

    def from_attr(self, attr: Attribute) -> str:
        if not isinstance(attr, StringAttr) or not self.pattern.fullmatch(attr.data):
            raise self._wrong_kind(LAYOUT_FORMS[self.pattern], attr)
        return attr.data

    def to_attr(self, value: str) -> Attribute:
        return StringAttr(value)


class ElementTypeParam(Param[Attribute]):
    """A tensor element type: a float, or an integer (`i1` to `i64`,
    signless or unsigned), stored as the type itself (`dtype = f32`)."""

    def from_attr(self, attr: Attribute) -> Attribute:
        if not isinstance(attr, AnyFloat | IntegerType):
            raise self._wrong_kind("a float or integer type", attr)
        return attr

    def to_attr(self, value: Attribute) -> Attribute:
        return value


class StrParam(Param[str]):
    """One of a fixed set of words, stored as a string (`pad_mode = "edge"`)."""

    def __init__(self, default: str = _REQUIRED, *, choices: Sequence[str]) -> None:
        super().__init__(default)
        self.choices = tuple(choices)

    def from_attr(self, attr: Attribute) -> str:
        if not isinstance(attr, StringAttr) or attr.data not in self.choices:
            raise self._wrong_kind(
                "one of " + ", ".join(f'"{c}"' for c in self.choices), attr
            )
        return attr.data

    def to_attr(self, value: str) -> Attribute:
        return StringAttr(value)
