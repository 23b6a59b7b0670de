"""`hetero.compile(..., dynamic="once")`: a program with dynamic (`?`) input
dimensions compiled once for every size.

The relay pipeline (`lower_to_tir`, without `plan-memory` and
`merge-kernels`) runs on the program specialized (`specialize-shapes`)
for a few sample sizes of the dynamic dimension, `SAMPLES`; the TIR of the
samples is then *anti-unified*: the functions must be the same op by op,
value by value, and each index constant or memref dimension that differs
between the samples must be a polynomial of degree at most two in the size
(fitted on three samples, checked on the others).  The generic program is
the first sample's with

* one more parameter per function, `%n: index`, the size at run time,
  passed on by every call;
* each such constant computed from `%n`, each such dimension `?` (a
  parameter's size comes with the memref ABI; a `tir.alloc`'s from `%n`):
  kernels take their extents at run time, the host function computes the
  intermediates' shapes and allocates them on the heap;
* the outputs' dimensions, as polynomials, kept by the `CompiledFunction`,
  which allocates outputs of the computed shape at each call.

Products (dense, matmul) are lowered without their CPU schedule
(`te.templates.gemm.unscheduled`), whose register tiles split rows at
sizes known when it runs.  A kernel whose code depends on the size other than polynomially (a
schedule's tile remainder, `n % 8`) cannot be generalized: the error names
the relay ops it computes and says to specialize instead.  Every `?` of
the inputs is one size, `n` (a sequence length): the first slice of
TVM's symbolic shapes (docs/passes/specialize-shapes.md).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.traits import SymbolTable

from hetero.utils.diagnostics import HeteroError

SAMPLES = (1019, 1213, 1427, 1811, 1879)
"""Sizes the program is lowered for: primes far apart (no tile or vector
width divides them, their remainders differ), large enough that no index
constant of a static dimension equals one by chance."""

DIVISORS = (2, 4, 8, 16, 32, 64, 128)
"""The multiples a schedule rounds an extent down to (vectors, unrolled
rows): a size may be `c0 + c1 n + c2 (n / m)` for one of them."""

MODE = "once"

Poly = tuple[int, int, int, int]
"""A size in `n`: `(0, c0, c1, c2)` is `c0 + c1 n + c2 n * n` (a row of
scores), `(m, c0, c1, c2)` is `c0 + c1 n + c2 (n / m)` (`fit`)."""


def _terms(divisor: int, n: int) -> tuple[int, int, int]:
    return (1, n, n * n) if divisor == 0 else (1, n, n // divisor)


def fit(values: Sequence[int]) -> Poly | None:
    """The size through `(SAMPLES[i], values[i])`: integer coefficients
    fitted by least squares, then checked exactly on every sample (`Poly`)."""
    for divisor in (0, *DIVISORS):
        rows = np.array([_terms(divisor, n) for n in SAMPLES], dtype=np.float64)
        solved = np.linalg.lstsq(rows, np.array(values, dtype=np.float64))[0]
        coefficients = tuple(int(c) for c in np.rint(solved))
        poly = (0 if coefficients[2] == 0 else divisor, *coefficients)
        if all(evaluate(poly, n) == v for n, v in zip(SAMPLES, values)):
            return poly  # type: ignore[return-value]
    return None


def evaluate(poly: Poly, n: int) -> int:
    """`poly` at size `n`."""
    return sum(c * t for c, t in zip(poly[1:], _terms(poly[0], n)))


def is_static(poly: Poly) -> bool:
    return poly[2] == poly[3] == 0


class Mismatch(Exception):
    """The samples' functions differ other than polynomially in the size."""


class _Generalizer:
    """Anti-unifies one function's samples into the first (in place)."""

    def __init__(self, functions: Sequence[Operation]) -> None:
        self.functions = functions
        self.values: list[dict[SSAValue, SSAValue]] = [{} for _ in functions]
        self.constants: list[tuple[arith.ConstantOp, Poly]] = []
        self.types: list[tuple[SSAValue, tuple[Poly, ...]]] = []

    def match(self) -> None:
        walks = [f.walk() for f in self.functions]
        for ops in zip(*walks, strict=True):
            self._match_op(ops)

    def _match_op(self, ops: Sequence[Operation]) -> None:
        first = ops[0]
        for i, op in enumerate(ops[1:], 1):
            if (
                op.name != first.name
                or len(op.operands) != len(first.operands)
                or len(op.results) != len(first.results)
                or len(op.regions) != len(first.regions)
                or [len(r.blocks) for r in op.regions]
                != [len(r.blocks) for r in first.regions]
            ):
                raise Mismatch(f"'{first.name}' against '{op.name}'")
            for a, b in zip(first.operands, op.operands):
                if self.values[i].get(b, a) is not a:
                    raise Mismatch(f"an operand of '{first.name}'")
            for key in {*first.properties, *op.properties} - {"function_type", "value"}:
                if first.properties.get(key) != op.properties.get(key):
                    raise Mismatch(f"the property {key} of '{first.name}'")
            if first.attributes != op.attributes:
                raise Mismatch(f"the attributes of '{first.name}'")
        if isinstance(first, arith.ConstantOp):
            self._match_constant(ops)
        blocks = [[b for r in op.regions for b in r.blocks] for op in ops]
        for per_block in zip(*blocks):
            self._match_values([list(b.args) for b in per_block])
        self._match_values([list(op.results) for op in ops])

    def _match_constant(self, ops: Sequence[Operation]) -> None:
        values = [op.properties["value"] for op in ops]
        if all(v == values[0] for v in values):
            return
        if not all(
            isinstance(v, IntegerAttr) and isinstance(v.type, IndexType) for v in values
        ):
            raise Mismatch("a constant that is not an index")
        poly = fit([v.value.data for v in values])  # type: ignore[attr-defined]
        if poly is None:
            raise Mismatch(f"the index constants {[v.value.data for v in values]}")  # type: ignore[attr-defined]
        self.constants.append((ops[0], poly))  # type: ignore[arg-type]

    def _match_values(self, per_sample: Sequence[list[SSAValue]]) -> None:
        for i, values in enumerate(per_sample[1:], 1):
            if len(values) != len(per_sample[0]):
                raise Mismatch("the number of block arguments")
            self.values[i].update(zip(values, per_sample[0]))
        for values in zip(*per_sample):
            types = [v.type for v in values]
            if all(t == types[0] for t in types):
                continue
            if not all(
                isinstance(t, MemRefType)
                and t.element_type == types[0].element_type  # type: ignore[attr-defined]
                and t.layout == types[0].layout  # type: ignore[attr-defined]
                and t.memory_space == types[0].memory_space  # type: ignore[attr-defined]
                and len(t.get_shape()) == len(types[0].get_shape())  # type: ignore[attr-defined]
                for t in types
            ):
                raise Mismatch(f"the types {types[0]} and {types[1]}")
            dims = []
            for sizes in zip(*(t.get_shape() for t in types)):  # type: ignore[attr-defined]
                poly = fit(sizes)
                if poly is None:
                    raise Mismatch(f"the sizes {list(sizes)}")
                dims.append(poly)
            self.types.append((values[0], tuple(dims)))

    def rewrite(self, callees: set[str]) -> None:
        """The first sample, generic: `%n` appended, varying constants and
        memref sizes computed from it, calls of `callees` passing it on."""
        function = self.functions[0]
        entry = function.regions[0].blocks[0]
        n = entry.insert_arg(IndexType(), len(entry.args))
        for op, poly in self.constants:
            value = _polynomial(poly, n, op)
            op.results[0].replace_all_uses_with(value)
            op.detach()
            op.erase()
        for value, dims in self.types:
            _generalize_type(value, dims, n)
        for op in list(function.walk()):
            if (
                op.name == "tir.call"
                and op.properties["callee"].string_value() in callees
            ):  # type: ignore[attr-defined]
                op.operands = [*op.operands, n]
        function.properties["function_type"] = FunctionType.from_lists(
            [a.type for a in entry.args], []
        )


def _polynomial(poly: Poly, n: SSAValue, before: Operation) -> SSAValue:
    """`poly(n)` as index arithmetic inserted before `before`."""
    ops: list[Operation] = []

    def constant(value: int) -> SSAValue:
        ops.append(arith.ConstantOp.from_int_and_width(value, IndexType()))
        return ops[-1].results[0]

    divisor, coefficients = poly[0], poly[1:]
    terms = [n, _append(ops, arith.MuliOp(n, n))]
    if divisor:
        terms[1] = _append(ops, arith.DivSIOp(n, constant(divisor)))
    total = constant(coefficients[0])
    for coefficient, term in zip(coefficients[1:], terms):
        if coefficient:
            scaled = _append(ops, arith.MuliOp(term, constant(coefficient)))
            total = _append(ops, arith.AddiOp(total, scaled))
    block = before.parent_block()
    assert block is not None
    block.insert_ops_before(ops, before)
    return total


def _append(ops: list[Operation], op: Operation) -> SSAValue:
    ops.append(op)
    return op.results[0]


def _generalize_type(value: SSAValue, dims: tuple[Poly, ...], n: SSAValue) -> None:
    """`value`'s memref with a `?` per varying dimension; a `tir.alloc`
    sized from `n`."""
    from hetero.dialects import tir

    old = value.type
    assert isinstance(old, MemRefType)
    shape = [p[1] if is_static(p) else DYNAMIC_INDEX for p in dims]
    new = MemRefType(old.element_type, shape, old.layout, old.memory_space)
    owner = value.owner
    if isinstance(owner, Block):
        Rewriter.replace_value_with_new_type(value, new)
        return
    if not isinstance(owner, tir.AllocOp) or owner.dynamic_sizes:
        raise Mismatch(f"the sizes of a buffer made by '{owner.name}'")
    sizes = [_polynomial(p, n, owner) for p in dims if not is_static(p)]
    alloc = tir.AllocOp(new, sizes)
    alloc.attributes.update(owner.attributes)
    Rewriter.replace_op(owner, alloc)


def compile_once(module: ModuleOp, entry: str, timings: dict[str, float]):
    """`compile(..., dynamic="once")` of `module` (a clone, with its
    `target.config`): the `CompiledFunction` for every size."""
    from hetero.dialects import relay, tir
    from hetero.dialects.relay.functions import tensor_types
    from hetero.driver import (
        _called_from,
        _code_of,
        _decode_constants,
        _input_label,
        _signature,
        _structure,
        lower_to_tir,
    )
    from hetero.lowering.cpu_codegen import compile_cpu
    from hetero.runtime.compiled import CompiledFunction
    from hetero.te.templates.gemm import unscheduled
    from hetero.transforms.lower_aot_main import CONSTANTS
    from hetero.transforms.specialize_shapes import specialize

    main = SymbolTable.lookup_symbol(module, entry)
    assert isinstance(main, relay.FuncOp)
    samples: list[ModuleOp] = []
    start = time.perf_counter()
    for size in SAMPLES:
        sample = module.clone()
        function = SymbolTable.lookup_symbol(sample, entry)
        assert isinstance(function, relay.FuncOp)
        specialize(
            function,
            [
                tuple(size if d < 0 else d for d in a.type.get_shape())
                for a in main.args
            ],  # type: ignore[attr-defined]
        )
        with unscheduled():
            lower_to_tir(
                sample, entry, skip=frozenset({"plan-memory", "merge-kernels"})
            )
        samples.append(sample)
    timings["samples"] = time.perf_counter() - start
    start = time.perf_counter()
    functions = [
        {f.sym_name.data: f for f in s.ops if isinstance(f, tir.PrimFuncOp)}
        for s in samples
    ]
    if any(f.keys() != functions[0].keys() for f in functions):
        raise HeteroError(
            f'dynamic="once": @{entry} lowers to other kernels at other sizes; '
            "compile without dynamic= to specialize per input shape",
            main,
        )
    generalizers = {}
    for name in functions[0]:
        generalizer = _Generalizer([f[name] for f in functions])
        try:
            generalizer.match()
        except Mismatch as mismatch:
            raise HeteroError(
                f'dynamic="once": the kernel @{name} ({_relay_ops(samples[0], name)}) '
                f"depends on the dynamic size other than polynomially ({mismatch} "
                "differ between sizes); compile without dynamic= to specialize "
                "per input shape",
                main,
            ) from None
        generalizers[name] = generalizer
    if any(
        f.target is not None and f.target.kind_name.data != "llvm"
        for f in functions[0].values()
    ):
        raise HeteroError('dynamic="once" compiles for the CPU only', main)
    for generalizer in generalizers.values():
        try:
            generalizer.rewrite(set(generalizers))
        except Mismatch as mismatch:
            raise HeteroError(
                f'dynamic="once": {mismatch} cannot be sized at run time; '
                "compile without dynamic= to specialize per input shape",
                main,
            ) from None
    timings["generalize"] = time.perf_counter() - start
    sample = samples[0]
    host = functions[0][f"{entry}_host"]
    constants = host.attributes[CONSTANTS]
    prim_funcs = _called_from(host, list(functions[0].values()))
    for op in prim_funcs:
        if op is not host:
            op.detach()
    start = time.perf_counter()
    native = compile_cpu(
        ModuleOp([_code_of(host) if op is host else op for op in prim_funcs]),
        timings=timings,
    )
    timings["compile_cpu"] = time.perf_counter() - start
    results = [
        tensor_types(SymbolTable.lookup_symbol(s, entry).result_type)  # type: ignore[union-attr]
        for s in samples
    ]
    outputs = []
    for i, types in enumerate(zip(*results)):
        sizes = tuple(fit(dims) for dims in zip(*(t.get_shape() for t in types)))
        if any(s is None or s[0] for s in sizes):
            raise HeteroError(
                f'dynamic="once": the shape of output #{i} is not a polynomial '
                "of the dynamic size; compile without dynamic=",
                main,
            )
        outputs.append(
            _signature(types[0], f"output #{i}").with_sizes(sizes)  # type: ignore[arg-type]
        )
    return CompiledFunction(
        native,
        host.sym_name.data,
        tuple(
            _signature(a.type, _input_label(i, a), a.name_hint)
            for i, a in enumerate(main.args)
        ),
        tuple(outputs),
        _structure(main.result_type, [0]),
        _decode_constants(constants),  # type: ignore[arg-type]
        timings,
        dynamic=True,
    )


def _relay_ops(module: ModuleOp, kernel: str) -> str:
    """The relay ops of the Primitive function lowered to `kernel`."""
    from hetero.dialects import relay
    from hetero.transforms.lower_te import LOWERED

    for op in module.ops:
        lowered = op.attributes.get(LOWERED)
        if (
            isinstance(op, relay.FuncOp)
            and lowered
            and lowered.string_value() == kernel
        ):  # type: ignore[attr-defined]
            names = [o.name for o in op.body.walk() if o.name.startswith("relay.")]
            return ", ".join(dict.fromkeys(n for n in names if n != "relay.return"))
    return "the host function"


def compile_dynamic(module: ModuleOp, entry: str, timings: dict[str, float], mode: str):
    """`compile`'s `dynamic=mode`, checked: `"once"` of an entry function
    with dynamic input dimensions."""
    from hetero.dialects import relay

    main = SymbolTable.lookup_symbol(module, entry)
    if mode != MODE:
        raise HeteroError(
            f'hetero.compile: dynamic={mode!r} is not a mode; dynamic="once" '
            "compiles once for every size, None specializes per input shape"
        )
    if not isinstance(main, relay.FuncOp) or all(
        a.type.has_static_shape()
        for a in main.args  # type: ignore[attr-defined]
    ):
        raise HeteroError(
            f'hetero.compile: dynamic="once" needs a relay.func @{entry} with '
            "dynamic (?) input dimensions"
        )
    return compile_once(module, entry, timings)
