"""`define_launchers`: the launchers and tasks of parallel loops, for the
thread pool of `hetero.runtime.parallel` (whose docstring describes them)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, UnitAttr, i32, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from hetero.lowering.conversion import POINTER, gep, icmp, load, store
from hetero.lowering.outline_parallel_loops import LAUNCH_SUFFIX, PARALLEL_BODY
from hetero.runtime.parallel import PARALLEL_FOR, load_pool

TASK_SUFFIX = ".task"

ALWAYS_INLINE = "always_inline"
"""MLIR's `llvm.func` flag (LLVM's `alwaysinline`), on each parallel body."""


def define_launchers(module: ModuleOp) -> bool:
    """Define every `@f.launch` of a `hetero.parallel_body` `@f` in `module`.

    Declares `hetero_parallel_for` and loads the process's pool (`load_pool`)
    when there is one; returns whether there was."""
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, llvm.FuncOp)}
    bodies = [f for f in functions.values() if PARALLEL_BODY in f.attributes]
    for body in bodies:
        body.attributes[ALWAYS_INLINE] = UnitAttr()
        launch = functions[body.sym_name.data + LAUNCH_SUFFIX]
        captures = body.function_type.inputs.data[2:]
        task = _task(body, captures)
        module.body.block.insert_op_after(task, body)
        launch.body.add_block(_launch_blocks(launch, task))
        launch.linkage = llvm.LinkageAttr("internal")
    if bodies and PARALLEL_FOR not in functions:
        ptr = POINTER
        signature = llvm.LLVMFunctionType([ptr, ptr, i64, i32])
        declaration = llvm.FuncOp(
            PARALLEL_FOR, signature, linkage=llvm.LinkageAttr("external")
        )
        module.body.block.add_op(declaration)
    if bodies:
        load_pool()
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
    slots = [gep(ctx, [i], i64) for i in range(len(types))]
    typed = [gep(s.results[0], [0], _slot_type(t)) for s, t in zip(slots, types)]
    return [*slots, *typed]


def _task(body: llvm.FuncOp, captures: Sequence[Attribute]) -> llvm.FuncOp:
    """`@f.task(ctx, begin, end)`: calls `@f` with the captures stored at `ctx`."""
    block = Block(arg_types=[POINTER, i64, i64])
    ctx, begin, end = block.args
    addresses = _slots(captures, ctx)
    block.add_ops(addresses)
    values: list[SSAValue] = []
    for address, t in zip(addresses[len(captures) :], captures, strict=True):
        value = _emit(block, load(address.results[0], _slot_type(t)))
        if isinstance(t, llvm.LLVMPointerType):
            value = _emit(block, llvm.IntToPtrOp(value))
        values.append(value)
    block.add_ops(
        [llvm.CallOp(body.sym_name.data, begin, end, *values), llvm.ReturnOp()]
    )
    return llvm.FuncOp(
        body.sym_name.data + TASK_SUFFIX,
        llvm.LLVMFunctionType([POINTER, i64, i64]),
        body=Region(block),
    )


def _launch_blocks(launch: llvm.FuncOp, task: llvm.FuncOp) -> list[Block]:
    """Stores the captures in a stack context, then calls the task on every
    trip where there are fewer than `least` (too little work to share: the
    pool is not woken), else `hetero_parallel_for`."""
    block = Block(arg_types=launch.function_type.inputs)
    threads, trips, least, *captures = block.args
    size = llvm.ConstantOp(IntegerAttr(max(len(captures), 1), i64), i64)
    ctx = llvm.AllocaOp(size, i64, alignment=8)
    addresses = _slots([c.type for c in captures], ctx.res)
    block.add_ops([size, ctx, *addresses])
    for value, address in zip(captures, addresses[len(captures) :], strict=True):
        if isinstance(value.type, llvm.LLVMPointerType):
            value = _emit(block, llvm.PtrToIntOp(value, i64))
        block.add_op(store(value, address.results[0]))
    serial, parallel = Block(), Block()
    few = icmp("slt", trips, least)
    block.add_ops([few, llvm.CondBrOp(few, serial, [], parallel, [])])
    zero = llvm.ConstantOp(IntegerAttr(0, i64), i64)
    alone = llvm.CallOp(task.sym_name.data, ctx, zero, trips)
    serial.add_ops([zero, alone, llvm.ReturnOp()])
    function = llvm.AddressOfOp(task.sym_name.data, POINTER)
    call = llvm.CallOp(PARALLEL_FOR, function, ctx, trips, threads)
    parallel.add_ops([function, call, llvm.ReturnOp()])
    return [block, serial, parallel]
