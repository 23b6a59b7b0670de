"""What the codegens of composite-at-a-time libraries (`dnnl`, `cudnn`) share:
a partition lowered one library call per composite call.

Such a library computes a whole match of its pattern table (an anchor and
its epilogue) in one call, so its partition is lowered composite by
composite, not op by op as the GEMM libraries' are (`gemm.PartitionBuilder`):
each call writes the partition's output where its result is returned, else
a buffer the prim_func allocates, and reads its operands' buffers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from xdsl.ir import Operation, SSAValue

from hetero.dialects import relay
from hetero.lowering.external.gemm import buffer_type
from hetero.te.emit import Emitter, Tensor, store_all
from hetero.transforms.byoc import composite_callee
from hetero.transforms.lower_aot_main import returned_leaves
from hetero.utils.diagnostics import HeteroError


@dataclass
class CompositeLowering:
    """Lowers one partition's composite calls into its prim_func's entry
    block; a kind says how one composite call becomes its library's (`call`)."""

    kind: ClassVar[str]
    """The kind's name, prefixing its diagnostics."""
    library: ClassVar[str]
    """The library's name in diagnostics."""
    emitter: Emitter
    buffers: dict[SSAValue, SSAValue] = field(default_factory=dict)
    """A value of the partition → the buffer holding it."""

    def lower(self, func: relay.FuncOp, args: Sequence[SSAValue]) -> None:
        """Lower `func` into the prim_func whose arguments are `args`
        (`partition_prim_func`'s: the parameters' memrefs, then the outputs')."""
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
                    f"{self.kind}: {op.name} cannot be compiled by the {self.library} "
                    f"codegen (it runs composites of the {self.kind} pattern table)",
                    op,
                )
            result = op.results[0]
            destination = destinations.get(result) or self._intermediate(op)
            self.call(op, callee, destination)
            self.buffers[result] = destination
        for leaf, out in zip(leaves, outputs):
            if self.buffers[leaf] is not out:
                store_all(self.emitter, Tensor.of_buffer(self.buffers[leaf]), out)

    def _intermediate(self, op: Operation) -> SSAValue:
        memref_type = buffer_type(op.results[0].type, "an intermediate", op, self.kind)
        return self.emitter.alloc(memref_type.get_shape(), memref_type.element_type)

    def call(self, op: Operation, callee: relay.FnOp, destination: SSAValue) -> None:
        """The library call computing the composite `callee` called by `op`
        into the buffer `destination`."""
        raise NotImplementedError

    def outer(self, op: Operation, callee: relay.FnOp) -> dict[SSAValue, SSAValue]:
        """The composite's parameters → the values `op` passes them."""
        return dict(zip(callee.body.block.args, op.args))  # type: ignore[attr-defined]
