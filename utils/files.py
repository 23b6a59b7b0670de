"""Writing tool outputs so that a failure never leaves a half-written file."""

from __future__ import annotations

import os
import sys
import tempfile


def write_output(path: str | None, data: str | bytes) -> None:
    """`data` to `path` atomically (a temporary file, then a rename), or to
    stdout where `path` is None or `-`."""
    if path is None or path == "-":
        if isinstance(data, bytes):
            sys.stdout.buffer.write(data)
        else:
            sys.stdout.write(data)
        return
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".hetero-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        # mkstemp makes the file owner-only; give it the mode `open` would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
