"""`convert-vector-to-llvm`: the 1-D `vector` ops that map directly to LLVM.

Mirrors the part of MLIR's `mlir/lib/Conversion/VectorToLLVM/ConvertVectorToLLVM.cpp`
that vectorized loops need: contiguous `vector.load`/`vector.store` (an element
address as `convert-memref-to-llvm` computes it, then a vector load or store
aligned to the element), `vector.maskedload`/`vector.maskedstore` (LLVM's
`masked.load`/`masked.store` intrinsics at such an address),
`vector.broadcast` (insert and shuffle), `vector.create_mask` (lane numbers
compared with a splat), `vector.fma`, `vector.reduction` (LLVM's `vector.reduce.*` intrinsics),
`vector.extract`/`vector.insert` of one element, `vector.shuffle` and
`vector.bitcast`.  Splat constants are `arith.constant`s
(`convert-arith-to-llvm`).  Runs after `convert-memref-to-llvm`.  Floating-point
add/mul reductions are ordered (no `reassoc`), as in MLIR without fast-math.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    VectorType,
    i1,
    i32,
    i64,
)
from xdsl.dialects.vector import CombiningKindFlag as Kind
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter

from hetero.dialects import llvm_ops
from hetero.lowering.conversion import (
    ToLLVMPattern,
    apply_lowerings,
    cast,
    constant,
    icmp,
    intrinsic,
    load,
    lowering,
    reject_leftovers,
    store,
)
from hetero.lowering.convert_memref_to_llvm import DeadDescriptorErasure, MemRefPattern
from hetero.utils.diagnostics import HeteroError

Combine = Callable[[SSAValue, SSAValue], Operation]


def combine_with(name: str) -> Combine:
    """Combines two values with the overloaded intrinsic `name`."""
    return lambda a, b: llvm.CallIntrinsicOp(intrinsic(name, a.type), [a, b], [a.type])


REDUCTIONS: dict[Kind, tuple[str, Combine]] = {
    Kind.ADD: ("llvm.vector.reduce.add", llvm.AddOp),
    Kind.MUL: ("llvm.vector.reduce.mul", llvm.MulOp),
    Kind.AND: ("llvm.vector.reduce.and", llvm.AndOp),
    Kind.OR: ("llvm.vector.reduce.or", llvm.OrOp),
    Kind.XOR: ("llvm.vector.reduce.xor", llvm.XOrOp),
    Kind.MINSI: ("llvm.vector.reduce.smin", combine_with("llvm.smin")),
    Kind.MAXSI: ("llvm.vector.reduce.smax", combine_with("llvm.smax")),
    Kind.MINUI: ("llvm.vector.reduce.umin", combine_with("llvm.umin")),
    Kind.MAXUI: ("llvm.vector.reduce.umax", combine_with("llvm.umax")),
    Kind.MINNUMF: ("llvm.vector.reduce.fmin", combine_with("llvm.minnum")),
    Kind.MAXNUMF: ("llvm.vector.reduce.fmax", combine_with("llvm.maxnum")),
    Kind.MINIMUMF: ("llvm.vector.reduce.fminimum", combine_with("llvm.minimum")),
    Kind.MAXIMUMF: ("llvm.vector.reduce.fmaximum", combine_with("llvm.maximum")),
}
"""Integer and min/max reductions: the intrinsic, and how to fold in an accumulator."""

FLOAT_REDUCTIONS: dict[Kind, tuple[type[llvm.VectorReduceOperation], float]] = {
    Kind.ADD: (llvm.VectorReduceFAddOp, -0.0),
    Kind.MUL: (llvm.VectorReduceFMulOp, 1.0),
}
"""Float add/mul reductions: the op (ordered, from a start value), and its neutral start."""


def element_bytes(t: VectorType) -> int:
    """The size of one element of `t` (LLVM's alignment for it, too)."""
    element = t.element_type
    if isinstance(element, IntegerType):
        return max(1, (element.width.data + 7) // 8)
    assert isinstance(element, AnyFloat)
    return element.bitwidth // 8


VectorAccess = (
    vector.LoadOp | vector.StoreOp | vector.MaskedLoadOp | vector.MaskedStoreOp
)


class VectorMemoryPattern(MemRefPattern):
    """A vector access at the element address of a lowered memref."""

    def address(self, op: VectorAccess, rewriter: PatternRewriter) -> SSAValue:
        """The element address of `op`'s base at its indices."""
        address = self.element_pointer(op.base, op.indices, op, rewriter)
        if address is None:
            raise HeteroError(
                f"'{op.name}' on a memref not lowered yet: run convert-memref-to-llvm first",
                op,
            )
        return address


class MemoryLowering(VectorMemoryPattern):
    """Lowers contiguous `vector.load`/`vector.store` to element-aligned LLVM ones."""

    @lowering
    def match_and_rewrite(
        self, op: vector.LoadOp | vector.StoreOp, rewriter: PatternRewriter, /
    ):
        t = self.convert(
            op.result.type if isinstance(op, vector.LoadOp) else op.vector.type, op
        )
        assert isinstance(t, VectorType)
        if t.element_type == i1:
            raise HeteroError(f"'{op.name}' of {t}: LLVM packs i1 vectors in bits", op)
        address = self.address(op, rewriter)
        alignment = element_bytes(t)
        if isinstance(op, vector.LoadOp):
            self.replace(op, rewriter, [load(address, t, alignment)])
        else:
            value = cast(op.vector, t, rewriter)
            rewriter.replace(op, store(value, address, alignment))


class MaskedMemoryLowering(VectorMemoryPattern):
    """Lowers `vector.maskedload`/`vector.maskedstore` to MLIR's
    `llvm.intr.masked.load`/`store` ops, LLVM's `masked.load`/`masked.store`
    intrinsics (a vectorized loop's remainder: masked-off lanes are neither
    read nor written), aligned to the element as plain vector accesses are."""

    @lowering
    def match_and_rewrite(
        self,
        op: vector.MaskedLoadOp | vector.MaskedStoreOp,
        rewriter: PatternRewriter,
        /,
    ):
        loading = isinstance(op, vector.MaskedLoadOp)
        vector_type = op.result.type if loading else op.value_to_store.type
        t = self.convert(vector_type, op)
        assert isinstance(t, VectorType)
        address = self.address(op, rewriter)
        align = element_bytes(t)
        mask = cast(op.mask, self.convert(op.mask.type, op), rewriter)
        if loading:
            passthru = cast(op.pass_thru, t, rewriter)
            self.replace(
                op, rewriter, [llvm_ops.MaskedLoadOp(address, mask, passthru, align)]
            )
        else:
            value = cast(op.value_to_store, t, rewriter)
            rewriter.replace(op, llvm_ops.MaskedStoreOp(value, address, mask, align))


class SplatPattern(ToLLVMPattern):
    """A pattern that splats scalars over vectors."""

    def splat(
        self, scalar: SSAValue, t: VectorType, op: Operation, rewriter: PatternRewriter
    ) -> llvm.ShuffleVectorOp:
        """`scalar` (of `t`'s LLVM element type) in every lane of `t`: inserted
        into lane 0 of a one-lane vector, then shuffled."""
        one = VectorType(scalar.type, [1])
        undef = self.pool.get(("undef", one), lambda: llvm.UndefOp(one), op, rewriter)
        zero = self.shared_constant(IntegerAttr(0, i64), i64, op, rewriter)
        single = rewriter.insert(llvm.InsertElementOp(undef, scalar, zero)).res
        mask = DenseArrayBase.from_list(i32, [0] * t.get_shape()[0])
        return llvm.ShuffleVectorOp(single, single, mask, t)


class BroadcastLowering(SplatPattern):
    """Lowers `vector.broadcast` of a scalar or a 1-element vector to a
    shuffle; of a scalar constant, to a splat constant (`ConstantPool`)."""

    @lowering
    def match_and_rewrite(self, op: vector.BroadcastOp, rewriter: PatternRewriter, /):
        t = self.convert(op.vector.type, op)
        assert isinstance(t, VectorType)
        if (scalar := scalar_constant(op.source)) is not None:
            splat = self.pool.get(
                ("splat", scalar, t),
                lambda: constant(scalar.value.data, t),
                op,
                rewriter,
            )
            self.replace(op, rewriter, [], [splat])
            return
        (source,) = self.operands(op, rewriter)
        if source.type == t:
            self.replace(op, rewriter, [], [source])
            return
        if not isinstance(source.type, VectorType):
            self.replace(op, rewriter, [self.splat(source, t, op, rewriter)])
            return
        if source.type.get_shape() != (1,):
            raise HeteroError(
                f"'{op.name}' from {source.type}: not a direct LLVM broadcast", op
            )
        mask = DenseArrayBase.from_list(i32, [0] * t.get_shape()[0])
        self.replace(op, rewriter, [llvm.ShuffleVectorOp(source, source, mask, t)])


class CreateMaskLowering(SplatPattern):
    """Lowers a 1-D `vector.create_mask %n` to `[0, 1, ...] < splat(n)`, as
    MLIR does: the lanes below `n` on (none for `n <= 0`, all from the
    width on).  A masked remainder of a loop of run-time extent needs it."""

    @lowering
    def match_and_rewrite(self, op: vector.CreateMaskOp, rewriter: PatternRewriter, /):
        t = op.mask_vector.type
        assert isinstance(t, VectorType)
        if t.get_num_dims() != 1:
            raise HeteroError(f"'{op.name}': 1-D masks only", op)
        (count,) = self.operands(op, rewriter)
        lanes = VectorType(count.type, t.get_shape())
        steps = DenseIntOrFPElementsAttr.from_list(lanes, list(range(t.get_shape()[0])))
        first = self.shared_constant(steps, lanes, op, rewriter)
        bound = rewriter.insert(self.splat(count, lanes, op, rewriter)).results[0]
        self.replace(op, rewriter, [icmp("slt", first, bound)])


def scalar_constant(value: SSAValue) -> IntegerAttr | FloatAttr | None:
    """The number `value` is an `arith.constant` or `llvm.mlir.constant` of, if
    it is (as an attribute, which tells -0.0 from 0.0, unlike Python's `==`)."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp | llvm.ConstantOp) and isinstance(
        attr := owner.value, IntegerAttr | FloatAttr
    ):
        return attr
    return None


class FMALowering(ToLLVMPattern):
    """Lowers `vector.fma` to `llvm.intr.fma`."""

    @lowering
    def match_and_rewrite(self, op: vector.FMAOp, rewriter: PatternRewriter, /):
        a, b, c = self.operands(op, rewriter)
        self.replace(op, rewriter, [llvm.FMAOp(a, b, c)])


class ReductionLowering(ToLLVMPattern):
    """Lowers `vector.reduction` to LLVM's `vector.reduce.*` intrinsics."""

    @lowering
    def match_and_rewrite(self, op: vector.ReductionOp, rewriter: PatternRewriter, /):
        source, *acc = self.operands(op, rewriter)
        assert isinstance(source.type, VectorType)
        kind = op.kind.data
        element = source.type.element_type
        if isinstance(element, AnyFloat) and kind in FLOAT_REDUCTIONS:
            reduce, neutral = FLOAT_REDUCTIONS[kind]
            start = (
                acc[0] if acc else rewriter.insert(constant(neutral, element)).result
            )
            self.replace(op, rewriter, [reduce(start, source)])
            return
        name, combine = REDUCTIONS[kind]
        reduced = llvm.CallIntrinsicOp(
            intrinsic(name, source.type), [source], [element]
        )
        if not acc:
            self.replace(op, rewriter, [reduced])
            return
        rewriter.insert(reduced)
        self.replace(op, rewriter, [combine(reduced.results[0], acc[0])])


class ElementLowering(ToLLVMPattern):
    """Lowers `vector.extract`/`vector.insert` of one element of a 1-D vector."""

    @lowering
    def match_and_rewrite(
        self, op: vector.ExtractOp | vector.InsertOp, rewriter: PatternRewriter, /
    ):
        positions = op.get_mixed_position()
        source = op.vector if isinstance(op, vector.ExtractOp) else op.dest
        assert isinstance(source.type, VectorType)
        if source.type.get_num_dims() != 1 or len(positions) != 1:
            raise HeteroError(f"'{op.name}': one element of a 1-D vector only", op)
        (position,) = positions
        if isinstance(position, int):
            index = self.shared_constant(IntegerAttr(position, i64), i64, op, rewriter)
        else:
            index = cast(position, self.convert(position.type, op), rewriter)
        vec = cast(source, self.convert(source.type, op), rewriter)
        if isinstance(op, vector.ExtractOp):
            self.replace(op, rewriter, [llvm_ops.ExtractElementOp(vec, index)])
        else:
            value = cast(op.source, self.convert(op.source.type, op), rewriter)
            self.replace(op, rewriter, [llvm.InsertElementOp(vec, value, index)])


class ShuffleLowering(ToLLVMPattern):
    """Lowers a 1-D `vector.shuffle` to `llvm.shufflevector`."""

    @lowering
    def match_and_rewrite(self, op: vector.ShuffleOp, rewriter: PatternRewriter, /):
        v1, v2 = self.operands(op, rewriter)
        t = self.convert(op.result.type, op)
        mask = DenseArrayBase.from_list(i32, op.mask.get_values())
        self.replace(op, rewriter, [llvm.ShuffleVectorOp(v1, v2, mask, t)])


class BitcastLowering(ToLLVMPattern):
    """Lowers a 1-D `vector.bitcast` to `llvm.bitcast`."""

    @lowering
    def match_and_rewrite(self, op: vector.BitcastOp, rewriter: PatternRewriter, /):
        (source,) = self.operands(op, rewriter)
        self.replace(
            op, rewriter, [llvm.BitcastOp(source, self.convert(op.result.type, op))]
        )


PATTERNS: tuple[type[ToLLVMPattern], ...] = (
    MemoryLowering,
    MaskedMemoryLowering,
    BroadcastLowering,
    CreateMaskLowering,
    FMALowering,
    ReductionLowering,
    ElementLowering,
    ShuffleLowering,
    BitcastLowering,
)
"""The conversion patterns of this pass, in the order they are tried."""


@dataclass(frozen=True)
class ConvertVectorToLLVMPass(ModulePass):
    """Lowers 1-D `vector` ops to the `llvm` dialect."""

    name = "convert-vector-to-llvm"

    index_bitwidth: int = 64

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [p(self.index_bitwidth) for p in PATTERNS]
        apply_lowerings(op, [*patterns, DeadDescriptorErasure()])
        reject_leftovers(op, ["vector"], self.name)
