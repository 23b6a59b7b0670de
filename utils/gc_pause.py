"""`gc_paused`: Python's cyclic garbage collector off around IR-heavy work."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the duration: compiling a
    network allocates hundreds of thousands of IR objects (xDSL's, then
    llvmlite's), and each collection of the oldest generation traverses all
    of them (a fifth of the lowering's time on SqueezeNet).  What the work
    drops is collected afterwards; nesting is fine."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
