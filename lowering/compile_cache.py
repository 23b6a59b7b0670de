"""The compile cache: the machine code of compiled modules, kept on disk.

`compile_cpu` lowers and compiles a module of `tir` functions (or each chunk
of one, `hetero.lowering.parallel_compile`) in seconds, and the same module
compiled again -- the same network in a new process, a notebook cell run
twice, `hetero-run` on the same file -- comes out the same.  So each
compiled chunk's `ObjectCode` is kept in a file named by a key that covers
everything its code depends on:

* the chunk as `tir` text (what the relay passes made of the program:
  shapes, schedules, targets), printed before it is lowered;
* the machine: triple, CPU, features and optimisation level of its
  `CpuTarget`, and the CPU count (`convert-tir-to-scf` reads it where a
  target sets no `num_threads`);
* the code that lowers and compiles it: a digest of hetero's own source
  files, and the versions of xDSL, llvmlite, LLVM and Python.

A later compile with the same key loads the file instead of lowering and
compiling: for ResNet-50 what is left is the relay passes, printing the
chunks and loading their code.  Any change of hetero's source changes every
key, so a cache is never stale, only unused.

`HETERO_CACHE_DIR` names the directory (default: `$XDG_CACHE_HOME/hetero`,
else `~/.cache/hetero`); set empty, it turns the cache off.  Entries are
pickles, loaded as Python loads its own `__pycache__`: the directory must be
as trusted as the code.  An entry that cannot be read is compiled again and
rewritten; a directory that cannot be written is used for nothing, with one
warning.  Past `MAX_BYTES` (512 MB), the least recently used entries go.
"""

from __future__ import annotations

import errno
import hashlib
import os
import pickle
import re
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from contextlib import suppress
from dataclasses import replace
from functools import cache
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm
import xdsl

from hetero.runtime.cpu import CpuTarget, ObjectCode
from hetero.utils.cpus import default_threads
from xdsl.dialects.builtin import ModuleOp

CACHE_VARIABLE = "HETERO_CACHE_DIR"
"""The cache's directory; empty: no cache."""

FORMAT = 1
"""The version of the entries' layout (a pickled `ObjectCode`)."""

HIT = "compile-cache"
"""The `timings` stage of a chunk loaded from the cache (its only one)."""

MAX_BYTES = 512 * 1024 * 1024
"""The most the entries may take together: after a write that passes it, the
least recently used go (ResNet-50's two entries take 0.4 MB)."""


ENTRY = re.compile(r"[0-9a-f]{64}\.pickle")
"""An entry's file name: its key.  Nothing else in the directory is touched."""

STALE_SECONDS = 3600
"""A temporary file this old was left by a writer that died: it goes."""


def cache_directory() -> Path | None:
    """Where compiled code is kept (`HETERO_CACHE_DIR`), or None: no cache
    (also when there is no home directory to put it in)."""
    text = os.environ.get(CACHE_VARIABLE)
    if text is not None:
        return Path(text) if text else None
    if base := os.environ.get("XDG_CACHE_HOME"):
        return Path(base) / "hetero"
    try:
        return Path.home() / ".cache" / "hetero"
    except RuntimeError:  # no HOME, and no passwd entry for this user
        return None


def open_cache() -> Path | None:
    """The cache directory, made if need be, when it can be written (else
    None, with a warning); run before compile workers fork, so that they
    share its check and `code_digest`."""
    directory = cache_directory()
    if directory is None:
        return None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if not os.access(directory, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    except OSError as error:
        _warn_unwritable(directory, error.strerror or str(error))
        return None
    code_digest()
    return directory


@cache
def code_digest() -> bytes:
    """What the compiled code depends on besides the module and the target:
    hetero's source files and the versions of the libraries that lower and
    compile (computed once a process: ~5 ms)."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent.parent
    for path in _sources(package):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    versions = (
        FORMAT,
        str(xdsl.__version__),  # a lazy object, whose repr is its address
        llvmlite.__version__,
        llvm.llvm_version_info,
        sys.version_info[:2],
    )
    digest.update(repr(versions).encode())
    return digest.digest()


def _sources(package: Path) -> list[Path]:
    """The `.py` files of `package` and its subpackages (folders with an
    `__init__.py`: not a virtual environment or build folder beside them),
    but for its benchmarks."""
    found = sorted(package.glob("*.py"))
    for folder in sorted(package.iterdir()):
        if (folder / "__init__.py").is_file() and folder.name != "bench":
            found += _sources(folder)
    return found


def cache_key(module: ModuleOp, target: CpuTarget) -> str:
    """The key of `module` (not yet lowered) compiled for `target`."""
    digest = hashlib.sha256(code_digest())
    machine = (
        target.machine.triple,
        target.mcpu,
        target.mattr,
        target.opt_level,
        default_threads(),  # the schedules' task counts (`num_threads`)
    )
    digest.update(repr(machine).encode())
    digest.update(str(module).encode())
    return digest.hexdigest()


def _load(path: Path) -> ObjectCode | None:
    """The entry at `path`; None if there is none, or none that reads as an
    `ObjectCode` (truncated, foreign): it is compiled again."""
    try:
        with path.open("rb") as file:
            code = pickle.load(file)
    except Exception:  # noqa: BLE001 (missing, or any unpickling failure)
        return None
    with suppress(OSError):  # a read-only cache still serves
        os.utime(path)  # used now: the last to be evicted
    return code if isinstance(code, ObjectCode) else None


def _store(path: Path, code: ObjectCode) -> None:
    """Writes `code` to `path` whole or not at all (another process may read
    or write the same entry meanwhile): into a temporary file, renamed."""
    try:  # `open_cache` made the directory
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    except OSError as error:
        _warn_unwritable(path.parent, error.strerror or str(error))
        return
    try:
        with os.fdopen(handle, "wb") as file:
            pickle.dump(code, file, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, path)
    except BaseException as error:  # an interrupt too: no file left behind
        with suppress(OSError):
            os.unlink(temporary)
        if not isinstance(error, OSError):
            raise
        _warn_unwritable(path.parent, error.strerror or str(error))
        return
    _evict(path.parent)


def _evict(directory: Path) -> None:
    """Deletes the least recently used entries while they take more than
    `MAX_BYTES` (another process may be deleting them too), and temporary
    files that writers left."""
    entries = []
    now = time.time()
    for entry in directory.iterdir():
        with suppress(OSError):
            status = entry.stat()
            if ENTRY.fullmatch(entry.name):
                entries.append((status.st_mtime, status.st_size, entry))
            elif entry.suffix == ".tmp" and now - status.st_mtime > STALE_SECONDS:
                entry.unlink()
    total = sum(size for _, size, _ in entries)
    for _, size, entry in sorted(entries):
        if total <= MAX_BYTES:
            break
        with suppress(OSError):
            entry.unlink()
        total -= size


@cache
def _warn_unwritable(directory: Path, reason: str) -> None:
    """Once a directory and reason: the compile goes on without the cache."""
    warnings.warn(
        f"hetero's compile cache cannot write to {directory} ({reason}); "
        f"set {CACHE_VARIABLE} to another directory, or empty to turn it off",
        RuntimeWarning,
        stacklevel=4,
    )


def compile_cached(
    directory: Path,
    module: ModuleOp,
    target: CpuTarget,
    build: Callable[[ModuleOp], ObjectCode],
) -> ObjectCode:
    """`build(module)`, or the code the cache in `directory` (`open_cache`)
    holds for it; a fresh result is kept for next time.  The key is taken
    before `build`, which may lower `module` in place."""
    start = time.perf_counter()
    path = directory / f"{cache_key(module, target)}.pickle"
    if (code := _load(path)) is not None:
        return replace(code, timings={HIT: time.perf_counter() - start})
    code = build(module)
    _store(path, code)
    return code


def all_cached(timings: dict[str, float]) -> bool:
    """Whether a compile with these `timings` took all of its code from the
    cache (each chunk: only the `HIT` stage; loading it is `llvm-codegen`)."""
    return HIT in timings and "llvm-optimize" not in timings
