"""ONNX models as relay modules (docs/frontends/onnx.md).

    module = from_onnx("resnet50.onnx")              # static shapes
    module = from_onnx(model, batch="dynamic")       # batch dimension `?`

The graph becomes one `relay.func @main` whose parameters are the graph
inputs that are not initializers and whose result is the graph output (a
`relay.tuple` for several).  Nodes are converted in graph order: into the
elementwise relay op whose `ONNX` class attribute names the op type, or by
`CONVERTERS`, a table from ONNX op type to a converter function; each reads
its node through `Node` (inputs as relay values or as constants, attributes
with ONNX's defaults, the opset) and builds relay ops with the dialect's
inferring constructors, so every relay type is the dialect's own inference.

Constants are kept apart until a converter needs them as a value:
initializers, `Constant`, and every node whose inputs are all constants
(shape arithmetic such as `Shape -> Gather -> Concat -> Reshape`, weights
built by `ConstantOfShape`) are folded at import -- `ConstantOfShape` and
`Constant` natively, anything else by the `onnx` package's reference
evaluator.  A constant that reaches the relay graph becomes a
`relay.constant`: splats and small tensors inline, larger ones as
`dense_resource`s (`hetero.utils.dense_resources`), so printed modules stay
readable and still round-trip.

An operator without a converter, or an attribute value the converter does
not support, is a `HeteroError` naming the op type and the node.

The package, module by module: `importer` walks the graph (`from_onnx`)
and assembles `CONVERTERS` from the rows of the op families: `elementwise`
(with the activations), `nn` (dense layers and matrix products,
convolution and pooling windows, normalisations, softmax), `transform`
(reshape, slice, gather, pad, ...) and `reductions`.  `folding` computes
the nodes of constants; `node` holds the importer's state (`Graph`) and a
node as its converter sees it (`Node`).
"""

from hetero.frontends.onnx.importer import (
    CONVERTERS,
    RESOURCE_THRESHOLD,
    Batch,
    from_onnx,
)
from hetero.frontends.onnx.node import Node

__all__ = ["CONVERTERS", "RESOURCE_THRESHOLD", "Batch", "Node", "from_onnx"]
