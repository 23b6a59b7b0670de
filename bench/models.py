"""The model corpus: hetero vs onnxruntime, 1 and 2 threads.

    python -m bench models [--exporter torchscript|dynamo] [--rounds N]
                           [--compile-rounds N] [MODEL ...]
                                         # default: every corpus model, torchscript

Each model of `hetero.frontends.model_corpus` (torchvision's and
transformers' models, seeded random weights, batch 1) is exported in this
process by `--exporter`, imported with `hetero.frontends.onnx.from_onnx`
and compiled by `hetero.compile` once per thread count (`bench.onnx`'s
`with_threads`); onnxruntime runs the same file at the same thread count
(`bench.onnx._onnxruntime`).  The two are checked against each other
(relative error of the output) and then timed in interleaved rounds in this
process (`bench.common.interleaved`, medians).  A model whose export needs
packages that are not installed is skipped, with a line saying which, and
so is one whose export fails (with the exporter's error; the corpus tests
fail on it).

Then compile times, model by model (`bench.onnx.compile_table` on the
exported file): where TVM is installed, `hetero.compile` and TVM's
`tvm.compile` of the same file, each the first compile of a process of its
own, alternating, medians of `--compile-rounds`; TVM's error where its
importer fails on the model.

The last line is `models: X.XX× onnxruntime (...)`, X = onnxruntime time /
hetero time, the worst over models and thread counts.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from functools import partial

import numpy as np

import hetero
from bench.common import (
    corpus_models_argument,
    interleaved,
    positive_int,
    rounds_argument,
)
from bench.onnx import THREADS, _onnxruntime, compile_table, with_threads

ROUNDS = 7
COMPILE_ROUNDS = 1


def arguments(argv: list[str]) -> argparse.Namespace:
    """The models and options of `python -m bench models` (a bad one:
    argparse's usage line and exit status 2)."""
    from hetero.frontends.model_corpus import OPSETS

    parser = argparse.ArgumentParser(
        prog="python -m bench models",
        description="Latency and compile time of the model corpus, hetero and onnxruntime.",
    )
    check_models = corpus_models_argument(parser)
    parser.add_argument("--exporter", choices=tuple(OPSETS), default="torchscript")
    rounds_argument(parser, ROUNDS)
    parser.add_argument(
        "--compile-rounds",
        type=positive_int,
        default=COMPILE_ROUNDS,
        help=f"compiles of each side for the TVM comparison (default {COMPILE_ROUNDS})",
    )
    args = parser.parse_args(argv)
    check_models(args.models)
    return args


def main(argv: list[str]) -> None:
    import onnx

    from hetero.frontends import model_corpus
    from hetero.frontends.onnx import from_onnx

    args = arguments(argv)
    names = tuple(args.models) or tuple(model_corpus.CORPUS)
    print(
        f"{'model':>18} {'threads':>7} {'hetero ms':>10} {'ort ms':>9} {'ort/hetero':>10} "
        f"{'export s':>9} {'import s':>9} {'compile s':>10} {'rel err':>9}"
    )
    ratios: list[tuple[float, str, int]] = []
    with tempfile.TemporaryDirectory() as directory:
        files: list[str] = []
        for name in names:
            missing = model_corpus.missing_packages(name, args.exporter)
            if missing:
                print(
                    f"{name:>18}: skipped, its export needs {', '.join(missing)} "
                    "(pip install 'hetero[models]')",
                    flush=True,
                )
                continue
            start = time.perf_counter()
            try:
                data = model_corpus.export(name, args.exporter)
            except Exception as e:  # noqa: BLE001 (torch's exporters fail in many ways)
                print(f"{name:>18}: skipped, export failed: {type(e).__name__}: {e}")
                continue
            export_s = time.perf_counter() - start
            files.append(
                os.path.join(directory, model_corpus.file_name(name, args.exporter))
            )
            with open(files[-1], "wb") as f:
                f.write(data)
            model = onnx.load_from_string(data)
            inputs = list(model_corpus.example_inputs(name).values())
            start = time.perf_counter()
            module = from_onnx(model)
            import_s = time.perf_counter() - start
            for threads in THREADS:
                start = time.perf_counter()
                compiled = hetero.compile(with_threads(module, threads))
                compile_s = time.perf_counter() - start
                ort = _onnxruntime(model, threads)
                reference = ort(*inputs)
                error = float(
                    np.abs(compiled(*inputs) - reference).max()
                    / np.abs(reference).max()
                )
                ours, theirs = interleaved(
                    [partial(compiled, *inputs), partial(ort, *inputs)], args.rounds
                )
                ratios.append((theirs / ours, name, threads))
                print(
                    f"{name:>18} {threads:>7} {1e3 * ours:>10.2f} {1e3 * theirs:>9.2f} "
                    f"{theirs / ours:>10.3f} {export_s:>9.1f} {import_s:>9.2f} "
                    f"{compile_s:>10.1f} {error:>9.1e}",
                    flush=True,
                )
        for path in files:
            compile_table(path, THREADS[-1], "NCHW", args.compile_rounds)
    ran = list(dict.fromkeys(name for _, name, _ in ratios))
    if not ratios:
        print("models: no model ran (pip install 'hetero[models]')")
        return
    worst, worst_name, worst_threads = min(ratios)
    print(
        f"models: {worst:.2f}× onnxruntime (worst of {', '.join(ran)} at "
        f"{'/'.join(map(str, THREADS))} threads: {worst_name} at {worst_threads}; "
        f"{args.exporter} exports, random weights, batch 1, median of {args.rounds} "
        "interleaved rounds)"
    )
