"""The model corpus on the GPU: hetero vs PyTorch running the same module.

    python -m bench gpu-models [--targets cuda[,cublas,...]] [--rounds N] [MODEL ...]
                                         # default: every corpus model, targets cuda

Each model of `hetero.frontends.model_corpus` (seeded random weights, batch
1) is exported by TorchScript's `torch.onnx.export`, imported with
`hetero.frontends.onnx.from_onnx` and compiled by `hetero.compile(...,
targets=TARGETS)` (by default the whole graph as hetero's own PTX); its output
is checked against onnxruntime's on the CPU (relative error) before timing.

The reference is the very torch module that was exported (the same weights,
`model_corpus.build`), on the GPU in fp32 (TF32 off, cuDNN's benchmark mode
on: it picks its fastest algorithms).  A call is an inference from NumPy to
NumPy on both sides: inputs copied to the GPU, the model run, the output
read back.  The two run in interleaved rounds in this process (medians),
after warm-up calls.  Without a GPU the benchmark prints `skipped: no GPU`
and exits 0; a model whose packages are missing is a line saying so.

The last line is `gpu-models: X.XX× PyTorch (worst of ...)`, X = PyTorch's
time / hetero's.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from bench.common import corpus_models_argument, interleaved, rounds_argument
from hetero.runtime import cuda

ROUNDS = 20
WARMUP = 3


def torch_on_gpu(name: str) -> Callable[..., np.ndarray]:
    """Corpus model `name` (the exported weights) as PyTorch runs it on the
    GPU, from NumPy arrays to a NumPy array."""
    import torch

    from hetero.frontends import model_corpus

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    module = model_corpus.build(name).cuda()

    def run(*arrays: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            args = [torch.from_numpy(a).cuda() for a in arrays]
            return module(*args).cpu().numpy()

    return run


def measure(name: str, targets: tuple[str, ...], rounds: int) -> tuple[float, str]:
    """(PyTorch's time / hetero's, the model's line of the table)."""
    import onnx
    import onnxruntime

    import hetero
    from hetero.frontends import model_corpus
    from hetero.frontends.onnx import from_onnx

    model = onnx.load_from_string(model_corpus.export(name))
    feed = model_corpus.example_inputs(name)
    inputs = list(feed.values())
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    expected = session.run(None, feed)
    start = time.perf_counter()
    compiled = hetero.compile(from_onnx(model), targets=targets)
    compile_s = time.perf_counter() - start
    error = float(
        np.abs(compiled(*inputs) - expected[0]).max() / np.abs(expected[0]).max()
    )
    reference = torch_on_gpu(name)
    fns = [lambda: compiled(*inputs), lambda: reference(*inputs)]
    for _ in range(WARMUP):
        for fn in fns:
            fn()
    ours, theirs = interleaved(fns, rounds, settle=0.0)
    line = (
        f"{name:>18} {1e3 * ours:>9.2f} {1e3 * theirs:>9.2f} {theirs / ours:>8.2f} "
        f"{error:>9.1e} {compile_s:>8.1f}"
    )
    return theirs / ours, line


def arguments(argv: list[str]) -> argparse.Namespace:
    """The models and options of `python -m bench gpu-models` (a bad one:
    argparse's usage line and exit status 2)."""
    parser = argparse.ArgumentParser(
        prog="python -m bench gpu-models",
        description="Batch-1 latency of the model corpus on the GPU, hetero and PyTorch.",
    )
    check_models = corpus_models_argument(parser)
    parser.add_argument(
        "--targets",
        default="cuda",
        help="hetero.compile's targets, comma-separated (default: cuda)",
    )
    rounds_argument(parser, ROUNDS)
    args = parser.parse_args(argv)
    check_models(args.models)
    args.targets = tuple(args.targets.split(","))
    return args


def main(argv: list[str]) -> None:
    from hetero.frontends import model_corpus

    args = arguments(argv)
    if (reason := cuda.unavailable_reason()) is not None:
        print(f"gpu-models: skipped: no GPU ({reason})")
        return
    print(f"device: {cuda.device().name}; targets {','.join(args.targets)}")
    print(
        f"{'model':>18} {'hetero ms':>9} {'torch ms':>9} {'ratio':>8} "
        f"{'rel err':>9} {'compile':>8}"
    )
    ratios: list[tuple[float, str]] = []
    for name in args.models or list(model_corpus.CORPUS):
        if missing := model_corpus.missing_packages(name, "torchscript"):
            print(f"{name:>18}: skipped, needs {', '.join(missing)}", flush=True)
            continue
        ratio, line = measure(name, args.targets, args.rounds)
        ratios.append((ratio, name))
        print(line, flush=True)
    if not ratios:
        print("gpu-models: no model ran (pip install 'hetero[models]')")
        return
    worst, name = min(ratios)
    print(
        f"gpu-models: {worst:.2f}× PyTorch (worst: {name}; "
        + ", ".join(f"{n} {r:.2f}×" for r, n in ratios)
        + f"; fp32, batch 1, medians of {args.rounds} interleaved rounds)"
    )
