"""Parallel `tir.for` loops as outlined bodies and launches, for
`convert-tir-to-scf`.

A `parallel` loop's body is outlined into a private function over an
iteration range, launched by a call of `<body>.launch(threads, trips,
least, captures...)`, which `hetero.lowering.parallel_launchers` defines on
top of the thread pool's `hetero_parallel_for` (`hetero.runtime.parallel`;
`threads`: the target's `num_threads`, 0 for the pool's default; `least`:
the fewest trips worth handing to the pool).  A parallel loop nested in
another one runs serially, and so does every parallel loop of a target of
`num_threads = 1`, and every loop whose work is known at compile time to be
too little to share (`least_trips`).
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, UnitAttr, i32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint
from xdsl.transforms.canonicalization_patterns.utils import const_evaluate_operand

from hetero.dialects import tir
from hetero.dialects.target import TargetAttr
from hetero.lowering.scf_loops import index, lower_serial, scf_loop
from hetero.targets.cpu import asked_threads, outlines_parallel_loops
from hetero.utils.symbols import ancestors, fresh_symbol
from hetero.utils.values import free_values, replace_within

LAUNCH_SUFFIX = ".launch"
"""`@f.launch` starts the outlined parallel body `@f` (`hetero.lowering.parallel_launchers`)."""

PARALLEL_BODY = "hetero.parallel_body"
"""Marks an outlined parallel body: `(begin, end, captures...)`."""

MIN_OPS = "parallel_min_ops"
"""The `llvm` target's option: the fewest ops a parallel loop runs for it to
take the thread pool (`least_trips`)."""


def lower_parallel(op: tir.ForOp, rewriter: PatternRewriter) -> None:
    """Outlines the body into `@f_parallelN(begin, end, captures...)` and launches
    it over the trip count; `begin`/`end` count iterations, not index values.

    The launcher's thread count is the target's `num_threads`, 0 if it has
    none (the pool's default then: `hetero.runtime.parallel`).

    A serial loop where no second thread would take part: in a parallel
    loop's body, or for a target pinned to one thread, whose pool would run
    the loop on the caller's thread anyway, and the outlined body, its task
    and its launcher would cost code generation time for the same code
    (docs/lowering.md, "Parallel loops"); and where the loop's trip count is
    a constant too small for its body (`least_trips`)."""
    caller = tir.function_of(op)
    if not outlines_parallel_loops(caller.target) or any(
        isinstance(a, tir.ForOp) and a.kind.data == tir.ForKind.PARALLEL
        for a in ancestors(op)
    ):
        return lower_serial(op, rewriter)
    counting, least = least_trips(op, caller.target)
    trips = _static_trips(op.lb, op.ub, op.step)
    if isinstance(least, int) and trips is not None and trips < least:
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
    count = _trip_count(op.lb, op.ub, op.step)
    threads = arith.ConstantOp(IntegerAttr(asked_threads(caller.target) or 0, i32))
    if isinstance(least, int):
        counting.append(fewest := index(least))
        least = fewest.result
    operands = [threads, count[-1].results[0], least, *captured]
    launch = tir.CallExternOp(name + LAUNCH_SUFFIX, operands)
    rewriter.replace(op, [*count, threads, *counting, launch], [])


def least_trips(
    op: tir.ForOp, target: TargetAttr | None
) -> tuple[list[Operation], int | SSAValue]:
    """The fewest trips for which `op` takes the thread pool: its target's
    `parallel_min_ops` over the ops one trip runs (`Work`), rounded up, and
    the ops that compute it before the loop where it is known only at run
    time.  Waking a worker and handing it a chunk costs about a microsecond
    when it spins, and ten or more when it sleeps (a system call, and the
    wake-up of an idle CPU); a loop that runs fewer ops than that many
    microseconds' worth is faster on its caller alone.  0 where the body's
    work is unknown (a call, a loop whose extent the body computes) or the
    target sets no threshold."""
    floor = target.option(MIN_OPS) if target is not None else None
    work = Work(op)
    ops = work.region(op.body) if floor and floor > 0 else None
    if ops is None:
        work.discard()
        return [], 0
    if isinstance(ops, int):
        return [], -(-floor // max(ops, 1))
    one, limit = index(1), index(floor)
    at_least_one = arith.MaxSIOp(ops, one)
    least = arith.CeilDivSIOp(limit, at_least_one)
    return [*work.ops, one, limit, at_least_one, least], least.result


class Work:
    """The ops one trip of the parallel loop `loop` runs, a loop's ops once
    per trip (lowered vector loops count vectors, not elements): a constant,
    or where inner loops have run-time extents that `loop` does not compute
    (merge-kernels' shared kernels take them as arguments) a value that `ops`
    compute before it.  None where neither: a call, a loop whose bounds the
    body computes, an op with regions other than loops and conditionals
    (both sides of an `scf.if` count)."""

    def __init__(self, loop: tir.ForOp):
        self.loop = loop
        self.ops: list[Operation] = []

    def region(self, region: Region) -> int | SSAValue | None:
        total: int | SSAValue = 0
        for op in region.block.ops:
            ops = self.op(op)
            if ops is None:
                return None
            total = self._combine(arith.AddiOp, total, ops)
        return total

    def op(self, op: Operation) -> int | SSAValue | None:
        """The ops that running `op` executes, itself included."""
        if isinstance(op, tir.CallOp | tir.CallExternOp):
            return None
        if isinstance(op, scf.ForOp | tir.ForOp):
            trips = self._trips(op)
            body = None if trips is None else self.region(op.body)
            if trips is None or body is None:
                return None
            return self._combine(
                arith.AddiOp, 1, self._combine(arith.MuliOp, trips, body)
            )
        total: int | SSAValue = 1
        for inner in op.regions:
            if not isinstance(op, scf.IfOp):
                return None
            ops = self.region(inner) if inner.blocks else 0
            if ops is None:
                return None
            total = self._combine(arith.AddiOp, total, ops)
        return total

    def discard(self) -> None:
        """Erases the ops made so far, unused: the count is not known."""
        for op in reversed(self.ops):
            op.erase()
        self.ops.clear()

    def _trips(self, op: scf.ForOp | tir.ForOp) -> int | SSAValue | None:
        trips = _static_trips(op.lb, op.ub, op.step)
        if trips is not None:
            return trips
        if any(self._inside(v) for v in (op.lb, op.ub, op.step)):
            return None
        count = _trip_count(op.lb, op.ub, op.step)
        self.ops.extend(count)
        return count[-1].results[0]

    def _inside(self, value: SSAValue) -> bool:
        owner = value.owner
        op = owner.parent_op() if isinstance(owner, Block) else owner
        return op is not None and self.loop.is_ancestor(op)

    def _combine(
        self,
        kind: type[arith.AddiOp | arith.MuliOp],
        a: int | SSAValue,
        b: int | SSAValue,
    ) -> int | SSAValue:
        """`a + b` or `a * b`, folded where both are constants or one is
        the operation's identity."""
        if isinstance(a, int) and isinstance(b, int):
            return a + b if kind is arith.AddiOp else a * b
        identity = 0 if kind is arith.AddiOp else 1
        if a == identity or b == identity:
            return b if a == identity else a
        operands = []
        for x in (a, b):
            if isinstance(x, int):
                self.ops.append(constant := index(x))
                x = constant.result
            operands.append(x)
        self.ops.append(combined := kind(*operands))
        return combined.result


def _static_trips(lb: SSAValue, ub: SSAValue, step: SSAValue) -> int | None:
    """A loop's trip count where its bounds and step are constants, else None."""
    bounds = [const_evaluate_operand(v) for v in (lb, ub, step)]
    if None in bounds or bounds[2] == 0:
        return None
    return len(range(*bounds))  # type: ignore[misc]


def _trip_count(lb: SSAValue, ub: SSAValue, step: SSAValue) -> list[Operation]:
    """Ops computing the trip count of a loop (the last one's result): one
    constant when its bounds and step are (the usual case: a schedule's
    tasks), else `ceildiv(max(ub - lb, 0), step)`."""
    trips = _static_trips(lb, ub, step)
    if trips is not None:
        return [index(trips)]
    zero = index(0)
    difference = arith.SubiOp(ub, lb)
    clamped = arith.MaxSIOp(difference, zero)
    return [zero, difference, clamped, arith.CeilDivSIOp(clamped, step)]
