"""TVM's compile time of a light ONNX model, the reference of `python -m bench onnx`
(or of an ONNX file: `python -m bench models`).

    python -m bench.tvm_compile MODEL ROUNDS

prints one line, the seconds of each of `ROUNDS` calls of `tvm.compile` on the
model (seeded random weights, as `bench onnx` compiles it): TVM's default
relax pipeline for `llvm -mcpu=<host>` (LegalizeOps, FoldConstant, FuseOps,
FuseTIR, lowering; no schedule), the reference docs/performance.md
records.  It runs in a process of its own, started by `bench onnx`: TVM
and llvmlite each carry an LLVM, which are best kept apart.
"""

import sys
import time


def compile_seconds(name: str, rounds: int) -> list[float]:
    import tvm
    from tvm.relax.frontend.onnx import from_onnx

    from bench.onnx import bench_model

    model = bench_model(name)
    initializers = {i.name for i in model.graph.initializer}
    shapes = {
        i.name: [d.dim_value for d in i.type.tensor_type.shape.dim]
        for i in model.graph.input
        if i.name not in initializers
    }
    module = from_onnx(model, shape_dict=shapes, keep_params_in_input=False)
    target = tvm.target.Target(
        {"kind": "llvm", "mcpu": tvm.target.codegen.llvm_get_system_cpu()}
    )
    seconds = []
    for _ in range(rounds):
        start = time.perf_counter()
        tvm.compile(module, target)
        seconds.append(time.perf_counter() - start)
    return seconds


if __name__ == "__main__":
    print(" ".join(f"{s:.4f}" for s in compile_seconds(sys.argv[1], int(sys.argv[2]))))
