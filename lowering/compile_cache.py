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
  `CpuTarget`, and the default thread count (`default_threads()`, from
  which the schedules cut their tasks where a target sets no `num_threads`);
* the code that lowers and compiles it: a digest of hetero's own source
  files, and the versions of xDSL, llvmlite, LLVM and Python.

A later compile with the same key loads the file instead of lowering and
compiling: for ResNet-50 what is left is the relay passes, printing the
chunks and loading their code.  Any change of hetero's source changes every
key, so a cache is never stale, only unused.

An entry is native code this process will run, so whoever can write one can
run code as the user.  Hence:

* the directory must be the user's own and writable by no one else (checked
  when the cache is opened; hetero makes it, and the parents it lacks, mode
  0700); another is refused with one warning, and compiles go on without it;
* every entry is signed, HMAC-SHA256 over its key and its bytes, with a
  secret of the user's in a 0600 file beside the entries (`SECRET`), and
  the signature is checked before any byte of it is read as anything: an
  entry planted without the secret, corrupted, or copied over another key
  is compiled again and replaced;
* entries are a format of their own (`_encode`): the object file, the
  bitcode and the functions' `FunctionInfo` as JSON (`ObjectCode.parts`),
  never a pickle.

`HETERO_CACHE_DIR` names the directory (default: `$XDG_CACHE_HOME/hetero`,
else `~/.cache/hetero`); set empty, it turns the cache off.  A directory that
cannot be written is used for nothing, with one warning.  Past `MAX_BYTES`
(512 MB), the least recently used entries go; nothing but entries and the
cache's own temporary files is ever deleted.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import re
import secrets
import stat
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field, replace
from functools import cache
from itertools import takewhile
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm
import xdsl
from xdsl.dialects.builtin import ModuleOp

from hetero.lowering.llvm_codegen import CpuTarget
from hetero.runtime import framing
from hetero.runtime.cpu import ObjectCode
from hetero.utils.cpus import default_threads
from hetero.utils.diagnostics import HeteroRuntimeWarning, warn

CACHE_VARIABLE = "HETERO_CACHE_DIR"
"""The cache's directory; empty: no cache."""

FORMAT = 3
"""The version of the entries' layout (`HEADER`); it is part of every key."""

HIT = "compile-cache"
"""The `timings` stage of a chunk loaded from the cache (its only one)."""

MAX_BYTES = 512 * 1024 * 1024
"""The most the entries may take together: after a write that passes it, the
least recently used go."""

SUFFIX = ".entry"
ENTRY = re.compile(r"[0-9a-f]{64}" + re.escape(SUFFIX))
"""An entry's file name: its key.  Nothing else in the directory is read as
code or evicted."""

TEMPORARY_PREFIX = "hetero-"
TEMPORARY = re.compile(re.escape(TEMPORARY_PREFIX) + r"[a-z0-9_]+\.tmp")
"""The name `tempfile.mkstemp` gives the cache's temporary files: only these
are deleted when a writer that died left them."""

STALE_SECONDS = 3600
"""A temporary file this old was left by a writer that died: it goes."""

SECRET = "secret"
"""The file beside the entries holding the key their signatures are made with."""

SECRET_BYTES = 32

HEADER = framing.header(3)
"""An entry: magic, `FORMAT`, the sizes of its three parts
(`ObjectCode.parts`: the functions as JSON, the object file, the bitcode), the parts
(`hetero.runtime.framing`), then its `MAC_BYTES` of HMAC-SHA256 over its key
and all that precedes."""

MAGIC = b"hetero\0c"

MAC_BYTES = hashlib.sha256().digest_size


class Refused(Exception):
    """Why a cache directory is not used: others could put code in it."""


@dataclass(frozen=True)
class Cache:
    """An open cache (`open_cache`): its directory and its secret, read once
    before compile workers fork."""

    directory: Path
    secret: bytes = field(repr=False)


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


def open_cache() -> Cache | None:
    """The cache, its directory made if need be, when it is the user's own
    and can be written (else None, with a warning); run before compile
    workers fork, so that they share its checks, its secret and
    `code_digest`."""
    directory = cache_directory()
    if directory is None:
        return None
    try:
        _make(directory)
        _check_directory(directory)
        if not os.access(directory, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        secret = _secret(directory / SECRET)
    except Refused as refusal:
        _warn(f"does not use {directory}: {refusal}")
        return None
    except OSError as error:
        _warn_unwritable(directory, error.strerror or str(error))
        return None
    code_digest()
    return Cache(directory, secret)


def _make(directory: Path) -> None:
    """Makes `directory` and the parents it lacks, mode 0700 whatever the
    umask (under umask 000 they would be anyone's to write)."""
    missing = takewhile(
        lambda p: not os.path.lexists(p), (directory, *directory.parents)
    )
    for path in reversed(list(missing)):
        with suppress(FileExistsError):  # another process made it meanwhile
            path.mkdir(0o700)
            path.chmod(0o700)  # a umask may take the owner's bits too


def _check_directory(directory: Path) -> None:
    """Raises `Refused` unless `directory` is the user's own and no one
    else's to write to: a shared 1777 directory, another user's (`sudo`
    keeping HOME), or one whose entries anyone could replace.  A link is
    judged by what it resolves to, and must be the user's own too."""
    status = os.lstat(directory)
    if stat.S_ISLNK(status.st_mode):
        _check_owner(f"the link {directory}", status)
        status = os.stat(directory)
    if not stat.S_ISDIR(status.st_mode):
        raise Refused("it is not a directory")
    _check_owner("it", status)
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        mode = stat.S_IMODE(status.st_mode)
        raise Refused(f"others can write to it (mode {mode:o}; chmod 700 it)")


def _check_owner(what: str, status: os.stat_result) -> None:
    if status.st_uid != os.geteuid():
        raise Refused(f"{what} is owned by user {status.st_uid}, not {os.geteuid()}")


def _secret(path: Path) -> bytes:
    """The secret entries are signed with, from `path`, made if there is
    none: `SECRET_BYTES` random bytes that only the user can read."""
    try:
        with suppress(FileExistsError):  # another process made it first
            os.unlink(_write(path, secrets.token_bytes(SECRET_BYTES), os.link))
        status, secret = _read(path, SECRET_BYTES)
    except OSError as error:
        if error.errno != errno.ELOOP:
            raise
        raise Refused(f"its secret {path} is a link") from error
    _check_owner(f"its secret {path}", status)
    if stat.S_IMODE(status.st_mode) & 0o077 or len(secret) != SECRET_BYTES:
        mode = stat.S_IMODE(status.st_mode)
        raise Refused(
            f"its secret {path} is not {SECRET_BYTES} bytes of mode 600 "
            f"(mode {mode:o}, {len(secret)} bytes; remove it)"
        )
    return secret


def _read(path: Path, limit: int) -> tuple[os.stat_result, bytes]:
    """The status and the first `limit` + 1 bytes of the file at `path`, a
    regular file (not a link; not a FIFO or a device, whose read could wait
    or never end)."""
    handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(handle, "rb") as file:
        status = os.fstat(handle)
        if not stat.S_ISREG(status.st_mode):
            raise OSError(errno.EINVAL, f"{path} is not a regular file")
        return status, file.read(limit + 1)


def _write(path: Path, data: bytes, publish: Callable[[str, Path], None]) -> str:
    """Writes `data` to a new temporary file (made with O_EXCL, mode 0600)
    beside `path` and `publish`es it as `path` (`os.replace`, `os.link`):
    readers see all of it or nothing.  Returns the temporary file's path;
    on any failure it is deleted."""
    handle, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=TEMPORARY_PREFIX, suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        publish(temporary, path)
    except BaseException:  # an interrupt too: no file left behind
        with suppress(OSError):
            os.unlink(temporary)
        raise
    return temporary


@cache
def code_digest() -> bytes:
    """What the compiled code depends on besides the module and the target:
    hetero's source files and the versions of the libraries that lower and
    compile (computed once a process)."""
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


def _mac(secret: bytes, key: str, signed: bytes) -> bytes:
    """The signature of an entry stored under `key`: one copied to another
    key does not verify there."""
    return hmac.digest(secret, key.encode() + signed, "sha256")


def _encode(secret: bytes, key: str, code: ObjectCode) -> bytes:
    """The entry of `code` under `key` (its timings are not kept: a hit has
    its own)."""
    signed = framing.pack(MAGIC, FORMAT, code.parts())
    return signed + _mac(secret, key, signed)


def _decode(secret: bytes, key: str, entry: bytes) -> ObjectCode:
    """The `ObjectCode` of `entry`, read from a file named `key`, once its
    signature is found right; raises ValueError if it is not, or the entry
    is not one (truncated, foreign)."""
    signed, mac = entry[:-MAC_BYTES], entry[-MAC_BYTES:]
    if len(entry) < HEADER.size + MAC_BYTES or not hmac.compare_digest(
        mac, _mac(secret, key, signed)
    ):
        raise ValueError("not an entry signed with this cache's secret")
    return ObjectCode.of_parts(framing.unpack(MAGIC, FORMAT, 3, signed))


def _load(cache: Cache, key: str) -> ObjectCode | None:
    """The entry of `key`; None if there is none, or none that this cache
    signed and reads as an `ObjectCode` (planted, copied, corrupted,
    truncated, foreign): it is compiled again."""
    path = cache.directory / f"{key}{SUFFIX}"
    try:
        _, entry = _read(path, MAX_BYTES)
        code = _decode(cache.secret, key, entry)
    except Exception:  # noqa: BLE001 (missing, or anything but a good entry)
        return None
    with suppress(OSError):  # a read-only cache still serves
        os.utime(path)  # used now: the last to be evicted
    return code


def _store(cache: Cache, key: str, code: ObjectCode) -> None:
    """Writes `code`'s entry whole or not at all (another process may read or
    write the same entry meanwhile): into a temporary file, renamed."""
    path = cache.directory / f"{key}{SUFFIX}"
    try:  # `open_cache` made the directory
        _write(path, _encode(cache.secret, key, code), os.replace)
    except OSError as error:
        _warn_unwritable(cache.directory, error.strerror or str(error))
        return
    _evict(cache.directory)


def _evict(directory: Path) -> None:
    """Deletes the least recently used entries while they take more than
    `MAX_BYTES` (another process may be deleting them too), and temporary
    files that the cache's writers left."""
    entries = []
    now = time.time()
    for entry in directory.iterdir():
        with suppress(OSError):
            status = entry.lstat()
            if ENTRY.fullmatch(entry.name):
                entries.append((status.st_mtime, status.st_size, entry))
            elif (
                TEMPORARY.fullmatch(entry.name)
                and now - status.st_mtime > STALE_SECONDS
            ):
                entry.unlink()
    total = sum(size for _, size, _ in entries)
    for _, size, entry in sorted(entries):
        if total <= MAX_BYTES:
            break
        with suppress(OSError):
            entry.unlink()
        total -= size


def _warn_unwritable(directory: Path, reason: str) -> None:
    _warn(f"cannot write to {directory} ({reason})")


@cache
def _warn(problem: str) -> None:
    """Once a problem: the compile goes on without the cache."""
    warn(
        f"hetero's compile cache {problem}; compiling without it (set "
        f"{CACHE_VARIABLE} to another directory, or empty to turn it off)",
        stacklevel=5,
        category=HeteroRuntimeWarning,
    )


def compile_cached(
    cache: Cache,
    module: ModuleOp,
    target: CpuTarget,
    build: Callable[[ModuleOp], ObjectCode],
) -> ObjectCode:
    """`build(module)`, or the code `cache` (`open_cache`) holds for it; a
    fresh result is kept for next time.  The key is taken before `build`,
    which may lower `module` in place."""
    start = time.perf_counter()
    key = cache_key(module, target)
    if (code := _load(cache, key)) is not None:
        return replace(code, timings={HIT: time.perf_counter() - start})
    code = build(module)
    _store(cache, key, code)
    return code


def all_cached(timings: dict[str, float]) -> bool:
    """Whether a compile with these `timings` took all of its code from the
    cache (each chunk: only the `HIT` stage; loading it is `llvm-codegen`)."""
    return HIT in timings and "llvm-optimize" not in timings
