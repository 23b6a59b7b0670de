"""Parallel loops on the CPU: `hetero_parallel_for` and the launchers that call it.

`convert-tir-to-scf` outlines the body of a parallel `tir.for` into a private
function `@f(begin, end, captures...)` (marked `hetero.parallel_body`) and calls
the declaration `@f.launch(threads, trips, captures...)`.  After `lower-to-llvm`,
`define_launchers` gives each such declaration a body in the `llvm` dialect:

    @f.launch: store the captures in a stack struct (the context), then
               hetero_parallel_for(@f.task, &context, trips, threads)
    @f.task(ctx, begin, end): load the captures back, call @f(begin, end, ...)

`PARALLEL_FOR_IR` is `hetero_parallel_for` itself, in LLVM IR so that no C
compiler is needed; `CpuModule(..., link=[PARALLEL_FOR_IR])` links it in.  It
starts `min(threads, trips) - 1` POSIX threads and works itself too; each
takes the next chunk of iterations from a shared atomic counter until none is
left, so a thread that starts late or runs on a busy core does less (the cores
are shared: a static split waits for the slowest).  A thread that cannot be
created is simply not there.  Captured memrefs are
passed as their lowered pointer and sizes, so this works at the LLVM level
only, after the memref ABI is fixed.
"""

from __future__ import annotations

from collections.abc import Sequence

from hetero.lowering.convert_tir_to_scf import LAUNCH_SUFFIX, PARALLEL_BODY
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

PARALLEL_FOR = "hetero_parallel_for"
"""`void hetero_parallel_for(ptr task, ptr ctx, i64 trips, i32 threads)`."""

TASK_SUFFIX = ".task"

PARALLEL_FOR_IR = r"""
%pool = type { ptr, ptr, i64, i64, i64 }

declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i32 @pthread_join(i64, ptr)

define internal void @hetero_parallel_run(ptr %s) {
entry:
  %task = load ptr, ptr %s
  %ctxp = getelementptr %pool, ptr %s, i32 0, i32 1
  %ctx = load ptr, ptr %ctxp
  %np = getelementptr %pool, ptr %s, i32 0, i32 2
  %n = load i64, ptr %np
  %cp = getelementptr %pool, ptr %s, i32 0, i32 3
  %chunk = load i64, ptr %cp
  %nextp = getelementptr %pool, ptr %s, i32 0, i32 4
  br label %grab
grab:
  %b = atomicrmw add ptr %nextp, i64 %chunk monotonic
  %more = icmp slt i64 %b, %n
  br i1 %more, label %work, label %done
work:
  %e0 = add i64 %b, %chunk
  %over = icmp sgt i64 %e0, %n
  %e = select i1 %over, i64 %n, i64 %e0
  call void %task(ptr %ctx, i64 %b, i64 %e)
  br label %grab
done:
  ret void
}

define internal ptr @hetero_parallel_worker(ptr %s) {
  call void @hetero_parallel_run(ptr %s)
  ret ptr null
}

define void @hetero_parallel_for(ptr %task, ptr %ctx, i64 %n, i32 %threads) {
entry:
  %t0 = sext i32 %threads to i64
  %fewer = icmp slt i64 %n, %t0
  %t = select i1 %fewer, i64 %n, i64 %t0
  %alone = icmp sle i64 %t, 1
  br i1 %alone, label %serial, label %spawn
serial:
  call void %task(ptr %ctx, i64 0, i64 %n)
  ret void
spawn:
  %s = alloca %pool
  %tids = alloca i64, i64 %t
  store ptr %task, ptr %s
  %ctxp = getelementptr %pool, ptr %s, i32 0, i32 1
  store ptr %ctx, ptr %ctxp
  %np = getelementptr %pool, ptr %s, i32 0, i32 2
  store i64 %n, ptr %np
  %grains = mul i64 %t, 8
  %c0 = sdiv i64 %n, %grains
  %tiny = icmp slt i64 %c0, 1
  %c = select i1 %tiny, i64 1, i64 %c0
  %cp = getelementptr %pool, ptr %s, i32 0, i32 3
  store i64 %c, ptr %cp
  %nextp = getelementptr %pool, ptr %s, i32 0, i32 4
  store i64 0, ptr %nextp
  br label %create
create:
  %i = phi i64 [ 1, %spawn ], [ %next, %created ]
  %next = add i64 %i, 1
  %tid = getelementptr i64, ptr %tids, i64 %i
  %rc = call i32 @pthread_create(ptr %tid, ptr null, ptr @hetero_parallel_worker, ptr %s)
  %failed = icmp ne i32 %rc, 0
  br i1 %failed, label %none, label %created
none:
  store i64 0, ptr %tid
  br label %created
created:
  %more = icmp slt i64 %next, %t
  br i1 %more, label %create, label %first
first:
  call void @hetero_parallel_run(ptr %s)
  br label %join
join:
  %j = phi i64 [ 1, %first ], [ %jnext, %joined ]
  %jp = getelementptr i64, ptr %tids, i64 %j
  %id = load i64, ptr %jp
  %started = icmp ne i64 %id, 0
  br i1 %started, label %wait, label %joined
wait:
  call i32 @pthread_join(i64 %id, ptr null)
  br label %joined
joined:
  %jnext = add i64 %j, 1
  %jmore = icmp slt i64 %jnext, %t
  br i1 %jmore, label %join, label %done
done:
  ret void
}
"""
"""The runtime's parallel-for, in LLVM IR: the threads take chunks of
`max(1, n / (8 t))` iterations from a shared atomic counter until none is left."""


def define_launchers(module: ModuleOp) -> bool:
    """Define every `@f.launch` of a `hetero.parallel_body` `@f` in `module`.

    Returns whether there was one (then `PARALLEL_FOR_IR` must be linked in)."""
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, llvm.FuncOp)}
    bodies = [f for f in functions.values() if PARALLEL_BODY in f.attributes]
    for body in bodies:
        launch = functions[body.sym_name.data + LAUNCH_SUFFIX]
        captures = body.function_type.inputs.data[2:]
        task = _task(body, captures)
        module.body.block.insert_op_after(task, body)
        launch.body.add_block(_launch_block(launch, task))
        launch.linkage = llvm.LinkageAttr("internal")
    if bodies and PARALLEL_FOR not in functions:
        ptr = llvm.LLVMPointerType()
        signature = llvm.LLVMFunctionType([ptr, ptr, i64, i32])
        declaration = llvm.FuncOp(
            PARALLEL_FOR, signature, linkage=llvm.LinkageAttr("external")
        )
        module.body.block.add_op(declaration)
    return bool(bodies)


def _emit(block: Block, op: Operation) -> SSAValue:
    block.add_op(op)
    return op.results[0]


def _slot_type(t: Attribute) -> Attribute:
    """How a capture is kept in its slot: pointers as `i64` (llvmlite's typed
    GEPs cannot address a stored pointer), everything else as itself."""
    return i64 if isinstance(t, llvm.LLVMPointerType) else t


def _slots(types: Sequence[Attribute], ctx: SSAValue) -> list[Operation]:
    """The address of each capture in the context at `ctx`: one 8-byte slot each
    (a pointer, a size or a scalar), typed for the value it holds."""
    slots = [llvm.GEPOp(ctx, [i], i64) for i in range(len(types))]
    typed = [llvm.GEPOp(s, [0], _slot_type(t)) for s, t in zip(slots, types)]
    return [*slots, *typed]


def _task(body: llvm.FuncOp, captures: Sequence[Attribute]) -> llvm.FuncOp:
    """`@f.task(ctx, begin, end)`: calls `@f` with the captures stored at `ctx`."""
    block = Block(arg_types=[llvm.LLVMPointerType(), i64, i64])
    ctx, begin, end = block.args
    addresses = _slots(captures, ctx)
    block.add_ops(addresses)
    values: list[SSAValue] = []
    for address, t in zip(addresses[len(captures) :], captures, strict=True):
        value = _emit(block, llvm.LoadOp(address, _slot_type(t)))
        if isinstance(t, llvm.LLVMPointerType):
            value = _emit(block, llvm.IntToPtrOp(value))
        values.append(value)
    block.add_ops(
        [llvm.CallOp(body.sym_name.data, begin, end, *values), llvm.ReturnOp()]
    )
    return llvm.FuncOp(
        body.sym_name.data + TASK_SUFFIX,
        llvm.LLVMFunctionType([llvm.LLVMPointerType(), i64, i64]),
        body=Region(block),
    )


def _launch_block(launch: llvm.FuncOp, task: llvm.FuncOp) -> Block:
    """Stores the captures in a stack context and calls `hetero_parallel_for`."""
    block = Block(arg_types=launch.function_type.inputs)
    threads, trips, *captures = block.args
    size = llvm.ConstantOp(IntegerAttr(max(len(captures), 1), i64), i64)
    ctx = llvm.AllocaOp(size, i64, alignment=8)
    addresses = _slots([c.type for c in captures], ctx.res)
    block.add_ops([size, ctx, *addresses])
    for value, address in zip(captures, addresses[len(captures) :], strict=True):
        if isinstance(value.type, llvm.LLVMPointerType):
            value = _emit(block, llvm.PtrToIntOp(value, i64))
        block.add_op(llvm.StoreOp(value, address))
    function = llvm.AddressOfOp(task.sym_name.data, llvm.LLVMPointerType())
    call = llvm.CallOp(PARALLEL_FOR, function, ctx, trips, threads)
    block.add_ops([function, call, llvm.ReturnOp()])
    return block
