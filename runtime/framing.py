"""Files of parts: a magic, a format version and the parts' sizes, then the parts.

The compile cache's entries (`hetero.lowering.compile_cache`) and `.hetero`
files (`hetero.runtime.artifact`) are such files; nothing in them is a
pickle, and a reader checks the magic, the version and that the sizes add
up before it reads any part.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from itertools import accumulate, pairwise


def header(count: int) -> struct.Struct:
    """The header of a file of `count` parts: magic (8 bytes), version
    (32 bits), then each part's size (64 bits), little-endian."""
    return struct.Struct(f"<8sI{count}Q")


def pack(magic: bytes, version: int, parts: Sequence[bytes]) -> bytes:
    """The file of `parts`."""
    return b"".join((header(len(parts)).pack(magic, version, *map(len, parts)), *parts))


def unpack(magic: bytes, version: int, count: int, data: bytes) -> list[bytes]:
    """The `count` parts of `data`; ValueError if it is not such a file of
    this `magic` and `version` (truncated, foreign, another version)."""
    layout = header(count)
    if len(data) < layout.size:
        raise ValueError("not a file of this format (too short)")
    found, found_version, *sizes = layout.unpack_from(data)
    if found != magic:
        raise ValueError("not a file of this format")
    if found_version != version:
        raise ValueError(
            f"format version {found_version}, where this hetero reads {version}"
        )
    if layout.size + sum(sizes) != len(data):
        raise ValueError("truncated or damaged: its parts do not add up to its size")
    offsets = accumulate(sizes, initial=layout.size)
    return [data[a:b] for a, b in pairwise(offsets)]
