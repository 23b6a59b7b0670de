"""`hetero.compile` from several threads at once (a server compiling the
models its requests name): each compile's weights and IR stay its own."""

from __future__ import annotations

import threading

import numpy as np
import xdsl.builder
from hetero.dialects import tir
from hetero.dialects.target import TargetAttr
from test_dense_resources import WEIGHTED
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr

import hetero


def test_compiles_in_threads_keep_their_own_weights() -> None:
    """Two threads compiling networks of the same shape and other weights:
    each compiled function computes with its own."""
    x = np.random.default_rng(1).standard_normal((2, 64)).astype(np.float32)
    failures: list[str] = []

    def compile_again_and_again(scale: float) -> None:
        w = np.arange(8 * 64, dtype=np.float32).reshape(8, 64) * scale
        text = WEIGHTED.format(n=2, blob=w.tobytes().hex())
        for _ in range(4):
            try:
                np.testing.assert_allclose(
                    hetero.compile(text)(x), x @ (2 * w).T, rtol=1e-5, atol=1e-4
                )
            except Exception as error:  # noqa: BLE001 (reported below)
                failures.append(f"{scale}: {type(error).__name__}: {error}")

    threads = [
        threading.Thread(target=compile_again_and_again, args=(scale,))
        for scale in (1 / 512, -1 / 64)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_tir_ops_are_built_without_an_implicit_builder(monkeypatch) -> None:
    """xDSL's `ImplicitBuilder` (behind its `ensure_terminator`) swaps
    `Operation.__post_init__` process-wide: compiles in two threads, each
    building loops, inserted ops twice ("already attached to a block")."""

    def refuse(*args: object) -> None:
        raise AssertionError("an ImplicitBuilder was used")

    monkeypatch.setattr(xdsl.builder, "ImplicitBuilder", refuse)
    bound = arith.ConstantOp(IntegerAttr(4, IndexType()))
    loop = tir.ForOp(bound, bound, bound)
    function = tir.PrimFuncOp("f", ([], []))
    region = tir.TargetRegionOp(TargetAttr("llvm"))
    for op, terminator in ((loop, tir.YieldOp), (function, tir.ReturnOp), (region, tir.YieldOp)):
        assert isinstance(op.regions[0].block.last_op, terminator)
