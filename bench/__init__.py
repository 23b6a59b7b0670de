"""hetero's benchmarks: `python -m bench NAME` (from the repository root).

`python -m bench NAME` first prints `machine: ...` (`bench.common.machine`:
the CPU's name, family and model, LLVM's name for it, the CPUs in use): the
machines of this workplace differ from day to day (a Zen 4 runs 512-bit
multiply-adds at half a Zen 5's rate), and the ratios are what compares.
Each benchmark measures hetero and its reference side by side in one process
(interleaved rounds, medians), prints a table and ends with one line
`NAME: X.XX× REFERENCE (details)`, X = reference time / hetero time (above 1:
hetero is faster).  Timings are never asserted in tests.
"""

BENCHMARKS = {
    "plan-devices": (
        "bench.plan_devices",
        "device planning on generated graphs of 1k-100k ops",
    ),
    "matmul": ("bench.matmul", "fp32 matmul from hetero's codegen vs numpy.matmul"),
    "activations": (
        "bench.activations",
        "fp32 exp, log, tanh, sigmoid, SiLU, GELU, softmax on transformer-sized tensors vs onnxruntime",
    ),
    "attention": (
        "bench.attention",
        "fp32 BERT-base self-attention (seq 128/256, 12 heads x 64) vs onnxruntime, 1/2 threads",
    ),
    "conv2d": (
        "bench.conv2d",
        "fp32 conv2d layers of ResNet-50/MobileNet (1x1, 3x3, strided, depthwise) vs onnxruntime",
    ),
    "compile-time": (
        "bench.compile_time",
        "hetero.compile time of the benchmark programs, per pass",
    ),
    "gpu-matmul": (
        "bench.gpu_matmul",
        "fp32 matmul 4096² from hetero's PTX vs cuBLAS (needs a GPU)",
    ),
    "gpu-onnx": (
        "bench.gpu_onnx",
        "ONNX models (squeezenet, resnet50) whole on the GPU vs PyTorch on cuDNN (needs a GPU)",
    ),
    "gpu-models": (
        "bench.gpu_models",
        "the model corpus whole on the GPU vs PyTorch running the same modules (needs a GPU)",
    ),
    "blas": (
        "bench.blas",
        "fp32 matmul and an MLP through the BLAS partition vs NumPy",
    ),
    "onnx": (
        "bench.onnx",
        "ONNX models (squeezenet, resnet50) imported and compiled vs onnxruntime, 1/2 threads; compile time vs TVM where installed",
    ),
    "dynamic": (
        "bench.dynamic",
        "a BERT-like encoder of dynamic sequence length compiled once vs compiled per length",
    ),
    "collage": (
        "bench.collage",
        "Collage's measured plan vs llvm, llvm+blas, llvm+dnnl on CNNs and a transformer; search time cold and warm",
    ),
    "models": (
        "bench.models",
        "the model corpus (torchvision CNNs and ViT, DistilBERT, GPT-2; torch.onnx exports) vs onnxruntime, 1/2 threads; compile time vs TVM where installed",
    ),
}
