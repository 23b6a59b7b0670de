"""Third-party extensions found through Python entry points.

The target-kind, BYOC pattern-table and external-codegen registries are each
extended by an entry-point group (`hetero.target_kinds`, `hetero.patterns`,
`hetero.codegens`; README "Extending hetero").  They all load their group
here, the same way: each entry point in turn is loaded and handed to the
registry's `register(name, loaded)`.  Whatever goes wrong — the import, an
object of the wrong kind, a registration the registry refuses — comes back as
one `error` naming the entry point, so that a broken plugin is a clear message
and never a traceback from deep inside importlib.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def load_entry_points(
    group: str,
    register: Callable[[str, Any], None],
    error: Callable[[str], Exception] = ValueError,
) -> None:
    """`register(entry point name, loaded object)` for every entry point of
    `group`; a failure raises `error("entry point 'NAME = VALUE': why")`."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=group):
        try:
            register(ep.name, ep.load())
        except Exception as e:
            raise error(f"entry point '{ep.name} = {ep.value}': {e}") from e
