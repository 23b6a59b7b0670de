"""A corpus of current models as ONNX files: torchvision's classification
networks and transformers' language models, exported by `torch.onnx` with
seeded random weights, batch 1, for `tests/test_model_corpus.py` and
`python -m bench models`.

    python -m hetero.frontends.model_corpus --out DIR [--exporter E] [--seed N] [NAME ...]

writes `DIR/NAME.onnx` (the TorchScript exporter, opset 17) and
`DIR/NAME.dynamo.onnx` (the `torch.export`-based exporter, opset 18) for
each NAME of `CORPUS` or of the wider `SWEEP` (default: all of `CORPUS`);
`--exporter torchscript` or `dynamo` writes one of the two.  It needs the `models` extra
(`pip install 'hetero[models]'`: torch, torchvision, transformers,
onnxscript).

Nothing is downloaded (the machines this runs on reach no model hub): the
torch modules are built from their constructors and configurations, and
their weights are seeded random values, chosen so that the outputs say
something about the compiler that runs them:

* every normalisation layer gets a scale in [0.5, 1.5] and a shift in
  [-0.1, 0.1] (the constructors' ones and zeros would leave its affine step
  untested);
* every other parameter the constructor leaves all zero (biases, ViT's
  head and class token) gets uniform values of the scale of PyTorch's own
  `nn.Linear` initialisation: a zero layer makes every later one's output
  constant;
* BatchNorm's running statistics are those of a few random batches, the
  network in inference mode but its BatchNorm layers in training mode with
  a cumulative average, so that each layer normalises what reaches it (the
  constructors' mean 0 and variance 1 let activations grow or vanish layer
  after layer).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hetero.utils.files import write_output

Inputs = dict[str, np.ndarray]

IMAGE_SIZE = 224
SEQUENCE_LENGTH = 128
PADDING = 32
"""The language models' input ends with this many padding tokens (attention
mask 0), as a tokenizer pads a batch's shorter sequences."""

CALIBRATION_BATCHES = 4
CALIBRATION_BATCH_SIZE = 4

NORM_RANGES = {"weight": (0.5, 1.5), "bias": (-0.1, 0.1)}
"""A normalisation layer's parameter → the uniform range of its values."""

ZERO_BIAS_BOUND = 0.1
"""The uniform bound of a 1-D parameter the constructor leaves zero."""


def _image(rng: np.random.Generator, batch: int) -> Inputs:
    shape = (batch, 3, IMAGE_SIZE, IMAGE_SIZE)
    return {"x": rng.standard_normal(shape).astype(np.float32)}


def _tokens(vocabulary: int) -> Callable[[np.random.Generator, int], Inputs]:
    """Random token ids of a `SEQUENCE_LENGTH` sequence and its attention
    mask, whose last `PADDING` tokens are padding."""

    def inputs(rng: np.random.Generator, batch: int) -> Inputs:
        shape = (batch, SEQUENCE_LENGTH)
        mask = np.ones(shape, np.int64)
        mask[:, SEQUENCE_LENGTH - PADDING :] = 0
        ids = rng.integers(0, vocabulary, shape, dtype=np.int64)
        return {"input_ids": ids, "attention_mask": mask}

    return inputs


def _torchvision(name: str) -> Callable[[], Any]:
    def build() -> Any:
        import torchvision

        return getattr(torchvision.models, name)(weights=None)

    return build


def _segmentation(name: str) -> Callable[[], Any]:
    """torchvision's segmentation `name` (21 classes, no weights) as a module
    returning its `out` map: its heads upsample by `F.interpolate`
    (ONNX `Resize`, bilinear)."""

    def build() -> Any:
        import torchvision

        network = getattr(torchvision.models.segmentation, name)(
            weights=None, weights_backbone=None, num_classes=21
        )
        return _image_module(network, lambda model, x: model(x)["out"])

    return build


def _image_module(network: Any, read: Callable[[Any, Any], Any]) -> Any:
    """A module of `_image`'s input `x` returning `read(network, x)`: the
    one output to export of a network that returns several."""
    import torch

    class Image(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = network

        def forward(self, x: Any) -> Any:
            return read(self.model, x)

    return Image()


def _first_output(model: Any) -> Any:
    """A transformers `model` as a module of the inputs `_tokens` makes,
    positionally, returning the first of its outputs (the hidden state or
    the logits): the exporters bind inputs to `forward`'s parameters in
    order, and GPT-2's second one is its key-value cache."""
    import torch

    class FirstOutput(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            return self.model(input_ids=input_ids, attention_mask=attention_mask)[0]

    return FirstOutput()


def _distilbert() -> Any:
    from transformers import DistilBertConfig, DistilBertModel

    return _first_output(DistilBertModel(DistilBertConfig()))


def _gpt2() -> Any:
    from transformers import GPT2Config, GPT2LMHeadModel

    return _first_output(GPT2LMHeadModel(GPT2Config(n_layer=2, use_cache=False)))


def _transformer(config: str, model: str, **options: Any) -> Callable[[], Any]:
    """transformers' `model` class of `config`(**options) (`_first_output`)."""

    def build() -> Any:
        import transformers

        configuration = getattr(transformers, config)(**options)
        return _first_output(getattr(transformers, model)(configuration))

    return build


def _vision_transformer(config: str, model: str) -> Callable[[], Any]:
    """transformers' image `model` class of the default `config`, a module of
    `_image`'s input returning the last hidden state."""

    def build() -> Any:
        import transformers

        network = getattr(transformers, model)(getattr(transformers, config)())
        return _image_module(network, lambda model, x: model(pixel_values=x)[0])

    return build


@dataclass(frozen=True)
class CorpusModel:
    """One model of the corpus: the packages its torch module needs, its
    constructor, and its inputs (a generator and a batch size → named
    arrays, in the order of the module's `forward` parameters)."""

    packages: tuple[str, ...]
    build: Callable[[], Any]
    inputs: Callable[[np.random.Generator, int], Inputs]


_VISION = ("torch", "torchvision")
_TEXT = ("torch", "transformers")

CORPUS = {
    "resnet18": CorpusModel(_VISION, _torchvision("resnet18"), _image),
    "mobilenet_v3_large": CorpusModel(
        _VISION, _torchvision("mobilenet_v3_large"), _image
    ),
    "efficientnet_b1": CorpusModel(_VISION, _torchvision("efficientnet_b1"), _image),
    "densenet121": CorpusModel(_VISION, _torchvision("densenet121"), _image),
    "vit_b_32": CorpusModel(_VISION, _torchvision("vit_b_32"), _image),
    "distilbert": CorpusModel(_TEXT, _distilbert, _tokens(30522)),
    "gpt2": CorpusModel(_TEXT, _gpt2, _tokens(50257)),
}
"""The corpus: torchvision's models with their default constructors;
DistilBERT's encoder (`DistilBertConfig()`, last hidden state) and GPT-2's
language model with two layers (`GPT2Config(n_layer=2)`, logits over its
50257-token vocabulary)."""

SWEEP_VISION = (
    "alexnet",
    "vgg11_bn",
    "googlenet",
    "inception_v3",
    "squeezenet1_1",
    "shufflenet_v2_x1_0",
    "mnasnet1_0",
    "mobilenet_v2",
    "mobilenet_v3_small",
    "efficientnet_v2_s",
    "regnet_y_400mf",
    "resnext50_32x4d",
    "wide_resnet50_2",
    "convnext_tiny",
    "swin_t",
    "swin_v2_t",
    "maxvit_t",
    "vit_b_16",
)

SWEEP_ENCODERS = {
    "bert": ("Bert", 30522),
    "roberta": ("Roberta", 50265),
    "albert": ("Albert", 30000),
    "electra": ("Electra", 30522),
}
"""The BERT family of the sweep: transformers' class prefix, vocabulary size."""

SWEEP_SEGMENTATION = ("lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large")
"""torchvision's segmentation networks of the sweep (their heads resize)."""

SWEEP = {
    **{name: CorpusModel(_VISION, _torchvision(name), _image) for name in SWEEP_VISION},
    **{
        name: CorpusModel(_VISION, _segmentation(name), _image)
        for name in SWEEP_SEGMENTATION
    },
    **{
        name: CorpusModel(
            _TEXT,
            _transformer(f"{family}Config", f"{family}Model", num_hidden_layers=2),
            _tokens(vocabulary),
        )
        for name, (family, vocabulary) in SWEEP_ENCODERS.items()
    },
    "gpt_neo": CorpusModel(
        _TEXT,
        _transformer(
            "GPTNeoConfig",
            "GPTNeoForCausalLM",
            num_layers=2,
            attention_types=[[["global", "local"], 1]],
            hidden_size=768,
            num_heads=12,
            use_cache=False,
        ),
        _tokens(50257),
    ),
    "gptj": CorpusModel(
        _TEXT,
        _transformer(
            "GPTJConfig",
            "GPTJForCausalLM",
            n_layer=2,
            n_embd=512,
            n_head=8,
            rotary_dim=32,
            use_cache=False,
        ),
        _tokens(50400),
    ),
    "llama": CorpusModel(
        _TEXT,
        _transformer(
            "LlamaConfig",
            "LlamaForCausalLM",
            num_hidden_layers=2,
            hidden_size=512,
            intermediate_size=1376,
            num_attention_heads=8,
            num_key_value_heads=4,
            use_cache=False,
        ),
        _tokens(32000),
    ),
    "deit": CorpusModel(_TEXT, _vision_transformer("DeiTConfig", "DeiTModel"), _image),
    "beit": CorpusModel(_TEXT, _vision_transformer("BeitConfig", "BeitModel"), _image),
    "swin_hf": CorpusModel(
        _TEXT, _vision_transformer("SwinConfig", "SwinModel"), _image
    ),
}
"""The wider sweep of issue 34, the models a new user brings: one
torchvision classification network per family (default constructors), two
segmentation networks (bilinear resizes), and
transformers' BERT family (the base configurations with two layers), GPT-Neo
and GPT-J (two layers; GPT-J at width 512), Llama (two layers at width 512,
grouped-query attention: RMSNorm, rotary embeddings, SwiGLU) and the ViT
family (DeiT, BEiT, Swin with their default configurations), each exported
as the corpus's are."""

MODELS = {**CORPUS, **SWEEP}
"""Every model `export` knows: the corpus, then the sweep."""

OPSETS = {"torchscript": 17, "dynamo": 18}
"""Each exporter of `torch.onnx.export` (`dynamo=False`, `dynamo=True`) and
the opset it writes."""

EXPORTER_PACKAGES = {"torchscript": (), "dynamo": ("onnxscript",)}


def file_name(name: str, exporter: str, dynamic: bool = False) -> str:
    """The corpus file of model `name` written by `exporter` (with symbolic
    batch and sequence: `export`'s `dynamic`)."""
    parts = [name, *([exporter] if exporter != "torchscript" else [])]
    return ".".join([*parts, *(["dynamic"] if dynamic else []), "onnx"])


def missing_packages(name: str, exporter: str) -> list[str]:
    """The packages model `name`'s export by `exporter` needs that are not installed."""
    needed = MODELS[name].packages + EXPORTER_PACKAGES[exporter]
    return [p for p in needed if importlib.util.find_spec(p) is None]


def example_inputs(name: str, seed: int = 1) -> Inputs:
    """Seeded batch-1 inputs of model `name`."""
    return MODELS[name].inputs(np.random.default_rng(seed), 1)


def _randomize(module: Any, generator: Any) -> None:
    """Normalisation layers' affine parameters and the parameters the
    constructor left all zero as random values (`NORM_RANGES`, else PyTorch's
    `nn.Linear` bound 1/√fan_in, `ZERO_BIAS_BOUND` for 1-D ones)."""
    import torch

    norms = (
        torch.nn.modules.batchnorm._BatchNorm,
        torch.nn.LayerNorm,
        torch.nn.GroupNorm,
    )
    for layer in module.modules():
        if isinstance(layer, norms):
            for key, (low, high) in NORM_RANGES.items():
                parameter = getattr(layer, key, None)
                if parameter is not None:
                    parameter.uniform_(low, high, generator=generator)
    for parameter in module.parameters():
        if not parameter.any():
            fan_in = math.prod(parameter.shape[1:]) if parameter.dim() > 1 else 0
            bound = 1 / math.sqrt(fan_in) if fan_in else ZERO_BIAS_BOUND
            parameter.uniform_(-bound, bound, generator=generator)


def _calibrate(module: Any, model: CorpusModel, rng: np.random.Generator) -> None:
    """BatchNorm running statistics as the cumulative average over
    `CALIBRATION_BATCHES` random batches, every other layer in inference
    mode (no dropout, no stochastic depth)."""
    import torch

    module.eval()
    norms = [
        m
        for m in module.modules()
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
    ]
    if not norms:
        return
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None
        norm.train()
    for _ in range(CALIBRATION_BATCHES):
        batch = model.inputs(rng, CALIBRATION_BATCH_SIZE)
        module(*map(torch.from_numpy, batch.values()))
    module.eval()


def build(name: str, seed: int = 0) -> Any:
    """Model `name` as a torch module in inference mode, with seeded random
    weights calibrated as the module docstring says; torch's global random
    state is left as it was."""
    import torch

    model = MODELS[name]
    with torch.random.fork_rng(), torch.no_grad():
        torch.manual_seed(seed)
        module = model.build()
        _randomize(module, torch.Generator().manual_seed(seed))
        _calibrate(module, model, np.random.default_rng(seed))
    return module


def export(
    name: str, exporter: str = "torchscript", seed: int = 0, dynamic: bool = False
) -> bytes:
    """Model `name` (`build(name, seed)`) exported by `exporter` at its
    opset (`OPSETS`), batch 1, as the bytes of an ONNX file: inputs named
    as `example_inputs`'s keys, one output `output`.  `dynamic`: the batch
    dimension of every input and of the output is symbolic (`batch`), and
    so is the sequence of the token inputs (`sequence`, at most
    `MAX_SEQUENCE`), as a model exported to serve any request is (the
    exporter keeps the shape arithmetic on them; traced at batch 2, so that
    no 1 of the batch is taken for a constant).  Not under
    `torch.no_grad()`: there `nn.MultiheadAttention` (ViT) takes its fused
    fast path, `aten::_native_multi_head_attention`, which the TorchScript
    exporter cannot export."""
    import torch

    module = build(name, seed)
    inputs = MODELS[name].inputs(np.random.default_rng(1), 2 if dynamic else 1)
    arguments = tuple(map(torch.from_numpy, inputs.values()))
    options: dict[str, Any] = {
        "input_names": list(inputs),
        "output_names": ["output"],
        "opset_version": OPSETS[exporter],
    }
    axes = {k: _dynamic_axes(v) for k, v in inputs.items()} if dynamic else {}
    if exporter == "dynamo":
        if dynamic:
            dims = {
                "batch": torch.export.Dim("batch"),
                "sequence": torch.export.Dim("sequence", max=MAX_SEQUENCE),
            }
            options["dynamic_shapes"] = tuple(
                {axis: dims[label] for axis, label in axes[k].items()} for k in inputs
            )
        program = torch.onnx.export(module, arguments, dynamo=True, **options)
        return program.model_proto.SerializeToString()
    if dynamic:
        options["dynamic_axes"] = {**axes, "output": {0: "batch"}}
    buffer = io.BytesIO()
    torch.onnx.export(module, arguments, buffer, dynamo=False, **options)
    return buffer.getvalue()


MAX_SEQUENCE = 512
"""The longest sequence a dynamic export serves (the position tables')."""


def _dynamic_axes(value: np.ndarray) -> dict[int, str]:
    """An input's symbolic axes: its batch, and the sequence of token ids
    and masks (integer inputs)."""
    integer = np.issubdtype(value.dtype, np.integer)
    return {0: "batch", 1: "sequence"} if integer else {0: "batch"}


def main(argv: Sequence[str] | None = None) -> int:
    """Write the corpus models asked for into `--out`; exit status 1 where
    one needs missing packages (nothing is written then) or fails to export."""
    parser = argparse.ArgumentParser(
        prog="python -m hetero.frontends.model_corpus",
        description="torchvision and transformers models as ONNX files, seeded random weights, batch 1",
    )
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help=f"default: all of {', '.join(CORPUS)}"
    )
    parser.add_argument("--out", required=True, help="the directory of the .onnx files")
    parser.add_argument("--exporter", choices=(*OPSETS, "both"), default="both")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--dynamic",
        action="store_true",
        help="symbolic batch and sequence (files NAME[.EXPORTER].dynamic.onnx)",
    )
    args = parser.parse_args(argv)
    for name in args.names:
        if name not in MODELS:
            parser.error(f"unknown model '{name}' (choose from {', '.join(MODELS)})")
    exporters = tuple(OPSETS) if args.exporter == "both" else (args.exporter,)
    jobs = [(name, exporter) for name in args.names or CORPUS for exporter in exporters]
    missing = sorted({p for job in jobs for p in missing_packages(*job)})
    if missing:
        print(
            f"{parser.prog}: error: {', '.join(missing)} not installed "
            "(pip install 'hetero[models]')",
            file=sys.stderr,
        )
        return 1
    os.makedirs(args.out, exist_ok=True)
    status = 0
    for name, exporter in jobs:
        path = os.path.join(args.out, file_name(name, exporter, args.dynamic))
        try:
            write_output(path, export(name, exporter, args.seed, args.dynamic))
        except Exception as e:  # noqa: BLE001 (torch's exporters fail in many ways)
            print(
                f"{parser.prog}: error: {path}: {type(e).__name__}: {e}",
                file=sys.stderr,
            )
            status = 1
            continue
        print(path)
    return status


if __name__ == "__main__":
    sys.exit(main())
