"""fp32 BERT-base self-attention, hetero vs onnxruntime.

    python -m bench attention [--seq N ...]      # default: 128 256

The block as torch.onnx exports a BERT layer's self-attention, batch 1, 12
heads of 64: Q, K and V projections (`MatMul` by a constant and `Add`),
per-head `Reshape` and `Transpose` (K transposed again for `Q·Kᵀ`), the
scores divided by √64, a padding mask added, `Softmax`, the product with V,
the heads merged back.  hetero compiles it with the `llvm` target's
`num_threads` (and the benchmarks' `mattr`); onnxruntime runs it with as
many intra-op threads, in interleaved rounds in this process (medians), at
one thread and at every CPU of the process, after checking that their
outputs agree.  The table also gives hetero's kernel calls.

The last line is `attention: X.XX× onnxruntime (...)`, X = onnxruntime
time / hetero time, the worst over lengths and thread counts.
"""

from __future__ import annotations

import argparse
import os
from functools import partial
from typing import Any

import numpy as np

import hetero
from bench.common import interleaved, onnx_model

ROUNDS = 9
HEADS, HEAD = 12, 64


def model(seq: int) -> Any:
    """The block for `seq` tokens: inputs `h` `[1, seq, 768]` and `mask`
    `[1, 1, 1, seq]` (0 or -10000), output `[1, seq, 768]`."""
    from onnx import TensorProto, helper, numpy_helper

    d = HEADS * HEAD
    rng = np.random.default_rng(0)
    constants = {
        "heads": np.array([1, seq, HEADS, HEAD], np.int64),
        "merged": np.array([1, seq, d], np.int64),
        "root": np.float32(np.sqrt(HEAD)),
    }
    nodes = []
    for name in "qkv":
        constants[f"{name}_w"] = (rng.standard_normal((d, d)) * 0.05).astype(np.float32)
        constants[f"{name}_b"] = (rng.standard_normal(d) * 0.1).astype(np.float32)
        nodes += [
            helper.make_node("MatMul", ["h", f"{name}_w"], [f"{name}_m"]),
            helper.make_node("Add", [f"{name}_m", f"{name}_b"], [name]),
            helper.make_node("Reshape", [name, "heads"], [f"{name}_r"]),
            helper.make_node(
                "Transpose", [f"{name}_r"], [f"{name}h"], perm=[0, 2, 1, 3]
            ),
        ]
    nodes += [
        helper.make_node("Transpose", ["kh"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["qh", "kt"], ["scores"]),
        helper.make_node("Div", ["scores", "root"], ["scaled"]),
        helper.make_node("Add", ["scaled", "mask"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "vh"], ["context"]),
        helper.make_node("Transpose", ["context"], ["ct"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ct", "merged"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "attention",
        [
            helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, seq, d]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, 1, seq]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in constants.items()],
    )
    return onnx_model(graph, 17)


def inputs(seq: int) -> tuple[np.ndarray, np.ndarray]:
    """Hidden states and a mask hiding the last eighth of the tokens."""
    mask = np.zeros((1, 1, 1, seq), np.float32)
    mask[..., seq - seq // 8 :] = -10000.0
    h = np.random.default_rng(1).standard_normal((1, seq, HEADS * HEAD))
    return h.astype(np.float32), mask


def arguments(argv: list[str]) -> list[int]:
    """The sequence lengths `python -m bench attention` asks for."""
    parser = argparse.ArgumentParser(prog="python -m bench attention")
    parser.add_argument(
        "--seq",
        type=int,
        nargs="+",
        default=[128, 256],
        help="tokens (default: 128 256)",
    )
    lengths = parser.parse_args(argv).seq
    if any(n < 1 for n in lengths):
        parser.error("--seq: lengths are positive")
    return lengths


def main(argv: list[str]) -> None:
    from bench.onnx import _onnxruntime, with_threads
    from hetero.frontends.onnx import from_onnx

    lengths = arguments(argv)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    counts = sorted({1, cpus})
    print(
        f"{'seq':>5} {'threads':>7} {'kernels':>7} {'hetero ms':>10} {'ort ms':>9} {'ort/hetero':>10}"
    )
    ratios = []
    for seq in lengths:
        proto = model(seq)
        module = from_onnx(proto)
        x = inputs(seq)
        for threads in counts:
            compiled = hetero.compile(with_threads(module, threads))
            ort = _onnxruntime(proto, threads)
            expected = ort(*x)
            error = np.abs(compiled(*x) - expected).max() / np.abs(expected).max()
            assert error < 1e-5, (
                f"seq {seq}: hetero differs from onnxruntime ({error:.1e})"
            )
            kernels = len(compiled.profile(*x).calls)
            ours, theirs = interleaved(
                [partial(compiled, *x), partial(ort, *x)], ROUNDS
            )
            ratios.append(theirs / ours)
            print(
                f"{seq:>5} {threads:>7} {kernels:>7} {1e3 * ours:>10.3f} {1e3 * theirs:>9.3f} "
                f"{theirs / ours:>10.2f}",
                flush=True,
            )
    print(
        f"attention: {min(ratios):.2f}× onnxruntime (worst of {len(lengths)} lengths at "
        f"{'/'.join(map(str, counts))} threads; median of {ROUNDS} interleaved rounds)"
    )
