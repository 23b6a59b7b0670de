"""What `hetero.compile`'s relay pipeline makes of a program: the shapes of
its kernels' buffers (for tests of the layouts that passes choose)."""

from xdsl.dialects.builtin import MemRefType

from hetero.context import parse_module
from hetero.dialects import tir
from hetero.driver import lower_to_tir


def kernel_buffer_shapes(text: str) -> list[tuple[int, ...]]:
    """The shape of every memref argument of the kernels (not the host
    function) that `lower_to_tir` makes of `text`."""
    module = parse_module(text)
    lower_to_tir(module)
    return [
        tuple(a.type.get_shape())
        for f in module.ops
        if isinstance(f, tir.PrimFuncOp) and not f.sym_name.data.endswith("_host")
        for a in f.args
        if isinstance(a.type, MemRefType)
    ]


def local_buffer_shapes(text: str) -> list[tuple[int, ...]]:
    """The shape of every `local` buffer (a register tile) of the kernels
    that `lower_to_tir` makes of `text`."""
    module = parse_module(text)
    lower_to_tir(module)
    return [
        tuple(op.buffer.type.get_shape())
        for op in module.walk()
        if isinstance(op, tir.AllocOp) and op.scope == "local"
    ]


def global_buffer_shapes(text: str) -> list[tuple[int, ...]]:
    """The shape of every buffer the kernels allocate other than their
    `local` register tiles (a packed copy of an operand)."""
    module = parse_module(text)
    lower_to_tir(module)
    return [
        tuple(op.buffer.type.get_shape())
        for f in module.ops
        if isinstance(f, tir.PrimFuncOp) and not f.sym_name.data.endswith("_host")
        for op in f.walk()
        if isinstance(op, tir.AllocOp) and op.scope != "local"
    ]
