"""The `dnnl` external codegen: conv2d and GEMM partitions as oneDNN primitives.

Every `Compiler = "dnnl"` global becomes a public `tir.prim_func` of the same
name and signature style as lower-te's kernels (one memref per parameter,
then one per result tensor).  Each composite call of the partition (a match
of the `dnnl` pattern table: `conv2d` or `dense`/`matmul` with its epilogue)
is one oneDNN primitive:

* the anchor (`ANCHORS`) gives the primitive: a convolution (groups as
  oneDNN's `[G, O/G, I/G, KH, KW]` weights, so depthwise too) or a matmul
  (a dense's `[N, K]` weight read transposed through its strides);
* the elementwise ops after it (`EPILOGUES`) become the primitive's bias and
  post-ops: a `bias_add` right after the anchor is its bias, an `add` of
  another tensor (a residual) a binary post-op, a `relu` an eltwise post-op,
  so a ResNet block's `relu(conv + b + x)` is one library call.

The primitive is made when the codegen runs (`hetero.runtime.dnnl`: once per
distinct layer and process), and the prim_func calls
`hetero_dnnl_execute(plan, buffers)` with the plan's address and a stack
array of its arguments' pointers: no Python and no primitive creation per
call.  All buffers are plain row-major (NCHW, OIHW), as the rest of the
program keeps them.  Without the library, `available()` says what to install
and the kind is not offered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hetero.dialects import relay, tir
from hetero.lowering.te_emit import Emitter, Tensor, store_all
from hetero.runtime import dnnl as dnnl_runtime
from hetero.runtime.dnnl import Convolution, Dnnl, Matmul, PostOps
from hetero.targets.codegen import ExternalCodegen
from hetero.targets.external.gemm import buffer_type, partition_prim_func
from hetero.transforms.byoc import composite_callee
from hetero.transforms.lower_aot_main import returned_leaves
from hetero.utils.diagnostics import HeteroError
from xdsl.dialects import memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, TensorType, i1, i32
from xdsl.ir import Operation, SSAValue


def _tensor(value: SSAValue) -> dnnl_runtime.Tensor:
    assert isinstance(value.type, TensorType)
    return dnnl_runtime.Tensor(tuple(value.type.get_shape()))


@dataclass
class Primitive:
    """One composite as a oneDNN primitive being assembled: its anchor's
    arguments, then the epilogue's bias and post-ops."""

    anchor: Operation
    build: Callable[[Primitive], Convolution | Matmul]
    src: SSAValue
    weights: SSAValue
    weights_tensor: dnnl_runtime.Tensor
    bias: SSAValue | None = None
    post_ops: list[str | SSAValue] = field(default_factory=list)
    result: SSAValue | None = None

    def inputs(self) -> list[SSAValue]:
        """The values whose buffers the plan takes, in its order (the
        destination goes between the bias and the addends)."""
        bias = [self.bias] if self.bias is not None else []
        return [self.src, self.weights, *bias]

    def addends(self) -> list[SSAValue]:
        return [p for p in self.post_ops if isinstance(p, SSAValue)]

    def spec_post_ops(self) -> PostOps:
        return PostOps(
            tuple(_tensor(p) if isinstance(p, SSAValue) else p for p in self.post_ops)
        )


def _conv2d(op: Operation) -> Primitive:
    x, w = op.operands
    assert isinstance(op, relay.Conv2DOp)
    o, i, kh, kw = w.type.get_shape()  # type: ignore[attr-defined]
    g = op.groups
    weights = dnnl_runtime.Tensor((g, o // g, i, kh, kw) if g > 1 else (o, i, kh, kw))

    def build(p: Primitive) -> Convolution:
        bias = dnnl_runtime.Tensor((o,)) if p.bias is not None else None
        return Convolution(
            _tensor(x), weights, bias, _tensor(p.result), tuple(op.strides),  # type: ignore[arg-type]
            tuple(op.dilation), tuple(op.padding), p.spec_post_ops(),  # type: ignore[arg-type]
        )  # fmt: skip

    return Primitive(op, build, x, w, weights)


def _gemm(op: Operation) -> Primitive:
    """dense (`x · wᵀ`: w's `[N, K]` read as `[K, N]` with strides `(1, K)`) or matmul."""
    a, b = op.operands
    shape = tuple(b.type.get_shape())  # type: ignore[attr-defined]
    transposed = isinstance(op, relay.DenseOp)
    weights = (
        dnnl_runtime.Tensor((shape[1], shape[0]), (1, shape[1]))
        if transposed
        else dnnl_runtime.Tensor(shape)
    )

    def build(p: Primitive) -> Matmul:
        dst = _tensor(p.result)
        bias = dnnl_runtime.Tensor((1,) * (len(dst.dims) - 1) + dst.dims[-1:])
        return Matmul(
            _tensor(a), weights, bias if p.bias else None, dst, p.spec_post_ops()
        )

    return Primitive(op, build, a, b, weights)


ANCHORS: dict[type[Operation], Callable[[Operation], Primitive]] = {
    relay.Conv2DOp: _conv2d,
    relay.DenseOp: _gemm,
    relay.MatmulOp: _gemm,
}
"""Relay op → the oneDNN primitive computing it."""


def _bias(p: Primitive, op: Operation, value: SSAValue) -> bool:
    if p.bias is not None or p.post_ops or op.operands[0] is not value:
        return False
    p.bias = op.operands[1]
    return True


def _add(p: Primitive, op: Operation, value: SSAValue) -> bool:
    other = [v for v in op.operands if v is not value]
    if len(other) != 1 or other[0].type != op.results[0].type:
        return False
    p.post_ops.append(other[0])
    return True


def _relu(p: Primitive, op: Operation, value: SSAValue) -> bool:
    p.post_ops.append("relu")
    return True


EPILOGUES: dict[type[Operation], Callable[[Primitive, Operation, SSAValue], bool]] = {
    relay.BiasAddOp: _bias,
    relay.AddOp: _add,
    relay.ReluOp: _relu,
}
"""Elementwise op after the anchor → how it joins the primitive (False: it cannot)."""


def primitive_of(callee: relay.FnOp) -> Primitive:
    """The primitive computing the composite `callee` (anchor first, then a
    chain of epilogue ops each reading the previous one)."""
    *ops, _ = callee.body.block.ops
    anchor, *chain = ops
    make = ANCHORS.get(type(anchor))
    if make is None:
        raise HeteroError(f"dnnl: {anchor.name} is not a primitive of oneDNN's", anchor)
    primitive = make(anchor)
    value = anchor.results[0]
    for op in chain:
        join = EPILOGUES.get(type(op))
        if join is None or not join(primitive, op, value):
            raise HeteroError(
                f"dnnl: {op.name} cannot be a post-op of the oneDNN {anchor.name}", op
            )
        value = op.results[0]
    primitive.result = value
    return primitive


@dataclass
class PartitionLowering:
    """Lowers one partition's composite calls into its prim_func's entry block."""

    library: Dnnl
    emitter: Emitter
    buffers: dict[SSAValue, SSAValue] = field(default_factory=dict)

    def lower(self, func: relay.FuncOp, args: Sequence[SSAValue]) -> None:
        params, outputs = args[: len(func.args)], args[len(func.args) :]
        self.buffers.update(zip(func.args, params))
        *ops, returned = func.body.block.ops
        value = returned.operands[0]
        leaves = returned_leaves(value)
        destinations: dict[SSAValue, SSAValue] = {}
        for leaf, out in zip(leaves, outputs):
            destinations.setdefault(leaf, out)
        for op in ops:
            if isinstance(op, relay.FnOp) or (
                op is value.owner and isinstance(op, relay.TupleOp)
            ):
                continue
            callee = composite_callee(op)
            if callee is None:
                raise HeteroError(
                    f"dnnl: {op.name} cannot be compiled by the oneDNN codegen "
                    "(it runs composites of the dnnl pattern table)",
                    op,
                )
            self._call(op, callee, destinations.get(op.results[0]))
        for leaf, out in zip(leaves, outputs):
            if self.buffers[leaf] is not out:
                store_all(self.emitter, Tensor.of_buffer(self.buffers[leaf]), out)

    def _call(
        self, op: Operation, callee: relay.FnOp, destination: SSAValue | None
    ) -> None:
        """One `hetero_dnnl_execute` of the composite `callee` called by `op`."""
        primitive = primitive_of(callee)
        outer = dict(zip(callee.body.block.args, op.args))  # type: ignore[attr-defined]
        if destination is None:
            memref_type = buffer_type(op.results[0].type, "an intermediate", op, "dnnl")
            destination = self.emitter.alloc(
                memref_type.get_shape(), memref_type.element_type
            )
        try:
            plan = self.library.plan(primitive.build(primitive))
        except dnnl_runtime.DnnlError as e:
            raise HeteroError(f"dnnl: {e}", primitive.anchor) from e
        values = [*primitive.inputs(), None, *primitive.addends()]
        buffers = [destination if v is None else self.buffers[outer[v]] for v in values]
        self._execute(plan.address, buffers)
        self.buffers[op.results[0]] = destination

    def _execute(self, plan: int, buffers: Sequence[SSAValue]) -> None:
        e = self.emitter
        pointers = e.alloc([len(buffers)], IndexType(), scope="local")
        for i, buffer in enumerate(buffers):
            e.store(
                e.op(memref.ExtractAlignedPointerAsIndexOp.get(buffer)), pointers, [i]
            )
        array = e.op(memref.ExtractAlignedPointerAsIndexOp.get(pointers))
        address = e.constant(plan, IndexType())
        e.op(tir.CallExternOp(dnnl_runtime.EXECUTE, [address, array], [i32]))


def lower_partition(func: relay.FuncOp, library: Dnnl) -> tir.PrimFuncOp:
    """The prim_func computing the `dnnl` partition `func` with oneDNN primitives."""
    prim = partition_prim_func(func, "dnnl")
    prim.attributes["tir.noalias"] = IntegerAttr(1, i1)
    entry = prim.body.block
    PartitionLowering(library, Emitter(entry, entry, {})).lower(func, entry.args)
    return prim


def generate(
    module: ModuleOp, functions: Sequence[relay.FuncOp]
) -> list[tir.PrimFuncOp]:
    """The hook: every `dnnl` partition of the module, in one go."""
    library = dnnl_runtime.load_dnnl()
    return [lower_partition(func, library) for func in functions]


def available() -> str | None:
    try:
        dnnl_runtime.load_dnnl()
    except dnnl_runtime.DnnlUnavailable as e:
        return str(e)
    return None


CODEGEN = ExternalCodegen(
    "dnnl",
    generate,
    available,
    doc="oneDNN convolution and matmul primitives (onednn-cpu-gomp)",
)
