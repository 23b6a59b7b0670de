"""Parallel `tir.for` loops as outlined bodies and launches, for
`convert-tir-to-scf`.

A `parallel` loop's body is outlined into a private function over an
iteration range, launched by a call of `<body>.launch(threads, trips,
captures...)`, which `hetero.lowering.parallel_launchers` defines on top of
the thread pool's `hetero_parallel_for` (`hetero.runtime.parallel`;
`threads`: the target's `num_threads`, 0 for the pool's default).  A
parallel loop nested in another one runs serially, and so does every
parallel loop of a target of `num_threads = 1`.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, UnitAttr, i32
from xdsl.ir import Block, Operation, Region
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from hetero.dialects import tir
from hetero.lowering.scf_loops import index, lower_serial, scf_loop
from hetero.targets.cpu import asked_threads, outlines_parallel_loops
from hetero.utils.symbols import ancestors, fresh_symbol
from hetero.utils.values import free_values, replace_within

LAUNCH_SUFFIX = ".launch"
"""`@f.launch` starts the outlined parallel body `@f` (`hetero.lowering.parallel_launchers`)."""

PARALLEL_BODY = "hetero.parallel_body"
"""Marks an outlined parallel body: `(begin, end, captures...)`."""


def lower_parallel(op: tir.ForOp, rewriter: PatternRewriter) -> None:
    """Outlines the body into `@f_parallelN(begin, end, captures...)` and launches
    it over the trip count; `begin`/`end` count iterations, not index values.

    The launcher's thread count is the target's `num_threads`, 0 if it has
    none (the pool's default then: `hetero.runtime.parallel`).

    A serial loop where no second thread would take part: in a parallel
    loop's body, or for a target pinned to one thread, whose pool would run
    the loop on the caller's thread anyway, and the outlined body, its task
    and its launcher would cost code generation time for the same code
    (docs/lowering.md, "Parallel loops")."""
    caller = tir.function_of(op)
    if not outlines_parallel_loops(caller.target) or any(
        isinstance(a, tir.ForOp) and a.kind.data == tir.ForKind.PARALLEL
        for a in ancestors(op)
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
