"""Building blocks of `lower-te`: an IR emitter for loop nests and lazy tensors.

The compute templates (`te/templates/`) describe each relay op as
either a *lazy* tensor (a function from indices to a scalar, emitted where it
is read: this is how elementwise/injective producers are inlined into their
consumers' loop bodies without intermediate buffers) or as a loop nest that
writes a buffer.  This module gives them the vocabulary: `Emitter` inserts
ops at one place of a `tir.prim_func` (with folded index arithmetic and
hoisted constants), and `Tensor` is the shape + element type + `load` view of
a relay value that every template reads its operands through.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from xdsl.builder import Builder, InsertPoint
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FloatAttr,
    IndexType,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.traits import IsTerminator

from hetero.analysis.shape_functions import Dim, DynamicShapeError, Symbol
from hetero.dialects.memref_ops import PrefetchOp
from hetero.dialects.target import TargetAttr
from hetero.dialects.tir import (
    INDEX,
    AllocOp,
    ForKind,
    ForOp,
    PrimFuncOp,
    scoped_memref,
)
from hetero.targets.cpu import is_cpu

Index = int | Dim | SSAValue
"""An index expression: a Python int (folded), a size known at run time
(`Dim`, a product of a kernel's dynamic dimensions) or an SSA `index` value."""

Shape = tuple[int | Dim, ...]
"""A tensor's shape in a kernel: `Dim`s where it is dynamic."""

_shapes: ContextVar[dict[SSAValue, Shape] | None] = ContextVar(
    "hetero_te_shapes", default=None
)


@contextmanager
def dynamic_shapes(shapes: dict[SSAValue, Shape]) -> Iterator[None]:
    """While a kernel of dynamic shapes is emitted: the shapes of its relay
    values and buffers (`shape_of`), which the templates read in place of
    their types' `?`."""
    token = _shapes.set(shapes)
    try:
        yield
    finally:
        _shapes.reset(token)


def shape_of(value: SSAValue) -> Shape:
    """`value`'s shape: its type's, or with `dynamic_shapes` its `Dim`s."""
    if (shapes := _shapes.get()) is not None and value in shapes:
        return shapes[value]
    shape = tuple(value.type.get_shape())  # type: ignore[attr-defined]
    if DYNAMIC_INDEX in shape:
        raise DynamicShapeError(f"the sizes of {value.type} are not known")
    return shape


def _is(value: Index, number: int) -> bool:
    """`value` is the int `number` (a `Dim` is never asked: it would be a
    question about run-time sizes)."""
    return isinstance(value, int) and value == number


def _known(value: Index) -> bool:
    return isinstance(value, int | Dim)


class Emitter:
    """Inserts ops before the terminator of `block`; constants go to `entry`.

    Constants are hoisted to the top of the function (`entry`) and shared, so
    loop bodies only hold the arithmetic that depends on the loop.

    Index arithmetic folds identities (`x * 1`, `x + 0`, `x % 1`) unless the
    emitter is `uniform` (`uniformly`): then they stay ops, so that a
    schedule's kernels for other shapes have the same ops, for
    `merge-kernels` to share (LLVM folds those that stay constant).  A split
    index joined again, `(x / c) * c + x % c`, is `x` either way: that holds
    whatever `c` (`_recombined`).
    """

    def __init__(
        self,
        block: Block,
        entry: Block,
        constants: dict[tuple[int | float, Attribute], SSAValue],
        uniform: bool = False,
    ) -> None:
        self.block = block
        self.entry = entry
        self.constants = constants
        self.uniform = uniform

    def op(self, op: Operation) -> SSAValue:
        """Insert `op` here; return its (first) result if it has one."""
        last = self.block.last_op
        at_end = last is None or not last.has_trait(IsTerminator)
        Builder(
            InsertPoint.at_end(self.block) if at_end else InsertPoint.before(last)
        ).insert(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    @property
    def target(self) -> TargetAttr | None:
        """The target of the function being emitted (None: the host)."""
        function = self.entry.parent_op()
        assert isinstance(function, PrimFuncOp)
        return function.target

    def at(self, block: Block) -> Emitter:
        """An emitter for a nested block of the same function."""
        return Emitter(block, self.entry, self.constants, self.uniform)

    def uniformly(self) -> Emitter:
        """This emitter, keeping identities (see `uniform`)."""
        return type(self)(self.block, self.entry, self.constants, uniform=True)

    # -- constants and index arithmetic ------------------------------------

    def constant(self, value: float, type: Attribute) -> SSAValue:
        """A hoisted, shared `arith.constant` of `type` (index, integer or float)."""
        key = (value, type)
        if key not in self.constants:
            if isinstance(type, IndexType | IntegerType):
                op = arith.ConstantOp.from_int_and_width(int(value), type)
            else:
                op = arith.ConstantOp(FloatAttr(float(value), type))  # type: ignore[arg-type]
            Builder(InsertPoint.at_start(self.entry)).insert(op)
            self.constants[key] = op.result
        return self.constants[key]

    def index(self, value: Index) -> SSAValue:
        """`value` as an SSA index."""
        if isinstance(value, int):
            return self.constant(value, INDEX)
        return self._size(value) if isinstance(value, Dim) else value

    def bind_sizes(self, symbols: Mapping[Symbol, tuple[SSAValue, int]]) -> None:
        """Where each symbol of the `Dim`s is read: a buffer's dimension."""
        for symbol, source in symbols.items():
            self.constants[("symbol", symbol)] = source  # type: ignore[index]

    def _size(self, size: Dim) -> SSAValue:
        """`size` computed once at the function's entry (after its constants):
        `memref.dim`s of the buffers bound to its symbols, multiplied."""
        key = ("size", size.coefficient, size.symbols)
        if key not in self.constants:  # type: ignore[comparison-overlap]
            value = self.constant(size.coefficient, INDEX)
            for i, symbol in enumerate(size.symbols):
                dim = self._symbol(symbol)
                value = (
                    dim
                    if i == 0 and size.coefficient == 1
                    else self._entry_op(arith.MuliOp(value, dim))
                )
                # Each partial product is a size made, so that the entry
                # ops made after it (`_entry_op`) follow it.
                part = ("size", size.coefficient, size.symbols[: i + 1])
                self.constants.setdefault(part, value)  # type: ignore[call-overload]
        return self.constants[key]  # type: ignore[index]

    def _symbol(self, symbol: Symbol) -> SSAValue:
        key = ("dim", symbol)
        if key not in self.constants:  # type: ignore[comparison-overlap]
            source = self.constants.get(("symbol", symbol))  # type: ignore[call-overload]
            if source is None:
                raise DynamicShapeError(
                    f"no buffer has the size d{symbol[0]}.{symbol[1]}"
                )
            buffer, axis = source
            op = memref.DimOp(buffer, self.constant(axis, INDEX))
            self.constants[key] = self._entry_op(op)  # type: ignore[index]
        return self.constants[key]  # type: ignore[index]

    def _entry_op(self, op: Operation) -> SSAValue:
        """`op` at the function's entry, after its constants and sizes."""
        at = self.entry.first_op
        while at is not None and (
            isinstance(at, arith.ConstantOp) or at in self._sizes_made()
        ):
            at = at.next_op
        point = (
            InsertPoint.before(at) if at is not None else InsertPoint.at_end(self.entry)
        )
        Builder(point).insert(op)
        return op.results[0]

    def _sizes_made(self) -> set[Operation]:
        return {
            v.owner
            for k, v in self.constants.items()
            if isinstance(k[0], str) and isinstance(v, SSAValue)  # type: ignore[index]
        }  # type: ignore[misc]

    def add(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if _is(a, 0) and not self.uniform:
            return b
        if _is(b, 0) and not self.uniform:
            return a
        if (whole := _recombined(a, b)) is not None:
            return whole
        return self._index_op(arith.AddiOp, self.index(a), self.index(b))

    def sub(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return a - b
        if _is(b, 0) and not self.uniform:
            return a
        return self._index_op(arith.SubiOp, self.index(a), self.index(b))

    def mul(self, a: Index, b: int | Dim) -> Index:
        if _known(a) and _known(b):
            return a * b  # type: ignore[operator]
        if (_is(b, 0) or _is(b, 1)) and not self.uniform:
            return 0 if _is(b, 0) else a
        return self._index_op(arith.MuliOp, self.index(a), self.index(b))

    def div(self, a: Index, b: int | Dim) -> Index:
        """`a // b` for non-negative `a`."""
        if isinstance(a, int) and isinstance(b, int):
            return a // b
        if _is(b, 1) and not self.uniform:
            return a
        return self._index_op(arith.DivSIOp, self.index(a), self.index(b))

    def rem(self, a: Index, b: int | Dim) -> Index:
        """`a % b` for non-negative `a`."""
        if isinstance(a, int) and isinstance(b, int):
            return a % b
        if _is(b, 1) and not self.uniform:
            return 0
        return self._index_op(arith.RemSIOp, self.index(a), self.index(b))

    def _index_op(
        self, op: type[arith.SignlessIntegerBinaryOperation], a: SSAValue, b: SSAValue
    ) -> SSAValue:
        """`op` of `a` and `b` (index values), made with `Operation.create`:
        in a third of the time of its constructor, and kernels are mostly
        index arithmetic (as `hetero.lowering.conversion.llvm_constant`)."""
        return self.op(op.create(operands=[a, b], result_types=[INDEX]))

    def unflatten(self, flat: Index, shape: Sequence[int | Dim]) -> list[Index]:
        """The row-major multi-index of element `flat` of `shape`."""
        if not shape:
            return []
        indices: list[Index] = []
        for extent in reversed(shape[1:]):
            indices.append(self.rem(flat, extent))
            flat = self.div(flat, extent)
        return [flat, *reversed(indices)]

    def min(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return min(a, b)
        return self.op(arith.MinSIOp(self.index(a), self.index(b)))

    def max(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return max(a, b)
        return self.op(arith.MaxSIOp(self.index(a), self.index(b)))

    def less(self, a: Index, b: Index) -> SSAValue | bool:
        """`a < b` (a Python bool when it folds)."""
        if isinstance(a, int) and isinstance(b, int):
            return a < b
        return self.op(arith.CmpiOp(self.index(a), self.index(b), "slt"))

    def in_range(self, value: Index, lo: int, hi: int) -> SSAValue | bool:
        """`lo <= value < hi` (a Python bool when it folds)."""
        if isinstance(value, int):
            return lo <= value < hi
        value = self.index(value)
        above = self.op(arith.CmpiOp(value, self.index(lo), "sge"))
        below = self.op(arith.CmpiOp(value, self.index(hi), "slt"))
        return self.op(arith.AndIOp(above, below))

    def all_of(self, conditions: Sequence[SSAValue | bool]) -> SSAValue | bool:
        """The conjunction of `conditions`, folding the constant ones."""
        if any(c is False for c in conditions):
            return False
        dynamic = [c for c in conditions if not isinstance(c, bool)]
        if not dynamic:
            return True
        result = dynamic[0]
        for c in dynamic[1:]:
            result = self.op(arith.AndIOp(result, c))
        return result

    # -- floating point ------------------------------------------------------

    def fmax(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`a > b ? a : b`: TVM's float `max` (one `vmaxps` on x86, where
        `arith.maximumf`, which also orders NaN and signed zeros, lowers to
        about six instructions).  `b` when either is NaN."""
        return self.op(arith.SelectOp(self.op(arith.CmpfOp(a, b, "ogt")), a, b))

    def fmaximum(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """The maximum, NaN where either is NaN (IEEE 754's `maximum`, either
        zero of two): a max pooling's combine (docs/dialects/relay.md, *NaN*).
        `fmax` with `b` first keeps a NaN `a`, the select a NaN `b`: three
        instructions on x86 (`vmaxps`, `vcmpunordps`, a blend), where
        `arith.maximumf`, which also orders signed zeros, takes six."""
        nan = self.op(arith.CmpfOp(b, b, "uno"))
        return self.op(arith.SelectOp(nan, b, self.fmax(b, a)))

    def fmin(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`a < b ? a : b` (see `fmax`)."""
        return self.op(arith.SelectOp(self.op(arith.CmpfOp(a, b, "olt")), a, b))

    def fminimum(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """The minimum, NaN where either is NaN (see `fmaximum`)."""
        nan = self.op(arith.CmpfOp(b, b, "uno"))
        return self.op(arith.SelectOp(nan, b, self.fmin(b, a)))

    # -- structure ------------------------------------------------------------

    def loop(
        self, extent: int | Dim, kind: ForKind = ForKind.SERIAL
    ) -> tuple[Emitter, SSAValue]:
        """`tir.for %i = 0 to extent`; the emitter of its body and `%i`."""
        loop = ForOp(self.index(0), self.index(extent), self.index(1), kind=kind)
        self.op(loop)
        return self.at(loop.body.block), loop.induction_var

    def range(
        self, start: Index, stop: Index, step: int = 1, kind: ForKind = ForKind.SERIAL
    ) -> tuple[Emitter, SSAValue]:
        """`tir.for %i = start to stop step step`: a loop over a computed range."""
        loop = ForOp(self.index(start), self.index(stop), self.index(step), kind=kind)
        self.op(loop)
        return self.at(loop.body.block), loop.induction_var

    def nest(
        self, shape: Sequence[int | Dim], parallel: bool = False
    ) -> tuple[Emitter, list[Index]]:
        """Loops over `shape` (outermost first; the outermost `parallel` if
        asked); extent-1 dimensions get no loop, their index is 0."""
        emitter, indices = self, []
        for extent in shape:
            if _is(extent, 1):
                indices.append(0)
                continue
            kind = ForKind.PARALLEL if parallel and emitter is self else ForKind.SERIAL
            emitter, iv = emitter.loop(extent, kind)
            indices.append(iv)
        return emitter, indices

    def when(self, condition: SSAValue | bool) -> Emitter | None:
        """An emitter whose ops run only when `condition` holds (None: never)."""
        if condition is False:
            return None
        if condition is True:
            return self
        then = Block([scf.YieldOp()])
        self.op(scf.IfOp(condition, [], Region(then)))
        return self.at(then)

    def choose(
        self,
        condition: SSAValue,
        type: Attribute,
        then: Callable[[Emitter], SSAValue],
        otherwise: Callable[[Emitter], SSAValue],
    ) -> SSAValue:
        """`condition ? then : otherwise` where only the taken side is evaluated
        (unlike `arith.select`, so a side may load out of another's bounds)."""
        blocks = []
        for side in (then, otherwise):
            block = Block()
            value = side(self.at(block))
            block.add_op(scf.YieldOp(value))
            blocks.append(block)
        return self.op(
            scf.IfOp(condition, [type], Region(blocks[0]), Region(blocks[1]))
        )

    def alloc(
        self, shape: Sequence[int | Dim], element_type: Attribute, scope: str = "global"
    ) -> SSAValue:
        """A buffer for an intermediate (`global`) or an accumulator (`local`);
        of a size known at run time where `shape` has `Dim`s."""
        static = [d if isinstance(d, int) else DYNAMIC_INDEX for d in shape]
        sizes = [self.index(d) for d in shape if isinstance(d, Dim)]
        buffer = self.op(AllocOp(scoped_memref(element_type, static, scope), sizes))
        if sizes and (shapes := _shapes.get()) is not None:
            shapes[buffer] = tuple(shape)
        return buffer

    def load(self, buffer: SSAValue, indices: Sequence[Index]) -> SSAValue:
        t = buffer.type
        assert isinstance(t, MemRefType)
        load = memref.LoadOp.create(  # as `_index_op`, fast
            operands=[buffer, *(self.index(i) for i in indices)],
            result_types=[t.element_type],
        )
        return self.op(load)

    def store(
        self, value: SSAValue, buffer: SSAValue, indices: Sequence[Index]
    ) -> None:
        self.op(
            memref.StoreOp.create(  # as `_index_op`, fast
                operands=[value, buffer, *(self.index(i) for i in indices)]
            )
        )

    def prefetch(
        self, buffer: SSAValue, indices: Sequence[Index], locality: int = 3
    ) -> None:
        """Asks for the cache line of `buffer[indices]`, to be read later
        (`locality` 3: into L1; 2: L2)."""
        self.op(PrefetchOp(buffer, [self.index(i) for i in indices], locality=locality))


Loader = Callable[[Emitter, Sequence[Index]], SSAValue]


def _recombined(a: Index, b: Index) -> SSAValue | None:
    """`x` where `a + b` is `(x / c) * c + x % c` (either way round), which
    truncating division makes `x` whatever `x` and `c` (TVM's simplifier has
    the rule): a flat index split into a row and a column and joined again
    for a plane of that row length.  LLVM folds it only in a second round
    of simplification, after it has proved `x` non-negative; a parallel
    body gets one (`hetero.runtime.parallel`).  The split's ops are erased
    where nothing else uses them."""
    for product, remainder in ((a, b), (b, a)):
        if not (
            isinstance(product, SSAValue)
            and isinstance(mul := product.owner, arith.MuliOp)
            and isinstance(remainder, SSAValue)
            and isinstance(rem := remainder.owner, arith.RemSIOp)
            and isinstance(div := mul.lhs.owner, arith.DivSIOp)
            and div.lhs is rem.lhs
            and div.rhs is rem.rhs is mul.rhs
        ):
            continue
        for op in (mul, div, rem):
            if not op.result.uses:
                op.detach()
                op.erase()
        return rem.lhs
    return None


@dataclass(frozen=True)
class Tensor:
    """A relay tensor value as lower-te sees it: its shape, element type, and
    how to read one element (from a buffer, or computed in place)."""

    shape: Shape
    element_type: Attribute
    load: Loader
    parts: tuple[tuple[Tensor, tuple[int, ...]], ...] = ()
    """Tensors tiling this one, each with the index of its first element (a
    concatenation's inputs): `store_all` copies each with its own nest, so
    no element chooses its source at run time."""
    buffer: SSAValue | None = None
    """The buffer this tensor is, read as it is (`of_buffer`)."""

    @staticmethod
    def of_buffer(buffer: SSAValue) -> Tensor:
        type = buffer.type
        assert isinstance(type, MemRefType)
        return Tensor(
            shape_of(buffer),
            type.element_type,
            lambda e, idx: e.load(buffer, idx),
            buffer=buffer,
        )


def store_all(
    e: Emitter, tensor: Tensor, buffer: SSAValue, offset: Sequence[int] = ()
) -> None:
    """Materialise `tensor` into `buffer` (at `offset`): one parallel loop
    nest, or one per part.  On a CPU the rows are parallel and each row is a
    `vectorized` loop; elsewhere the nest is the emitter's parallel one (on a
    GPU, a thread per element)."""
    offset = offset or (0,) * len(tensor.shape)
    for part, start in tensor.parts:
        store_all(e, part, buffer, [a + b for a, b in zip(offset, start)])
    if tensor.parts:
        return
    if _copies_images(e, tensor, buffer, offset):
        return _copy_images(e, tensor, buffer, offset)
    rows = tensor.shape
    if len(rows) > 1 and is_cpu(e.target):
        rows = rows[:-1]
    body, indices = e.nest(rows, parallel=True)
    if len(rows) < len(tensor.shape):
        body, last = body.loop(tensor.shape[-1], ForKind.VECTORIZED)
        indices = [*indices, last]
    at = [body.add(i, o) for i, o in zip(indices, offset)]
    body.store(tensor.load(body, indices), buffer, at)


def _copies_images(
    e: Emitter, tensor: Tensor, buffer: SSAValue, offset: Sequence[int]
) -> bool:
    """Whether `tensor` is a buffer copied whole images at a time: its last
    two dimensions (an image's rows) land at offset 0 of rows as wide."""
    type = buffer.type
    assert isinstance(type, MemRefType)
    return (
        is_cpu(e.target)
        and tensor.buffer is not None
        and len(tensor.shape) > 2
        and not any(offset[-2:])
        and tuple(type.get_shape()[-2:]) == tensor.shape[-2:]
    )


def _copy_images(
    e: Emitter, tensor: Tensor, buffer: SSAValue, offset: Sequence[int]
) -> None:
    """Each image (the last two dimensions) as one run of `H * W` elements:
    a vectorized loop over the flattened rows (`p / W`, `p % W`), so a row
    narrower than a vector (27 of a concatenation's 27×27 channels) costs
    no scalar tail per row."""
    *outer, height, width = tensor.shape
    body, indices = e.nest(outer, parallel=True)
    lane, p = body.loop(height * width, ForKind.VECTORIZED)
    pixel = [lane.div(p, width), lane.rem(p, width)]
    at = [lane.add(i, o) for i, o in zip(indices, offset)]
    lane.store(tensor.load(lane, [*indices, *pixel]), buffer, [*at, *pixel])
