"""hetero: heterogeneous (multi-target) tensor compilation on xDSL.

The `target` attribute of each function is the single source of truth for
where it runs; see `docs/` and the README.  `hetero.compile` (from
`hetero.driver`) is loaded on first use, so tools that only parse and
transform IR do not pay for the code generators at start-up.
"""

from typing import Any

__version__ = "0.1.0"

_LAZY = {"compile", "CompiledFunction", "CompiledFunctionError"}

__all__ = ["__version__", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from hetero import driver

        return getattr(driver, name)
    raise AttributeError(f"module 'hetero' has no attribute '{name}'")
