"""Vectorized `tir.for` loops as `vector` ops, for `convert-tir-to-scf`.

A `vectorized` loop becomes `vector` ops over `lanes` elements (the
target's SIMD width, or the constant extent when smaller) plus the
remainder as one narrower vector (a scalar loop when the extent is
dynamic), when the body is straight-line element-wise code (see
`Vectorizer`); else the serial `scf.for`.  With AVX-512 a remainder that is
not a power of two is one *masked* full-width vector instead
(`vector.maskedload`/`maskedstore`): LLVM splits a 13-lane vector into
8 + 4 + 1 pieces and reassembles them for each op, where a masked `vmovups`
is one instruction.  An extent known only at run time gets vectors masked
to the lanes before the end where masks are cheap, else whole vectors and
a scalar loop.  The loop over whole vectors is annotated like an
`unrolled` one.  docs/lowering.md ("Vectorization") shows each form.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache

from xdsl.dialects import arith, math, memref, scf, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StringAttr,
    VectorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from hetero.dialects import tir
from hetero.lowering.convert_arith_to_llvm import compare_or_select
from hetero.lowering.scf_loops import annotate_unroll, index, lower_serial, scf_loop
from hetero.targets.cpu import simd_bits

MASKED_TAIL_BITS = 512
"""From this vector width on (AVX-512: masked loads and stores of 32- and
64-bit elements, as cheap as plain ones) a remainder is a masked vector.
Narrower elements need AVX512BW, without which LLVM masks lane by lane:
their remainders stay narrower vectors.  Only x86 reaches it: AArch64's
NEON (128 bits, `ARCH_SIMD_BITS`) has no masked loads or stores."""

MASKED_ELEMENT_BITS = 32
"""Narrowest lane type a masked remainder may have."""


ELEMENTWISE: tuple[type[Operation], ...] = (
    arith.AddfOp,
    arith.SubfOp,
    arith.MulfOp,
    arith.DivfOp,
    arith.AddiOp,
    arith.SubiOp,
    arith.MuliOp,
    arith.AndIOp,
    arith.OrIOp,
    arith.XOrIOp,
    arith.MaximumfOp,
    arith.MinimumfOp,
    arith.MaxnumfOp,
    arith.MinnumfOp,
    arith.MaxSIOp,
    arith.MinSIOp,
    arith.NegfOp,
    math.ExpOp,
    math.LogOp,
    math.SqrtOp,
    math.TanhOp,
    math.ErfOp,
    math.AbsFOp,
    math.FloorOp,
    math.CeilOp,
    math.RoundEvenOp,
    math.FmaOp,
    math.SinOp,
    math.CosOp,
    arith.CmpfOp,
    arith.CmpiOp,
    arith.SelectOp,
    arith.ExtFOp,
    arith.TruncFOp,
    arith.ExtSIOp,
    arith.ExtUIOp,
    arith.TruncIOp,
    arith.SIToFPOp,
    arith.UIToFPOp,
    arith.FPToSIOp,
)
"""Ops the vectorizer applies lane-wise (a comparison gives a vector of
`i1`, a select takes one: as `llvm` ops, see `compare_or_select`)."""

COMPARISONS = (arith.CmpfOp, arith.CmpiOp)
"""Lane-wise ops whose lanes are as wide as their operands, not their `i1`."""

AFFINE = object()
"""`Vectorizer` kind of an index that is the induction variable plus a uniform."""
SPLIT = object()
"""`Vectorizer` kind of the row or column `a // w`, `a % w` of an affine `a`."""
STRIDED = object()
"""`Vectorizer` kind of an index `s * a (+ uniform)` of an affine `a`: lanes
`s` apart."""
GATHER = object()
"""`Vectorizer` kind of a load from a `local` buffer along a dimension other
than the last: one scalar load per lane, assembled into a vector."""


@cache
def vector_type(element: Attribute, lanes: int) -> VectorType:
    """`vector<lanes x element>`, made once (the vectorizer asks for one per op)."""
    return VectorType(element, [lanes])


Count = int | SSAValue
"""A number of lanes: a constant, or (in the masked vectors of a loop of
run-time extent) an `index` value."""


@dataclass
class Lanes:
    """A vector body's shape: `width` lanes, of which the first `active` are
    computed (fewer in a masked remainder: loads and stores touch only those,
    the other lanes load 0)."""

    width: int
    active: Count
    masks: dict[Count, SSAValue] = field(default_factory=dict[Count, SSAValue])
    """The masks made so far, by number of lanes on."""
    zeros: dict[Attribute, SSAValue] = field(default_factory=dict[Attribute, SSAValue])
    """The zero vectors made so far (masked loads' pass-through), by type."""

    def mask(self, count: Count, block: Block) -> SSAValue:
        """`vector<width x i1>`: the first `count` lanes on (a constant, or
        `vector.create_mask` of a run-time count)."""
        if count not in self.masks:
            t = vector_type(i1, self.width)
            if isinstance(count, int):
                on = [True] * count + [False] * (self.width - count)
                mask = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, on))
            else:
                mask = vector.CreateMaskOp([count], t)
            block.add_op(mask)
            self.masks[count] = mask.results[0]
        return self.masks[count]

    def shifted(self, scale: int, shift: int, block: Block) -> Count:
        """`scale * active + shift` (ops in `block` when `active` is a value)."""
        if isinstance(self.active, int):
            return scale * self.active + shift
        block.add_ops(
            [
                factor := index(scale),
                product := arith.MuliOp(self.active, factor),
                offset := index(shift),
                total := arith.AddiOp(product, offset),
            ]
        )
        return total.result

    def load(
        self,
        memory: SSAValue,
        indices: Sequence[SSAValue],
        t: VectorType,
        count: Count,
        block: Block,
    ) -> SSAValue:
        """The vector at `indices` of which `count` lanes are needed."""
        if isinstance(count, int) and count >= self.width:
            block.add_op(load := vector.LoadOp(memory, indices, t))
            return load.result
        zero = self.zero(t, block)
        if isinstance(count, int) and count <= 0:
            return zero
        mask = self.mask(count, block)
        block.add_op(load := vector.MaskedLoadOp(memory, indices, mask, zero, t))
        return load.result

    def zero(self, t: VectorType, block: Block) -> SSAValue:
        """A zero vector of type `t`."""
        if t not in self.zeros:
            nothing = 0.0 if isinstance(t.element_type, AnyFloat) else 0
            zero = arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [nothing]))
            block.add_op(zero)
            self.zeros[t] = zero.result
        return self.zeros[t]

    def store(
        self,
        value: SSAValue,
        memory: SSAValue,
        indices: Sequence[SSAValue],
        block: Block,
    ) -> None:
        """Stores the active lanes of `value` at `indices`."""
        if isinstance(self.active, int) and self.active >= self.width:
            block.add_op(vector.StoreOp(value, memory, indices))
            return
        mask = self.mask(self.active, block)
        block.add_op(vector.MaskedStoreOp(memory, indices, mask, value))


@dataclass
class Vectorizer:
    """Turns one straight-line, unit-stride loop body into `vector` ops.

    Every value is *uniform* (the same in all lanes: defined outside, a
    constant, or computed from uniform values only; it stays scalar and is
    broadcast where a vector is needed) or *varying* (a vector).  *Affine*
    indices are the induction variable plus or minus a uniform offset
    (`arith.addi`, `arith.subi`; times 1 too), kept as the scalar index of
    lane 0: a schedule addresses a tile at `base + iv`, a padded row at
    `iv - 1`.  Loads whose last index is affine and whose others are
    uniform become `vector.load`, loads at uniform indices stay scalar; stores
    need the same unit-stride form.  Any other use of an affine index, other
    ops, `index`/`i1` elements or stores to uniform addresses: not
    vectorizable.

    One more form addresses a row-major image through its flattened rows:
    `a // w` and `a % w` of an affine `a` and a constant `w` as the last two
    indices of a memref `w` wide (identity layout) are the element `a` of
    the flattened last two dimensions, so consecutive lanes are consecutive
    in memory across rows: a `vector.load`/`store` at `[..., 0, a]`.  A
    schedule that tiles the pixels of an image, not its rows (a 1x1 conv
    as a GEMM over `H * W`), addresses every operand of its epilogue so.

    Lanes two apart, an index `2 * a (+ uniform)` (`STRIDED`; a pooling's
    stride-2 taps), load as two vectors and a shuffle (`_every_other`).

    A register tile stored transposed is read across its rows: a load from
    a `local` buffer with the affine index in another dimension than the
    last (the rest uniform) is gathered, one scalar load a lane
    (`gathered`), which LLVM's SROA turns into register lanes.
    """

    loop: tir.ForOp
    bits: int
    affine: set[SSAValue] = field(default_factory=set[SSAValue])
    """The induction variable and `iv + uniform` indices (found by `plan`)."""
    split: dict[SSAValue, tuple[SSAValue, int, bool]] = field(
        default_factory=dict[SSAValue, tuple[SSAValue, int, bool]]
    )
    """`a // w` and `a % w` of an affine `a`: (a, w, whether the quotient)."""
    strided: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    """Indices whose lanes are a constant stride apart (`STRIDED`): the stride."""
    narrowest: int = 0
    """Bits of the narrowest lane type (found by `plan`)."""

    def plan(self) -> int | None:
        """The number of lanes, or None when the body is not vectorizable."""
        self.affine = {self.loop.induction_var}
        self.strided = {}
        varying, widths = set[SSAValue](), [0]
        for op in self.loop.body.block.ops:
            kind = self._kind(op, varying)
            if kind is None:
                return None
            if kind is GATHER:
                kind = True
            if kind is AFFINE:
                self.affine.update(op.results)
            elif kind is STRIDED:
                self.strided[op.results[0]] = self._stride(op)
            elif kind is SPLIT:
                divisor = const_evaluate_operand(op.operands[1])
                self.split[op.results[0]] = (
                    op.operands[0],
                    divisor,  # type: ignore[assignment]
                    isinstance(op, arith.DivSIOp),
                )
            elif kind:
                element = _lane_type(op)
                if not isinstance(element, AnyFloat | IntegerType) or element == i1:
                    return None
                widths.append(element_bits(element))
                varying.update(op.results)
        self.narrowest = min(widths[1:], default=0)
        return self.bits // max(widths) if max(widths) else None

    def _kind(self, op: Operation, varying: set[SSAValue]) -> bool | object | None:
        """True: varying, False: uniform, AFFINE: a lane-0 index, None: not
        vectorizable."""

        def uniform(values: Iterable[SSAValue]) -> bool:
            return all(
                v not in self.affine
                and v not in varying
                and v not in self.split
                and v not in self.strided
                for v in values
            )

        match op:
            case tir.YieldOp() | arith.ConstantOp():
                return False
            case arith.MuliOp() | arith.AddiOp() | arith.SubiOp() if (
                self._stride(op) is not None
            ):
                return STRIDED
            case memref.LoadOp() if (
                op.indices
                and self.strided.get(op.indices[-1]) == 2
                and uniform(op.indices[:-1])
            ):
                return True
            case arith.AddiOp() if (
                any(v in self.affine for v in op.operands)
                and not all(v in self.affine for v in op.operands)
                and uniform(v for v in op.operands if v not in self.affine)
            ):
                return AFFINE
            case arith.SubiOp() if op.operands[0] in self.affine and uniform(
                op.operands[1:]
            ):
                return AFFINE
            case arith.MuliOp() if any(
                a in self.affine and const_evaluate_operand(one) == 1
                for a, one in (op.operands, op.operands[::-1])
            ):
                return AFFINE  # times 1: a uniform schedule's unit stride
            case arith.DivSIOp() | arith.RemSIOp() if op.operands[
                0
            ] in self.affine and isinstance(
                const_evaluate_operand(op.operands[1]), int
            ):
                return SPLIT
            case memref.LoadOp() | memref.StoreOp() if self.flat(op) is not None:
                return True
            case memref.LoadOp() if self.gathered(op) is not None:
                return GATHER
            case memref.LoadOp() | memref.StoreOp() if not uniform(op.indices[:-1]):
                return None
            case memref.LoadOp() | memref.StoreOp() if (
                op.indices and op.indices[-1] in self.affine
            ):
                return True
            case memref.LoadOp() if uniform(op.indices):
                return False
            case _ if isinstance(op, ELEMENTWISE) and not any(
                v in self.affine or v in self.split or v in self.strided
                for v in op.operands
            ):
                return not uniform(op.operands)
            case _ if op.name.startswith("arith.") and uniform(op.operands):
                # Scalar arithmetic on uniform values (e.g. the phase and
                # offset `kx / stride`, `kx % stride` of a strided window)
                # stays scalar, computed once per vector of lanes.
                return False
        return None

    def _stride(self, op: Operation) -> int | None:
        """The lane stride of `s * a` (a constant `s > 1`, an affine `a`) or
        of a strided index plus or minus a uniform one; None for anything
        else."""
        lhs, rhs = op.operands
        if isinstance(op, arith.MuliOp):
            for a, s in ((lhs, rhs), (rhs, lhs)):
                factor = const_evaluate_operand(s)
                if a in self.affine and isinstance(factor, int) and factor > 1:
                    return factor
            return None
        pairs = (
            ((lhs, rhs),) if isinstance(op, arith.SubiOp) else ((lhs, rhs), (rhs, lhs))
        )
        for a, b in pairs:
            if a in self.strided and not (
                b in self.affine or b in self.split or b in self.strided
            ):
                return self.strided[a]
        return None

    def touches_local(self) -> bool:
        """The body loads or stores a `local` buffer."""
        return any(
            isinstance(op, memref.LoadOp | memref.StoreOp)
            and isinstance(t := op.memref.type, MemRefType)
            and t.memory_space == StringAttr("local")
            for op in self.loop.body.block.ops
        )

    def gathered(self, op: memref.LoadOp) -> int | None:
        """The dimension of a load from a `local` buffer (a register tile)
        whose index there is affine and whose other indices are uniform,
        other than the last: a tile read across its rows (stored transposed).
        After LLVM's SROA the scalar loads are register lanes."""
        memory = op.memref.type
        if not isinstance(memory, MemRefType):
            return None
        if memory.memory_space != StringAttr("local"):
            return None
        varying = [
            d for d, i in enumerate(op.indices) if i in self.affine or i in self.split
        ]
        if len(varying) != 1 or varying[0] == len(op.indices) - 1:
            return None
        return varying[0] if op.indices[varying[0]] in self.affine else None

    def flat(self, op: memref.LoadOp | memref.StoreOp) -> SSAValue | None:
        """The affine `a` of an access at `[uniform..., a // w, a % w]` to a
        memref `w` wide with the identity layout (see the class docstring)."""
        if len(op.indices) < 2:
            return None
        *outer, row, column = op.indices
        if row not in self.split or column not in self.split:
            return None
        (a, w, quotient), (b, v, remainder) = self.split[row], self.split[column]
        memory = op.memref.type
        if not (a is b and w == v and quotient and not remainder):
            return None
        if not isinstance(memory, MemRefType) or memory.get_shape()[-1] != w:
            return None
        if not isinstance(memory.layout, NoneAttr):
            return None
        if any(i in self.affine or i in self.split for i in outer):
            return None
        return a

    def _indices(
        self,
        op: memref.LoadOp | memref.StoreOp,
        mapping: dict[SSAValue, SSAValue],
        block: Block,
    ) -> list[SSAValue]:
        """The indices of the vector access that replaces `op` (lane 0's)."""
        if (a := self.flat(op)) is None:
            return [mapping.get(i, i) for i in op.indices]
        block.add_op(zero := index(0))
        return [*(mapping.get(i, i) for i in op.indices[:-2]), zero.result, mapping[a]]

    @staticmethod
    def _every_other(
        op: memref.LoadOp, lanes: Lanes, mapping: dict[SSAValue, SSAValue], block: Block
    ) -> SSAValue:
        """Lanes 2 apart from `b`, lane 0's index: the even elements of
        `[b, b + lanes)` and the odd ones of `[b + lanes - 1, b + 2 lanes - 1)`,
        two vector loads and a shuffle that read no element past the last
        active lane's (a pooling's stride-2 taps)."""
        *outer, first = (mapping.get(i, i) for i in op.indices)
        block.add_ops(
            [shift := index(lanes.width - 1), second := arith.AddiOp(first, shift)]
        )
        t = vector_type(op.res.type, lanes.width)
        # The last active lane reads element `2 (active - 1)` from `b`.
        low = lanes.load(
            op.memref, [*outer, first], t, lanes.shifted(2, -1, block), block
        )
        rest = lanes.shifted(2, -lanes.width, block)
        high = lanes.load(op.memref, [*outer, second.result], t, rest, block)
        mask = [2 * k if 2 * k < lanes.width else 2 * k + 1 for k in range(lanes.width)]
        shuffle = vector.ShuffleOp(
            low, high, DenseArrayBase.from_list(i64, mask), result_type=t
        )
        block.add_op(shuffle)
        return shuffle.result

    @staticmethod
    def _gather(
        op: memref.LoadOp,
        dim: int,
        lanes: Lanes,
        mapping: dict[SSAValue, SSAValue],
        block: Block,
    ) -> SSAValue:
        """Lane `k` of the vector: the element at index `dim` + `k` (active
        lanes only; the others repeat lane 0)."""
        assert isinstance(lanes.active, int)  # `local` buffers: never masked
        indices = [mapping.get(i, i) for i in op.indices]
        result: SSAValue | None = None
        t = vector_type(op.res.type, lanes.width)
        for k in range(lanes.active):
            offset = index(k)
            at = arith.AddiOp(indices[dim], offset)
            position = [*indices[:dim], at.result, *indices[dim + 1 :]]
            element = memref.LoadOp.get(op.memref, position)
            block.add_ops([offset, at, element])
            if result is None:
                first = vector.BroadcastOp(element.res, t)
                block.add_op(first)
                result = first.vector
            else:
                insert = vector.InsertOp(element.res, result, [k])
                block.add_op(insert)
                result = insert.result
        assert result is not None
        return result

    def build(self, lanes: Lanes, end: SSAValue | None = None) -> Block:
        """The vector body: one block taking the index of the first lane;
        with an `end`, the lanes before it are active (`end` minus that
        index: masked vectors over a run-time extent)."""
        block = Block(arg_types=[tir.INDEX])
        block.args[0].name_hint = self.loop.induction_var.name_hint
        mapping = {self.loop.induction_var: block.args[0]}
        if end is not None:
            block.add_op(rest := arith.SubiOp(end, block.args[0]))
            lanes.active = rest.result
        varying: set[SSAValue] = set()
        broadcasts: dict[SSAValue, SSAValue] = {}

        def vec(value: SSAValue) -> SSAValue:
            if value in varying:
                return mapping[value]
            if value not in broadcasts:
                scalar = mapping.get(value, value)
                op = vector.BroadcastOp(scalar, vector_type(scalar.type, lanes.width))
                block.add_op(op)
                broadcasts[value] = op.vector
            return broadcasts[value]

        for op in self.loop.body.block.ops:
            match op:
                case tir.YieldOp():
                    pass
                case _ if op.results and op.results[0] in self.split:
                    pass
                case memref.LoadOp() if op.indices and (
                    op.indices[-1] in self.affine or self.flat(op) is not None
                ):
                    mapping[op.res] = lanes.load(
                        op.memref,
                        self._indices(op, mapping, block),
                        vector_type(op.res.type, lanes.width),
                        lanes.active,
                        block,
                    )
                    varying.add(op.res)
                case memref.LoadOp() if op.indices and op.indices[-1] in self.strided:
                    mapping[op.res] = self._every_other(op, lanes, mapping, block)
                    varying.add(op.res)
                case memref.LoadOp() if (dim := self.gathered(op)) is not None:
                    mapping[op.res] = self._gather(op, dim, lanes, mapping, block)
                    varying.add(op.res)
                case memref.StoreOp():
                    lanes.store(
                        vec(op.value),
                        op.memref,
                        self._indices(op, mapping, block),
                        block,
                    )
                case arith.CmpiOp() | arith.CmpfOp() | arith.SelectOp() if any(
                    v in varying for v in op.operands
                ):
                    new = compare_or_select(op, [vec(v) for v in op.operands])
                    block.add_op(new)
                    mapping[op.results[0]] = new.results[0]
                    varying.add(op.results[0])
                case _ if isinstance(op, ELEMENTWISE) and any(
                    v in varying for v in op.operands
                ):
                    new = op.create(
                        operands=[vec(v) for v in op.operands],
                        result_types=[vector_type(op.results[0].type, lanes.width)],
                        properties=dict(op.properties),
                        attributes=dict(op.attributes),
                    )
                    block.add_op(new)
                    mapping[op.results[0]] = new.results[0]
                    varying.add(op.results[0])
                case _:
                    new = op.clone(value_mapper=dict(mapping))
                    block.add_op(new)
                    mapping.update(zip(op.results, new.results))
        block.add_op(scf.YieldOp())
        return block


def _lane_type(op: Operation) -> Attribute:
    """The element type of a vectorized op's lanes: what it stores, what it
    compares, else what it computes."""
    if isinstance(op, memref.StoreOp):
        return op.value.type
    if isinstance(op, COMPARISONS):
        return op.operands[0].type
    return op.results[0].type


def lower_vectorized(op: tir.ForOp, rewriter: PatternRewriter) -> None:
    """Whole vectors, then the rest: with a constant extent, one narrower or
    masked vector (the 8 columns past 48 of a 56-wide row: one op, not 8);
    with a dynamic one, masked vectors where masks are cheap, else a
    scalar loop."""
    vectorizer = Vectorizer(op, simd_bits(tir.function_of(op).target))
    lanes = vectorizer.plan() if const_evaluate_operand(op.step) == 1 else None
    if lanes is None:
        return lower_serial(op, rewriter)
    lb, ub = const_evaluate_operand(op.lb), const_evaluate_operand(op.ub)
    if lb is None or ub is None:
        return _vectorize_dynamic(op, vectorizer, lanes, rewriter)
    extent = max(ub - lb, 0)
    if not extent:
        return rewriter.erase(op)
    if extent < lanes and not _masked(vectorizer, extent):
        lanes = extent
    whole = extent // lanes * lanes
    width = index(lanes)
    ops: list[Operation] = [width] if whole else []
    ops.append(split := index(lb + whole))
    if whole:
        body = vectorizer.build(Lanes(lanes, lanes))
        ops.append(loop := scf.ForOp(op.lb, split, width, [], body))
        annotate_unroll(loop, whole // lanes)
    if rest := extent - whole:
        tail = Lanes(lanes, rest) if _masked(vectorizer, rest) else Lanes(rest, rest)
        ops.append(step := index(rest))
        # One trip: SimplifyTrivialLoops makes it its body.
        ops.append(scf.ForOp(split, op.ub, step, [], vectorizer.build(tail)))
    rewriter.insert(ops, InsertPoint.before(op))
    rewriter.erase(op)


def _masked(vectorizer: Vectorizer, rest: int) -> bool:
    """A remainder of `rest` lanes is one masked full vector: masks are
    cheap (`_masks_cheap`) and `rest` is no LLVM-legal width (a power of
    two)."""
    return _masks_cheap(vectorizer) and bool(rest & (rest - 1))


def _masks_cheap(vectorizer: Vectorizer) -> bool:
    """Masked loads and stores are as cheap as plain ones on the target for
    the lane type, and the body touches no `local` buffer.  LLVM keeps a
    `local` buffer (an accumulator) in registers (SROA) only when plain
    loads and stores access it; masked, it stays in memory and each load
    waits for the store before it (a global pooling's row of sums)."""
    return (
        vectorizer.bits >= MASKED_TAIL_BITS
        and vectorizer.narrowest >= MASKED_ELEMENT_BITS
        and not vectorizer.touches_local()
    )


def extent_may_vary(loop: tir.ForOp) -> bool:
    """Whether the `vectorized` `loop` compiles as well with an extent known
    only at run time: it does not vectorize (a scalar loop either way), or
    masks are cheap (`_masks_cheap`: masked vectors, `_vectorize_dynamic`).  What
    `merge-kernels` asks before it lets the extents of merged loops differ."""
    vectorizer = Vectorizer(loop, simd_bits(tir.function_of(loop).target))
    return vectorizer.plan() is None or _masks_cheap(vectorizer)


def _vectorize_dynamic(
    op: tir.ForOp, vectorizer: Vectorizer, lanes: int, rewriter: PatternRewriter
) -> None:
    """A loop of run-time extent (`merge-kernels` gives a shared kernel such
    loops where its members' extents differ: DenseNet-121's batch-norm and
    ReLU kernels over rows of 56, 28, 14 and 7 pixels).  Where masks are
    cheap, vectors masked to the
    lanes before the end (`vector.create_mask`), all on but in the last:
    one copy of the body, where whole vectors and a remainder would be two.
    Else whole vectors up to the last multiple of `lanes`, then a scalar
    loop."""
    if _masks_cheap(vectorizer):
        width = index(lanes)
        body = vectorizer.build(Lanes(lanes, 0), end=op.ub)
        rewriter.replace(op, [width, scf.ForOp(op.lb, op.ub, width, [], body)])
        return
    ops: list[Operation] = [
        width := index(lanes),
        zero := index(0),
        trips := arith.SubiOp(op.ub, op.lb),
        trips := arith.MaxSIOp(trips, zero),
        whole := arith.RemSIOp(trips, width),
        whole := arith.SubiOp(trips, whole),
        split := arith.AddiOp(op.lb, whole),
    ]
    body = vectorizer.build(Lanes(lanes, lanes))
    ops.append(scf.ForOp(op.lb, split, width, [], body))
    ops.append(scf_loop(split.results[0], op.ub, op.step, op.body.clone()))
    rewriter.insert(ops, InsertPoint.before(op))
    rewriter.erase(op)


def element_bits(t: Attribute) -> int:
    """The bits of one element of type `t` (an `index`: 64)."""
    if isinstance(t, AnyFloat):
        return t.bitwidth
    return t.width.data if isinstance(t, IntegerType) else 64
