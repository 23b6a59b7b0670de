"""The CPU BLAS that the `blas` external codegen calls: OpenBLAS from `scipy-openblas32`.

    library = load_blas()                 # once per process; BlasUnavailable if absent
    library.symbol("cblas_sgemm")         # "scipy_cblas_sgemm", resolvable by the JIT

Why this package: `scipy-openblas32` is the OpenBLAS build that NumPy and
SciPy's own wheels are made from, published on its own with a small API
(`get_lib_dir`, `get_library`) and a 32-bit `blasint`, which is the C `int`
the generated calls pass.  NumPy's bundled copy is an ILP64 build under a
hashed private file name (`numpy.libs/libscipy_openblas64_-<hash>.so`), an
implementation detail of NumPy's wheel that may move at any release.

The library is loaded into the process once, with llvmlite's
`load_library_permanently`, so that MCJIT resolves the generated code's calls
of `scipy_cblas_sgemm` (the package prefixes every symbol with `scipy_`, its
pkg-config's `BLAS_SYMBOL_PREFIX`) like any other process symbol: the call is
a plain native call, no Python in the loop.  It keeps its own thread pool
(`OPENBLAS_NUM_THREADS`, `OPENBLAS_CORETYPE` apply to it as to NumPy's copy).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache

import llvmlite.binding as llvm

PACKAGE = "scipy-openblas32"
INSTALL = "pip install 'hetero[blas]' (which installs scipy-openblas32)"
SYMBOL_PREFIX = "scipy_"
"""The prefix `scipy-openblas32` puts on every BLAS symbol (`BLAS_SYMBOL_PREFIX`)."""


class BlasUnavailable(RuntimeError):
    """No usable BLAS library; the message says what to install."""


@dataclass(frozen=True)
class BlasLibrary:
    """A loaded BLAS: where it is and how its symbols are spelled."""

    path: str
    prefix: str = SYMBOL_PREFIX

    def symbol(self, name: str) -> str:
        """The exported name of the CBLAS function `name` ("cblas_sgemm")."""
        return self.prefix + name

    def has(self, name: str) -> bool:
        """Whether the library exports the CBLAS function `name`."""
        return llvm.address_of_symbol(self.symbol(name)) is not None


def library_path() -> str:
    """The shared library of `scipy-openblas32`; `BlasUnavailable` if not installed."""
    try:
        import scipy_openblas32
    except ImportError as e:
        raise BlasUnavailable(
            f"the 'blas' external codegen needs {PACKAGE}: {INSTALL}"
        ) from e
    return os.path.join(
        scipy_openblas32.get_lib_dir(), scipy_openblas32.get_library(fullname=True)
    )


@cache
def load_blas() -> BlasLibrary:
    """Load the BLAS into the process (once) for the JIT to resolve its symbols."""
    path = library_path()
    try:
        llvm.load_library_permanently(path)
    except RuntimeError as e:
        raise BlasUnavailable(f"cannot load {path} ({e}); reinstall: {INSTALL}") from e
    library = BlasLibrary(path)
    if not library.has("cblas_sgemm"):
        raise BlasUnavailable(f"{path} exports no {library.symbol('cblas_sgemm')}")
    return library
