"""Large constants outside the printed IR: MLIR's `dense_resource` form.

    %w = relay.constant dense_resource<conv1_w> : tensor<64x3x7x7xf32>
    ...
    {-# dialect_resources: {builtin: {conv1_w: "0x04000000CDCCCC3D..."}} #-}

xDSL 0.74 has the attribute (`DenseResourceAttr`), parses and prints the
file-level `{-# ... #-}` section, and keeps the blobs in the builtin
dialect's `OpAsmDialectInterface` -- one process-wide table of hex strings,
keyed by handle.  The blob format is MLIR's: `0x`, the alignment as a
little-endian `u32`, then the raw little-endian element bytes.  This module
writes and reads that table; `hetero.utils.xdsl_fixes` makes re-parsing a
printed module in the same process keep its keys straight.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import re
import weakref
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from contextvars import ContextVar
from functools import partial
from io import StringIO
from typing import Self

import numpy as np
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import (
    Builtin,
    DenseResourceAttr,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation
from xdsl.printer import Printer

from hetero.utils.background import later, on_unsettled_fork
from hetero.utils.diagnostics import HeteroError


def _blobs() -> OpAsmDialectInterface:
    interface = Builtin.get_interface(OpAsmDialectInterface)
    assert interface is not None  # xDSL's builtin dialect always has one
    return interface


def handle_name(hint: str) -> str:
    """A valid resource handle or SSA name hint derived from `hint`: letters,
    digits and underscores, starting with a letter (xDSL drops a `_N` suffix
    from name hints, which would leave `_0` empty)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", hint)
    return name if re.match(r"[A-Za-z]", name) else f"v{name}"


Blob = bytes | memoryview
"""A blob's element bytes: `bytes`, or a read-only array's memory."""

Held = tuple[Blob, int]
"""A blob's element bytes and their alignment."""

View = Callable[[], np.ndarray]
"""A blob's values as a NumPy view of other arrays (`dense_resource_view`)."""


class _LazyBlobs(dict[str, str]):
    """xDSL's blob table (key → hex string), holding the blobs that
    `dense_resource` makes as their bytes (`dense_resource_later`: their
    making) until something reads them as text (`lookup`, printing): a
    model's weights are mostly only compiled, and their hex strings cost
    resnet50 0.4 s to make (100 MB) and as long to decode again.  A key set
    from text (a parsed file) drops its pending bytes."""

    def __init__(self, blobs: dict[str, str]) -> None:
        super().__init__(blobs)
        self.pending: dict[str, Held | Future[Held] | View] = {}

    def hold(self, key: str, held: Held | Future[Held] | View) -> None:
        """Keep `held` (a blob's element bytes and their alignment, their
        making, `dense_resource_later`, or its view, `dense_resource_view`)
        as the blob of `key`."""
        super().__setitem__(key, _PENDING)
        self.pending[key] = held

    def held(self, key: str) -> Held | None:
        """The bytes and alignment held for `key`, once made (a view's, made
        now); None if it has none (a blob from text)."""
        held = self.pending.get(key)
        if callable(held):
            held = self.pending[key] = _made(held)
        return held.result() if isinstance(held, Future) else held

    def orphan(self) -> None:
        """In a child forked while blobs may be being made
        (`hetero.utils.background.forking_unsettled`): their making goes on
        in the parent only, so a read of one here is an error, not a wait
        that never ends.  Every future goes, made or not: asking it would
        take its lock, which the parent's thread may have held at the fork."""
        orphaned = HeteroError(
            "a weight read in a process forked while it was being made "
            "(only the process that makes it can read it)"
        )
        for key, held in self.pending.items():
            if isinstance(held, Future):
                failed: Future[Held] = Future()
                failed.set_exception(orphaned)
                self.pending[key] = failed

    def _text(self, key: str) -> None:
        if (held := self.held(key)) is not None:
            del self.pending[key]
            raw, alignment = held
            blob = "0x" + alignment.to_bytes(4, "little").hex() + raw.hex()
            super().__setitem__(key, blob)
            _DECODED[key] = (blob, raw)

    def __getitem__(self, key: str) -> str:
        self._text(key)
        return super().__getitem__(key)

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        self._text(key)
        return super().get(key, default)

    def __setitem__(self, key: str, value: str) -> None:
        self.pending.pop(key, None)
        super().__setitem__(key, value)


_PENDING = "0x"
"""What the table holds for a blob still kept as bytes, or being made
(never read as such)."""


def _orphan_in_child() -> None:
    storage = _blobs()._blob_storage  # pyright: ignore[reportPrivateUsage]
    if isinstance(storage, _LazyBlobs):
        storage.orphan()


on_unsettled_fork(_orphan_in_child)


def _table() -> _LazyBlobs:
    """The builtin dialect's blob table, made a `_LazyBlobs` on first use."""
    interface = _blobs()
    storage = interface._blob_storage  # pyright: ignore[reportPrivateUsage]
    if not isinstance(storage, _LazyBlobs):
        storage = interface._blob_storage = _LazyBlobs(storage)  # pyright: ignore[reportPrivateUsage]
    return storage


_DECODED: dict[str, tuple[str, Blob]] = {}
"""Blob key → (the hex string of its blob, its element bytes), so that a blob
is decoded once: the weights of a parsed model are read by `fold-constant`,
and by `hetero.compile`'s constants.  An entry counts only while xDSL's table
holds that very string for the key."""


def dense_resource(array: np.ndarray, type: TensorType, hint: str) -> DenseResourceAttr:
    """Store `array`'s bytes as a blob; the attribute referring to it.  The
    handle is `hint` made unique within the process.  A read-only
    contiguous array is kept as it is, not copied (a pass's freshly made
    weights, 100 MB for resnet50): its owner must not change it through
    another view."""
    return _declare(hint, type, _held(array))


def dense_resource_later(
    make: Callable[[], np.ndarray], type: TensorType, hint: str
) -> DenseResourceAttr:
    """`dense_resource` of the array `make()` returns (an array of its own,
    of type `type`), made on the background thread
    (`hetero.utils.background`): whatever reads the blob -- as bytes,
    printed -- waits for it, and gets `make`'s exception if it raised.  The
    weights a pass folds or packs are read only once the module is compiled."""
    return _declare(hint, type, later(lambda: _held(_read_only(make()))))


def dense_resource_view(view: View, type: TensorType, hint: str) -> DenseResourceAttr:
    """A `dense_resource` of the values `view()` returns: a NumPy view of
    other arrays (a weight's transpose), not copied until its bytes are
    read (`resource_view`), or `make_in_background`.  A weight that a pass
    goes on to pack is so read once, from the array it is a view of:
    ViT-B/32's transposed weights, packed, took 0.9 s of CPU in two passes
    over 340 MB, 0.2-0.7 s in one (docs/performance.md)."""
    return _declare(hint, type, view)


def resource_view(attr: DenseResourceAttr) -> np.ndarray | None:
    """The values of a `dense_resource_view` not yet made, as the view they
    are (the blob stays unmade); None for any other blob."""
    held = _table().pending.get(attr.resource_handle.data)
    return _read_only(held()) if callable(held) else None


def make_in_background(attrs: Iterable[Attribute]) -> None:
    """Start making those of `attrs` that are `dense_resource_view`s not yet
    made, on the background thread (the constants a compiled program keeps,
    while its code is generated)."""
    table = _table()
    for attr in attrs:
        if isinstance(attr, DenseResourceAttr):
            key = attr.resource_handle.data
            if callable(view := table.pending.get(key)):
                table.pending[key] = later(partial(_made, view))


def _made(view: View) -> Held:
    return _held(_read_only(np.ascontiguousarray(view())))


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)  # the blob's own: kept uncopied
    return array


def _held(array: np.ndarray) -> Held:
    data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    raw = data.data.cast("B") if not data.flags.writeable else data.tobytes()
    return raw, data.dtype.alignment


def _declare(
    hint: str, type: TensorType, held: Held | Future[Held] | View
) -> DenseResourceAttr:
    """A new blob and the one attribute that refers to it: the blob lives as
    long as the attribute (`_release`), which every op holding the constant
    shares -- clones of its module included (attributes are immutable and
    cloned by reference).  A process that imports model after model so
    keeps the weights of the modules it still has, not of every one it made
    (ResNet-18: 45 MB an import, before)."""
    key = _blobs().declare_resource(_free_handle(handle_name(hint)))
    record_blob(key)
    _table().hold(key, held)
    attr = DenseResourceAttr.from_params(key, type)
    weakref.finalize(attr, _release, key).atexit = False  # nothing to free then
    return attr


def _release(key: str) -> None:
    """Drop blob `key` from the process-wide table (its bytes, their
    making, their decoding)."""
    table = _table()
    table.pop(key, None)
    table.pending.pop(key, None)
    _DECODED.pop(key, None)


_NEXT_SUFFIX: dict[str, int] = {}
"""The next `_N` to try for each stem (`_free_handle`)."""


def _free_handle(stem: str) -> str:
    """`stem`, else `stem_N` with an N no blob of the process has had yet.
    xDSL's `declare_resource` tries `_0`, `_1`, ... from 0 at each call: a
    network's hundreds of folded weights took a quadratic 0.1 s to name
    (Inception v2).  Counting on, a released handle is not given again,
    so a stale reference to one finds no blob rather than another's."""
    table = _table()
    if stem not in table and stem not in _NEXT_SUFFIX:
        _NEXT_SUFFIX[stem] = 0
        return stem
    n = _NEXT_SUFFIX.get(stem, 0)
    while f"{stem}_{n}" in table:
        n += 1
    _NEXT_SUFFIX[stem] = n + 1
    return f"{stem}_{n}"


_SCOPES: ContextVar[tuple[list[str], ...]] = ContextVar(
    "hetero_blob_scopes", default=()
)
"""The keys made in each `BlobScope` open in this thread, innermost last."""


def record_blob(key: str) -> None:
    """Notes a key just declared (by `dense_resource` or the parser) as made
    in the `BlobScope`s open in this thread."""
    for made in _SCOPES.get():
        made.append(key)


class BlobScope:
    """A block whose blobs -- those this thread makes in it, by passes or by
    parsing -- are dropped from the process-wide table at its end, unless
    `keep` says otherwise.  `hetero.compile` folds and packs a network's
    weights into new blobs (ResNet-50: 0.2 GB), which its compiled function
    holds as arrays: kept in the table as well, every compile would keep its
    weights for the life of the process.  Other threads' blobs are theirs
    (a thread importing a model, or compiling, meanwhile)."""

    def __init__(self) -> None:
        self._made: list[str] = []
        self._kept = False

    def __enter__(self) -> Self:
        self._token = _SCOPES.set((*_SCOPES.get(), self._made))
        return self

    def keep(self) -> None:
        """The blobs made so far outlive the block (their module does)."""
        self._kept = True

    def __exit__(self, *_: object) -> None:
        _SCOPES.reset(self._token)
        if self._kept:
            return
        for key in self._made:
            _release(key)


def resource_bytes(attr: DenseResourceAttr) -> Blob:
    """The element bytes of a `dense_resource`; an error when the file did not
    provide its blob."""
    key = attr.resource_handle.data
    if (held := _table().held(key)) is not None:
        return held[0]
    blob = _blobs().lookup(key)
    if not blob:
        raise HeteroError(
            f"dense_resource<{key}> has no data: the file's "
            "{-# dialect_resources: {builtin: {...}} #-} section lacks it"
        )
    cached = _DECODED.get(key)
    if cached is not None and cached[0] is blob:
        return cached[1]
    raw = bytes.fromhex(blob[10:])  # "0x" and the 4-byte alignment
    _DECODED[key] = (blob, raw)
    return raw


def print_with_resources(module: ModuleOp) -> str:
    """`module` as text followed by the blobs of the resources it uses, as
    `hetero-opt` prints it."""
    text = StringIO()
    printer = Printer(stream=text)
    printer.print_op(module)
    printer.print_metadata([Builtin])
    text.write("\n\n")  # as xDSL's MLIR target (hetero-opt) ends a module
    return text.getvalue()


# -- weights in a side file ------------------------------------------------------

WEIGHTS = "hetero.weights"
"""Module attribute `{file = "model.weights", sha256 = "..."}`: the module's
blobs are in that file (relative to the `.mlir`'s folder), not in its text."""

_MAGIC = b"HETEROW1"
_ALIGNMENT = 64
"""Where each blob starts in a weights file (a multiple of any element's alignment)."""


def print_with_weights(module: ModuleOp, weights: str) -> tuple[str, bytes]:
    """`module` as text whose blobs are in a weights file instead (read back
    by `load_weights`), and that file's bytes: `_MAGIC`, the index's length
    (little-endian u64), the index (JSON: key → [offset, bytes, alignment]),
    then each blob, raw, at a multiple of 64 bytes.  `weights` is the file's
    path as the module names it (relative to the `.mlir`'s folder)."""
    keys = sorted(
        {a.resource_handle.data for op in module.walk() for a in _attributes(op)}
    )
    blobs = [(key, *_element_bytes(key)) for key in keys]
    index: dict[str, list[int]] = {}
    offset = 0
    for key, raw, alignment in blobs:
        index[key] = [offset, len(raw), alignment]
        offset += -(-len(raw) // _ALIGNMENT) * _ALIGNMENT
    header = _MAGIC + bytes(8) + json.dumps(index).encode()
    header += bytes(-len(header) % _ALIGNMENT)
    data = bytearray(len(header) + offset)
    data[: len(header)] = header
    data[len(_MAGIC) : len(_MAGIC) + 8] = len(header).to_bytes(8, "little")
    for key, raw, _ in blobs:
        start = len(header) + index[key][0]
        data[start : start + len(raw)] = raw
    fields = {
        "file": StringAttr(weights),
        "sha256": StringAttr(hashlib.sha256(data).hexdigest()),
    }
    module.attributes[WEIGHTS] = DictionaryAttr(fields)
    try:
        text = StringIO()
        Printer(stream=text).print_op(module)
        text.write("\n")
    finally:
        del module.attributes[WEIGHTS]
    return text.getvalue(), bytes(data)


def _attributes(op: Operation) -> list[DenseResourceAttr]:
    values = (*op.properties.values(), *op.attributes.values())
    return [a for a in values if isinstance(a, DenseResourceAttr)]


def _element_bytes(key: str) -> tuple[Blob, int]:
    """A blob's element bytes and alignment, whether held or parsed from text."""
    if (held := _table().held(key)) is not None:
        return held
    blob = _blobs().lookup(key) or ""
    if not blob:
        raise HeteroError(f"dense_resource<{key}> has no data to write")
    return bytes.fromhex(blob[10:]), int.from_bytes(bytes.fromhex(blob[2:10]), "little")


def load_weights(
    module: ModuleOp, filename: str, keys: dict[tuple[str, str], str]
) -> None:
    """Gives the blobs of a parsed `module` whose `hetero.weights` names a
    weights file (`print_with_weights`) their bytes from that file, mapped,
    not copied; `keys` maps each (dialect, key) of the text to its key in
    the process's table (a parser renames one already taken).  The attribute
    is then dropped: printed again, the module carries its blobs in its
    text, valid wherever it is written.  A missing, changed or corrupted
    file is an error at the module."""
    attr = module.attributes.get(WEIGHTS)
    if attr is None:
        return
    fields = attr.data if isinstance(attr, DictionaryAttr) else {}
    file, digest = fields.get("file"), fields.get("sha256")
    if not isinstance(file, StringAttr) or not isinstance(digest, StringAttr):
        raise HeteroError(
            f'{WEIGHTS} should be {{file = "...", sha256 = "..."}}', module
        )
    folder = "" if filename.startswith("<") else os.path.dirname(filename)  # <stdin>
    path = os.path.join(folder, file.data)
    data = _mapped(path, module)
    if hashlib.sha256(data).hexdigest() != digest.data:
        raise HeteroError(
            f"weights file '{path}' does not match its sha256: changed since written",
            module,
        )
    index = _index(data, path, module)
    table = _table()
    for (dialect, key), declared in keys.items():
        if dialect != "builtin" or table.get(declared):
            continue  # a blob given in the text itself
        entry = index.get(key)
        if entry is None:
            raise HeteroError(
                f"weights file '{path}' lacks dense_resource<{key}>", module
            )
        start, size, alignment = entry
        table.hold(declared, (data[start : start + size], alignment))
    del module.attributes[WEIGHTS]


def _mapped(path: str, module: ModuleOp) -> memoryview:
    """The bytes of the file at `path`, mapped read-only."""
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return memoryview(b"")
            return memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
    except OSError as e:
        raise HeteroError(
            f"cannot read weights file '{path}': {e.strerror or e}", module
        ) from e


def _index(
    data: memoryview, path: str, module: ModuleOp
) -> dict[str, tuple[int, int, int]]:
    """Each key's (start, bytes, alignment) in `data`; an error where the
    header is not a weights file's or an entry lies outside it."""
    bad = HeteroError(
        f"'{path}' is not a hetero weights file (corrupted header)", module
    )
    if bytes(data[: len(_MAGIC)]) != _MAGIC or len(data) < len(_MAGIC) + 8:
        raise bad
    end = int.from_bytes(data[len(_MAGIC) : len(_MAGIC) + 8], "little")
    try:
        index = json.loads(bytes(data[len(_MAGIC) + 8 : end]).rstrip(b"\0"))
        entries = {k: (end + o, n, a) for k, (o, n, a) in index.items()}
    except (ValueError, TypeError, AttributeError) as e:
        raise bad from e
    valid = (
        all(isinstance(x, int) and x >= 0 for x in e) and e[0] + e[1] <= len(data)
        for e in entries.values()
    )
    if not all(valid):
        raise bad
    return entries
