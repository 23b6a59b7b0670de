"""hetero's compile time of a light ONNX model (or of an ONNX file), in a
process of its own, as `bench.tvm_compile` times TVM's.

    python -m bench.hetero_compile MODEL THREADS DATA_LAYOUT

prints the seconds of two `hetero.compile`s of the model as `bench onnx`
compiles it (seeded random weights, the `llvm` target with `num_threads` and
`data_layout`), after its import (not timed): the first compile of a fresh
process, like TVM's, then the same again.  Neither hetero nor TVM then pays
for the other's state (the bench's own process holds onnxruntime's sessions
and compiled networks, 1.4 GB with ResNet-50, and each fork of hetero's
compile workers costs more the larger its parent), and each pays its own
first call: hetero imports its code generation then (xDSL's dialects,
llvmlite: about 0.1 s) and compiles its thread pool, which the second
compile has done.  TVM's second compile takes as long as its first.
"""

import os
import sys
import time


def compile_seconds(name: str, threads: int, data_layout: str) -> list[float]:
    import hetero
    from bench.onnx import bench_model, with_threads
    from hetero.frontends.onnx import from_onnx

    module = with_threads(from_onnx(bench_model(name)), threads, data_layout)
    seconds = []
    for _ in range(2):
        start = time.perf_counter()
        hetero.compile(module)
        seconds.append(time.perf_counter() - start)
    return seconds


if __name__ == "__main__":
    os.environ["HETERO_CACHE_DIR"] = ""  # from scratch, as `python -m bench` compiles
    name, threads, data_layout = sys.argv[1:4]
    print(
        " ".join(f"{s:.4f}" for s in compile_seconds(name, int(threads), data_layout))
    )
