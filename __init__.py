"""hetero: heterogeneous (multi-target) tensor compilation on xDSL.

The `target` attribute of each function is the single source of truth for
where it runs; see `docs/` and the README.
"""

__version__ = "0.1.0"
