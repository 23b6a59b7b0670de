"""Compute templates of `lower-te`: relay op class → loop-level code.

Two tables, by what an op's result needs:

* `LAZY_TEMPLATES` — elementwise and injective ops.  The template returns a
  `Tensor` whose `load` emits the element's computation at the point of use,
  reading the operands through their own `load`s, so a chain of such ops
  becomes one expression inside its consumer's loop body (no intermediate
  buffers).
* `NEST_TEMPLATES` — reductions and anchors (dense, matmul, conv2d, pools,
  softmax).  The template emits a loop nest that writes the result into a
  given buffer; the outermost loop runs over output elements, so it is
  marked `parallel`; reductions are inner serial loops accumulating in the
  destination element.

Arithmetic is on float element types (the relay ops' domain), and the
elementwise ops that integers have a meaning for (those with an `int`
scalar body) also take signless integers (the signed ints of ONNX and
NumPy); other integer tensors are accepted by the injective templates only,
which merely move elements.

An elementwise op's template is its scalar body (the op class's `SCALAR`)
applied to each element; `lazy_template` finds it when asked, so an op
class defined after import lowers too.

The templates live by op family, each module with its table of the ops it
lowers: `elementwise` (with the scalar functions), `injective`, `gemm`
(dense, matmul), `conv`, `pool` and `reduction` (softmax, layer_norm, lrn,
sum, mean); `epilogue` is the elementwise tail an anchor applies as it
stores, `base` what the families share.
"""

from xdsl.ir import Operation

from hetero.te.templates import conv, elementwise, gemm, injective, pool, reduction
from hetero.te.templates.base import LazyTemplate, NestTemplate, channel_axis
from hetero.te.templates.epilogue import (
    EPILOGUE_ANCHORS,
    Epilogue,
    epilogue_of,
    epilogue_ops,
    is_epilogue,
)
from hetero.te.templates.gemm import VIEW_READERS
from hetero.te.templates.injective import VIEW_OPS, reshape_groups

LAZY_TEMPLATES: dict[type[Operation], LazyTemplate] = {
    **elementwise.TEMPLATES,
    **injective.TEMPLATES,
}
"""Elementwise (without scalar bodies) and injective op → template
returning its lazy result."""

NEST_TEMPLATES: dict[type[Operation], NestTemplate] = {
    **gemm.TEMPLATES,
    **conv.TEMPLATES,
    **pool.TEMPLATES,
    **reduction.TEMPLATES,
}
"""Reduction/anchor op → template writing its result into a buffer."""


def lazy_template(cls: type[Operation]) -> LazyTemplate | None:
    """The template returning op class `cls`'s lazy result, if it has one:
    its scalar bodies' (`elementwise.scalar_template`) or `LAZY_TEMPLATES`'s."""
    return elementwise.scalar_template(cls) or LAZY_TEMPLATES.get(cls)


__all__ = [
    "EPILOGUE_ANCHORS",
    "LAZY_TEMPLATES",
    "NEST_TEMPLATES",
    "VIEW_OPS",
    "VIEW_READERS",
    "Epilogue",
    "channel_axis",
    "epilogue_of",
    "epilogue_ops",
    "is_epilogue",
    "lazy_template",
    "reshape_groups",
]
