"""What hetero's `convert-*-to-llvm` passes share.

Each pass converts one dialect, as in MLIR, and leaves IR that verifies.  Where
a converted op meets a value whose type LLVM lacks (`index`, or a memref, see
`convert_memref_to_llvm`), the pass bridges the two with
`builtin.unrealized_conversion_cast`, as MLIR's type-converter
materializations do; `reconcile-unrealized-casts` removes the casts once both
sides are converted.  `index` becomes `iN`, N being the `index-bitwidth`
option every pass has (64 by default).
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from functools import cache
from types import UnionType
from typing import TypeVar, Union, get_args, get_origin
from weakref import WeakKeyDictionary

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    UnitAttr,
    UnrealizedConversionCastOp,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, ParametrizedAttribute, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsolatedFromAbove, SymbolTable
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from hetero.utils.diagnostics import HeteroError
from hetero.utils.gc_pause import gc_paused


def llvm_type(t: Attribute, index_bitwidth: int) -> Attribute:
    """`t` with `index`, also as a vector element, replaced by `iN`."""
    if isinstance(t, IndexType):
        return IntegerType(index_bitwidth)
    if isinstance(t, VectorType) and isinstance(t.element_type, IndexType):
        return VectorType(IntegerType(index_bitwidth), t.get_shape())
    return t


@cache
def compatible_llvm_type(t: Attribute, index_bitwidth: int) -> Attribute | None:
    """`llvm_type(t)` if LLVM has it, else None (memoised: the conversions
    ask it of every operand and result, of a few distinct types)."""
    converted = llvm_type(t, index_bitwidth)
    return converted if llvm.is_compatible_type(converted) else None


def cast(
    value: SSAValue,
    to: Attribute,
    rewriter: PatternRewriter,
    at: InsertPoint | None = None,
) -> SSAValue:
    """`value` as type `to`, through an unrealized cast inserted at `at`
    (default: at the rewriter)."""
    if value.type == to:
        return value
    owner = value.owner
    if isinstance(owner, UnrealizedConversionCastOp) and owner.inputs.types == (to,):
        return owner.inputs[0]  # a cast back
    op = UnrealizedConversionCastOp.create(operands=[value], result_types=[to])
    rewriter.insert(op, at)
    return op.results[0]


def after_definition(value: SSAValue) -> InsertPoint:
    """Right after `value` is defined: what is inserted there dominates all
    the uses of `value`."""
    owner = value.owner
    if isinstance(owner, Block):
        return InsertPoint.at_start(owner)
    return InsertPoint.after(owner)


def retype_block_args(
    block: Block,
    convert: Callable[[Attribute], Attribute],
    rewriter: PatternRewriter,
    materialize: bool = True,
) -> None:
    """Give `block`'s arguments their converted types, casting back for
    their users if `materialize` (see `ToLLVMPattern.materialize`)."""
    for arg in tuple(block.args):
        old = arg.type
        if (new := convert(old)) == old:
            continue
        value = rewriter.replace_value_with_new_type(arg, new)
        if not materialize:
            continue
        back, result = UnrealizedConversionCastOp.cast_one(value, old)
        rewriter.insert(back, InsertPoint.at_start(block))
        rewriter.replace_uses_with_if(
            value, result, lambda use, back=back: use.operation is not back
        )


def constant(value: float, t: Attribute) -> llvm.ConstantOp:
    """`llvm.mlir.constant` of an integer or float type, splatted over vectors."""
    element = t.element_type if isinstance(t, VectorType) else t
    if isinstance(t, VectorType):
        attr: Attribute = DenseIntOrFPElementsAttr.from_list(
            t, [value] * t.element_count()
        )
    elif isinstance(element, IntegerType):
        attr = IntegerAttr(int(value), element)
    else:
        assert isinstance(element, AnyFloat)
        attr = FloatAttr(float(value), element)
    return llvm_constant(attr, t)


def llvm_constant(value: Attribute, t: Attribute) -> llvm.ConstantOp:
    """`llvm.mlir.constant` of `value`, of type `t`.

    Made with `Operation.create`, as the other ops the conversions make
    thousands of (binary ops, addresses, loads): from operands, result types
    and properties as they are, it skips the IRDL constructor's handling of
    its arguments, which costs more than the op itself (docs/performance.md)."""
    return llvm.ConstantOp.create(result_types=[t], properties={"value": value})


POINTER = llvm.LLVMPointerType()
"""`!llvm.ptr`, the type of every address."""

INBOUNDS = IntegerAttr(3, 32)
"""MLIR's `GEPNoWrapFlags::inbounds` (inbounds and nusw)."""


def gep(
    pointer: SSAValue,
    indices: Sequence[int | SSAValue],
    element: Attribute,
    inbounds: bool = False,
) -> llvm.GEPOp:
    """`llvm.getelementptr` over `element`s, an address in `pointer`'s address
    space; `inbounds`: xDSL's flag and the
    `noWrapFlags` that MLIR reads.  Made with `create` (as `llvm_constant`)
    from properties made once per indexing (`_gep_properties`): a GEP per
    load and store made them anew a fifth of `convert-memref-to-llvm`'s
    time."""
    raw = tuple(i if isinstance(i, int) else llvm.GEP_USE_SSA_VAL for i in indices)
    return llvm.GEPOp.create(
        operands=[pointer, *(i for i in indices if not isinstance(i, int))],
        result_types=[pointer.type],  # in the pointer's address space
        properties=dict(_gep_properties(raw, element, inbounds)),
    )


@cache
def _gep_properties(
    raw: tuple[int, ...], element: Attribute, inbounds: bool
) -> dict[str, Attribute]:
    properties: dict[str, Attribute] = {
        "rawConstantIndices": DenseArrayBase.from_list(i32, raw),
        "elem_type": element,
        "noWrapFlags": INBOUNDS if inbounds else IntegerAttr(0, 32),
    }
    if inbounds:
        properties["inbounds"] = UnitAttr()
    return properties


def load(address: SSAValue, t: Attribute, alignment: int | None = None) -> llvm.LoadOp:
    """`llvm.load` of a `t` (as `gep`: made with `create`, properties made once)."""
    return llvm.LoadOp.create(
        operands=[address], result_types=[t], properties=dict(_memory(alignment))
    )


def store(
    value: SSAValue, address: SSAValue, alignment: int | None = None
) -> llvm.StoreOp:
    """`llvm.store` of `value` (as `load`)."""
    return llvm.StoreOp.create(
        operands=[value, address], properties=dict(_memory(alignment))
    )


@cache
def _memory(alignment: int | None) -> dict[str, Attribute]:
    """The properties of a non-atomic load or store (ordering 0)."""
    properties: dict[str, Attribute] = {"ordering": IntegerAttr(0, i64)}
    if alignment is not None:
        properties["alignment"] = IntegerAttr(alignment, i64)
    return properties


def icmp(predicate: str, lhs: SSAValue, rhs: SSAValue) -> llvm.ICmpOp:
    """`llvm.icmp` with the predicate spelled as in MLIR (`eq`, `slt`, ...)."""
    return llvm.ICmpOp(lhs, rhs, _predicate(predicate))


@cache
def _predicate(predicate: str) -> IntegerAttr:
    return IntegerAttr(llvm.ICmpPredicateFlag(predicate).to_int(), i64)


def function_entry(op: Operation) -> Block | None:
    """The entry block of the function `op` is in, if the closest op around
    `op` that is isolated from above is a function."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, FUNCTIONS):
        if parent.has_trait(IsolatedFromAbove):
            return None
        parent = parent.parent_op()
    return parent.regions[0].blocks.first if parent is not None else None


FUNCTIONS = (func.FuncOp, llvm.FuncOp)
"""The function ops whose entry block `ConstantPool` puts constants in."""


@dataclass
class ConstantPool:
    """Constant-like ops (`llvm.mlir.constant`, `llvm.mlir.undef`), one of a
    kind per function, at the start of its entry block (which dominates the
    whole function) in the order of first use, shared by all their uses.
    Unrolled code repeats the same few constants many times, each op costs
    every later pass, and LLVM IR has no constant instructions: where they
    stand changes nothing."""

    _values: dict[tuple[Block, Hashable], SSAValue] = field(
        default_factory=dict[tuple[Block, Hashable], SSAValue]
    )
    _last: dict[Block, Operation] = field(default_factory=dict[Block, Operation])

    def get(
        self,
        key: Hashable,
        build: Callable[[], Operation],
        anchor: Operation,
        rewriter: PatternRewriter,
    ) -> SSAValue:
        """The result of `build()` (an op that `key` identifies) for use at
        `anchor`: built before `anchor` if it is not in a function."""
        if (entry := function_entry(anchor)) is None:
            return rewriter.insert(build()).results[0]
        value = self._values.get((entry, key))
        if value is None or value.owner.parent is not entry:  # new, or erased
            built = build()  # first: it may be an op of the block, moved
            last = self._last.get(entry)
            at = (
                InsertPoint.after(last)
                if last is not None and last.parent is entry
                else InsertPoint.at_start(entry)
            )
            op = self._last[entry] = rewriter.insert(built, at)
            value = self._values[(entry, key)] = op.results[0]
        return value


@dataclass
class ToLLVMPattern(RewritePattern):
    """A conversion pattern that knows the width of `index`.

    `materialize`: whether the results of a converted op are cast back to
    their old types (MLIR's target materializations).  A pass converting
    one dialect must, for the users it leaves unconverted; when every
    dialect is converted in the same sweeps (`convert-to-llvm`), each user
    is converted too, takes the new values as they are, and the casts
    would only be built and removed again."""

    index_bitwidth: int = 64
    materialize: bool = True
    pool: ConstantPool = field(
        default_factory=ConstantPool, init=False, repr=False, compare=False
    )

    def shared_constant(
        self,
        value: Attribute,
        t: Attribute,
        anchor: Operation,
        rewriter: PatternRewriter,
    ) -> SSAValue:
        """`llvm.mlir.constant` of `value` (an attribute of type `t`), from the pool."""
        return self.pool.get(
            (value, t), lambda: llvm_constant(value, t), anchor, rewriter
        )

    def convert(self, t: Attribute, op: Operation) -> Attribute:
        """The LLVM type of `t`; a located error if LLVM has none."""
        converted = compatible_llvm_type(t, self.index_bitwidth)
        if converted is None:
            raise HeteroError(
                f"'{op.name}': type {t} has no LLVM equivalent "
                "(scalars and 1-D vectors only)",
                op,
            )
        return converted

    def operands(self, op: Operation, rewriter: PatternRewriter) -> list[SSAValue]:
        """The operands of `op`, cast to their LLVM types."""
        converted: dict[SSAValue, SSAValue] = {}
        for v in op.operands:
            if v not in converted:
                converted[v] = cast(v, self.convert(v.type, op), rewriter)
        return [converted[v] for v in op.operands]

    def replace(
        self,
        op: Operation,
        rewriter: PatternRewriter,
        new_ops: Sequence[Operation],
        new_results: Sequence[SSAValue] | None = None,
    ) -> None:
        """Replace `op`, casting results back to the types its users still
        expect (if `materialize`)."""
        rewriter.insert(list(new_ops))
        results = new_ops[-1].results if new_results is None else new_results
        if self.materialize:
            results = [
                cast(r, old.type, rewriter) for r, old in zip(results, op.results)
            ]
        rewriter.replace(op, [], list(results))


def intrinsic(name: str, t: Attribute) -> str:
    """`name` mangled for the overload on `t`, as LLVM spells it: `llvm.smax.v8i32`."""
    if isinstance(t, VectorType):
        return f"{name}.v{t.get_shape()[0]}{_mangle(t.element_type)}"
    return f"{name}.{_mangle(t)}"


def _mangle(t: Attribute) -> str:
    if isinstance(t, IntegerType):
        return f"i{t.width.data}"
    return {
        Float16Type: "f16",
        BFloat16Type: "bf16",
        Float32Type: "f32",
        Float64Type: "f64",
    }[type(t)]


def declare_function(
    anchor: Operation,
    name: str,
    function_type: llvm.LLVMFunctionType,
    rewriter: PatternRewriter,
) -> None:
    """Declare the external `llvm.func @name` in `anchor`'s module, unless there."""
    module = anchor.parent_op()
    while not isinstance(module, ModuleOp):
        assert module is not None
        module = module.parent_op()
    if lookup_symbol(module, name) is None:
        declaration = llvm.FuncOp(
            name, function_type, linkage=llvm.LinkageAttr("external")
        )
        rewriter.insert(declaration, InsertPoint.at_end(module.body.block))
        _symbols(module)[name] = weakref.ref(declaration)


_SYMBOLS: WeakKeyDictionary[ModuleOp, dict[str, weakref.ref[Operation]]] = (
    WeakKeyDictionary()
)
"""Per module, the symbols `lookup_symbol` found (weakly held: an op holds
its module)."""


def _symbols(module: ModuleOp) -> dict[str, weakref.ref[Operation]]:
    return _SYMBOLS.setdefault(module, {})


def lookup_symbol(module: ModuleOp, name: str) -> Operation | None:
    """The op of `module` named `name` (`SymbolTable.lookup_symbol`),
    remembered while it stays in `module`: a lookup goes through every op
    of the module, and lowering a host function asks for the same few
    runtime functions after each of its calls (ViT-B/32: 190 lookups among
    200 functions)."""
    known = _symbols(module)
    if (ref := known.get(name)) is not None:
        found = ref()
        if found is not None and found.parent is module.body.block:
            return found
    found = SymbolTable.lookup_symbol(module, name)
    if found is not None:
        known[name] = weakref.ref(found)
    return found


def reject_leftovers(module: ModuleOp, dialects: Sequence[str], pass_name: str) -> None:
    """A located error at the first op of `dialects` that `pass_name` left
    unconverted (one walk for them all)."""
    prefixes = tuple(f"{d}." for d in dialects)
    for op in nested_ops(module):
        if op.name.startswith(prefixes):
            raise HeteroError(f"{pass_name}: no lowering for '{op.name}'", op)


def nested_ops(op: Operation, into: list[Operation] | None = None) -> list[Operation]:
    """The ops nested in `op`, in `op.walk()`'s order (without `op`): a list
    built in a third of the time of the generators' chain."""
    into = [] if into is None else into
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                into.append(inner)
                if inner.regions:
                    nested_ops(inner, into)
    return into


def erase_dead_ops(module: ModuleOp) -> None:
    """Erase the ops of `module` without effects whose results are unused,
    as xDSL's `GreedyRewritePatternApplier` does before it offers an op its
    patterns (`apply_lowerings` does not): in one sweep from the last op
    back, so an op's users are gone before it is asked."""
    for op in reversed(nested_ops(module)):
        if (block := op.parent) is not None and is_trivially_dead(op):
            block.erase_op(op, safe_erase=False)


@cache
def contains(attr: Attribute, test: Callable[[Attribute], bool]) -> bool:
    """Whether `attr` or an attribute nested in it passes `test` (memoised:
    attributes are immutable, and few distinct ones occur)."""
    if test(attr):
        return True
    if isinstance(attr, ArrayAttr):
        return any(contains(a, test) for a in attr.data)
    if isinstance(attr, DictionaryAttr):
        return any(contains(a, test) for a in attr.data.values())
    return isinstance(attr, ParametrizedAttribute) and any(
        isinstance(p, Attribute) and contains(p, test) for p in attr.parameters
    )


def mentions(op: Operation, test: Callable[[Attribute], bool]) -> bool:
    """Whether a type or attribute of `op` (results, block arguments,
    properties, attributes) contains one passing `test`.  A type-conversion
    pattern checks it first: xDSL's generic recursive conversion costs about
    a millisecond an op even when there is nothing to convert."""
    for result in op.results:
        if contains(result.type, test):
            return True
    for region in op.regions:
        for block in region.blocks:
            for arg in block.args:
                if contains(arg.type, test):
                    return True
    for attrs in (op.properties, op.attributes):
        for attr in attrs.values():
            if contains(attr, test):
                return True
    return False


def is_index(attr: Attribute) -> bool:
    return isinstance(attr, IndexType)


@cache
def without_index(attr: Attribute, bitwidth: int) -> Attribute:
    """`attr` with `index`, however deeply nested, replaced by `iN`; `attr`
    itself when it has none (memoised, as `contains`)."""
    if isinstance(attr, IndexType):
        return IntegerType(bitwidth)
    if not contains(attr, is_index):
        return attr
    if isinstance(attr, ArrayAttr):
        return ArrayAttr(tuple(without_index(a, bitwidth) for a in attr.data))
    if isinstance(attr, DictionaryAttr):
        return DictionaryAttr(
            {k: without_index(a, bitwidth) for k, a in attr.data.items()}
        )
    assert isinstance(attr, ParametrizedAttribute)
    return type(attr).new([without_index(p, bitwidth) for p in attr.parameters])


_PatternT = TypeVar("_PatternT", bound=RewritePattern)
_OperationT = TypeVar("_OperationT", bound=Operation)
Rewrite = Callable[[_PatternT, Operation, PatternRewriter], None]


def lowering(
    func: Callable[[_PatternT, _OperationT, PatternRewriter], None],
) -> Rewrite[_PatternT]:
    """xDSL's `op_type_rewrite_pattern`, also recording the op types it
    matches, so that `apply_lowerings` offers it those ops only."""
    hint = list(inspect.signature(func, eval_str=True).parameters.values())[
        1
    ].annotation
    types = get_args(hint) if get_origin(hint) in (Union, UnionType) else (hint,)
    return lowering_for(*types)(op_type_rewrite_pattern(func))


def lowering_for(
    *op_types: type[Operation],
) -> Callable[[Rewrite[_PatternT]], Rewrite[_PatternT]]:
    """Marks a `match_and_rewrite` as one that rewrites `op_types` only (a
    table-driven pattern: the types are its table's keys)."""

    def mark(func: Rewrite[_PatternT]) -> Rewrite[_PatternT]:
        func.op_types = op_types  # pyright: ignore[reportFunctionMemberAccess]
        return func

    return mark


@dataclass
class PatternTable:
    """The `patterns` that may rewrite each type of op, in their order: those
    whose `match_and_rewrite` records the type or a base of it (`lowering`,
    `lowering_for`), and those that record none."""

    patterns: Sequence[RewritePattern]
    _table: dict[type[Operation], tuple[RewritePattern, ...]] = field(
        default_factory=dict[type[Operation], tuple[RewritePattern, ...]], init=False
    )

    def candidates(self, t: type[Operation]) -> tuple[RewritePattern, ...]:
        if (found := self._table.get(t)) is None:
            found = self._table[t] = tuple(
                p
                for p in self.patterns
                if issubclass(t, getattr(p.match_and_rewrite, "op_types", Operation))
            )
        return found


def apply_lowerings(module: ModuleOp, patterns: Sequence[RewritePattern]) -> None:
    """Rewrite `module` with `patterns` until none applies.

    The fixpoint of xDSL's `PatternRewriteWalker` over a
    `GreedyRewritePatternApplier` (without folding and DCE), reached with
    less work: sweeps over a snapshot of the ops in the module, in order (an
    op before its regions), each op meeting only the patterns for its type
    (`PatternTable`, tried in order until one rewrites), until a sweep
    rewrites nothing.  Unlike the walker, a sweep neither revisits the ops
    a rewrite creates or touches (mostly `llvm` ops that no pattern
    rewrites; the next sweep offers them all the same) nor prepares a
    rewriter for an op no pattern is for.  The garbage collector is paused
    meanwhile (`gc_paused`)."""
    table = PatternTable(patterns)
    rewriter = PatternRewriter(InsertPoint.at_start(module.body.block))
    with gc_paused():
        changed = True
        while changed:
            changed = False
            for op in nested_ops(module):
                if not (candidates := table.candidates(type(op))):
                    continue
                if op.parent is None:
                    continue  # erased by an earlier rewrite
                rewriter.has_done_action = False
                rewriter.current_operation = op
                rewriter.insertion_point = InsertPoint.before(op)
                rewriter.name_hint = None
                for pattern in candidates:
                    pattern.match_and_rewrite(op, rewriter)
                    if rewriter.has_done_action:
                        changed = True
                        break
