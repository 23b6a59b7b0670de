"""A BERT-like encoder with a dynamic sequence length, compiled once against
compiled per length.

    python -m bench dynamic [--lengths 1 7 77 128] [--layers 2]

The model (`encoder`) is built with the relay Python builders: token and
position embeddings gathered (`take`) and added, layer norm, then per layer
the Q, K and V projections (`dense` over the flattened `[S, 768]` rows, bias
added), per-head reshapes and transposes, `Q·Kᵀ` and `P·V` as batched
`matmul`s with a softmax between, the output projection, residual adds and
layer norms, and a GELU feed-forward block (`erf`).  Its inputs are the
token ids and the position ids, `[1, ?]` each (int64), its output
`[1, ?, 768]`.

`hetero.compile(..., dynamic="once")` compiles it once for every length;
`dynamic="specialize"` compiles it again for each new length.  Both run in
interleaved rounds (medians, one thread and the benchmarks' `mattr`) after
checking their outputs agree.  The table gives the time per call at each
length and the compile time of each build.  The last line is
`dynamic: X.XX× specialized (...)`, X = specialized time / compile-once
time, the worst over lengths (below 1: the compile-once build is slower).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from functools import partial

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType, f32, i64
from xdsl.ir import Block, Region, SSAValue

from bench.common import interleaved

VOCAB, POSITIONS = 1000, 512
HEADS, HEAD = 12, 64
HIDDEN, FFN = HEADS * HEAD, 4 * HEADS * HEAD
ROUNDS = 9


def encoder(layers: int = 1, seed: int = 0) -> ModuleOp:
    """The encoder's relay module (`@main(ids, positions)`), random weights."""
    from hetero.dialects import relay
    from hetero.utils.dense_resources import dense_resource

    rng = np.random.default_rng(seed)
    block = Block(arg_types=[TensorType(i64, [1, relay.DYNAMIC])] * 2)
    ops: list = []

    def emit(op: relay.TensorOp | relay.ConstantOp) -> SSAValue:
        ops.append(op)
        return op.results[0]

    def weight(*shape: int, scale: float = 0.05) -> SSAValue:
        array = (rng.standard_normal(shape) * scale).astype(np.float32)
        type = TensorType(f32, shape)
        return emit(relay.ConstantOp(dense_resource(array, type, "w")))

    def norm(x: SSAValue) -> SSAValue:
        gamma = weight(HIDDEN, scale=0.1)
        beta = weight(HIDDEN, scale=0.1)
        return emit(relay.LayerNormOp(x, gamma, beta, axis=-1, epsilon=1e-12))

    def dense(x: SSAValue, units: int, inputs: int = HIDDEN) -> SSAValue:
        y = emit(relay.DenseOp(x, weight(units, inputs), units=units))
        return emit(relay.AddOp(y, weight(units, scale=0.1)))

    def heads(x: SSAValue, axes: list[int]) -> SSAValue:
        r = emit(relay.ReshapeOp(x, newshape=[1, -1, HEADS, HEAD]))
        return emit(relay.TransposeOp(r, axes=axes))

    ids, positions = block.args
    words = emit(relay.TakeOp(weight(VOCAB, HIDDEN), ids, axis=0))
    where = emit(relay.TakeOp(weight(POSITIONS, HIDDEN), positions, axis=0))
    hidden = norm(emit(relay.AddOp(words, where)))
    rows = emit(relay.ReshapeOp(hidden, newshape=[-1, HIDDEN]))
    for _ in range(layers):
        q = heads(dense(rows, HIDDEN), [0, 2, 1, 3])
        k = heads(dense(rows, HIDDEN), [0, 2, 3, 1])
        v = heads(dense(rows, HIDDEN), [0, 2, 1, 3])
        scores = emit(relay.MatmulOp(q, k))
        scaled = emit(relay.MultiplyOp(scores, _scalar(emit, 1 / np.sqrt(HEAD))))
        p = emit(relay.SoftmaxOp(scaled, axis=-1))
        context = emit(relay.TransposeOp(emit(relay.MatmulOp(p, v)), axes=[0, 2, 1, 3]))
        merged = emit(relay.ReshapeOp(context, newshape=[-1, HIDDEN]))
        attended = norm(emit(relay.AddOp(dense(merged, HIDDEN), rows)))
        up = dense(attended, FFN)
        erf = emit(relay.ErfOp(emit(relay.MultiplyOp(up, _scalar(emit, 2**-0.5)))))
        gelu = emit(
            relay.MultiplyOp(
                emit(relay.MultiplyOp(up, _scalar(emit, 0.5))),
                emit(relay.AddOp(erf, _scalar(emit, 1.0))),
            )
        )
        rows = norm(emit(relay.AddOp(dense(gelu, HIDDEN, FFN), attended)))
    out = emit(relay.ReshapeOp(rows, newshape=[1, -1, HIDDEN]))
    result = out.type
    for op in ops:
        block.add_op(op)
    block.add_op(relay.ReturnOp(out))
    main = relay.FuncOp("main", [a.type for a in block.args], result, Region(block))
    return ModuleOp([main])


def _scalar(emit: Callable, value: float) -> SSAValue:
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

    from hetero.dialects import relay

    attr = DenseIntOrFPElementsAttr.from_list(TensorType(f32, []), [float(value)])
    return emit(relay.ConstantOp(attr))


def inputs(length: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Token ids and positions `0 .. length - 1`, `[1, length]` each."""
    ids = np.random.default_rng(seed).integers(0, VOCAB, (1, length))
    return ids.astype(np.int64), np.arange(length, dtype=np.int64)[None]


def main(argv: list[str] | None = None) -> None:
    import hetero
    from bench.onnx import with_threads

    parser = argparse.ArgumentParser(prog="python -m bench dynamic")
    parser.add_argument("--lengths", type=int, nargs="+", default=[1, 7, 77, 128])
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args(argv)
    module = with_threads(encoder(args.layers), 1)
    start = time.perf_counter()
    once = hetero.compile(module, dynamic="once")
    once_compile = time.perf_counter() - start
    special = hetero.compile(module, dynamic="specialize")
    print(f"compile once: {once_compile:.2f} s")
    print(
        f"{'length':>6} {'once ms':>9} {'specialized ms':>15} {'ratio':>6} {'compile s':>10}"
    )
    ratios, compiles = [], []
    for length in args.lengths:
        x = inputs(length)
        start = time.perf_counter()
        expected = special(*x)  # its compile for this length
        compiles.append(time.perf_counter() - start)
        np.testing.assert_allclose(once(*x), expected, rtol=2e-3, atol=2e-3)
        t_once, t_special = interleaved(
            [partial(once, *x), partial(special, *x)], ROUNDS, clock=time.process_time
        )
        ratios.append(t_special / t_once)
        print(
            f"{length:>6} {t_once * 1e3:>9.3f} {t_special * 1e3:>15.3f} "
            f"{ratios[-1]:>6.2f} {compiles[-1]:>10.2f}"
        )
    print(
        f"dynamic: {min(ratios):.2f}× specialized (worst over lengths "
        f"{', '.join(map(str, args.lengths))}; {args.layers} layers, one thread; "
        f"compiled once in {once_compile:.1f} s, specialized {len(compiles)} times "
        f"in {sum(compiles):.1f} s)"
    )


if __name__ == "__main__":
    main()
