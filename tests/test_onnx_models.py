"""Whole networks: the light model zoo the `onnx` wheel ships.

The shipped weights are one repeated value, so the shipped outputs are
uniform; the real check replaces every weight by seeded random values
(`randomized`) and compares the logits (the final Softmax removed) with
onnxruntime's: relative error (max |a - b| / max |b|) at most 1e-4.

By default the interpreter runs the two smallest models and hetero.compile
three (squeezenet, shufflenet and resnet50: 2 to 4 s each); the larger
models run with `HETERO_SLOW=1`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import numpy_helper

import hetero
from hetero.frontends.onnx import from_onnx
from hetero.frontends.onnx_models import (
    DATA,
    LIGHT_MODELS,
    light_model_path,
    logits,
    randomized,
)
from hetero.interpreter.relay import run
from hetero.runtime import cuda

SLOW = os.environ.get("HETERO_SLOW") == "1"
slow = pytest.mark.skipif(not SLOW, reason="set HETERO_SLOW=1 to run")

DEFAULT_MODELS = ("squeezenet", "shufflenet")
"""Interpreted in the default suite: a second or less each."""

COMPILED_MODELS = ("squeezenet", "shufflenet", "resnet50")
"""Compiled in the default suite: grouped, pointwise and deep convolutions
(both conv2d schedules), pools, a residual network."""

MAX_RELATIVE_ERROR = 1e-4

NO_GPU = cuda.unavailable_reason()


def _models(default: tuple[str, ...]) -> list[object]:
    return [
        pytest.param(name, marks=[] if name in default else [slow])
        for name in LIGHT_MODELS
    ]


def _input() -> np.ndarray:
    return np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)


def _onnxruntime(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    ort = pytest.importorskip("onnxruntime")
    ort.set_default_logger_severity(3)
    session = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return session.run(None, {session.get_inputs()[0].name: x})[0]


def _relative_error(value: np.ndarray, reference: np.ndarray) -> float:
    assert value.shape == reference.shape
    return float(np.abs(value - reference).max() / np.abs(reference).max())


def _shipped_output(name: str) -> np.ndarray:
    path = os.path.join(DATA, "light", f"light_{name}_output_0.pb")
    return numpy_helper.to_array(onnx.load_tensor(path))


@pytest.mark.parametrize("name", _models(DEFAULT_MODELS))
def test_random_weights_interpreted_match_onnxruntime(name: str) -> None:
    model = logits(randomized(onnx.load(light_model_path(name)), seed=0))
    x = _input()
    reference = _onnxruntime(model, x)
    assert _relative_error(run(from_onnx(model), x), reference) <= MAX_RELATIVE_ERROR


@pytest.mark.parametrize("name", _models(COMPILED_MODELS))
def test_random_weights_compiled_match_onnxruntime(name: str) -> None:
    model = logits(randomized(onnx.load(light_model_path(name)), seed=0))
    x = _input()
    reference = _onnxruntime(model, x)
    compiled = hetero.compile(from_onnx(model))
    assert _relative_error(compiled(x), reference) <= MAX_RELATIVE_ERROR


@pytest.mark.parametrize("name", ["squeezenet", "resnet50"])
def test_a_model_runs_on_the_gpu(name: str) -> None:
    """The whole graph on the GPU (`cuda` the only target): host code that
    launches every kernel.  Without a GPU SqueezeNet is still compiled."""
    if NO_GPU is not None and name != "squeezenet":
        pytest.skip(f"needs a GPU: {NO_GPU}")
    model = logits(randomized(onnx.load(light_model_path(name)), seed=0))
    compiled = hetero.compile(from_onnx(model), targets=("cuda",))
    assert isinstance(compiled.native, cuda.GpuProgram) and compiled.native.kernels
    if NO_GPU is not None:
        pytest.skip(f"compiled; running needs a GPU: {NO_GPU}")
    x = _input()
    reference = _onnxruntime(model, x)
    assert _relative_error(compiled(x), reference) <= MAX_RELATIVE_ERROR


def _check_shipped(
    name: str, evaluate: Callable[[onnx.ModelProto, np.ndarray], Any]
) -> None:
    """The shipped model's expectation, in its well-conditioned form.  Its
    weights are one value repeated, so every logit is the same sum
    (squeezenet's about 6.7e9) and the shipped output is uniform.  A
    softmax of such logits is decided by their last bits, that is by the
    summation order (NumPy's OpenBLAS on an AVX2 host gives one class
    0.025), so `evaluate` gets the logits, which must equal one another and
    onnxruntime's up to rounding."""
    shipped = _shipped_output(name)
    assert np.ptp(shipped) == 0
    model = logits(onnx.load(light_model_path(name)))
    x = _input()
    result = np.asarray(evaluate(model, x))
    assert result.size == shipped.size
    assert np.ptp(result) <= MAX_RELATIVE_ERROR * np.abs(result).max()
    assert _relative_error(result, _onnxruntime(model, x)) <= MAX_RELATIVE_ERROR


@pytest.mark.parametrize("name", _models(DEFAULT_MODELS))
def test_shipped_model_interpreted(name: str) -> None:
    _check_shipped(name, lambda model, x: run(from_onnx(model), x))


@slow
@pytest.mark.parametrize("name", LIGHT_MODELS)
def test_shipped_model_compiled(name: str) -> None:
    _check_shipped(name, lambda model, x: hetero.compile(from_onnx(model))(x))


def test_dynamic_batch_squeezenet() -> None:
    """One import, several batch sizes: each sample as the static model gives it."""
    model = randomized(onnx.load(light_model_path("squeezenet")), seed=0)
    dynamic, static = from_onnx(model, batch="dynamic"), from_onnx(model)
    x = np.random.default_rng(2).standard_normal((2, 3, 224, 224)).astype(np.float32)
    batched = run(dynamic, x)
    for i in range(2):
        np.testing.assert_allclose(
            batched[i : i + 1], run(static, x[i : i + 1]), rtol=1e-5, atol=1e-7
        )


def test_command_writes_a_light_model_with_random_weights_as_logits(tmp_path) -> None:
    """`python -m hetero.frontends.onnx_models` (the README's first command)."""
    from hetero.frontends import onnx_models

    path = tmp_path / "squeezenet.onnx"
    assert onnx_models.main(["squeezenet", "-o", str(path), "--seed", "3"]) == 0
    expected = logits(randomized(onnx.load(light_model_path("squeezenet")), seed=3))
    assert onnx.load(str(path)) == expected
    assert expected.graph.node[-1].op_type != "Softmax"
