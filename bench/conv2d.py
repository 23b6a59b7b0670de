"""fp32 convolutions of real networks, hetero vs onnxruntime, one layer at a time.

    python -m bench conv2d [CASE ...]      # default: every case of CASES

Each case is one ONNX `Conv` (+ bias, + `Relu`, as networks have them)
with seeded random constant weights, the shape of a layer of ResNet-50 or
MobileNet: 1×1 convolutions (deep and shallow reductions), 3×3 ones on
large and small images, strided ones, depthwise ones and the 7×7 stem.
hetero imports the model (`hetero.frontends.onnx.from_onnx`: the weights
are constants, which `alter-op-layout` packs at compile time as in a whole
network) and compiles it with the `llvm` target's `num_threads` (and the
benchmarks' `mattr`: `python -m bench --mattr=-avx512f conv2d` runs the
AVX2 schedules on an AVX-512 host); onnxruntime runs the same model with as
many intra-op threads, spinning off.  The two run in interleaved rounds in
this process (medians), at one thread and at every CPU of the process,
after checking that their outputs agree.

The last line is `conv2d: X.XX× onnxruntime (...)`, X = onnxruntime time /
hetero time, the worst over cases and thread counts.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np

import hetero
from bench.common import cases_argument, interleaved, onnx_model, thread_counts

ROUNDS = 9


class Case(NamedTuple):
    """A convolution: `in_channels`×`size`² input, `out_channels` filters."""

    in_channels: int
    size: int
    out_channels: int
    kernel: int
    stride: int = 1
    groups: int = 1

    @property
    def out_size(self) -> int:
        return (self.size + 2 * (self.kernel // 2) - self.kernel) // self.stride + 1

    def flops(self) -> float:
        depth = self.in_channels // self.groups * self.kernel**2
        return 2.0 * self.out_channels * self.out_size**2 * depth


CASES = {
    "3x3-64@56": Case(64, 56, 64, 3),
    "1x1-64-256@56": Case(64, 56, 256, 1),
    "1x1-256-64@56": Case(256, 56, 64, 1),
    "3x3-256@14": Case(256, 14, 256, 3),
    "3x3-512@7": Case(512, 7, 512, 3),
    "1x1-1024-256@14": Case(1024, 14, 256, 1),
    "1x1-512-2048@7": Case(512, 7, 2048, 1),
    "3x3s2-128@56": Case(128, 56, 128, 3, stride=2),
    "3x3s2-512@14": Case(512, 14, 512, 3, stride=2),
    "1x1s2-256-512@56": Case(256, 56, 512, 1, stride=2),
    "7x7s2-3-64@224": Case(3, 224, 64, 7, stride=2),
    "dw3x3-144@56": Case(144, 56, 144, 3, groups=144),
    "dw3x3s2-240@28": Case(240, 28, 240, 3, stride=2, groups=240),
    "dw5x5-672@14": Case(672, 14, 672, 5, groups=672),
    "dw3x3s2-64@112": Case(64, 112, 64, 3, stride=2, groups=64),
    "dw5x5s2-72@56": Case(72, 56, 72, 5, stride=2, groups=72),
    "dw5x5-120@28": Case(120, 28, 120, 5, groups=120),
    "dw3x3-200@14": Case(200, 14, 200, 3, groups=200),
    "dw5x5s2-672@14": Case(672, 14, 672, 5, stride=2, groups=672),
    "dw5x5-960@7": Case(960, 7, 960, 5, groups=960),
    "dw3x3-32@120": Case(32, 120, 32, 3, groups=32),
    "dw3x3s2-96@120": Case(96, 120, 96, 3, stride=2, groups=96),
    "dw5x5s2-144@60": Case(144, 60, 144, 5, stride=2, groups=144),
    "dw5x5-240@30": Case(240, 30, 240, 5, groups=240),
    "dw3x3s2-240@30": Case(240, 30, 240, 3, stride=2, groups=240),
    "dw5x5s2-672@15": Case(672, 15, 672, 5, stride=2, groups=672),
    "dw5x5-1152@8": Case(1152, 8, 1152, 5, groups=1152),
    "dw3x3-1152@8": Case(1152, 8, 1152, 3, groups=1152),
}
"""Layers of ResNet-50 (the first seven, the strided two and the stem) and
of MobileNet-v2/v3 and EfficientNet (the depthwise ones: `dw3x3s2-64@112`
to `dw5x5-960@7` MobileNet-v3-large's at 224, `dw3x3-32@120` on
EfficientNet-B1's at 240)."""


def model(case: Case, seed: int = 0):  # type: ignore[no-untyped-def]
    """The case as an ONNX model: `Conv` with weight and bias, then `Relu`."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    c, s, o, k = case.in_channels, case.size, case.out_channels, case.kernel
    fan_in = c // case.groups * k * k
    w = (rng.standard_normal((o, c // case.groups, k, k)) / np.sqrt(fan_in)).astype(
        np.float32
    )
    b = rng.standard_normal(o).astype(np.float32)
    pad = k // 2
    nodes = [
        helper.make_node(
            "Conv",
            ["x", "w", "b"],
            ["c"],
            pads=[pad] * 4,
            strides=[case.stride] * 2,
            group=case.groups,
        ),
        helper.make_node("Relu", ["c"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, s, s])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
    )
    return onnx_model(graph)


def main(argv: list[str]) -> None:
    from bench.onnx import _onnxruntime, with_threads
    from hetero.frontends.onnx import from_onnx

    names = cases_argument("conv2d", argv, CASES)
    counts = thread_counts()
    print(
        f"{'case':>18} {'threads':>7} {'hetero ms':>10} {'ort ms':>9} "
        f"{'ort/hetero':>10} {'hetero GF/s':>11} {'ort GF/s':>9}"
    )
    ratios = []
    for name in names:
        case = CASES[name]
        proto = model(case)
        module = from_onnx(proto)
        x = (
            np.random.default_rng(1)
            .standard_normal((1, case.in_channels, case.size, case.size))
            .astype(np.float32)
        )
        for threads in counts:
            compiled = hetero.compile(with_threads(module, threads))
            ort = _onnxruntime(proto, threads)
            expected = ort(x)
            error = np.abs(compiled(x) - expected).max() / max(
                np.abs(expected).max(), 1e-30
            )
            assert error < 1e-4, (
                f"{name}: hetero differs from onnxruntime ({error:.1e})"
            )
            ours, theirs = interleaved([partial(compiled, x), partial(ort, x)], ROUNDS)
            ratios.append(theirs / ours)
            print(
                f"{name:>18} {threads:>7} {1e3 * ours:>10.3f} {1e3 * theirs:>9.3f} "
                f"{theirs / ours:>10.2f} {case.flops() / ours / 1e9:>11.1f} "
                f"{case.flops() / theirs / 1e9:>9.1f}",
                flush=True,
            )
    print(
        f"conv2d: {min(ratios):.2f}× onnxruntime (worst of {len(names)} layers at "
        f"{'/'.join(map(str, counts))} threads; conv + bias + relu, constant weights, "
        f"median of {ROUNDS} interleaved rounds)"
    )
