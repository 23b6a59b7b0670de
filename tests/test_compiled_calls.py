"""Calls of compiled functions: by name, by dict, DLPack inputs, `out=` arrays
(`hetero.runtime.compiled`, docs/deployment.md)."""

from __future__ import annotations

import numpy as np
import pytest

import hetero
from hetero import CompiledFunctionError

ADD = """
relay.func @main(%data: tensor<2x3xf32>, %w: tensor<2x3xf32>) -> tuple<tensor<2x3xf32>, tensor<2x3xf32>> {
  %0 = relay.add %data, %w : tensor<2x3xf32>
  %1 = relay.multiply %data, %w : tensor<2x3xf32>
  %2 = relay.tuple(%0, %1) : tuple<tensor<2x3xf32>, tensor<2x3xf32>>
  relay.return %2 : tuple<tensor<2x3xf32>, tensor<2x3xf32>>
}
"""

DYNAMIC = """
relay.func @main(%data: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = relay.exp %data : tensor<?x3xf32>
  relay.return %0 : tensor<?x3xf32>
}
"""

X = np.arange(6, dtype=np.float32).reshape(2, 3)
W = np.full((2, 3), 2.0, np.float32)


@pytest.fixture(scope="module")
def add() -> hetero.CompiledFunction:
    return hetero.compile(ADD)


class Tensor:
    """Anything with `__dlpack__` (a torch tensor, a JAX array)."""

    def __init__(self, array: np.ndarray):
        self.array = array

    def __dlpack__(self, **kwargs: object) -> object:
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.array.__dlpack_device__()


def test_by_name_and_dict(add) -> None:
    expected = (X + W, X * W)
    for result in (add(X, W), add(data=X, w=W), add({"w": W, "data": X}), add(X, w=W)):
        np.testing.assert_array_equal(result[0], expected[0])
        np.testing.assert_array_equal(result[1], expected[1])


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((X,), {"weight": W}, r"no input named 'weight' \(its inputs: 'data', 'w'\)"),
        ((X,), {"data": W}, "input 'data' is given twice"),
        ((), {"data": X}, r"missing input #1 \(%w\)"),
        ((X,), {}, r"takes 2 input\(s\), 1 given"),
        ((X, W, X), {}, r"takes 2 input\(s\), 3 given"),
        (({"data": X, "w": W},), {"w": W}, "as one dict or as keywords, not both"),
        (
            (X, [1.0]),
            {},
            "input #1 \\(%w\\) must be a NumPy array \\(or have __dlpack__\\)",
        ),
    ],
)
def test_bad_calls(add, args, kwargs, message) -> None:
    with pytest.raises(CompiledFunctionError, match=message):
        add(*args, **kwargs)


def test_dlpack_inputs(add) -> None:
    total, _ = add(Tensor(X), Tensor(W))
    np.testing.assert_array_equal(total, X + W)
    strided = np.arange(12, dtype=np.float32).reshape(2, 6)[:, ::2]
    np.testing.assert_array_equal(add(Tensor(strided), W)[1], strided * W)
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(
        add(data=torch.from_numpy(X), w=torch.from_numpy(W))[0], X + W
    )


def test_dlpack_it_cannot_read(add) -> None:
    class OnGpu(Tensor):
        def __dlpack__(self, **kwargs: object) -> object:
            raise BufferError("the tensor is on cuda:0")

    with pytest.raises(
        CompiledFunctionError, match="input #0 .*cannot read this OnGpu.*cuda:0"
    ):
        add(OnGpu(X), W)


def test_out(add) -> None:
    total, product = np.empty_like(X), np.empty_like(X)
    result = add(X, W, out=(total, product))
    assert result[0] is total and result[1] is product
    np.testing.assert_array_equal(total, X + W)
    np.testing.assert_array_equal(product, X * W)


@pytest.mark.parametrize(
    ("out", "message"),
    [
        (np.empty_like(X), r"has 2 output\(s\), out gives 1"),
        (
            (np.empty((3, 2), np.float32), np.empty_like(X)),
            r"must have shape \(2, 3\) and dtype float32",
        ),
        (
            (np.empty_like(X, dtype=np.float64), np.empty_like(X)),
            "got shape .* and dtype float64",
        ),
        ((np.empty((3, 2), np.float32).T, np.empty_like(X)), "C-contiguous, writeable"),
        (
            (np.broadcast_to(np.float32(0), (2, 3)), np.empty_like(X)),
            "C-contiguous, writeable",
        ),
        (([0.0] * 6, np.empty_like(X)), "out for output #0 must be a NumPy array"),
    ],
)
def test_bad_out(add, out, message) -> None:
    with pytest.raises(CompiledFunctionError, match=message):
        add(X, W, out=out)


def test_dynamic_shapes_by_name_and_out() -> None:
    f = hetero.compile(DYNAMIC)
    out = np.empty((4, 3), np.float32)
    data = np.linspace(0, 1, 12, dtype=np.float32).reshape(4, 3)
    assert f({"data": Tensor(data)}, out=out) is out
    np.testing.assert_allclose(out, np.exp(data), rtol=1e-6)
    with pytest.raises(CompiledFunctionError, match="no input named 'x'"):
        f(x=data)


def test_out_that_shares_memory_with_an_input_or_another_out_is_refused(add) -> None:
    """A kernel reads its inputs while it writes its outputs, so an output
    over an input would read what it already wrote (a transpose into its
    own input; a matmul of run-time sizes re-stores its last panel)."""
    data, w = X.copy(), W.copy()
    with pytest.raises(CompiledFunctionError, match="shares memory with input #"):
        add(data, w, out=(data, np.empty_like(X)))
    with pytest.raises(CompiledFunctionError, match="shares memory with input #"):
        add(data, w, out=(np.empty_like(X), w.reshape(-1)[:6].reshape(2, 3)))
    both = np.empty_like(X)
    with pytest.raises(CompiledFunctionError, match="shares memory with output #0"):
        add(data, w, out=(both, both))
    np.testing.assert_array_equal(data, X)  # refused before any code ran
    once = hetero.compile(DYNAMIC, dynamic="once")
    x = np.ones((4, 3), np.float32)
    with pytest.raises(CompiledFunctionError, match="shares memory"):
        once(x, out=x)
