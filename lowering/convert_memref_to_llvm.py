"""`convert-memref-to-llvm`: memrefs to bare pointers, with hetero's calling ABI.

The counterpart of MLIR's `finalize-memref-to-llvm`
(`mlir/lib/Conversion/MemRefToLLVM/MemRefToLLVM.cpp`) with its
`use-bare-ptr-memref-call-conv` option, extended to dynamic shapes.  Instead of
MLIR's descriptor struct, a memref is its element pointer plus one size per
dynamic dimension; strides follow from the sizes because only the identity
(row-major, contiguous) layout is accepted.

The ABI (also in `docs/lowering.md`)
------------------------------------
* A `memref<d0 x ... x T>` argument becomes `!llvm.ptr` to its first element,
  immediately followed by one `iN` argument (`i64` by default; N is the
  `index-bitwidth` option) per dynamic dimension, in dimension order:
  `func.func @f(%a: memref<?x4xf32>, %n: index)` is called as
  `f(float *a, int64_t a_dim0, int64_t n)`.  Static dimensions are not passed.
* Element `(i0, ..., ik)` is at `ptr + ((i0 * d1 + i1) * d2 + ...) + ik`
  elements; `memref.dim` of a dynamic dimension is its size argument.
* A function returns scalars only (no memrefs); the caller owns all buffers.
* The function keeps its original signature in the `hetero.signature`
  attribute, for runtimes that check arguments (`hetero.runtime.cpu`),
  `index` there as `iN`.

Inside a function, `memref.load`/`memref.store` become an in-bounds
`llvm.getelementptr` on the element type plus `llvm.load`/`llvm.store`
(`memref.prefetch`, `hetero.dialects.memref_ops`: plus `llvm.intr.prefetch`),
`memref.alloca` an `llvm.alloca`, `memref.alloc`/`memref.dealloc` calls of the
runtime's `hetero_buffer_take`/`hetero_buffer_give` (`hetero.runtime.buffers`:
the C library's `aligned_alloc`/`free` behind slots that keep large buffers
across calls; 64-byte alignment at least, the size rounded up to it), the
result checked for null first (`check_allocations`: a failed allocation
returns from the function), `memref.view` the source pointer advanced by its byte shift (how
`plan-memory`'s arenas are carved), `memref.cast` the same pointer with the
result's dynamic sizes (how `merge-kernels` passes buffers), a
`memref.reinterpret_cast` at offset 0 the same pointer with its sizes (how
`lower-aot-main` views an output with a shape of its own), `memref.dim` a constant or a size, and
`memref.extract_aligned_pointer_as_index` the pointer as an integer.  Between the conversion of a
memref's producer and of its users the memref is an
`unrealized_conversion_cast` of its pointer and sizes (its "descriptor").
Other memref ops (subviews, copies, globals, casts to unranked memrefs) are not supported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from math import prod

from xdsl.context import Context
from xdsl.dialects import func, llvm, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FixedBitwidthType,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnrealizedConversionCastOp,
    i8,
    i64,
)
from xdsl.dialects.llvm import GEP_USE_SSA_VAL
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from hetero.dialects import llvm_ops, memref_ops
from hetero.lowering.allocation_checks import check_allocations
from hetero.lowering.conversion import (
    POINTER,
    ToLLVMPattern,
    after_definition,
    apply_lowerings,
    cast,
    compatible_llvm_type,
    declare_function,
    gep,
    llvm_constant,
    load,
    lowering,
    reject_leftovers,
    store,
    without_index,
)
from hetero.runtime.buffers import GIVE, REUSED_BYTES, SLOTS, TAKE
from hetero.targets.cpu import ALIGNMENT
from hetero.utils.diagnostics import HeteroError

SIGNATURE = "hetero.signature"
"""The attribute keeping a function's signature before lowering, for
runtimes: its memrefs as they were, `index` as `iN` (the width the
runtime must pass)."""

TAKE_FUNCTIONS = {
    "aligned_alloc": llvm.LLVMFunctionType([i64, i64], POINTER),
    "free": llvm.LLVMFunctionType([POINTER]),
    TAKE: llvm.LLVMFunctionType(
        [POINTER, i64, i64, POINTER, POINTER, POINTER], POINTER
    ),
}
"""The functions a heap allocation refers to, declared with it: the C
library's allocator (a GPU host function's is switched to managed memory,
`hetero.runtime.cuda.MANAGED_ALLOCATION`) and the runtime's `take`."""

GIVE_TYPE = llvm.LLVMFunctionType([POINTER, POINTER])
"""`void hetero_buffer_give(ptr slot, ptr buffer)`."""

INDEX = IndexType()
"""`index`, whose LLVM type is that of sizes (`MemRefPattern.size_type`)."""

Descriptor = tuple[SSAValue, list[SSAValue]]
"""A memref's element pointer and the sizes of its dynamic dimensions."""


def descriptor(value: SSAValue) -> Descriptor | None:
    """The pointer and dynamic sizes of a converted memref; None if not yet converted."""
    owner = value.owner
    if isinstance(owner, UnrealizedConversionCastOp) and isinstance(
        value.type, MemRefType
    ):
        pointer, *sizes = owner.inputs
        if isinstance(pointer.type, llvm.LLVMPointerType):
            return pointer, sizes
    return None


def materialize(
    pointer: SSAValue, sizes: Sequence[SSAValue], t: MemRefType
) -> Operation:
    """The memref `t` described by `pointer` and `sizes`, for its unconverted users."""
    return UnrealizedConversionCastOp.get([pointer, *sizes], [t])


@cache
def array_type(dims: tuple[int, ...], element: Attribute) -> Attribute:
    """`element`, or nested `llvm.array`s of it with the sizes `dims`."""
    for size in reversed(dims):
        element = llvm.LLVMArrayType(size, element)
    return element


def i64_constant(value: int, rewriter: PatternRewriter) -> SSAValue:
    """An `i64` constant inserted at the rewriter."""
    return rewriter.insert(llvm_constant(IntegerAttr(value, i64), i64)).result


def dynamic_dims(t: MemRefType) -> int:
    """The number of dynamic dimensions of `t`."""
    return sum(1 for d in t.get_shape() if d == DYNAMIC_INDEX)


@dataclass
class MemRefPattern(ToLLVMPattern):
    """Converts memref types and computes element addresses."""

    _indices: dict[SSAValue, SSAValue] = field(
        default_factory=dict[SSAValue, SSAValue], init=False, repr=False, compare=False
    )

    def check(self, t: Attribute, op: Operation, addressed: bool = False) -> MemRefType:
        """`t`, a memref type this ABI supports; a located error otherwise.
        Only host memory crosses calls, but a memref `addressed` through a
        pointer already converted may be in any integer memory space: the
        pointer's address space (a GPU's shared memory, 3)."""
        assert isinstance(t, MemRefType)
        if not isinstance(t.layout, NoneAttr):
            raise HeteroError(
                f"{t}: only the identity (row-major) layout is supported", op
            )
        space = t.memory_space
        if not (
            isinstance(space, NoneAttr)
            or space == IntegerAttr(0, i64)
            or (addressed and isinstance(space, IntegerAttr))
        ):
            raise HeteroError(f"{t}: memory space {space} is not host memory", op)
        self.convert(t.element_type, op)
        return t

    def size_type(self) -> IntegerType:
        """`iN`, the type of sizes and indices (asked once per address)."""
        return compatible_llvm_type(INDEX, self.index_bitwidth)  # type: ignore[return-value]

    def size(
        self,
        t: MemRefType,
        dynamic: Sequence[SSAValue],
        dim: int,
        rewriter: PatternRewriter,
    ) -> SSAValue:
        """The size of dimension `dim` of `t`: a constant, or one of the `dynamic` sizes."""
        shape = t.get_shape()
        if shape[dim] != DYNAMIC_INDEX:
            return self.constant(shape[dim], rewriter)
        return dynamic[sum(1 for d in shape[:dim] if d == DYNAMIC_INDEX)]

    def index(self, value: SSAValue, rewriter: PatternRewriter) -> SSAValue:
        """`value`, an index, as an `iN`: cast once, right after its
        definition, for all the addresses computed from it (an unrolled
        loop's induction variable is in dozens)."""
        found = self._indices.get(value)
        if found is None or found.owner.parent is None:  # new, or erased
            found = cast(value, self.size_type(), rewriter, after_definition(value))
            self._indices[value] = found
        return found

    def constant(self, value: int, rewriter: PatternRewriter) -> SSAValue:
        """An `iN` constant, N the index width."""
        t = self.size_type()
        return rewriter.insert(llvm_constant(IntegerAttr(value, t), t)).result

    def element_pointer(
        self,
        ref: SSAValue,
        indices: Sequence[SSAValue],
        op: Operation,
        rewriter: PatternRewriter,
    ) -> SSAValue | None:
        """The address of `ref[indices]`; None if `ref` is not converted yet.

        One in-bounds GEP whose source type is the array of the dimensions
        after the last dynamic one (`memref<?x8x4xf32>`: `array<8 x array<4 x
        f32>>`), with constant indices folded into it: LLVM computes the same
        row-major offset as from a `mul`/`add` chain, and every op emitted
        here costs all the later passes.  Dimensions up to the last dynamic
        one are first linearized with `nsw` multiplies and adds."""
        if (found := descriptor(ref)) is None:
            return None
        pointer, dynamic = found
        t = self.check(ref.type, op, addressed=True)
        if not indices:
            return pointer
        shape = t.get_shape()
        last_dynamic = max(
            (d for d in range(1, len(shape)) if shape[d] == DYNAMIC_INDEX), default=0
        )
        if not last_dynamic:
            offset = self.gep_index(indices[0], rewriter)
        else:
            nsw = llvm.OverflowAttr([llvm.OverflowFlag.NO_SIGNED_WRAP])
            offset = self.index(indices[0], rewriter)
            for dim in range(1, last_dynamic + 1):
                size = self.size(t, dynamic, dim, rewriter)
                scaled = rewriter.insert(llvm.MulOp(offset, size, overflow=nsw)).res
                index = self.index(indices[dim], rewriter)
                offset = rewriter.insert(llvm.AddOp(scaled, index, overflow=nsw)).res
        source = array_type(shape[last_dynamic + 1 :], self.convert(t.element_type, op))
        trailing = [self.gep_index(i, rewriter) for i in indices[last_dynamic + 1 :]]
        return rewriter.insert(
            gep(pointer, [offset, *trailing], source, inbounds=True)
        ).result

    def gep_index(self, index: SSAValue, rewriter: PatternRewriter) -> int | SSAValue:
        """`index` as a GEP index: its value if a constant that fits the
        op's `i32` constant indices, else the value as an `iN`."""
        value = constant_value(index)
        if value is not None and GEP_USE_SSA_VAL < value < 2**31:
            return value
        return self.index(index, rewriter)


class FuncSignatureLowering(MemRefPattern):
    """Gives functions with memref arguments the pointer-and-sizes ABI."""

    @lowering
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter, /):
        signature = op.function_type
        if any(isinstance(t, MemRefType) for t in signature.outputs):
            raise HeteroError(
                f"@{op.sym_name.data} returns a memref: not supported", op
            )
        if not any(isinstance(t, MemRefType) for t in signature.inputs):
            return
        inputs: list[Attribute] = []
        arg_attrs: list[DictionaryAttr] = []
        old_attrs = op.arg_attrs.data if op.arg_attrs is not None else None
        for i, t in enumerate(signature.inputs):
            expanded = self.abi_types(t, op) if isinstance(t, MemRefType) else [t]
            inputs += expanded
            if old_attrs is not None:
                no_attrs = [DictionaryAttr({})] * (len(expanded) - 1)
                arg_attrs += [old_attrs[i], *no_attrs]
        if (entry := op.body.first_block) is not None:
            self.expand_arguments(entry, rewriter)
        op.attributes[SIGNATURE] = without_index(signature, self.index_bitwidth)
        op.function_type = FunctionType.from_lists(inputs, signature.outputs.data)
        if old_attrs is not None:
            op.arg_attrs = ArrayAttr(arg_attrs)
        rewriter.handle_operation_modification(op)

    def abi_types(self, t: MemRefType, op: Operation) -> list[Attribute]:
        """The arguments a memref argument becomes: a pointer, then its sizes."""
        sizes = [self.size_type()] * dynamic_dims(self.check(t, op))
        return [POINTER, *sizes]

    def expand_arguments(self, entry: Block, rewriter: PatternRewriter) -> None:
        """Replace each memref argument by a pointer and sizes, and their descriptor."""
        position = 0
        for arg in tuple(entry.args):
            if not isinstance(t := arg.type, MemRefType):
                position += 1
                continue
            pointer = rewriter.insert_block_argument(entry, position, POINTER)
            pointer.name_hint = arg.name_hint
            sizes = [
                rewriter.insert_block_argument(
                    entry, position + 1 + i, self.size_type()
                )
                for i in range(dynamic_dims(t))
            ]
            for i, size in enumerate(sizes):
                size.name_hint = f"{arg.name_hint}_size{i}" if arg.name_hint else None
            position += 1 + len(sizes)
            ref = rewriter.insert(
                materialize(pointer, sizes, t), InsertPoint.at_start(entry)
            )
            rewriter.replace_all_uses_with(arg, ref.results[0])
            rewriter.erase_block_argument(arg)


class CallLowering(MemRefPattern):
    """Passes memref operands of `func.call` as pointer and sizes."""

    @lowering
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter, /):
        if any(isinstance(t, MemRefType) for t in op.result_types):
            raise HeteroError(
                f"call of @{op.callee.string_value()} returns a memref", op
            )
        operands: list[SSAValue] = []
        for value in op.arguments:
            if not isinstance(value.type, MemRefType):
                operands.append(value)
            elif (found := descriptor(value)) is None:
                return
            else:
                operands += [found[0], *found[1]]
        if operands != list(op.arguments):
            rewriter.replace(op, func.CallOp(op.callee, operands, op.result_types))


class LoadLowering(MemRefPattern):
    """Lowers `memref.load` to an element address and `llvm.load`."""

    @lowering
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter, /):
        address = self.element_pointer(op.memref, op.indices, op, rewriter)
        if address is None:
            return
        self.replace(op, rewriter, [load(address, self.convert(op.res.type, op))])


class StoreLowering(MemRefPattern):
    """Lowers `memref.store` to an element address and `llvm.store`."""

    @lowering
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter, /):
        address = self.element_pointer(op.memref, op.indices, op, rewriter)
        if address is None:
            return
        value = cast(op.value, self.convert(op.value.type, op), rewriter)
        rewriter.replace(op, store(value, address))


class PrefetchLowering(MemRefPattern):
    """Lowers `memref.prefetch` to an element address and `llvm.intr.prefetch`."""

    @lowering
    def match_and_rewrite(
        self, op: memref_ops.PrefetchOp, rewriter: PatternRewriter, /
    ):
        address = self.element_pointer(op.memref, op.indices, op, rewriter)
        if address is None:
            return
        write, data = bool(op.isWrite.value.data), bool(op.isDataCache.value.data)
        rewriter.replace(op, llvm_ops.PrefetchOp(address, op.locality, write, data))


@dataclass
class AllocLowering(MemRefPattern):
    """Lowers `memref.alloca` to `llvm.alloca` and `memref.alloc` to
    `hetero_buffer_take` (`hetero.runtime.buffers`)."""

    _sites: dict[str, tuple[int, int]] = field(
        default_factory=dict[str, tuple[int, int]],
        init=False,
        repr=False,
        compare=False,
    )
    """Per function, its heap allocations lowered so far, and those with slots."""

    @lowering
    def match_and_rewrite(
        self, op: memref.AllocOp | memref.AllocaOp, rewriter: PatternRewriter, /
    ):
        t = self.check(op.memref.type, op)
        dynamic = [cast(v, self.size_type(), rewriter) for v in op.dynamic_sizes]
        count = self.element_count(t, dynamic, rewriter)
        alignment = max(ALIGNMENT, op.alignment.value.data if op.alignment else 0)
        element = self.convert(t.element_type, op)
        if isinstance(op, memref.AllocaOp):
            pointer = rewriter.insert(llvm.AllocaOp(count, element, alignment)).res
        else:
            pointer = self.take(op, count, element, alignment, rewriter)
        self.replace(op, rewriter, [materialize(pointer, dynamic, t)])

    def element_count(
        self, t: MemRefType, dynamic: Sequence[SSAValue], rewriter: PatternRewriter
    ) -> SSAValue:
        """The number of elements of `t`: one constant for the static sizes
        (a static `alloca` must have a constant count, else LLVM treats it as
        dynamic wherever it is inlined before being simplified, and SROA never
        promotes it), times each of the `dynamic` ones."""
        static = prod(d for d in t.get_shape() if d != DYNAMIC_INDEX)
        factors = list(dynamic)
        if static != 1 or not factors:
            factors.insert(0, self.constant(static, rewriter))
        count = factors[0]
        for size in factors[1:]:
            count = rewriter.insert(llvm.MulOp(count, size)).res
        return count

    def take(
        self,
        op: memref.AllocOp,
        count: SSAValue,
        element: Attribute,
        alignment: int,
        rewriter: PatternRewriter,
    ) -> SSAValue:
        """`hetero_buffer_take(slot, alignment, bytes, @aligned_alloc, @free,
        name)`, the bytes rounded up to the alignment; the slot is null for a
        buffer the C library keeps in its heap anyway (`reused`)."""
        if self.index_bitwidth < 64:
            count = rewriter.insert(llvm.ZExtOp(count, i64)).res
        # sizeof as MLIR computes it: the address of element `count` past null.
        null = rewriter.insert(llvm.ZeroOp(result_types=[POINTER])).res
        end = rewriter.insert(gep(null, [count], element))
        nbytes = rewriter.insert(llvm.PtrToIntOp(end.result, i64)).output
        slack = i64_constant(alignment - 1, rewriter)
        mask = i64_constant(-alignment, rewriter)
        padded = rewriter.insert(llvm.AddOp(nbytes, slack)).res
        rounded = rewriter.insert(llvm.AndOp(padded, mask)).res
        align = i64_constant(alignment, rewriter)
        slot, name = self.site(op, reused(op.memref.type), rewriter)  # type: ignore[arg-type]
        addresses = [
            rewriter.insert(llvm.AddressOfOp(f, POINTER)).result if f else null
            for f in (slot, "aligned_alloc", "free", name)
        ]
        for callee, function_type in TAKE_FUNCTIONS.items():
            declare_function(op, callee, function_type, rewriter)
        slots, *allocator = addresses
        call = llvm.CallOp(TAKE, slots, align, rounded, *allocator, return_type=POINTER)
        pointer = rewriter.insert(call).returned
        assert pointer is not None
        return pointer

    def site(
        self, op: memref.AllocOp, reused: bool, rewriter: PatternRewriter
    ) -> tuple[str | None, str]:
        """The globals of a new allocation site: its slots
        `@<function>.buffer.<k>` if its buffers are `reused` (numbered from 0
        among the function's such sites: `CpuModule` looks them up so) and its
        name for messages, a C string (`%hint memref<...> in @function`)."""
        function = op.parent_op()
        while not isinstance(function, func.FuncOp | llvm.FuncOp):
            assert function is not None
            function = function.parent_op()
        owner = function.sym_name.data
        sites, slotted = self._sites.get(owner, (0, 0))
        self._sites[owner] = (sites + 1, slotted + reused)
        hint = f"%{op.memref.name_hint} " if op.memref.name_hint else ""
        text = f"{hint}{op.memref.type} in @{owner}\0"
        name = llvm.GlobalOp(
            llvm.LLVMArrayType(len(text.encode()), i8),
            f"{owner}.buffer_name.{sites}",
            "internal",
            constant=True,
            value=StringAttr(text),
        )
        globals_: list[Operation] = [name]
        if reused:
            zeros = DenseIntOrFPElementsAttr.from_list(
                TensorType(i64, [SLOTS]), [0] * SLOTS
            )
            globals_.append(
                llvm.GlobalOp(
                    llvm.LLVMArrayType(SLOTS, i64),
                    f"{owner}.buffer.{slotted}",
                    "external",
                    value=zeros,
                    alignment=64,
                )
            )
        module = function.parent_op()
        assert isinstance(module, ModuleOp)
        rewriter.insert(globals_, InsertPoint.at_end(module.body.block))
        return (f"{owner}.buffer.{slotted}" if reused else None), name.sym_name.data


def reused(t: MemRefType) -> bool:
    """Whether a heap buffer of type `t` keeps its slot's buffer across calls:
    `REUSED_BYTES` or more, or a size known at run time only."""
    element = t.element_type
    if not t.has_static_shape() or not isinstance(element, FixedBitwidthType):
        return True
    return prod(t.get_shape()) * element.size >= REUSED_BYTES


class ViewLowering(MemRefPattern):
    """Lowers `memref.view` to its source pointer advanced by the byte shift."""

    @lowering
    def match_and_rewrite(self, op: memref.ViewOp, rewriter: PatternRewriter, /):
        if (found := descriptor(op.source)) is None:
            return
        t = self.check(op.result.type, op)
        shift = cast(op.byte_shift, self.size_type(), rewriter)
        pointer = rewriter.insert(gep(found[0], [shift], i8, inbounds=True)).result
        sizes = [cast(v, self.size_type(), rewriter) for v in op.sizes]
        self.replace(op, rewriter, [materialize(pointer, sizes, t)])


class ReinterpretCastLowering(MemRefPattern):
    """Lowers a `memref.reinterpret_cast` at offset 0 (how `lower-aot-main`
    views an output with its producer's shape) to the same pointer with the
    result's dynamic sizes, its `sizes` in order.  The result's layout is
    the identity (`check`), which fixes its strides: row-major, as
    `lower-aot-main` writes them."""

    @lowering
    def match_and_rewrite(
        self, op: memref.ReinterpretCastOp, rewriter: PatternRewriter, /
    ):
        if (found := descriptor(op.source)) is None:
            return
        t = self.check(op.result.type, op)
        if op.offsets or any(op.static_offsets.get_values()):
            raise HeteroError(
                "memref.reinterpret_cast: only views at offset 0 are supported", op
            )
        sizes = [cast(v, self.size_type(), rewriter) for v in op.sizes]
        self.replace(op, rewriter, [materialize(found[0], sizes, t)])


class CastLowering(MemRefPattern):
    """Lowers `memref.cast` (a memref with fewer static sizes, or more) to
    the same pointer with the result's dynamic sizes: the source's sizes of
    those dimensions, constants where the source's are static."""

    @lowering
    def match_and_rewrite(self, op: memref.CastOp, rewriter: PatternRewriter, /):
        if not isinstance(op.dest.type, MemRefType):
            raise HeteroError("memref.cast to an unranked memref: not supported", op)
        if (found := descriptor(op.source)) is None:
            return
        source = self.check(op.source.type, op)
        result = self.check(op.dest.type, op)
        sizes = [
            self.size(source, found[1], d, rewriter)
            for d, size in enumerate(result.get_shape())
            if size == DYNAMIC_INDEX
        ]
        self.replace(op, rewriter, [materialize(found[0], sizes, result)])


class DeallocLowering(MemRefPattern):
    """Lowers `memref.dealloc` to `hetero_buffer_give` of its allocation's slot."""

    @lowering
    def match_and_rewrite(self, op: memref.DeallocOp, rewriter: PatternRewriter, /):
        if (found := descriptor(op.memref)) is None:
            return
        pointer = found[0]
        taken = pointer.owner
        if isinstance(taken, llvm.CallOp) and taken.callee == SymbolRefAttr(TAKE):
            slot = taken.args[0]
        else:
            slot = rewriter.insert(llvm.ZeroOp(result_types=[POINTER])).res
        declare_function(op, GIVE, GIVE_TYPE, rewriter)
        rewriter.replace(op, llvm.CallOp(GIVE, slot, pointer))


class DimLowering(MemRefPattern):
    """Lowers `memref.dim` with a constant index to a constant or a size."""

    @lowering
    def match_and_rewrite(self, op: memref.DimOp, rewriter: PatternRewriter, /):
        if (found := descriptor(op.source)) is None:
            return
        t = self.check(op.source.type, op)
        if (dim := constant_value(op.index)) is None or not 0 <= dim < t.get_num_dims():
            raise HeteroError(
                "memref.dim: the dimension must be a constant in range", op
            )
        size = self.size(t, found[1], dim, rewriter)
        self.replace(op, rewriter, [], [size])


class ExtractPointerLowering(MemRefPattern):
    """Lowers `memref.extract_aligned_pointer_as_index` to the element pointer as
    an `iN`: how a buffer is handed to a C library (`hetero.lowering.external.blas`)."""

    @lowering
    def match_and_rewrite(
        self, op: memref.ExtractAlignedPointerAsIndexOp, rewriter: PatternRewriter, /
    ):
        if (found := descriptor(op.source)) is None:
            return
        self.replace(op, rewriter, [llvm.PtrToIntOp(found[0], self.size_type())])


class DeadDescriptorErasure(RewritePattern):
    """Erases a memref descriptor without users."""

    @lowering
    def match_and_rewrite(
        self, op: UnrealizedConversionCastOp, rewriter: PatternRewriter, /
    ):
        if descriptor(op.results[0]) is not None and not op.results[0].uses:
            rewriter.erase(op)


def constant_value(value: SSAValue) -> int | None:
    """The integer a value is a constant of, looking through unrealized casts."""
    owner = value.owner
    while isinstance(owner, UnrealizedConversionCastOp) and len(owner.inputs) == 1:
        owner = owner.inputs[0].owner
    if isinstance(owner, Operation) and isinstance(
        attr := owner.properties.get("value"), IntegerAttr
    ):
        return attr.value.data
    return None


def reject_memref_values(module: ModuleOp) -> None:
    """A located error at a branch (or region op) passing memrefs to a
    block: to any block but a function's entry, whose arguments are the
    function's and follow the ABI."""
    for op in module.walk():
        for region in op.regions:
            for block in region.blocks:
                if isinstance(op, func.FuncOp) and block is region.first_block:
                    continue
                if any(isinstance(a.type, MemRefType) for a in block.args):
                    culprit = next(
                        (p.last_op for p in block.predecessors() if p.last_op), op
                    )
                    raise HeteroError(
                        "memrefs passed through block arguments: not supported", culprit
                    )


PATTERNS: tuple[type[ToLLVMPattern], ...] = (
    FuncSignatureLowering,
    CallLowering,
    LoadLowering,
    StoreLowering,
    PrefetchLowering,
    AllocLowering,
    ViewLowering,
    ReinterpretCastLowering,
    CastLowering,
    DeallocLowering,
    DimLowering,
    ExtractPointerLowering,
)
"""The conversion patterns of this pass, in the order they are tried."""


@dataclass(frozen=True)
class ConvertMemRefToLLVMPass(ModulePass):
    """Lowers memrefs to bare pointers plus dynamic sizes (see the module docstring)."""

    name = "convert-memref-to-llvm"

    index_bitwidth: int = 64

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_allocations(op)
        patterns = [p(self.index_bitwidth) for p in PATTERNS]
        apply_lowerings(op, [*patterns, DeadDescriptorErasure()])
        reject_leftovers(op, ["memref"], self.name)
        reject_memref_values(op)
