"""A third-party pattern table with a typo, found through the `hetero.patterns`
entry point group by merge-composite-invalid.mlir (PYTHONPATH points here)."""

from hetero.targets.patterns import CompositePattern, is_op, wildcard

PATTERNS = [CompositePattern("dense_typo", is_op("nn.dence", wildcard(), wildcard()))]
