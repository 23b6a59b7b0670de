"""`small_pages`: NumPy's huge-page advice off while weights are made."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

try:
    from numpy._core import multiarray
except ImportError:  # NumPy 1.x
    from numpy.core import multiarray  # type: ignore[no-redef]


@contextmanager
def small_pages() -> Iterator[None]:
    """New NumPy arrays without `madvise(MADV_HUGEPAGE)` for the duration.

    NumPy advises huge pages for every array of 4 MiB or more.  Where the
    kernel then assembles each 2 MiB page at the first touch (transparent
    huge pages in `madvise` mode, a virtual machine's memory), that first
    touch costs several times a 4 KiB page's: 0.22 s against 0.05 s for
    100 MB on the 2-core VM of docs/frontends/onnx.md, where folding and
    packing resnet50's weights (`fold-constant`, `alter-op-layout`) spent
    0.13 s in it, and the network ran as fast with its weights in either
    kind of page.  The setting is NumPy's, for the whole process: it is
    restored on the way out."""
    advise = getattr(multiarray, "_set_madvise_hugepage", None)
    if advise is None:  # a NumPy without the switch: nothing to change
        yield
        return
    previous = advise(False)
    try:
        yield
    finally:
        advise(previous)
