"""hetero's `xdsl.universe` entry point: its dialects and passes, for any xDSL tool.

Factories import lazily so that `xdsl-opt` start-up stays cheap.
"""

from collections.abc import Callable
from importlib import import_module

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe

DIALECTS = {
    "target": ("hetero.dialects.target", "Target"),
    "relay": ("hetero.dialects.relay", "Relay"),
    "tir": ("hetero.dialects.tir", "TIR"),
}
"""Dialect name → (module, attribute)."""

PASSES: dict[str, tuple[str, str]] = {}
"""Pass name → (module, class); one module per pass under `hetero.transforms`."""


def _lazy(module: str, attr: str) -> Callable[[], object]:
    return lambda: getattr(import_module(module), attr)


HETERO_UNIVERSE = Universe(
    all_dialects={n: _lazy(*d) for n, d in DIALECTS.items()},  # type: ignore[misc]
    all_passes={n: _lazy(*p) for n, p in PASSES.items()},  # type: ignore[misc]
)

_ = (Dialect, ModulePass)
