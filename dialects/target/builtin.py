"""The target kinds hetero ships with.

One table: regular code generators (`llvm`, `cuda`) and the external codegens
that own partitions handed to a library.  The CPU libraries
are `blas` (OpenBLAS) and `dnnl` (oneDNN).
"""

from hetero.dialects.target.kind import (
    DeviceType,
    OptionSpec,
    TargetKind,
    register_target_kind,
)

_LLVM_OPTIONS = {
    "mcpu": OptionSpec(str, doc="CPU name for LLVM (default: the host CPU)"),
    "mtriple": OptionSpec(
        str,
        doc="target triple (default: the host's); another architecture's, e.g. "
        "aarch64-linux-gnu, gets its ISA's schedules and code that is written out, not run",
    ),
    "mattr": OptionSpec(list, doc="extra LLVM target features, e.g. ['+avx512f']"),
    "opt_level": OptionSpec(
        int,
        default=3,
        choices=(0, 1, 2, 3),
        doc="LLVM's optimization level",
        aliases=("opt-level",),
    ),
    "num_threads": OptionSpec(
        int,
        doc="threads of the functions' parallel loops where a call sets none "
        "(f(..., num_threads=n), using_threads); unset: HETERO_NUM_THREADS, else "
        "the CPUs the process may use (affinity, cgroup quota), read at run time; "
        "1 compiles them as serial loops, which no call makes parallel",
        aliases=("num-cores",),
    ),
    "parallel_min_ops": OptionSpec(
        int,
        default=262144,
        doc="a parallel loop that runs fewer ops (trips times its body's, counted "
        "at compile time; decided at run time for a run-time trip count) runs on "
        "its caller alone, without waking the thread pool; 0: every loop shares",
    ),
    "winograd": OptionSpec(
        int,
        default=4,
        choices=(0, 2, 4),
        doc="the largest output tile m of Winograd's F(m x m, 3 x 3) a 3x3 "
        "convolution may use: 4 multiplies least, 2 is about three times as "
        "accurate, 0 computes every convolution directly",
    ),
    "data_layout": OptionSpec(
        str,
        default="NCHW",
        choices=("NCHW", "NCHWc"),
        doc="activations between convolutions: NCHWc blocks the channels by the "
        "vector width (alter-data-layout)",
    ),
}

_CUDA_OPTIONS = {
    "arch": OptionSpec(
        str,
        default="sm_90",
        pattern="sm_[0-9]+a?",
        doc="SM architecture, e.g. sm_80, sm_90, sm_90a",
        aliases=("mcpu",),
    ),
    "max_threads_per_block": OptionSpec(
        int, default=1024, aliases=("max_num_threads",)
    ),
    "max_shared_memory_per_block": OptionSpec(int, default=49152),
}

_GPU_LIBRARY_OPTIONS = {
    "arch": OptionSpec(str, doc="SM architecture of the library build")
}

BUILTIN_KINDS = (
    TargetKind(
        "llvm",
        DeviceType.cpu,
        _LLVM_OPTIONS,
        keys=("cpu",),
        doc="native CPU code through LLVM (llvmlite)",
    ),
    TargetKind(
        "cuda",
        DeviceType.cuda,
        _CUDA_OPTIONS,
        keys=("cuda", "gpu"),
        supports_calls=False,
        doc="NVIDIA GPUs: PTX through LLVM's NVPTX backend",
    ),
    TargetKind(
        "cublas",
        DeviceType.cuda,
        _GPU_LIBRARY_OPTIONS,
        keys=("cuda", "gpu"),
        is_external_codegen=True,
        doc="cuBLAS for dense/matmul partitions",
    ),
    TargetKind(
        "cudnn",
        DeviceType.cuda,
        _GPU_LIBRARY_OPTIONS,
        keys=("cuda", "gpu"),
        is_external_codegen=True,
        doc="cuDNN for convolution partitions",
    ),
    TargetKind(
        "cutlass",
        DeviceType.cuda,
        _GPU_LIBRARY_OPTIONS,
        keys=("cuda", "gpu"),
        is_external_codegen=True,
        relay_to_tir=True,
        doc="CUTLASS templates",
    ),
    TargetKind(
        "tensorrt",
        DeviceType.cuda,
        _GPU_LIBRARY_OPTIONS,
        keys=("cuda", "gpu"),
        is_external_codegen=True,
        relay_to_tir=True,
        doc="TensorRT engines",
    ),
    TargetKind(
        "blas",
        DeviceType.cpu,
        {},
        keys=("cpu",),
        is_external_codegen=True,
        doc="a CPU BLAS (OpenBLAS) for dense/matmul partitions",
    ),
    TargetKind(
        "dnnl",
        DeviceType.cpu,
        {},
        keys=("cpu",),
        is_external_codegen=True,
        doc="oneDNN for conv2d/dense/matmul partitions with fused post-ops",
    ),
)

for _kind in BUILTIN_KINDS:
    register_target_kind(_kind)
