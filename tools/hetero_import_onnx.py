"""`hetero-import-onnx`: an ONNX model as a relay `.mlir` file.

    hetero-import-onnx model.onnx -o model.mlir [--dynamic-batch]
    hetero-opt model.mlir ...  /  hetero-run model.mlir --random

Weights larger than `--resource-threshold` elements are written MLIR's way,
as `dense_resource<name>` with the bytes in the file's trailing
`{-# dialect_resources: ... #-}` section, which hetero-opt, hetero-run and
`hetero.compile` read back.  `-o` is written atomically.  An unsupported
operator or an unreadable model prints `MODEL: error: ...` and exits 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from hetero.utils.dense_resources import print_with_resources
from hetero.utils.diagnostics import HeteroError
from hetero.utils.files import write_output


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
    parser.add_argument(
        "--resource-threshold",
        type=int,
        default=None,
        metavar="N",
        help="constants with more elements than N become dense_resources (default 16)",
    )
    args = parser.parse_args(argv)
    try:
        from hetero.frontends.onnx import RESOURCE_THRESHOLD, from_onnx

        threshold = (
            RESOURCE_THRESHOLD
            if args.resource_threshold is None
            else args.resource_threshold
        )
        module = from_onnx(
            args.model,
            batch="dynamic" if args.dynamic_batch else None,
            resource_threshold=threshold,
        )
        write_output(args.output, print_with_resources(module))
    except HeteroError as e:
        print(f"{args.model}: error: {e.message}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"hetero-import-onnx: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
