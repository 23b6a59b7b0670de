"""hetero: heterogeneous (multi-target) tensor compilation on xDSL.

The `target` attribute of each function is the single source of truth for
where it runs; see `docs/` and the README.  `hetero.compile` (from
`hetero.driver`) is loaded on first use, so tools that only parse and
transform IR do not pay for the code generators at start-up; `hetero.load`
runs a compiled `.hetero` file without xDSL (docs/deployment.md).
"""

import importlib
from typing import Any

from hetero import collage_measure  # noqa: F401  (registers Collage's cost estimator)

__version__ = "0.1.0"

_LAZY = {
    "compile": "hetero.driver",
    "CompiledFunction": "hetero.runtime.compiled",
    "CompiledFunctionError": "hetero.runtime.compiled",
    "load": "hetero.runtime.artifact",
}
"""Each name's module: `load` and the function it returns import no xDSL."""

__all__ = [
    "CompiledFunction",
    "CompiledFunctionError",
    "__version__",
    "compile",
    "load",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'hetero' has no attribute '{name}'")
