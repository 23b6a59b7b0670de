"""NVIDIA's libraries from their PyPI wheels (cuBLAS, cuDNN), found by `cuda.pathfinder`.

    path = load_nvidia_library("cudnn", "cuDNN", INSTALL)   # LibraryUnavailable if absent
    unavailable(load)                                         # why not, or None

`cuda.pathfinder` (part of cuda-python, hetero's CUDA dependency) finds a
wheel's library in site-packages (or a CUDA installation) and loads it with
its dependencies; only the library is needed to compile programs that call
it, a GPU to run them.
"""

from __future__ import annotations

from collections.abc import Callable


class LibraryUnavailable(RuntimeError):
    """An NVIDIA library is not installed; the message says what to install."""


def load_nvidia_library(name: str, label: str, install: str) -> str:
    """Load NVIDIA's library `name` ("cublas"); its path."""
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib

        path = load_nvidia_dynamic_lib(name).abs_path
    except Exception as e:  # pathfinder's several not-found errors
        raise LibraryUnavailable(f"{label} not found ({e}): {install}") from e
    assert path is not None
    return path


def unavailable(load: Callable[[], object]) -> str | None:
    """Why `load` cannot load its library here, or None."""
    try:
        load()
    except LibraryUnavailable as e:
        return str(e)
    return None
