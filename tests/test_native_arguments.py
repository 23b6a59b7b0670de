"""Arrays passed to native code (`hetero.runtime.native`): a read-only array
(a compiled function's weights) is converted once and reused while it is
the same array, still of the same shape and dtype; any change of those, and
every writeable array, is checked again at each call."""

from __future__ import annotations

import numpy as np
import pytest

import hetero
from hetero.runtime import native

T = "tensor<1x16xf32>"
SUBTRACT = (
    f"relay.func @main(%x: {T}, %w: {T}) -> {T} {{ "
    f"%y = relay.subtract %x, %w : ({T}, {T}) -> {T} relay.return %y : {T} }}"
)
WEIGHTED = (
    f"relay.func @main(%x: {T}) -> {T} {{ %w = relay.constant dense<2.0> : {T} "
    f"%y = relay.multiply %x, %w : ({T}, {T}) -> {T} relay.return %y : {T} }}"
)


@pytest.fixture
def conversions(monkeypatch) -> list[np.ndarray]:
    """The arrays whose address and sizes were looked up, in order."""
    seen: list[np.ndarray] = []
    convert = native._MemRef._convert

    def counted(self, value):
        seen.append(value)
        return convert(self, value)

    monkeypatch.setattr(native._MemRef, "_convert", counted)
    return seen


def _read_only(values: np.ndarray) -> np.ndarray:
    view = values.view()
    view.flags.writeable = False
    return view


def test_a_read_only_array_is_converted_once(conversions) -> None:
    host = hetero.compile(SUBTRACT)
    function = host.native.function(host.symbol)
    x = np.arange(16, dtype=np.float32).reshape(1, 16)
    base = np.ones((1, 16), np.float32)
    w, y = _read_only(base), np.empty((1, 16), np.float32)
    for step in range(3):
        base[:] = step  # the same memory, read at each call
        function(x, w, y)
        np.testing.assert_array_equal(y, x - step)
    assert sum(a is w for a in conversions) == 1
    assert sum(a is x for a in conversions) == 3


def test_a_kept_array_changed_in_place_is_checked_again(conversions) -> None:
    host = hetero.compile(SUBTRACT)
    function = host.native.function(host.symbol)
    x, y = np.zeros((1, 16), np.float32), np.empty((1, 16), np.float32)
    w = _read_only(np.ones((1, 16), np.float32))
    function(x, w, y)
    w.shape = (16, 1)
    with pytest.raises(native.ArgumentError, match="must have size 1 in dimension 0"):
        function(x, w, y)
    w.shape = (1, 16)
    w.dtype = np.int32
    with pytest.raises(native.ArgumentError, match="must have dtype float32"):
        function(x, w, y)
    assert sum(a is w for a in conversions) == 3


def test_a_compiled_functions_weights_are_converted_at_its_first_call(
    conversions,
) -> None:
    f = hetero.compile(WEIGHTED)
    (weight,) = f.constants
    x = np.arange(16, dtype=np.float32).reshape(1, 16)
    for _ in range(3):
        np.testing.assert_array_equal(f(x), 2 * x)
    assert sum(a is weight for a in conversions) == 1
