"""`hetero-compile`: compile a model once, into a `.hetero` file that runs without the compiler.

    hetero-compile model.onnx -o model.hetero [--target 'llvm -mcpu=x86-64-v3']
    hetero-compile model.onnx -o model.hetero --shape input_ids=1,128
    hetero-compile model.mlir -o model.hetero [--entry main]
    hetero-run model.hetero --random                  # or, in Python: hetero.load(...)

An ONNX model is imported as `hetero-import-onnx` does (`--shape` fixes
an input's shape there too); a `.mlir` file's own
`target.config` wins over `--target`.  An entry function with dynamic (`?`)
input dimensions (a model exported with `dynamic_axes`) is compiled once for
every size (`hetero.compile(..., dynamic="once")`, docs/dynamic-shapes.md):
the file also holds the rules that check and size each call.  The file holds the native code, the
weights, the signature and the target it needs (docs/deployment.md);
`hetero.load` checks that the host it runs on has the CPU features the
code was compiled with.  The default target is this host's CPU; for a file
that runs on any x86-64 CPU of a level, give `-mcpu=x86-64-v2/v3/v4`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from hetero.tools.hetero_import_onnx import add_shape_argument, shapes_of
from hetero.utils import progress
from hetero.utils.diagnostics import run_tool


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hetero-compile", description=__doc__.splitlines()[0]
    )
    parser.add_argument("model", help="the .onnx or .mlir file")
    parser.add_argument(
        "-o", "--output", required=True, help="the .hetero file to write"
    )
    parser.add_argument(
        "--target",
        action="append",
        help="a target string (repeatable; default: llvm, this host's CPU)",
    )
    parser.add_argument("--entry", default="main", help="the relay function to compile")
    add_shape_argument(parser)
    parser.add_argument(
        "--timing",
        action="store_true",
        help="print the seconds of each compilation stage",
    )
    parser.add_argument(
        "--progress",
        action="store_true",
        help="report the compile's progress on stderr (default: on a terminal)",
    )
    return parser


def _compile(args: argparse.Namespace) -> int:
    import hetero

    if args.model.endswith(".onnx"):
        from hetero.frontends.onnx import from_onnx

        module: object = from_onnx(args.model, shapes=args.shape)
    else:
        from hetero.context import parse_module

        with open(args.model, encoding="utf-8") as file:
            module = parse_module(file.read(), args.model)  # its weights file beside it
    with progress.reporting(args.progress or None):
        compiled = hetero.compile(
            module,  # type: ignore[arg-type]
            args.target or ("llvm",),
            args.entry,
            dynamic="once",
        )
    compiled.save(args.output)  # type: ignore[union-attr]
    if args.timing:
        from hetero.tools.hetero_run import print_timings

        print_timings(compiled.timings)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = _arguments()
    args = parser.parse_args(argv)
    args.shape = shapes_of(parser, args.shape)
    if args.shape and not args.model.endswith(".onnx"):
        parser.error("--shape fixes an ONNX model's input shapes: give a .onnx file")
    return run_tool(
        "hetero-compile", args.model, lambda: _compile(args), (OSError, ValueError)
    )


if __name__ == "__main__":
    sys.exit(main())
