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
call.  The program's buffers stay row-major (NCHW, OIHW); oneDNN picks its
own (blocked) layouts for weights and convolution activations: weights that
are constants at the partition's call site are reordered into it here, once
(`Dnnl.reordered_weights`), their address passed instead of the buffer, and
the plan reorders the rest per call into buffers the prim_func allocates
(`Plan.scratch`).  Without the library, `available()` says what to install
and the kind is not offered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    ModuleOp,
    TensorType,
    f32,
    i1,
    i32,
)
from xdsl.ir import Operation, SSAValue

from hetero.dialects import relay, tir
from hetero.interpreter.relay import constant_value
from hetero.lowering.external.composites import CompositeLowering
from hetero.lowering.external.gemm import partition_prim_func
from hetero.runtime import dnnl as dnnl_runtime
from hetero.runtime.dnnl import Convolution, Dnnl, Matmul, PostOps, Spec
from hetero.targets.codegen import ExternalCodegen
from hetero.te.emit import Emitter
from hetero.utils.diagnostics import HeteroError


def _tensor(value: SSAValue) -> dnnl_runtime.Tensor:
    assert isinstance(value.type, TensorType)
    return dnnl_runtime.Tensor(tuple(value.type.get_shape()))


@dataclass
class Primitive:
    """One composite as a oneDNN primitive being assembled: its anchor's
    arguments, then the epilogue's bias and post-ops."""

    anchor: Operation
    build: Callable[[Primitive, bool], Spec]
    """The spec, given whether the weights are a compile-time constant."""
    src: SSAValue
    weights: SSAValue | None = None
    """None: a primitive without weights (LRN)."""
    bias: SSAValue | None = None
    post_ops: list[str | SSAValue] = field(default_factory=list)
    result: SSAValue | None = None

    def inputs(self) -> list[SSAValue]:
        """The values whose buffers the plan takes, in its order (the
        destination goes between the bias and the addends)."""
        weights = [self.weights] if self.weights is not None else []
        bias = [self.bias] if self.bias is not None else []
        return [self.src, *weights, *bias]

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

    def build(p: Primitive, constant: bool) -> Convolution:
        bias = dnnl_runtime.Tensor((o,)) if p.bias is not None else None
        return Convolution(
            _tensor(x), weights, bias, _tensor(p.result), tuple(op.strides),  # type: ignore[arg-type]
            tuple(op.dilation), tuple(op.padding), p.spec_post_ops(), constant,  # type: ignore[arg-type]
        )  # fmt: skip

    return Primitive(op, build, x, w)


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

    def build(p: Primitive, constant: bool) -> Matmul:
        dst = _tensor(p.result)
        bias = dnnl_runtime.Tensor((1,) * (len(dst.dims) - 1) + dst.dims[-1:])
        return Matmul(
            _tensor(a),
            weights,
            bias if p.bias else None,
            dst,
            p.spec_post_ops(),
            constant,
        )

    return Primitive(op, build, a, b)


def _lrn(op: Operation) -> Primitive:
    """LRN across channels (the pattern table takes NCHW, axis 1, odd sizes)."""
    assert isinstance(op, relay.LRNOp)
    x = op.operands[0]

    def build(p: Primitive, constant: bool) -> dnnl_runtime.Lrn:
        return dnnl_runtime.Lrn(_tensor(x), op.size, op.alpha, op.beta, op.bias)

    return Primitive(op, build, x)


ANCHORS: dict[type[Operation], Callable[[Operation], Primitive]] = {
    relay.Conv2DOp: _conv2d,
    relay.DenseOp: _gemm,
    relay.MatmulOp: _gemm,
    relay.LRNOp: _lrn,
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


@dataclass(kw_only=True)
class PartitionLowering(CompositeLowering):
    """Lowers one partition's composite calls, one oneDNN plan each."""

    kind = "dnnl"
    library = "oneDNN"
    dnnl: Dnnl
    constants: dict[SSAValue, np.ndarray] = field(default_factory=dict)
    """The partition's parameters that are constants at its call site."""

    def call(self, op: Operation, callee: relay.FnOp, destination: SSAValue) -> None:
        """One `hetero_dnnl_execute` of the composite `callee` called by `op`."""
        primitive = primitive_of(callee)
        outer = self.outer(op, callee)
        weights = (
            self.constants.get(outer[primitive.weights])
            if primitive.weights is not None
            else None
        )
        try:
            plan = self.dnnl.plan(primitive.build(primitive, weights is not None))
            blocked = (
                self.dnnl.reordered_weights(plan, weights)
                if plan.weights is not None
                else None
            )
        except dnnl_runtime.DnnlError as e:
            raise HeteroError(f"dnnl: {e}", primitive.anchor) from e
        values = [*primitive.inputs(), None, *primitive.addends()]
        buffers: list[SSAValue | int] = [
            destination if v is None else self.buffers[outer[v]] for v in values
        ]
        if blocked is not None:
            buffers[1] = blocked
        buffers += [self.emitter.alloc([-(-n // 4)], f32) for n in plan.scratch]
        self._execute(plan.address, buffers)

    def _execute(self, plan: int, buffers: Sequence[SSAValue | int]) -> None:
        """The call; a buffer given as an int is that address (a constant
        the plan holds in oneDNN's layout)."""
        e = self.emitter
        pointers = e.alloc([len(buffers)], IndexType(), scope="local")
        for i, buffer in enumerate(buffers):
            pointer = (
                e.constant(buffer, IndexType())
                if isinstance(buffer, int)
                else e.op(memref.ExtractAlignedPointerAsIndexOp.get(buffer))
            )
            e.store(pointer, pointers, [i])
        array = e.op(memref.ExtractAlignedPointerAsIndexOp.get(pointers))
        address = e.constant(plan, IndexType())
        e.op(tir.CallExternOp(dnnl_runtime.EXECUTE, [address, array], [i32]))


def constant_parameters(
    module: ModuleOp, func: relay.FuncOp
) -> dict[SSAValue, np.ndarray]:
    """`func`'s parameters bound to a `relay.constant` at its only call site
    (a network's weights): their values, for layouts chosen at compile time."""
    calls = [
        op
        for op in module.walk()
        if isinstance(op, relay.CallOp) and op.callee.root_reference == func.sym_name
    ]
    if len(calls) != 1:
        return {}
    return {
        param: constant_value(arg.owner)
        for param, arg in zip(func.args, calls[0].args)
        if isinstance(arg.owner, relay.ConstantOp)
    }


def lower_partition(
    func: relay.FuncOp,
    library: Dnnl,
    constants: dict[SSAValue, np.ndarray] | None = None,
) -> tir.PrimFuncOp:
    """The prim_func computing the `dnnl` partition `func` with oneDNN
    primitives; `constants`: its parameters known at compile time."""
    prim = partition_prim_func(func, "dnnl")
    prim.attributes["tir.noalias"] = IntegerAttr(1, i1)
    entry = prim.body.block
    emitter = Emitter(entry, entry, {})
    PartitionLowering(emitter, dnnl=library, constants=constants or {}).lower(
        func, entry.args
    )
    return prim


def generate(
    module: ModuleOp, functions: Sequence[relay.FuncOp]
) -> list[tir.PrimFuncOp]:
    """The hook: every `dnnl` partition of the module, in one go."""
    library = dnnl_runtime.load_dnnl()
    return [
        lower_partition(func, library, constant_parameters(module, func))
        for func in functions
    ]


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
