"""`hetero-import-onnx`: an ONNX model as a relay `.mlir` file.

    hetero-import-onnx model.onnx -o model.mlir [--dynamic-batch]
    hetero-import-onnx model.onnx -o model.mlir --shape input_ids=1,128
    hetero-opt model.mlir ...  /  hetero-run model.mlir --random

The module records the model it came from (`onnx.source`: its absolute path
and SHA-256), so that `hetero-run --check` can also compare with what
onnxruntime computes for that model, an oracle independent of hetero.
Weights larger than `--resource-threshold` elements are written MLIR's way,
as `dense_resource<name>` with the bytes in the file's trailing
`{-# dialect_resources: ... #-}` section, which hetero-opt, hetero-run and
`hetero.compile` read back.  With `--weights-file` they go to a binary side
file instead (`model.weights` beside `model.mlir` by default), which the
module names with its SHA-256 (`hetero.weights`), so that the `.mlir` is
small and diffable.  `--shape NAME=D,D,...` (repeatable) fixes a graph
input's shape, as `from_onnx(..., shapes=...)` does: a model exported for
any batch and sequence then imports for those sizes.  `-o` is written
atomically.  An unsupported
operator or an unreadable model prints `MODEL: error: ...` and exits 1.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections.abc import Sequence

from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr

from hetero.utils.dense_resources import print_with_resources, print_with_weights
from hetero.utils.diagnostics import HeteroError, run_tool
from hetero.utils.files import write_output

SOURCE = "onnx.source"
"""Module attribute `{path = ..., sha256 = ...}`: the model imported."""


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def record_source(module: ModuleOp, path: str) -> None:
    """Note in `module` the ONNX model at `path` it is imported from."""
    module.attributes[SOURCE] = DictionaryAttr(
        {"path": StringAttr(os.path.abspath(path)), "sha256": StringAttr(_sha256(path))}
    )


def imported_model(module: ModuleOp) -> str | None:
    """The path of the ONNX model `module` was imported from (`record_source`),
    None if it has no record; `OSError` where that file is gone or changed."""
    source = module.attributes.get(SOURCE)
    if source is None:
        return None
    fields = source.data if isinstance(source, DictionaryAttr) else {}
    if not all(isinstance(fields.get(k), StringAttr) for k in ("path", "sha256")):
        raise ValueError(f'{SOURCE} should be {{path = "...", sha256 = "..."}}')
    path = fields["path"].data  # type: ignore[union-attr]
    if _sha256(path) != fields["sha256"].data:  # type: ignore[union-attr]
        raise OSError(f"{path} changed since it was imported")
    return path


def shapes_of(
    parser: argparse.ArgumentParser, given: list[tuple[str, tuple[int, ...]]]
) -> dict[str, tuple[int, ...]]:
    """`--shape`'s inputs by name; one named twice is a usage error."""
    shapes = dict(given)
    if len(shapes) != len(given):
        parser.error("--shape names an input twice")
    return shapes


def add_shape_argument(
    parser: argparse.ArgumentParser,
    help: str = "import graph input NAME with this shape (its ? sizes fixed)",
) -> None:
    """`--shape NAME=D,D,...`, repeatable: `from_onnx`'s `shapes` (or
    `hetero-run`'s random inputs' sizes)."""
    parser.add_argument(
        "--shape",
        action="append",
        type=_shape,
        default=[],
        metavar="NAME=D,D,...",
        help=help,
    )


def _shape(text: str) -> tuple[str, tuple[int, ...]]:
    """`NAME=D,D,...` as (NAME, sizes): the last `=` splits (ONNX names may
    hold one)."""
    name, _, dims = text.rpartition("=")
    try:
        shape = tuple(int(d) for d in dims.split(","))
    except ValueError:
        shape = ()
    if not name or not shape:
        raise argparse.ArgumentTypeError(f"expected NAME=D,D,..., got {text!r}")
    return name, shape


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="hetero-import-onnx", description=__doc__.splitlines()[0]
    )
    parser.add_argument("model", help="the .onnx file")
    parser.add_argument("-o", "--output", help="the .mlir file (default: stdout)")
    parser.add_argument(
        "--dynamic-batch",
        action="store_true",
        help="make the first dimension of every input dynamic (?)",
    )
    add_shape_argument(parser)
    parser.add_argument(
        "--resource-threshold",
        type=int,
        default=None,
        metavar="N",
        help="constants with more elements than N become dense_resources (default 16)",
    )
    parser.add_argument(
        "--weights-file",
        nargs="?",
        const="",
        metavar="PATH",
        help="write the dense_resource blobs to this binary file, not into the .mlir "
        "(default PATH: the output's name with .weights)",
    )
    args = parser.parse_args(argv)
    args.shape = shapes_of(parser, args.shape)
    if args.weights_file is not None and args.output in (None, "-"):
        parser.error("--weights-file needs -o: the .mlir names the file beside it")
    return run_tool("hetero-import-onnx", args.model, lambda: _import(args), (OSError,))


def _import(args: argparse.Namespace) -> int:
    from hetero.frontends.onnx import RESOURCE_THRESHOLD, from_onnx

    threshold = (
        RESOURCE_THRESHOLD
        if args.resource_threshold is None
        else args.resource_threshold
    )
    batch = "dynamic" if args.dynamic_batch else None
    module = from_onnx(
        args.model, batch=batch, shapes=args.shape, resource_threshold=threshold
    )
    record_source(module, args.model)
    if args.weights_file is not None:
        _write_with_weights(module, args.output, args.weights_file, args.model)
        return 0
    text = print_with_resources(module)
    _check_parses(text.partition("\n{-#")[0], args.model)
    write_output(args.output, text)
    return 0


def _write_with_weights(
    module: ModuleOp, output: str, weights: str, model: str
) -> None:
    """`output` and its weights file (`print_with_weights`), the text parsed
    back with its weights before it is written."""
    weights = weights or os.path.splitext(output)[0] + ".weights"
    named = os.path.relpath(weights, os.path.dirname(os.path.abspath(output)))
    text, data = print_with_weights(module, named)
    write_output(weights, data)
    try:
        _check_parses(text, model, output)
    except HeteroError:
        os.unlink(weights)
        raise
    write_output(output, text)


def _check_parses(text: str, model: str, name: str = "<imported module>") -> None:
    """Nothing is written that does not read back: the module's IR (without
    the resource blobs, hex printed from the weights' bytes; with the blobs
    of its weights file, read as from `name`) is parsed and verified again."""
    from hetero.context import parse_module

    try:
        parse_module(text, name)
    except HeteroError as e:
        raise HeteroError(
            f"the module imported from {model} does not parse back ({e}): a bug in "
            "hetero-import-onnx, please report it"
        ) from e


if __name__ == "__main__":
    sys.exit(main())
