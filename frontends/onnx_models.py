"""The model zoo the `onnx` wheel ships, for tests and benchmarks.

`onnx/backend/test/data/light/` holds nine classic CNNs (squeezenet,
resnet50, ...) whose weights are `ConstantOfShape` nodes -- one value
repeated, so their expected outputs are uniform and prove little.
`randomized` turns every such weight into seeded random values scaled as a
trained network's are (He initialisation for convolution and dense
weights, batch-norm statistics near 1 and 0), so that activations keep
their magnitude through 50+ layers and a comparison of logits is
meaningful.

As a command, it writes such a model, without its final Softmax (`logits`),
for the README's first command and `hetero-run --check`:

    python -m hetero.frontends.onnx_models squeezenet -o squeezenet.onnx [--seed 0]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence

import numpy as np
import onnx
from onnx import numpy_helper

from hetero.utils.files import write_output

LIGHT_MODELS = (
    "squeezenet",
    "shufflenet",
    "bvlc_alexnet",
    "zfnet512",
    "inception_v1",
    "inception_v2",
    "resnet50",
    "densenet121",
    "vgg19",
)
"""Light models by size of work, smallest first."""

DATA = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")


def light_model_path(name: str) -> str:
    return os.path.join(DATA, "light", f"light_{name}.onnx")


def _consumers(graph: onnx.GraphProto) -> dict[str, list[tuple[onnx.NodeProto, int]]]:
    uses: dict[str, list[tuple[onnx.NodeProto, int]]] = {}
    for node in graph.node:
        for index, name in enumerate(node.input):
            uses.setdefault(name, []).append((node, index))
    return uses


_PASS_THROUGH = frozenset({"Unsqueeze", "Reshape", "Squeeze", "Identity"})

_BATCH_NORM_RANGES = {1: (0.5, 1.5), 2: (-0.1, 0.1), 3: (-0.1, 0.1), 4: (0.5, 1.5)}
"""BatchNormalization input → uniform range: scale, bias, mean, variance."""


def _role(
    name: str, uses: dict[str, list[tuple[onnx.NodeProto, int]]]
) -> tuple[str, int]:
    """The first real consumer of a weight (through reshapes) and the input slot."""
    while True:
        node, index = uses[name][0]
        if node.op_type not in _PASS_THROUGH:
            return node.op_type, index
        name = node.output[0]


def _random_weight(
    shape: tuple[int, ...], role: tuple[str, int], rng: np.random.Generator
) -> np.ndarray:
    op_type, index = role
    if op_type in ("Conv", "Gemm", "MatMul") and index == 1 and len(shape) >= 2:
        fan_in = math.prod(shape[1:]) if op_type == "Conv" else min(shape)
        return rng.standard_normal(shape) * math.sqrt(2.0 / fan_in)
    if op_type == "BatchNormalization":
        return rng.uniform(*_BATCH_NORM_RANGES[index], shape)
    if op_type == "Mul":
        return rng.uniform(0.5, 1.5, shape)
    return rng.uniform(-0.1, 0.1, shape)


def randomized(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """A copy of `model` whose `ConstantOfShape` weights are seeded random
    initializers of the same shape and type (the shape initializers go)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    shapes = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    uses = _consumers(graph)
    rng = np.random.default_rng(seed)
    kept, weights = [], []
    for node in graph.node:
        if node.op_type != "ConstantOfShape" or node.input[0] not in shapes:
            kept.append(node)
            continue
        shape = tuple(int(d) for d in shapes[node.input[0]])
        value = _random_weight(shape, _role(node.output[0], uses), rng)
        weights.append(
            numpy_helper.from_array(value.astype(np.float32), node.output[0])
        )
    used = {name for node in kept for name in node.input}
    dropped = {t.name for t in graph.initializer if t.name not in used}
    initializers = [t for t in graph.initializer if t.name in used] + weights
    inputs = [v for v in graph.input if v.name not in dropped]
    del graph.node[:], graph.initializer[:], graph.input[:]
    graph.node.extend(kept)
    graph.initializer.extend(initializers)
    graph.input.extend(inputs)
    return model


def logits(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` without its final `Softmax`: logits compare more sharply than
    probabilities, which saturate at 0 and 1."""
    last = model.graph.node[-1]
    if last.op_type != "Softmax" or last.output[0] != model.graph.output[0].name:
        return model
    model = onnx.ModelProto.FromString(model.SerializeToString())
    model.graph.node.pop()
    del model.graph.output[:]
    model.graph.output.append(
        onnx.helper.make_tensor_value_info(last.input[0], onnx.TensorProto.FLOAT, None)
    )
    return model


def main(argv: Sequence[str] | None = None) -> int:
    """Write light model `name` with seeded random weights, as logits."""
    parser = argparse.ArgumentParser(
        prog="python -m hetero.frontends.onnx_models",
        description="a light model of the onnx wheel, with seeded random weights, as logits",
    )
    parser.add_argument("name", choices=LIGHT_MODELS)
    parser.add_argument("-o", "--output", required=True, help="the .onnx file")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    model = logits(randomized(onnx.load(light_model_path(args.name)), args.seed))
    try:
        write_output(args.output, model.SerializeToString())
    except OSError as e:
        print(f"{parser.prog}: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
