"""`convert-tir-to-scf`: CPU `tir` functions to `func`/`scf`/`memref`/`vector`.

Runs before `lower-to-llvm`, for functions whose target is a CPU
(`#target.target<"llvm", ...>`, or none: the host).  Loops go first, inner
before outer, because their lowering reads the enclosing function's target:

* `serial` → `scf.for`; `unrolled` → `scf.for` too, annotated
  `#llvm.loop_annotation<unroll = #llvm.loop_unroll<full = true>>`
  (`hetero.dialects.llvm_attrs`) when the trip count is a constant of at most
  `MAX_UNROLL`, else plain: it stays a loop (`CpuTarget` runs LLVM without
  its heuristic unroller; see docs/lowering.md).  LLVM unrolls, not
  xDSL, so that the conversions to `llvm` handle one copy of the body, not
  one per iteration;
* `vectorized` → `vector` ops over `lanes` elements (the target's SIMD width,
  or the constant extent when smaller) plus the remainder as one narrower
  vector (a scalar loop when the extent is dynamic), when the body is
  straight-line element-wise code (see `Vectorizer`); else `scf.for`.
  With AVX-512 a remainder that is not a power of two is one *masked*
  full-width vector instead (`vector.maskedload`/`maskedstore`): LLVM
  splits a 13-lane vector into 8 + 4 + 1 pieces and reassembles them for
  each op, where a masked `vmovups` is one instruction.
  The loop over whole vectors is annotated like an `unrolled` one;
* `parallel` → its body outlined into a private function over an iteration
  range, launched by a call of `<body>.launch(threads, trips, captures...)`,
  which `hetero.runtime.parallel` defines on top of `hetero_parallel_for`
  (`threads`: the target's `num_threads`, 0 for the pool's default).
  A parallel loop nested in another one runs serially, and so does every
  parallel loop of a target of `num_threads = 1`.

A resulting loop of one constant trip is then its body, one of none nothing
(xDSL's `SimplifyTrivialLoops`).

Then the rest, one pattern per op: functions, returns, calls, extern calls
(declared as bodiless private `func.func`s), allocations and CPU target
regions (inlined).  Storage scopes are dropped from memref types last: on a
CPU every scope is ordinary memory.  GPU targets, launches, packed calls and
thread-bound loops are errors at the op: they belong to the GPU path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func, math, memref, scf, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    UnitAttr,
    VectorType,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    TypeConversionPattern,
    attr_type_rewrite_pattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolTable
from xdsl.transforms.canonicalization_patterns.scf import SimplifyTrivialLoops
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from hetero.dialects import tir
from hetero.dialects.llvm_attrs import FULL_UNROLL, LOOP_ANNOTATION
from hetero.lowering.conversion import (
    apply_lowerings,
    erase_dead_ops,
    lowering,
    mentions,
    nested_ops,
)
from hetero.lowering.convert_arith_to_llvm import compare_or_select
from hetero.targets.cpu import (
    STACK_BYTES,
    asked_threads,
    is_cpu,
    outlines_parallel_loops,
    simd_bits,
)
from hetero.utils.diagnostics import HeteroError
from hetero.utils.symbols import fresh_symbol
from hetero.utils.values import free_values, replace_within

MAX_UNROLL = 16
"""Loops to unroll with at most this many (constant) iterations are annotated
for LLVM to unroll them completely."""


CPU_SCOPES = ("global", "local")
"""Storage scopes that mean something on a CPU (both are ordinary memory)."""

MASKED_TAIL_BITS = 512
"""From this vector width on (AVX-512: masked loads and stores of 32- and
64-bit elements, as cheap as plain ones) a remainder is a masked vector.
Narrower elements need AVX512BW, without which LLVM masks lane by lane:
their remainders stay narrower vectors.  Only x86 reaches it: AArch64's
NEON (128 bits, `ARCH_SIMD_BITS`) has no masked loads or stores."""

MASKED_ELEMENT_BITS = 32
"""Narrowest lane type a masked remainder may have."""


LAUNCH_SUFFIX = ".launch"
"""`@f.launch` starts the outlined parallel body `@f` (`hetero.runtime.parallel`)."""

PARALLEL_BODY = "hetero.parallel_body"
"""Marks an outlined parallel body: `(begin, end, captures...)`."""

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


def index(value: int) -> arith.ConstantOp:
    """An `index` constant, made with `Operation.create` (as
    `hetero.lowering.conversion.llvm_constant`: the vectorizer makes
    hundreds)."""
    return arith.ConstantOp.create(
        result_types=[tir.INDEX], properties={"value": _index_attr(value)}
    )


@cache
def _index_attr(value: int) -> IntegerAttr:
    return IntegerAttr.from_index_int_value(value)


@cache
def vector_type(element: Attribute, lanes: int) -> VectorType:
    """`vector<lanes x element>`, made once (the vectorizer asks for one per op)."""
    return VectorType(element, [lanes])


def scf_loop(lb: SSAValue, ub: SSAValue, step: SSAValue, body: Region) -> scf.ForOp:
    """`scf.for` over `body`, a `tir.for` region whose `tir.yield` becomes `scf.yield`."""
    block = body.block
    assert block.last_op is not None
    block.erase_op(block.last_op)
    block.add_op(scf.YieldOp())
    return scf.ForOp(lb, ub, step, [], body.detach_block(block))


# ----------------------------------------------------------------------------
# Loops
# ----------------------------------------------------------------------------


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
                widths.append(_bits(element))
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


class ForLowering(RewritePattern):
    """Lowers each `tir.for` by its kind (see the module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tir.ForOp, rewriter: PatternRewriter, /):
        kind = op.kind.data
        if kind == tir.ForKind.THREAD_BINDING:
            raise HeteroError(
                f"convert-tir-to-scf: a loop bound to '{op.thread_tag.data}' in a CPU "
                "function (thread bindings are for GPU targets)",
                op,
            )
        LOOP_LOWERINGS[kind](op, rewriter)


def lower_serial(op: tir.ForOp, rewriter: PatternRewriter) -> None:
    """`scf.for` over the same body."""
    rewriter.replace(op, scf_loop(op.lb, op.ub, op.step, op.detach_region(op.body)))


def lower_unrolled(op: tir.ForOp, rewriter: PatternRewriter) -> None:
    """`scf.for` over the same body, for LLVM to unroll when its trip count
    is small and constant."""
    loop = scf_loop(op.lb, op.ub, op.step, op.detach_region(op.body))
    bounds = [const_evaluate_operand(v) for v in (op.lb, op.ub, op.step)]
    if None not in bounds:
        annotate_unroll(loop, len(range(*bounds)))  # type: ignore[misc]
    rewriter.replace(op, loop)


def annotate_unroll(loop: scf.ForOp, trips: int) -> None:
    """Asks LLVM to unroll `loop` completely when it has at most `MAX_UNROLL`
    trips: after unrolling, a register tile's accumulators are addressed by
    constants only, which LLVM's SROA (run after its unroller) keeps in
    registers."""
    if trips <= MAX_UNROLL:
        loop.attributes[LOOP_ANNOTATION] = FULL_UNROLL


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
    waits for the store before it (a global pooling's row of sums: 2-6x
    slower)."""
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


def lower_parallel(op: tir.ForOp, rewriter: PatternRewriter) -> None:
    """Outlines the body into `@f_parallelN(begin, end, captures...)` and launches
    it over the trip count; `begin`/`end` count iterations, not index values.

    The launcher's thread count is the target's `num_threads`, 0 if it has
    none (the pool's default then: `hetero.runtime.parallel`).

    A serial loop where no second thread would take part: in a parallel
    loop's body, or for a target pinned to one thread, whose pool would run
    the loop on the caller's thread anyway; the outlined body, its task and
    its launcher cost code generation about 6 ms of CPU a loop (ResNet-50's
    36 parallel loops: 0.13 s of its compile at one thread), for the same
    code."""
    caller = tir.function_of(op)
    if not outlines_parallel_loops(caller.target) or any(
        isinstance(a, tir.ForOp) and a.kind.data == tir.ForKind.PARALLEL
        for a in _ancestors(op)
    ):
        return lower_serial(op, rewriter)
    used = list(dict.fromkeys([*free_values(op.body), op.lb, op.step]))
    # Constants are cheaper to repeat than to capture, and stay visible to LLVM.
    constants = [v for v in used if isinstance(v.owner, arith.ConstantOp)]
    captured = [v for v in used if v not in constants]
    module = caller.parent_op()
    assert isinstance(module, ModuleOp)
    name = fresh_symbol(
        module, f"{caller.sym_name.data}_parallel", bare=False, separator=""
    )
    body = tir.PrimFuncOp(
        name,
        ([IndexType(), IndexType(), *(v.type for v in captured)], []),
        private=True,
        target=caller.target,
    )
    body.attributes[PARALLEL_BODY] = UnitAttr()
    begin, end, *params = body.args
    for value, param in zip(captured, params):
        param.name_hint = value.name_hint
    repeated = [v.owner.clone() for v in constants]  # type: ignore[union-attr]
    mapping = dict(zip(constants, (c.results[0] for c in repeated)))
    mapping |= dict(zip(captured, params))
    step, one = index(1), Block(arg_types=[IndexType()])
    scaled = arith.MuliOp(one.args[0], mapping[op.step])
    iv = arith.AddiOp(mapping[op.lb], scaled)
    old = op.body.block
    old.args[0].replace_all_uses_with(iv.result)
    replace_within(op.body.walk(), mapping)
    moved = list(old.ops)
    for o in moved:
        o.detach()
    one.add_ops([scaled, iv, *moved])
    loop = scf_loop(begin, end, step.result, Region(one))
    entry = body.body.block
    assert entry.last_op is not None
    entry.insert_ops_before([*repeated, step, loop], entry.last_op)
    rewriter.insert(body, InsertPoint.after(caller))
    count = _trip_count(op)
    threads = arith.ConstantOp(IntegerAttr(asked_threads(caller.target) or 0, i32))
    trips = count[-1].results[0]
    launch = tir.CallExternOp(name + LAUNCH_SUFFIX, [threads, trips, *captured])
    rewriter.replace(op, [*count, threads, launch], [])


def _trip_count(op: tir.ForOp) -> list[Operation]:
    """Ops computing the trip count of `op` (the last one's result): one
    constant when its bounds and step are (the usual case: a schedule's
    tasks), else `ceildiv(max(ub - lb, 0), step)`."""
    bounds = [const_evaluate_operand(v) for v in (op.lb, op.ub, op.step)]
    if None not in bounds:
        return [index(len(range(*bounds)))]  # type: ignore[misc]
    zero = index(0)
    trips = arith.SubiOp(op.ub, op.lb)
    clamped = arith.MaxSIOp(trips, zero)
    return [zero, trips, clamped, arith.CeilDivSIOp(clamped, op.step)]


def _ancestors(op: Operation) -> Iterable[Operation]:
    parent = op.parent_op()
    while parent is not None:
        yield parent
        parent = parent.parent_op()


LOOP_LOWERINGS: dict[str, Callable[[tir.ForOp, PatternRewriter], None]] = {
    tir.ForKind.SERIAL: lower_serial,
    tir.ForKind.UNROLLED: lower_unrolled,
    tir.ForKind.VECTORIZED: lower_vectorized,
    tir.ForKind.PARALLEL: lower_parallel,
}
"""Loop kind → its lowering (thread-bound loops are rejected)."""


# ----------------------------------------------------------------------------
# Functions, calls, buffers
# ----------------------------------------------------------------------------


class PrimFuncLowering(RewritePattern):
    """Lowers a CPU `tir.prim_func` to a `func.func` of the same visibility."""

    @lowering
    def match_and_rewrite(self, op: tir.PrimFuncOp, rewriter: PatternRewriter, /):
        new = func.FuncOp(
            op.sym_name.data,
            op.function_type,
            op.detach_region(op.body),
            "private" if op.is_private else None,
        )
        new.attributes |= op.attributes
        rewriter.replace(op, new)


class ReturnLowering(RewritePattern):
    """Lowers `tir.return` to `func.return`."""

    @lowering
    def match_and_rewrite(self, op: tir.ReturnOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, func.ReturnOp(*op.operands))


class CallLowering(RewritePattern):
    """Lowers `tir.call` to `func.call` (the callee is lowered too)."""

    @lowering
    def match_and_rewrite(self, op: tir.CallOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, func.CallOp(op.callee, op.args, op.res.types))


class CallExternLowering(RewritePattern):
    """Lowers `tir.call_extern` to a `func.call` of a bodiless private declaration."""

    @lowering
    def match_and_rewrite(self, op: tir.CallExternOp, rewriter: PatternRewriter, /):
        name = op.callee.data
        signature = (op.args.types, op.res.types)
        module = op.get_toplevel_object()
        assert isinstance(module, ModuleOp)
        existing = SymbolTable.lookup_symbol(module, name)
        if existing is None:
            declaration = func.FuncOp.external(name, *signature)
            rewriter.insert(declaration, InsertPoint.at_end(module.body.block))
        elif not (
            isinstance(existing, func.FuncOp)
            and existing.function_type.inputs.data == signature[0]
            and existing.function_type.outputs.data == signature[1]
        ):
            raise HeteroError(
                f"convert-tir-to-scf: extern '{name}' is called with "
                f"({', '.join(map(str, signature[0]))}) -> "
                f"({', '.join(map(str, signature[1]))}), which clashes with "
                f"the symbol @{name} of the module",
                op,
            )
        rewriter.replace(op, func.CallOp(name, op.args, op.res.types))


class AllocLowering(RewritePattern):
    """Lowers `tir.alloc`: `local` and small static buffers on the stack, others
    on the heap, freed when the enclosing region ends (as TIR's lifetime says)."""

    @lowering
    def match_and_rewrite(self, op: tir.AllocOp, rewriter: PatternRewriter, /):
        t = op.buffer.type
        assert isinstance(t, MemRefType)
        if on_stack(op):
            alloca = memref.AllocaOp.get(
                t.element_type, shape=t.get_shape(), memory_space=t.memory_space
            )
            # At the function's entry, where LLVM sees a fixed stack slot
            # (an alloca in a loop would grow the stack at each iteration).
            rewriter.insert(alloca, InsertPoint.at_start(_entry(op)))
            rewriter.replace(op, [], alloca.results)
            return
        buffer = memref.AllocOp(op.dynamic_sizes, [], t)
        rewriter.replace(op, buffer)
        block = buffer.parent_block()
        assert block is not None and block.last_op is not None
        rewriter.insert(memref.DeallocOp.get(buffer), InsertPoint.before(block.last_op))


def on_stack(op: tir.AllocOp) -> bool:
    """Whether `op`'s buffer goes on the stack: `local` and small static
    buffers (`STACK_BYTES`)."""
    t = op.buffer.type
    assert isinstance(t, MemRefType)
    if not t.has_static_shape():
        return False
    return (
        op.scope == "local"
        or prod(t.get_shape()) * (_bits(t.element_type) // 8) <= STACK_BYTES
    )


def _entry(op: Operation) -> Block:
    """The entry block of the function around `op`."""
    while not isinstance(op.parent_op(), ModuleOp):
        op = op.parent_op()  # type: ignore[assignment]
    return op.regions[0].block


def _bits(t: Attribute) -> int:
    if isinstance(t, AnyFloat):
        return t.bitwidth
    return t.width.data if isinstance(t, IntegerType) else 64


class TargetRegionInlining(RewritePattern):
    """Inlines the body of a CPU `tir.target_region` where it stands."""

    @lowering
    def match_and_rewrite(self, op: tir.TargetRegionOp, rewriter: PatternRewriter, /):
        block = op.body.block
        assert block.last_op is not None
        rewriter.erase(block.last_op)
        rewriter.inline_block(block, InsertPoint.before(op))
        rewriter.erase(op)


def _scoped(attr: Attribute) -> bool:
    return isinstance(attr, MemRefType) and not isinstance(attr.memory_space, NoneAttr)


class ScopeErasure(TypeConversionPattern):
    """Drops the storage scope of memref types: on a CPU it is all one memory.
    For the ops that mention a scoped type (`erase_scopes`)."""

    @attr_type_rewrite_pattern
    def convert_type(self, typ: MemRefType, /) -> MemRefType | None:
        if isinstance(typ.memory_space, NoneAttr):
            return None
        return MemRefType(typ.element_type, typ.get_shape(), typ.layout, NoneAttr())


def erase_scopes(module: ModuleOp) -> None:
    """`ScopeErasure` on each op of `module` that mentions a scoped memref,
    in one sweep: each op's types are its own, so none is left after it (a
    walker would offer the pattern every op, and build a rewriter for each)."""
    pattern = ScopeErasure(recursive=True)
    for op in nested_ops(module):
        if op.parent is not None and mentions(op, _scoped):
            pattern.match_and_rewrite(op, PatternRewriter(op))


# ----------------------------------------------------------------------------
# What the CPU path rejects
# ----------------------------------------------------------------------------


def rejection(op: Operation) -> str | None:
    """Why `op` cannot be lowered for a CPU, or None."""
    match op:
        case tir.PrimFuncOp(target=target) if not is_cpu(target):
            return (
                f"@{op.sym_name.data} is for the non-CPU target '{target}' "
                "(the GPU path lowers it, after split-host-device)"
            )
        case tir.TargetRegionOp(target=target) if not is_cpu(target):
            return f"a target region for the non-CPU target '{target}'"
        case tir.LaunchOp():
            return "a kernel launch in a CPU function (the GPU path lowers launches)"
        case tir.CallPackedOp():
            return f"packed call '{op.callee.data}': the CPU runtime has no packed functions"
        case tir.AllocOp(scope=scope) if scope not in CPU_SCOPES:
            return (
                f"a '{scope}' buffer in a CPU function (only {', '.join(CPU_SCOPES)})"
            )
    return None


@dataclass(frozen=True)
class ConvertTirToScfPass(ModulePass):
    """Lowers CPU `tir` functions to `func`/`scf`/`memref`/`vector`."""

    name = "convert-tir-to-scf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.walk():
            if (why := rejection(inner)) is not None:
                raise HeteroError(f"convert-tir-to-scf: {why}", inner)
        PatternRewriteWalker(
            ForLowering(), walk_regions_first=True, apply_recursively=False
        ).rewrite_module(op)
        # A loop of one trip is its body, one of none nothing (a vectorized
        # loop's tail, a register tile's row of one): as loops, each would
        # cost every later pass a few ops and LLVM its per-loop passes.
        PatternRewriteWalker(
            SimplifyTrivialLoops(), apply_recursively=False
        ).rewrite_module(op)
        apply_lowerings(
            op,
            [
                PrimFuncLowering(),
                ReturnLowering(),
                CallLowering(),
                CallExternLowering(),
                AllocLowering(),
                TargetRegionInlining(),
            ],
        )
        erase_dead_ops(op)
        erase_scopes(op)
