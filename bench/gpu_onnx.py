"""ONNX networks on the GPU: hetero (the whole graph on `cuda`) vs PyTorch on cuDNN.

    python -m bench gpu-onnx [MODEL ...]     # default: squeezenet resnet50

Each model of the `onnx` wheel's light zoo gets seeded random weights
(`hetero.frontends.onnx_models.randomized`), is imported with
`hetero.frontends.onnx.from_onnx` and compiled by `hetero.compile(...,
targets=("cuda",))`; its logits are checked against onnxruntime's on the
CPU (relative error) before timing.  A call is a batch-1 fp32 inference
from NumPy to NumPy: the image copied into managed memory, the kernels
launched, the logits read back.

The reference is torchvision's model of the same architecture (`REFERENCES`:
SqueezeNet 1.1, ResNet-50 v1.5, as the light zoo's) on cuDNN in fp32, TF32
off, with its own random weights (the time does not depend on them), timed
the same way: `torch.from_numpy(x).cuda()`, the model, `.cpu()`.  Without
torch and torchvision the reference is skipped, saying so; without a GPU the
benchmark prints `skipped: no GPU` and exits 0.  The two run in interleaved
rounds in this process (medians), after warm-up calls.

The last line is `gpu-onnx: X.XX× PyTorch/cuDNN (...)`, X = PyTorch's time
/ hetero's, the worst over the models.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from bench.common import interleaved
from hetero.runtime import cuda

MODELS = ("squeezenet", "resnet50")
REFERENCES = {"squeezenet": "squeezenet1_1", "resnet50": "resnet50"}
"""Light-zoo model → the torchvision model of its architecture."""
ROUNDS = 30
WARMUP = 5


def torch_reference(name: str) -> Callable[[np.ndarray], np.ndarray] | str:
    """torchvision's `name` on the GPU in fp32 (cuDNN, TF32 off), or why not."""
    if name not in REFERENCES:
        return f"no torchvision model of {name} here"
    try:
        import torch
        import torchvision
    except ImportError as e:
        return f"no {e.name}"
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True  # cuDNN picks its fastest algorithms
    model = getattr(torchvision.models, REFERENCES[name])().eval().cuda()

    def run(x: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return model(torch.from_numpy(x).cuda()).cpu().numpy()

    return run


def measure(name: str) -> tuple[float, float | None, str]:
    """(hetero's seconds, the reference's or None, a line about the model)."""
    import onnx
    import onnxruntime

    import hetero
    from hetero.frontends.onnx import from_onnx
    from hetero.frontends.onnx_models import light_model_path, logits, randomized

    model = logits(randomized(onnx.load(light_model_path(name)), seed=0))
    x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    expected = session.run(None, {session.get_inputs()[0].name: x})[0]
    start = time.perf_counter()
    compiled = hetero.compile(from_onnx(model), targets=("cuda",))
    seconds = time.perf_counter() - start
    error = float(np.abs(compiled(x) - expected).max() / np.abs(expected).max())
    reference = torch_reference(name)
    fns: list[Callable[[], Any]] = [lambda: compiled(x)]
    if not isinstance(reference, str):
        fns.append(lambda: reference(x))
    for _ in range(WARMUP):
        for fn in fns:
            fn()
    times = interleaved(fns, ROUNDS, settle=0.0)
    line = (
        f"{name:>11} {1e3 * times[0]:>9.2f} "
        + (f"{1e3 * times[1]:>9.2f}" if len(times) > 1 else f"{'-':>9}")
        + f" {error:>9.1e} {seconds:>8.2f}"
    )
    if isinstance(reference, str):
        line += f"  (reference skipped: {reference})"
    return times[0], times[1] if len(times) > 1 else None, line


def arguments(argv: list[str]) -> list[str]:
    """The models of `python -m bench gpu-onnx [MODEL ...]` (an unknown one:
    argparse's usage line and exit status 2)."""
    from hetero.frontends.onnx_models import LIGHT_MODELS

    parser = argparse.ArgumentParser(
        prog="python -m bench gpu-onnx",
        description="Batch-1 latency of ONNX models on the GPU, hetero and PyTorch on cuDNN.",
    )
    parser.add_argument(
        "models",
        nargs="*",
        metavar="MODEL",
        help=f"light models of the onnx wheel (default: {' '.join(MODELS)}; "
        f"any of {', '.join(LIGHT_MODELS)}; PyTorch has {', '.join(REFERENCES)})",
    )
    models = parser.parse_args(argv).models
    for name in models:
        if name not in LIGHT_MODELS:
            parser.error(
                f"unknown model '{name}' (choose from {', '.join(LIGHT_MODELS)})"
            )
    return models or list(MODELS)


def main(argv: list[str]) -> None:
    models = arguments(argv)
    if (reason := cuda.unavailable_reason()) is not None:
        print(f"gpu-onnx: skipped: no GPU ({reason})")
        return
    print(f"device: {cuda.device().name}")
    print(
        f"{'model':>11} {'hetero ms':>9} {'torch ms':>9} {'rel err':>9} {'compile':>8}"
    )
    ratios = []
    for name in models:
        ours, theirs, line = measure(name)
        print(line, flush=True)
        if theirs is not None:
            ratios.append((theirs / ours, name))
    if not ratios:
        print("gpu-onnx: reference skipped: no torch or torchvision")
        return
    worst, name = min(ratios)
    details = ", ".join(f"{n} {r:.2f}×" for r, n in ratios)
    print(
        f"gpu-onnx: {worst:.2f}× PyTorch/cuDNN (worst: {name}; {details}; "
        f"batch 1, fp32, medians of {ROUNDS})"
    )
