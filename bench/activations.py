"""fp32 activations on large tensors, hetero vs onnxruntime.

    python -m bench activations [CASE ...]      # default: every case of CASES

Each case is a small ONNX graph as torch.onnx exports it (GELU through
`Erf`, SiLU as `x * Sigmoid(x)`, softmax over the last axis of attention
scores, ...) on a tensor of a transformer's size.  Their time is that of
`exp`, `erf`, `tanh` and `log`: f32 polynomials inline in hetero's
vectorized loops (`approximate-math`, docs/lowering.md).  hetero imports
and compiles the graph with the `llvm` target's `num_threads` (and the
benchmarks' `mattr`); onnxruntime runs it with as many intra-op threads.
The two run in interleaved rounds in this process (medians), at one thread
and at every CPU of the process, after checking that their outputs agree;
one thread is timed in CPU time (`time.process_time`), which other work on
a shared machine does not add to.

The last line is `activations: X.XX× onnxruntime (...)`, X = onnxruntime
time / hetero time, the worst over cases and thread counts.
"""

from __future__ import annotations

import math
import time
from functools import partial

import numpy as np

import hetero
from bench.common import cases_argument, interleaved, onnx_model, thread_counts

ROUNDS = 15

ROWS = (1, 512, 3072)
"""A BERT-base MLP's hidden activations for 512 tokens."""
SCORES = (1, 12, 256, 256)
"""Attention scores: 12 heads, 256 tokens."""

Node = tuple[str, list[str], dict[str, object]]
"""An ONNX node of a case: op type, inputs (names or float constants), attributes."""

CASES: dict[str, tuple[tuple[int, ...], list[Node]]] = {
    "exp": (ROWS, [("Exp", ["x"], {})]),
    "log": (ROWS, [("Abs", ["x"], {}), ("Log", ["0"], {})]),
    "tanh": (ROWS, [("Tanh", ["x"], {})]),
    "sigmoid": (ROWS, [("Sigmoid", ["x"], {})]),
    "silu": (ROWS, [("Sigmoid", ["x"], {}), ("Mul", ["x", "0"], {})]),
    "gelu": (
        ROWS,
        [
            ("Div", ["x", math.sqrt(2.0)], {}),
            ("Erf", ["0"], {}),
            ("Add", ["1", 1.0], {}),
            ("Mul", ["x", "2"], {}),
            ("Mul", ["3", 0.5], {}),
        ],
    ),
    "gelu-tanh": (
        ROWS,
        [
            ("Mul", ["x", "x"], {}),
            ("Mul", ["0", "x"], {}),
            ("Mul", ["1", 0.044715], {}),
            ("Add", ["x", "2"], {}),
            ("Mul", ["3", math.sqrt(2.0 / math.pi)], {}),
            ("Tanh", ["4"], {}),
            ("Add", ["5", 1.0], {}),
            ("Mul", ["x", "6"], {}),
            ("Mul", ["7", 0.5], {}),
        ],
    ),
    "softmax": (SCORES, [("Softmax", ["x"], {"axis": -1})]),
}
"""Case → input shape and nodes; node i's output is named `str(i)`, the
last one's is the graph's output."""


def model(shape: tuple[int, ...], nodes: list[Node]):  # type: ignore[no-untyped-def]
    """The case as an ONNX model (opset 13), float inputs as constants."""
    from onnx import TensorProto, helper, numpy_helper

    constants = []
    made = []
    for i, (op, inputs, attributes) in enumerate(nodes):
        names = []
        for j, value in enumerate(inputs):
            if isinstance(value, float):
                name = f"c{i}_{j}"
                constants.append(numpy_helper.from_array(np.float32(value), name))
                value = name
            names.append(value)
        made.append(helper.make_node(op, names, [str(i)], **attributes))
    graph = helper.make_graph(
        made,
        "activation",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info(str(len(nodes) - 1), TensorProto.FLOAT, None)],
        constants,
    )
    return onnx_model(graph)


def main(argv: list[str]) -> None:
    from bench.onnx import _onnxruntime, with_threads
    from hetero.frontends.onnx import from_onnx

    names = cases_argument("activations", argv, CASES)
    counts = thread_counts()
    print(
        f"{'case':>10} {'threads':>7} {'hetero ms':>10} {'ort ms':>9} "
        f"{'ort/hetero':>10} {'hetero ns/elem':>14}"
    )
    ratios = []
    for name in names:
        shape, nodes = CASES[name]
        proto = model(shape, nodes)
        module = from_onnx(proto)
        x = np.random.default_rng(1).standard_normal(shape).astype(np.float32) * 3
        for threads in counts:
            compiled = hetero.compile(with_threads(module, threads))
            ort = _onnxruntime(proto, threads)
            expected = ort(x)
            error = np.abs(compiled(x) - expected).max() / np.abs(expected).max()
            assert error < 1e-5, (
                f"{name}: hetero differs from onnxruntime ({error:.1e})"
            )
            clock = time.process_time if threads == 1 else time.perf_counter
            ours, theirs = interleaved(
                [partial(compiled, x), partial(ort, x)], ROUNDS, clock=clock
            )
            ratios.append(theirs / ours)
            print(
                f"{name:>10} {threads:>7} {1e3 * ours:>10.3f} {1e3 * theirs:>9.3f} "
                f"{theirs / ours:>10.2f} {1e9 * ours / x.size:>14.3f}",
                flush=True,
            )
    print(
        f"activations: {min(ratios):.2f}× onnxruntime (worst of {len(names)} cases at "
        f"{'/'.join(map(str, counts))} threads; median of {ROUNDS} interleaved rounds)"
    )
