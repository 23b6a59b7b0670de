"""Relay programs as text, for the tests and the benchmarks that compile the same model."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise


def tensor(*shape: int, dtype: str = "f32") -> str:
    """The type `tensor<AxBx…xdtype>`."""
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def mlp(batch: int, widths: Sequence[int], config: str | None = None) -> str:
    """dense + bias_add + relu per layer, then softmax; weights are inputs.
    `config`, a `#target.config`, is the module's `target.config` attribute."""
    params = [f"%x: {tensor(batch, widths[0])}"]
    lines, value = [], "%x"
    for i, (n_in, n_out) in enumerate(pairwise(widths)):
        params += [f"%w{i}: {tensor(n_out, n_in)}", f"%b{i}: {tensor(n_out)}"]
        out = tensor(batch, n_out)
        lines += [
            f"%d{i} = relay.nn.dense {value}, %w{i} : ({tensor(batch, n_in)}, {tensor(n_out, n_in)}) -> {out}",
            f"%a{i} = relay.nn.bias_add %d{i}, %b{i} : ({out}, {tensor(n_out)}) -> {out}",
            f"%r{i} = relay.relu %a{i} : {out}",
        ]
        value = f"%r{i}"
    out = tensor(batch, widths[-1])
    lines.append(f"%s = relay.nn.softmax {value} : {out}")
    body = "\n    ".join(lines)
    attributes = f"attributes {{target.config = {config}}} " if config else ""
    return (
        f"builtin.module {attributes}{{\n"
        f"  relay.func @main({', '.join(params)}) -> {out} {{\n"
        f"    {body}\n    relay.return %s : {out}\n  }}\n}}\n"
    )
