"""Small relay programs for the external-codegen tests (`test_blas`, `test_dnnl`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hetero.context import parse_module
from hetero.dialects import relay


def program(body: str, inputs: Sequence[str], result: str) -> str:
    """`@main` of parameters `%a, %b, ...` of the `inputs` types, returning `%r`."""
    params = ", ".join(f"%{chr(ord('a') + i)}: {t}" for i, t in enumerate(inputs))
    return (
        f"builtin.module {{\n  relay.func @main({params}) -> {result} {{\n"
        f"    {body}\n    relay.return %r : {result}\n  }}\n}}\n"
    )


def random_inputs(text: str, seed: int = 0) -> list[np.ndarray]:
    """Standard normal inputs of `@main` (f64 where declared, else f32)."""
    main = next(op for op in parse_module(text).ops if isinstance(op, relay.FuncOp))
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal(a.type.get_shape()).astype(  # type: ignore[attr-defined]
            np.float64 if "f64" in str(a.type) else np.float32
        )
        for a in main.args
    ]
