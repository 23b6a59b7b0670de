"""`python -m bench` lists the benchmarks; `python -m bench NAME` runs one."""

import os
import sys
from importlib import import_module

from bench import BENCHMARKS
from bench.common import MATTR_VARIABLE, machine

MATTR_FLAG = "--mattr="
"""`python -m bench --mattr=-avx512f NAME`: hetero's code for other CPU
features than the host's (an AVX-512 host runs the AVX2 schedules so)."""


def main(argv: list[str]) -> int:
    if argv and argv[0].startswith(MATTR_FLAG):
        os.environ[MATTR_VARIABLE] = argv.pop(0)[len(MATTR_FLAG) :]
    if not argv or argv[0] not in BENCHMARKS:
        if argv:
            print(f"unknown benchmark '{argv[0]}'", file=sys.stderr)
        print("benchmarks (python -m bench NAME):")
        for name, (_, what) in BENCHMARKS.items():
            print(f"  {name:16} {what}")
        print(f"options before NAME: {MATTR_FLAG}FEATURES (e.g. -avx512f)")
        return 0 if not argv else 1
    module, _ = BENCHMARKS[argv[0]]
    # Compile times are of compiles from scratch; `bench onnx` times the
    # compile cache apart (`cached_compile_line`).
    os.environ["HETERO_CACHE_DIR"] = ""
    print(f"machine: {machine()}")
    import_module(module).main(argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
