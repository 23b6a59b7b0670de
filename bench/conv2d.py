"""fp32 conv2d 1×64×56×56, 64 filters 3×3, pad 1, from hetero's own code
generation vs an im2col + matmul NumPy version and vs onnxruntime.

hetero compiles `relay.nn.conv2d` through `hetero.compile` (the direct conv
schedule of `lowering/schedules/cpu.py`).  The NumPy reference builds the
576×3136 im2col matrix with `sliding_window_view` and multiplies it by the
64×576 weights (OpenBLAS, `OPENBLAS_CORETYPE` as set); onnxruntime runs a
one-node `Conv` model built with `onnx.helper` (both cores, its threads not
spinning between runs, which would steal the other implementations' cores).
hetero and onnxruntime also run on one thread each: on this shared 2-core
machine the second core is often busy, and the one-thread figures compare
the kernels.  All run in interleaved rounds in this process; X =
onnxruntime time / hetero time (both threads).
"""

import os

import hetero
import numpy as np

from bench.common import interleaved, sizes_argument

BATCH, CHANNELS, SIZE, FILTERS, KERNEL = 1, 64, 56, 64, 3
ROUNDS = 25
PEAK_PER_CORE = 245.0


def _t(*shape: int) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def program(threads: int | None = None) -> str:
    x = _t(BATCH, CHANNELS, SIZE, SIZE)
    w = _t(FILTERS, CHANNELS, KERNEL, KERNEL)
    y = _t(BATCH, FILTERS, SIZE, SIZE)
    options = f", {{num_threads = {threads}}}" if threads else ""
    return (
        "builtin.module attributes {target.config = "
        f'#target.config<[#target.target<"llvm"{options}>]>}} {{\n'
        f"  relay.func @main(%x: {x}, %w: {w}) -> {y} {{\n"
        f"    %y = relay.nn.conv2d %x, %w {{padding = array<i64: 1, 1, 1, 1>}} : ({x}, {w}) -> {y}\n"
        f"    relay.return %y : {y}\n  }}\n}}\n"
    )


def im2col_conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """conv2d (stride 1, pad 1) as one matmul over the im2col matrix."""
    padded = np.pad(x[0], ((0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (KERNEL, KERNEL), axis=(1, 2))
    cols = np.ascontiguousarray(windows.transpose(0, 3, 4, 1, 2)).reshape(
        CHANNELS * KERNEL * KERNEL, SIZE * SIZE
    )
    return (w.reshape(FILTERS, -1) @ cols).reshape(1, FILTERS, SIZE, SIZE)


def onnxruntime_conv(w: np.ndarray, threads: int = 0):  # type: ignore[no-untyped-def]
    """A callable running the one-node Conv model, or None without onnxruntime."""
    try:
        import onnxruntime
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return None
    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])
    graph = helper.make_graph(
        [node],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, CHANNELS, SIZE, SIZE])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [BATCH, FILTERS, SIZE, SIZE])],
        [numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    options = onnxruntime.SessionOptions()
    # Its idle threads would otherwise spin into the next implementation's round.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return lambda x: session.run(None, {"x": x})[0]


def main(argv: list[str]) -> None:
    sizes_argument("conv2d", argv)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, CHANNELS, SIZE, SIZE)).astype(np.float32)
    w = rng.standard_normal((FILTERS, CHANNELS, KERNEL, KERNEL)).astype(np.float32)
    compiled = hetero.compile(program())
    single = hetero.compile(program(threads=1))
    reference = im2col_conv(x.astype(np.float64), w.astype(np.float64))
    error = np.abs(compiled(x, w) - reference).max()
    assert error < 1e-3, f"hetero's conv2d is wrong (max error {error})"
    ort, ort_single = onnxruntime_conv(w), onnxruntime_conv(w, threads=1)
    fns = [lambda: compiled(x, w), lambda: im2col_conv(x, w), lambda: single(x, w)]
    if ort is not None:
        fns += [lambda: ort(x), lambda: ort_single(x)]
    times = interleaved(fns, ROUNDS)
    flops = 2.0 * BATCH * FILTERS * SIZE * SIZE * CHANNELS * KERNEL * KERNEL
    names = [
        "hetero",
        "numpy im2col+matmul",
        "hetero, 1 thread",
        "onnxruntime",
        "onnxruntime, 1 thread",
    ]
    cores = os.cpu_count() or 1
    print(f"{'implementation':>22} {'ms':>8} {'GF/s':>8} {'% peak':>7}  (peak: all cores)")
    for name, t in zip(names, times):
        gflops = flops / t / 1e9
        print(f"{name:>22} {1e3 * t:>8.3f} {gflops:>8.1f} {100 * gflops / (PEAK_PER_CORE * cores):>6.1f}%")
    detail = f"{times[1] / times[0]:.2f}× numpy im2col+matmul, median of {ROUNDS} interleaved rounds"
    if ort is None:
        print(f"conv2d: {times[1] / times[0]:.2f}× numpy im2col+matmul (onnxruntime not installed)")
    else:
        print(
            f"conv2d: {times[3] / times[0]:.2f}× onnxruntime ({detail}; one thread each: "
            f"{times[4] / times[2]:.2f}×; 1×64×56×56, 64 3×3 filters, pad 1)"
        )
