"""The tables of the `tir` dialect and its one attribute.

What the ops check against and later passes read: the loop kinds
(`ForKind`, and `#tir<for_kind ...>`), the GPU thread axes a loop can be
bound to, the storage scopes a buffer can live in (a memref's memory
space), and the discardable attributes of a `tir.prim_func`.  They sit
below the op families so that each family and each pass reads one table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StringAttr,
    UnitAttr,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.utils.str_enum import StrEnum


class ForKind(StrEnum):
    """How the iterations of a `tir.for` are executed (TVM's `ForKind`)."""

    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unrolled"
    THREAD_BINDING = "thread_binding"


@irdl_attr_definition
class ForKindAttr(EnumAttribute[ForKind], SpacedOpaqueSyntaxAttribute):
    """`#tir<for_kind parallel>`; in `tir.for`'s custom syntax just the keyword."""

    name = "tir.for_kind"


FOR_KINDS = {kind: ForKindAttr(kind) for kind in ForKind}
"""Each loop kind's attribute, made once (`lower-te` makes hundreds of loops)."""

INDEX = IndexType()
"""The type of loop bounds and induction variables."""


THREAD_TAGS: tuple[str, ...] = (
    "blockIdx.x",
    "blockIdx.y",
    "blockIdx.z",
    "threadIdx.x",
    "threadIdx.y",
    "threadIdx.z",
    "vthread",
    "vthread.x",
    "vthread.y",
    "vthread.z",
)
"""The GPU thread axes a loop can be bound to (TVM's thread tags)."""

STORAGE_SCOPES: Mapping[str, str] = {
    "global": "device main memory; written as a memref without memory space",
    "shared": "shared by the threads of one GPU block",
    "shared.dyn": "shared memory whose size is given at kernel launch",
    "local": "private to one thread (registers or stack)",
    "warp": "spread over the lanes of one GPU warp",
    "wmma.matrix_a": "tensor-core fragment, left operand",
    "wmma.matrix_b": "tensor-core fragment, right operand",
    "wmma.accumulator": "tensor-core fragment, accumulator",
}
"""Storage scope → what it means.  A memref's memory space is its scope."""

GLOBAL_SCOPE = "global"


def _is_bool(attr: Attribute) -> bool:
    return isinstance(attr, IntegerAttr) and attr.type == IntegerType(1)


def _is_int(attr: Attribute) -> bool:
    return isinstance(attr, IntegerAttr) and not _is_bool(attr)


def _is_string_array(attr: Attribute) -> bool:
    return isinstance(attr, ArrayAttr) and all(isinstance(a, StringAttr) for a in attr)


def _is_unit(attr: Attribute) -> bool:
    return isinstance(attr, UnitAttr)


NO_INLINE = "no_inline"
"""A `tir.prim_func` that its callers call, never inline: the attribute goes
on to its `func.func` and `llvm.func` (MLIR's `no_inline`)."""

FUNCTION_ATTRIBUTES: Mapping[str, tuple[Callable[[Attribute], bool], str]] = {
    "tir.is_host_func": (_is_bool, "a bool"),
    "tir.noalias": (_is_bool, "a bool"),
    "tir.is_global_func": (_is_bool, "a bool"),
    "tir.is_entry_func": (_is_bool, "a bool"),
    "tir.kernel_launch_params": (_is_string_array, "an array of strings"),
    "calling_conv": (_is_int, "an integer"),
    NO_INLINE: (_is_unit, "a unit attribute"),
}
"""Discardable prim_func attributes that later passes read → (check, expected)."""


def storage_scope(memref: MemRefType) -> str:
    """The storage scope of a buffer: its memory space, `global` when none."""
    space = memref.memory_space
    return space.data if isinstance(space, StringAttr) else GLOBAL_SCOPE


def scoped_memref(
    element_type: Attribute, shape: Sequence[int], scope: str = GLOBAL_SCOPE
) -> MemRefType:
    """The memref type of a buffer of `shape` in storage `scope`."""
    space = NoneAttr() if scope == GLOBAL_SCOPE else StringAttr(scope)
    return MemRefType(element_type, shape, memory_space=space)


def scope_problem(memref: MemRefType) -> str | None:
    """What is wrong with the memory space of a buffer's type, or None: the
    verifiers of parameters and allocations say it the same way."""
    space = memref.memory_space
    if isinstance(space, NoneAttr):
        return None
    if not isinstance(space, StringAttr) or space.data not in STORAGE_SCOPES:
        known = ", ".join(f"'{s}'" for s in STORAGE_SCOPES)
        return (
            f"memory space {space} of {memref} is not a storage scope (known: {known})"
        )
    if space.data == GLOBAL_SCOPE:
        return (
            f"{memref}: the 'global' scope is written as a memref without memory space"
        )
    return None


def is_scalar(type: Attribute) -> bool:
    """A scalar a prim_func or a call may take or return."""
    return isinstance(type, IntegerType | IndexType | AnyFloat)


def format_types(types: Sequence[Attribute]) -> str:
    """`(T1, T2)`, as the verifiers' messages write a list of types."""
    return "(" + ", ".join(str(t) for t in types) + ")"
