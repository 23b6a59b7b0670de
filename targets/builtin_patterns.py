"""The pattern tables of hetero's built-in external-codegen kinds.

What each library has a kernel for, as data (see `hetero.targets.patterns`);
larger patterns come first in each table, since order is priority.  The
predicates say what the library's entry points accept: BLAS has `sgemm` and
`dgemm` only, the GPU libraries also take `f16`; a batched matmul is one
`gemm_batched` call only when both operands have the same batch size.
"""

from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Operation

from hetero.targets.patterns import (
    CompositePattern,
    OpPattern,
    Predicate,
    attr_in,
    dtype_in,
    is_op,
    rank_in,
    static_shapes,
    wildcard,
)

_CPU_BLAS_DTYPES = ("f32", "f64")
_GPU_DTYPES = ("f16", "f32", "f64")
_TENSOR_CORE_DTYPES = ("f16", "f32")


def _same_batch(op: Operation) -> bool:
    """`[B, M, K] x [B, K, N]` with one static B: no broadcasting of the batch."""
    a, b = (t.get_shape() for t in op.operand_types if isinstance(t, TensorType))
    return a[0] == b[0] != DYNAMIC_INDEX


def _dense(ok: Predicate) -> OpPattern:
    """A dense whose weight is `[N, K]`, as GEMM libraries read it (not in
    the panels `alter-op-layout` packs for hetero's own GEMM)."""
    return is_op("nn.dense", wildcard(), wildcard()).where(
        ok, attr_in("weight_layout", "NK")
    )


def _bias(inner: OpPattern, ok: Predicate, axes: tuple[int, ...]) -> OpPattern:
    """`nn.bias_add(inner, bias)` with the bias on one of `axes` (the output channels)."""
    return is_op("nn.bias_add", inner, wildcard()).where(ok, attr_in("axis", *axes))


def _relu(inner: OpPattern, ok: Predicate) -> OpPattern:
    return is_op("relu", inner).where(ok)


def _gemm_table(dtypes: tuple[str, ...]) -> list[CompositePattern]:
    """dense (+ bias), matmul and batched matmul: what a GEMM library runs."""
    ok = dtype_in(*dtypes)
    return [
        CompositePattern(
            "dense_bias", _bias(_dense(ok), ok, (1, -1)), "x·wᵀ + b: gemm with beta = 1"
        ),
        CompositePattern("dense", _dense(ok), "x·wᵀ: one gemm"),
        CompositePattern(
            "batch_matmul",
            is_op("matmul", wildcard(), wildcard()).where(ok, rank_in(3), _same_batch),
            "a·b per batch: gemm_batched",
        ),
        CompositePattern(
            "matmul",
            is_op("matmul", wildcard(), wildcard()).where(ok, rank_in(2)),
            "a·b: one gemm",
        ),
    ]


def _blas_table() -> list[CompositePattern]:
    """The BLAS codegen runs a GEMM's elementwise epilogue in place after the
    call (docs/external-codegens.md), so a relu after the bias joins too."""
    ok = dtype_in(*_CPU_BLAS_DTYPES)
    return [
        CompositePattern(
            "dense_bias_relu",
            _relu(_bias(_dense(ok), ok, (1, -1)), ok),
            "relu(x·wᵀ + b): gemm, then one in-place epilogue loop",
        ),
        *_gemm_table(_CPU_BLAS_DTYPES),
    ]


def _conv_table(dtypes: tuple[str, ...], *conv_ok: Predicate) -> list[CompositePattern]:
    """conv2d (where `conv_ok` holds), fused with its bias and relu where the
    library fuses them."""
    ok = dtype_in(*dtypes)
    conv = is_op("nn.conv2d", wildcard(), wildcard()).where(ok, *conv_ok)
    return [
        CompositePattern("conv2d_bias_relu", _relu(_bias(conv, ok, (1,)), ok)),
        CompositePattern("conv2d_bias", _bias(conv, ok, (1,))),
        CompositePattern("conv2d", conv),
    ]


def _symmetric_padding(op: Operation) -> bool:
    """Padding the same on both sides: cuDNN's convolution descriptor has one
    padding per dimension."""
    top, left, bottom, right = op.padding  # type: ignore[attr-defined]
    return (top, left) == (bottom, right)


_CUDNN_CONV = (
    attr_in("data_layout", "NCHW"),
    attr_in("kernel_layout", "OIHW"),
    attr_in("out_layout", "NCHW"),
    static_shapes,
    _symmetric_padding,
)
"""The convolutions cuDNN's descriptors describe (any groups: depthwise too);
its bias and relu are `cudnnAddTensor` and `cudnnActivationForward` after
it (lowering/external/cudnn.py)."""


def _same_shapes(op: Operation) -> bool:
    """An elementwise op without broadcasting: oneDNN's binary post-op reads
    the addend as it reads the result."""
    return all(t == op.result_types[0] for t in op.operand_types)


def _epilogues(
    name: str, anchor: OpPattern, ok: Predicate, axes: tuple[int, ...]
) -> list[CompositePattern]:
    """`anchor` with a bias, a residual add (either operand) and a relu, each
    optional, largest first: what oneDNN takes as a primitive's bias and
    post-ops (lowering/external/dnnl.py)."""
    added = _bias(anchor, ok, axes)
    heads = [(f"{name}_bias", added), (name, anchor)]
    table = []
    for head, inner in heads:
        for suffix, residual in (
            ("_add", is_op("add", inner, wildcard())),
            ("_radd", is_op("add", wildcard(), inner)),
        ):
            residual = residual.where(ok, _same_shapes)
            table.append(CompositePattern(f"{head}{suffix}_relu", _relu(residual, ok)))
            table.append(CompositePattern(f"{head}{suffix}", residual))
    for head, inner in heads:
        table.append(CompositePattern(f"{head}_relu", _relu(inner, ok)))
        table.append(CompositePattern(head, inner))
    return table


def _dnnl_table() -> list[CompositePattern]:
    """oneDNN's CPU convolution (plain NCHW/OIHW, any groups: depthwise too)
    and matmul in f32, each with its bias, residual add and relu fused as
    post-ops; LRN across the channels of NCHW data (odd sizes, whose window
    oneDNN centres as ONNX does)."""
    ok = dtype_in("f32")
    conv = is_op("nn.conv2d", wildcard(), wildcard()).where(
        ok,
        attr_in("data_layout", "NCHW"),
        attr_in("kernel_layout", "OIHW"),
        attr_in("out_layout", "NCHW"),
        static_shapes,
    )
    matmul = is_op("matmul", wildcard(), wildcard()).where(ok, static_shapes)
    return [
        *_epilogues("conv2d", conv, ok, (1,)),
        *_epilogues("dense", _dense(ok).where(static_shapes), ok, (1, -1)),
        CompositePattern("batch_matmul", matmul.where(rank_in(3), _same_batch)),
        CompositePattern("matmul", matmul.where(rank_in(2))),
        CompositePattern(
            "lrn",
            is_op("nn.lrn", wildcard()).where(
                ok, static_shapes, rank_in(4), attr_in("axis", 1), _odd_size
            ),
        ),
    ]


def _odd_size(op: Operation) -> bool:
    return op.size % 2 == 1  # type: ignore[attr-defined]


def _cutlass_table() -> list[CompositePattern]:
    """CUTLASS epilogues fuse bias and relu into the GEMM; no f64 tensor cores."""
    ok = dtype_in(*_TENSOR_CORE_DTYPES)
    return [
        CompositePattern("dense_bias_relu", _relu(_bias(_dense(ok), ok, (1, -1)), ok)),
        *_gemm_table(_TENSOR_CORE_DTYPES),
        *_conv_table(_TENSOR_CORE_DTYPES),
    ]


def _tensorrt_table() -> list[CompositePattern]:
    """TensorRT builds engines for static shapes; one layer per op here."""
    ok = dtype_in(*_TENSOR_CORE_DTYPES)
    ops = (
        "nn.conv2d",
        "nn.dense",
        "relu",
        "sigmoid",
        "tanh",
        "add",
        "multiply",
        "nn.softmax",
        "nn.max_pool2d",
        "nn.avg_pool2d",
        "nn.global_avg_pool2d",
    )
    return [
        CompositePattern(name.removeprefix("nn."), is_op(name).where(ok, static_shapes))
        for name in ops
    ]


BUILTIN_PATTERNS: dict[str, list[CompositePattern]] = {
    "blas": _blas_table(),
    "dnnl": _dnnl_table(),
    "cublas": _gemm_table(_GPU_DTYPES),
    "cudnn": _conv_table(_GPU_DTYPES, *_CUDNN_CONV),
    "cutlass": _cutlass_table(),
    "tensorrt": _tensorrt_table(),
}
"""Kind name → pattern table, registered before any entry point's."""
