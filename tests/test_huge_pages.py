"""`small_pages`: NumPy's huge-page advice off while `hetero.compile` makes
weights, and as it was afterwards."""

import re
from pathlib import Path

import numpy as np
import pytest

import hetero
import hetero.driver
from hetero.utils.huge_pages import small_pages

try:
    from numpy._core import multiarray
except ImportError:  # NumPy 1.x
    from numpy.core import multiarray

THP_MODE = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def _advice() -> bool:
    return multiarray._get_madvise_hugepage()


@pytest.mark.parametrize("before", [True, False])
def test_small_pages_restores_numpy_setting(before):
    previous = multiarray._set_madvise_hugepage(before)
    try:
        with small_pages():
            assert _advice() is False
        assert _advice() is before
        with pytest.raises(RuntimeError), small_pages():
            raise RuntimeError("restored on the way out of an error too")
        assert _advice() is before
    finally:
        multiarray._set_madvise_hugepage(previous)


def _huge_kib(array: np.ndarray) -> int:
    """The KiB of huge pages in the mappings that hold `array` (the advice
    splits its mapping at the 2 MiB boundaries)."""
    start = array.ctypes.data
    end = start + array.nbytes
    total, overlaps = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if match := re.match(r"([0-9a-f]+)-([0-9a-f]+) ", line):
            overlaps = int(match[1], 16) < end and start < int(match[2], 16)
        elif overlaps and line.startswith("AnonHugePages:"):
            total += int(line.split()[1])
    return total


@pytest.mark.skipif(
    not THP_MODE.exists() or "[madvise]" not in THP_MODE.read_text(),
    reason="transparent huge pages are not in madvise mode here",
)
def test_arrays_made_inside_get_small_pages():
    advised = np.ones(16 << 20, np.float32)  # 64 MiB, NumPy's advice on
    if _huge_kib(advised) == 0:
        pytest.skip("the kernel had no huge page to give")
    with small_pages():
        plain = np.ones(16 << 20, np.float32)
    assert _huge_kib(plain) == 0


def test_compile_makes_weights_without_huge_page_advice(monkeypatch):
    seen = []
    lower = hetero.driver.lower_to_tir

    def spy(*args, **kwargs):
        seen.append(_advice())
        return lower(*args, **kwargs)

    monkeypatch.setattr(hetero.driver, "lower_to_tir", spy)
    text = """builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = relay.relu %x : tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
}"""
    before = _advice()
    f = hetero.compile(text)
    assert seen == [False] and _advice() is before
    x = np.array([-1.0, 2.0, -3.0, 4.0], np.float32)
    np.testing.assert_array_equal(f(x), np.maximum(x, 0))
