"""`npu-offload`: move `x * c` (a splat constant `c`) to the NPU as `npu.scale`.

The op lands on the NPU by its `vdevice` attribute — the same attribute hetero's
device planner reads — so the rest of the pipeline knows where it runs.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.utils.exceptions import VerifyException

from hetero.dialects.target import TargetAttr, VirtualDeviceAttr
from hetero.utils.diagnostics import HeteroError
from hetero_npu.dialect import ScaleOp


def _splat_factor(value: SSAValue) -> float | None:
    """The scalar of a splat `relay.constant`, or None."""
    owner = value.owner
    if not isinstance(owner, Operation) or owner.name != "relay.constant":
        return None
    dense = owner.properties.get("value")
    if not isinstance(dense, DenseIntOrFPElementsAttr) or not dense.is_splat():
        return None
    return float(dense.get_values()[0])


@dataclass
class ScaleToNpu(RewritePattern):
    device: VirtualDeviceAttr

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if op.name != "relay.multiply" or op.results[0].type != op.operands[0].type:
            return
        factor = _splat_factor(op.operands[1])
        if factor is not None:
            rewriter.replace(op, ScaleOp(op.operands[0], factor, self.device))


@dataclass(frozen=True)
class NpuOffloadPass(ModulePass):
    """Offload scalings by a constant to the NPU (`cores`: NPU cores to use)."""

    name = "npu-offload"
    cores: int = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            target = TargetAttr("npu", {"cores": self.cores})
        except VerifyException as e:
            raise HeteroError(f"npu-offload: {e}", op) from e
        PatternRewriteWalker(
            ScaleToNpu(VirtualDeviceAttr.for_target(target))
        ).rewrite_module(op)
