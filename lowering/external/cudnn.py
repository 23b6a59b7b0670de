"""The `cudnn` external codegen: GPU conv2d partitions as cuDNN calls from host code.

Every `Compiler = "cudnn"` global becomes a public `tir.prim_func` of the
same name (one memref per parameter, then one per result tensor) whose
buffers are CUDA managed memory, as a `GpuProgram`'s host code passes them
(`hetero.runtime.cuda`), and whose target is the host: it only calls.  Each
composite call of the partition (a match of the `cudnn` pattern table:
conv2d, with its bias and relu) is one layer (`hetero.runtime.cudnn.Convolution`):

* the conv2d gives the layer's data, weights (groups as cuDNN's group count
  on `[K, C/G, R, S]` weights, so depthwise too), padding, strides and
  dilation; the table takes NCHW data, OIHW weights and padding equal on both
  sides, which is what cuDNN's convolution descriptor says;
* a `bias_add` on the channels and a `relu` after it (`EPILOGUES`) become
  the layer's `cudnnAddTensor` and in-place `cudnnActivationForward`.

The layer is one `tir.call_extern` of its stub, named after everything the
layer is (`Convolution.stub_name`), on the pointers of x, w, the bias and y:
the host code's stubs (`hetero.lowering.cuda_codegen`) and the program's
first call (`hetero.runtime.cudnn.CudnnBinding`: descriptors, algorithm,
workspace, once) take it from there.  The codegen itself needs no GPU and
makes no cuDNN call; without the library the kind is not offered (`available`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue

from hetero.dialects import relay, tir
from hetero.dialects.target.config import module_config
from hetero.lowering.external.composites import CompositeLowering
from hetero.lowering.external.gemm import partition_prim_func
from hetero.runtime import cudnn as cudnn_runtime
from hetero.runtime.cudnn import Convolution
from hetero.targets.codegen import ExternalCodegen
from hetero.te.emit import Emitter
from hetero.utils.diagnostics import HeteroError

EPILOGUES: dict[type[Operation], str] = {relay.BiasAddOp: "bias", relay.ReluOp: "relu"}
"""Op after the conv2d → the layer's flag it sets, in the order cuDNN applies them."""


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


LAYOUTS = ("NCHW", "OIHW", "NCHW")
"""The data, kernel and result layouts cuDNN's descriptors here describe."""


def layer_of(callee: relay.FnOp) -> tuple[Convolution, list[SSAValue]]:
    """The layer computing the composite `callee` (a conv2d, then a chain of
    `EPILOGUES` each reading the one before, in their order), and the
    composite's values it reads: x, w, then the bias if it has one."""
    *ops, _ = callee.body.block.ops
    conv, *chain = ops
    if not isinstance(conv, relay.Conv2DOp):
        raise HeteroError(f"cudnn: {conv.name} is not a convolution of cuDNN's", conv)
    layouts = (conv.data_layout, conv.kernel_layout, conv.out_layout)
    top, left, bottom, right = conv.padding
    if layouts != LAYOUTS or (top, left) != (bottom, right):
        raise HeteroError(
            f"cudnn: a conv2d of layouts {layouts} and padding {conv.padding}; cuDNN's "
            f"takes layouts {LAYOUTS} and the same padding on both sides",
            conv,
        )
    operands = list(conv.operands)
    flags: dict[str, bool] = {}
    value = conv.results[0]
    order = list(EPILOGUES.values())
    for op in chain:
        flag = EPILOGUES.get(type(op))
        last = max((order.index(f) for f in flags), default=-1)
        if flag is None or op.operands[0] is not value or order.index(flag) <= last:
            raise HeteroError(
                f"cudnn: {op.name} cannot follow the cuDNN convolution", op
            )
        flags[flag] = True
        operands += op.operands[1:]
        value = op.results[0]
    layer = Convolution(
        str(conv.results[0].type.element_type),  # type: ignore[attr-defined]
        _shape(conv.operands[0]),  # type: ignore[arg-type]
        _shape(conv.operands[1]),  # type: ignore[arg-type]
        (top, left),
        tuple(conv.strides),  # type: ignore[arg-type]
        tuple(conv.dilation),  # type: ignore[arg-type]
        conv.groups,
        **flags,
    )
    if layer.output() != _shape(value):
        raise HeteroError(
            f"cudnn: cuDNN's result would be {layer.output()}, not {_shape(value)}",
            conv,
        )
    return layer, operands


class PartitionLowering(CompositeLowering):
    """Lowers one partition's composite calls, one cuDNN layer each."""

    kind = "cudnn"
    library = "cuDNN"

    def call(self, op: Operation, callee: relay.FnOp, destination: SSAValue) -> None:
        """The call of the layer's stub on x, w, the bias (if any) and y."""
        layer, operands = layer_of(callee)
        outer = self.outer(op, callee)
        buffers = [*(self.buffers[outer[v]] for v in operands), destination]
        e = self.emitter
        pointers = [e.op(memref.ExtractAlignedPointerAsIndexOp.get(b)) for b in buffers]
        e.op(tir.CallExternOp(layer.stub_name(), pointers))


def lower_partition(func: relay.FuncOp, host: Operation) -> tir.PrimFuncOp:
    """The host prim_func running the `cudnn` partition `func` on managed buffers."""
    prim = partition_prim_func(func, "cudnn")
    prim.target = host  # type: ignore[assignment]
    entry = prim.body.block
    PartitionLowering(Emitter(entry, entry, {})).lower(func, entry.args)
    return prim


def generate(
    module: ModuleOp, functions: Sequence[relay.FuncOp]
) -> list[tir.PrimFuncOp]:
    """The hook: every `cudnn` partition of the module, in one go."""
    host = module_config(module, None, "external-codegen").host_target
    return [lower_partition(func, host) for func in functions]


def available() -> str | None:
    """The library's presence decides (looked up at each call, so that a test
    can stand in for it); a GPU is only needed to run the program."""
    return cudnn_runtime.unavailable_reason()


CODEGEN = ExternalCodegen(
    "cudnn",
    generate,
    available,
    doc="cudnnConvolutionForward (+ cudnnAddTensor, cudnnActivationForward) from host code",
)
