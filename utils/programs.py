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


def encoder(seq: int | str, heads: int, head: int, ffn: int) -> str:
    """A BERT encoder block on `[1, seq, heads * head]` (`seq` may be `"?"`):
    Q, K, V projections (dense with a row per token, bias), per-head
    reshape and transpose, `softmax(Q·Kᵀ / √head)·V`, the output projection
    and residual add, layer_norm, a GELU (erf) feed-forward of width `ffn`,
    residual add and layer_norm.  Weights are inputs, in the order
    `encoder_inputs` draws them."""
    d = heads * head
    x, rows = tensor(1, seq, d), tensor(seq, d)
    hidden, per_head = tensor(seq, ffn), tensor(1, seq, heads, head)
    qh, kt, scores = (
        tensor(1, heads, seq, head),
        tensor(1, heads, head, seq),
        tensor(1, heads, seq, seq),
    )
    vec, square = tensor(d), tensor(d, d)
    params = [f"%x: {x}"] + [
        f"%{name}: {t}"
        for name, t in (
            *((f"w{p}", square) for p in "qkvo"),
            *((f"b{p}", vec) for p in "qkvo"),
            ("g1", vec),
            ("e1", vec),
            ("w1", tensor(ffn, d)),
            ("b1", tensor(ffn)),
            ("w2", tensor(d, ffn)),
            ("b2", vec),
            ("g2", vec),
            ("e2", vec),
        )
    ]
    scalar = "tensor<f32>"

    def dense(out: str, value: str, p: str, shapes: tuple[str, str, str]) -> list[str]:
        t_in, t_w, t_out = shapes
        bias = tensor(ffn if t_out == hidden else d)
        return [
            f"%{out}d = relay.nn.dense {value}, %w{p} : ({t_in}, {t_w}) -> {t_out}",
            f"%{out} = relay.nn.bias_add %{out}d, %b{p} : ({t_out}, {bias}) -> {t_out}",
        ]

    def split(name: str, value: str, axes: str, shape: str) -> list[str]:
        return [
            f"%{name}r = relay.reshape {value} {{newshape = array<i64: 1, -1, {heads}, {head}>}} : ({rows}) -> {per_head}",
            f"%{name} = relay.transpose %{name}r {{axes = array<i64: {axes}>}} : ({per_head}) -> {shape}",
        ]

    lines = [
        f"%scale = relay.constant dense<{1 / head**0.5}> : {scalar}",
        f"%half = relay.constant dense<0.5> : {scalar}",
        f"%one = relay.constant dense<1.0> : {scalar}",
        f"%root = relay.constant dense<{0.5**0.5}> : {scalar}",
        f"%x2 = relay.reshape %x {{newshape = array<i64: -1, {d}>}} : ({x}) -> {rows}",
        *dense("q", "%x2", "q", (rows, square, rows)),
        *dense("k", "%x2", "k", (rows, square, rows)),
        *dense("v", "%x2", "v", (rows, square, rows)),
        *split("qh", "%q", "0, 2, 1, 3", qh),
        *split("kt", "%k", "0, 2, 3, 1", kt),
        *split("vh", "%v", "0, 2, 1, 3", qh),
        f"%s = relay.matmul %qh, %kt : ({qh}, {kt}) -> {scores}",
        f"%ss = relay.multiply %s, %scale : ({scores}, {scalar}) -> {scores}",
        f"%p = relay.nn.softmax %ss : {scores}",
        f"%c = relay.matmul %p, %vh : ({scores}, {qh}) -> {qh}",
        f"%ct = relay.transpose %c {{axes = array<i64: 0, 2, 1, 3>}} : ({qh}) -> {per_head}",
        f"%cr = relay.reshape %ct {{newshape = array<i64: -1, {d}>}} : ({per_head}) -> {rows}",
        *dense("o", "%cr", "o", (rows, square, rows)),
        f"%r1 = relay.add %o, %x2 : ({rows}, {rows}) -> {rows}",
        f"%n1 = relay.nn.layer_norm %r1, %g1, %e1 {{axis = -1 : i64}} : ({rows}, {vec}, {vec}) -> {rows}",
        *dense("h", "%n1", "1", (rows, tensor(ffn, d), hidden)),
        f"%hs = relay.multiply %h, %root : ({hidden}, {scalar}) -> {hidden}",
        f"%he = relay.erf %hs : {hidden}",
        f"%h1 = relay.add %he, %one : ({hidden}, {scalar}) -> {hidden}",
        f"%hh = relay.multiply %h, %h1 : ({hidden}, {hidden}) -> {hidden}",
        f"%g = relay.multiply %hh, %half : ({hidden}, {scalar}) -> {hidden}",
        *dense("f", "%g", "2", (hidden, tensor(d, ffn), rows)),
        f"%r2 = relay.add %f, %n1 : ({rows}, {rows}) -> {rows}",
        f"%n2 = relay.nn.layer_norm %r2, %g2, %e2 {{axis = -1 : i64}} : ({rows}, {vec}, {vec}) -> {rows}",
        f"%y = relay.reshape %n2 {{newshape = array<i64: 1, -1, {d}>}} : ({rows}) -> {x}",
    ]
    body = "\n    ".join(lines)
    return (
        "builtin.module {\n"
        f"  relay.func @main({', '.join(params)}) -> {x} {{\n"
        f"    {body}\n    relay.return %y : {x}\n  }}\n}}\n"
    )
