"""The `llvm` dialect to llvmlite IR: xDSL's converter, plus what it lacks.

xDSL 0.74's `xdsl.backend.llvm.convert.convert_module` translates a closed set
of ops and ignores `llvm.func`'s linkage.  Its op dispatch cannot be extended,
so `to_llvmlite` follows the same steps (globals, declarations, bodies with
phis for block arguments) with xDSL's own `convert_op` for every op it knows,
and adds:

* the ops of `hetero.dialects.llvm_ops` (`fptosi`, `fptoui`, `uitofp`,
  `addrspacecast`, `extractelement`, vector `fcmp` and `select`,
  `intr.prefetch`, `intr.masked.load`/`store` in the signature of
  llvmlite's LLVM version);
* `llvm.getelementptr` in any address space (xDSL's casts the base into
  address space 0 first);
* `llvm.fcmp` with the `_false`/`_true` predicates (xDSL passes the
  underscored name on to LLVM);
* function linkage (`internal`, `private`, ...), calling convention and the
  `always_inline`/`no_inline`/`no_unwind`/`optimize_none` flags (xDSL's
  declarations drop them; it still ignores `passthrough`, `target_cpu`,
  `target_features`, `visibility_`, `frame_pointer` and result attributes);
* the `loop_annotation` of `llvm.br`/`llvm.cond_br` (`hetero.dialects.llvm_attrs`)
  as `!llvm.loop` metadata on the branch: a distinct node that lists itself
  first, then one node per property (`!{!"llvm.loop.unroll.full"}`).
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir
from llvmlite.binding import llvm_version_info
from xdsl.backend.llvm.convert import _convert_global, _declare_func  # pyright: ignore[reportPrivateUsage]
from xdsl.backend.llvm.convert_op import convert_op
from xdsl.backend.llvm.convert_type import convert_type
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import LLVMTranslationException

from hetero.dialects import llvm_ops
from hetero.dialects.llvm_attrs import BRANCH_LOOP_ANNOTATION, LoopAnnotationAttr
from hetero.utils.diagnostics import HeteroError

Values = dict[SSAValue, ir.Value]
Handler = Callable[[Operation, ir.IRBuilder, Values], ir.Value]


def _fcmp(op: Operation, builder: ir.IRBuilder, values: Values) -> ir.Value:
    assert isinstance(op, llvm_ops.FCmpOp | llvm.FCmpOp)
    flag = llvm.FCmpPredicateFlag.from_int(op.predicate.value.data)
    predicate = flag.value.lstrip("_")  # MLIR's "_true" is LLVM's "true"
    flags = [f.value for f in op.fastmathFlags.data]
    return builder.fcmp_ordered(predicate, values[op.lhs], values[op.rhs], flags=flags)


def _cast(method: str) -> Handler:
    def handler(op: Operation, builder: ir.IRBuilder, values: Values) -> ir.Value:
        return getattr(builder, method)(
            values[op.operands[0]], convert_type(op.results[0].type)
        )

    return handler


def _alloca(op: Operation, builder: ir.IRBuilder, values: Values) -> ir.Value:
    """An `alloca` whose result is an opaque `ptr`, like a function's pointer
    arguments: llvmlite types it `float*`, and its GEPs and stores then reject
    a vector stored through it (a register tile's accumulators)."""
    assert isinstance(op, llvm.AllocaOp)
    alloca = builder.alloca(convert_type(op.elem_type), size=values[op.size])
    if op.alignment:
        alloca.align = op.alignment.value.data
    alloca.type = ir.PointerType()
    return alloca


def _gep(op: Operation, builder: ir.IRBuilder, values: Values) -> ir.Value:
    """xDSL's GEP, but with its base cast to an element pointer in the base's
    own address space: xDSL casts to address space 0, which LLVM rejects for
    a GPU's shared memory (`!llvm.ptr<3>`)."""
    assert isinstance(op, llvm.GEPOp)
    base, element = values[op.ptr], convert_type(op.elem_type)
    typed = builder.bitcast(base, element.as_pointer(base.type.addrspace))
    dynamic = iter(op.ssa_indices)
    indices = [
        values[next(dynamic)]
        if i == llvm.GEP_USE_SSA_VAL
        else ir.Constant(ir.IntType(32), i)
        for i in op.rawConstantIndices.iter_values()
    ]
    return builder.gep(
        typed, indices, inbounds=op.inbounds is not None, source_etype=element
    )


def _prefetch(op: Operation, builder: ir.IRBuilder, values: Values) -> ir.Value:
    """A call of `llvm.prefetch.p0`, its immediates as `i32` constants."""
    assert isinstance(op, llvm_ops.PrefetchOp)
    i32 = ir.IntType(32)
    args = [
        values[op.addr],
        *(ir.Constant(i32, a.value.data) for a in (op.rw, op.hint, op.cache)),
    ]
    name = "llvm.prefetch.p0"
    try:
        intrinsic = builder.module.get_global(name)
    except KeyError:
        signature = ir.FunctionType(ir.VoidType(), [ir.PointerType(), i32, i32, i32])
        intrinsic = ir.Function(builder.module, signature, name=name)
    return builder.call(intrinsic, args)


ALIGN_ATTRIBUTE = llvm_version_info >= (21,)
"""Whether this LLVM's `masked.load`/`masked.store` take their alignment as
the pointer's `align` attribute (LLVM 21 on); before, as an `i32` operand
after the pointer (LLVM 21 still parses that form, by auto-upgrade only)."""


def _masked(op: Operation, builder: ir.IRBuilder, values: Values) -> ir.Value:
    """A call of `llvm.masked.load`/`masked.store` in this LLVM's signature."""
    assert isinstance(
        op, llvm_ops.MaskedLoadOp | llvm_ops.MaskedStoreOp | llvm.MaskedStoreOp
    )
    loading = isinstance(op, llvm_ops.MaskedLoadOp)
    pointer, mask = values[op.data], values[op.mask]
    data = values[op.pass_thru if loading else op.value]
    args = [pointer, mask, data] if loading else [data, pointer, mask]
    at = 0 if loading else 1  # the pointer's position
    alignment = op.alignment.value.data
    if not ALIGN_ATTRIBUTE:
        args.insert(at + 1, ir.Constant(ir.IntType(32), alignment))
    vector = data.type
    name = (
        f"llvm.masked.{'load' if loading else 'store'}"
        f".v{vector.count}{vector.element.intrinsic_name}.p{pointer.type.addrspace}"
    )
    try:
        intrinsic = builder.module.get_global(name)
    except KeyError:
        result = vector if loading else ir.VoidType()
        signature = ir.FunctionType(result, [a.type for a in args])
        intrinsic = ir.Function(builder.module, signature, name=name)
    call = builder.call(intrinsic, args)
    if ALIGN_ATTRIBUTE:
        call.arg_attributes[at] = ir.ArgumentAttributes()
        call.arg_attributes[at].align = alignment
    return call


EXTRA_OPS: dict[type[Operation], Handler] = {
    llvm.AllocaOp: _alloca,
    llvm.GEPOp: _gep,
    llvm_ops.FPToSIOp: _cast("fptosi"),
    llvm_ops.FPToUIOp: _cast("fptoui"),
    llvm_ops.UIToFPOp: _cast("uitofp"),
    llvm_ops.AddrSpaceCastOp: _cast("addrspacecast"),
    llvm_ops.ExtractElementOp: lambda op, b, v: b.extract_element(
        v[op.operands[0]], v[op.operands[1]]
    ),
    llvm_ops.SelectOp: lambda op, b, v: b.select(
        v[op.operands[0]], v[op.operands[1]], v[op.operands[2]]
    ),
    llvm_ops.FCmpOp: _fcmp,
    llvm.FCmpOp: _fcmp,
    llvm_ops.PrefetchOp: _prefetch,
    llvm_ops.MaskedLoadOp: _masked,
    llvm_ops.MaskedStoreOp: _masked,
    llvm.MaskedStoreOp: _masked,
}
"""Ops translated here rather than by xDSL's `convert_op`."""


def to_llvmlite(module: ModuleOp, *, triple: str, data_layout: str = "") -> ir.Module:
    """Translate an `llvm`-dialect module; `triple` unless it has `llvm.target_triple`."""
    result = ir.Module()
    module_triple = module.attributes.get("llvm.target_triple")
    result.triple = (
        module_triple.data if isinstance(module_triple, StringAttr) else triple
    )
    result.data_layout = data_layout
    functions: list[llvm.FuncOp] = []
    for op in module.ops:
        if isinstance(op, llvm.GlobalOp):
            _global(op, result)
        elif isinstance(op, llvm.FuncOp):
            functions.append(op)
        else:
            raise HeteroError(
                f"'{op.name}' at module level: expected llvm.func or llvm.mlir.global",
                op,
            )
    for op in functions:
        _declare_func(op, result)
        _set_function_properties(op, result.get_global(op.sym_name.data))
    for op in functions:
        if op.body.blocks:
            _convert_body(op, result.get_global(op.sym_name.data))
    return result


def _global(op: llvm.GlobalOp, module: ir.Module) -> None:
    """xDSL's translation of a global, and its `alignment`, which that drops
    (the GPU's shared tiles need 16 for LLVM to read them 128 bits at a time);
    an external global with a value is a definition, which LLVM writes
    without a linkage (`external global i64 0` does not parse)."""
    _convert_global(op, module)
    variable = module.get_global(op.sym_name.data)
    if op.alignment is not None:
        variable.align = op.alignment.value.data
    if variable.linkage == "external" and op.value is not None:
        variable.linkage = ""


FLAG_ATTRIBUTES = {
    "always_inline": "alwaysinline",
    "no_inline": "noinline",
    "no_unwind": "nounwind",
    "optimize_none": "optnone",
}
"""Unit properties of `llvm.func` and the LLVM function attribute each stands for."""


def _set_function_properties(op: llvm.FuncOp, function: ir.Function) -> None:
    """What xDSL's declaration drops: linkage, calling convention, flag attributes."""
    if (linkage := op.linkage.linkage.data) != "external":
        function.linkage = linkage
    if (convention := op.CConv.cconv_name) != "ccc":
        function.calling_convention = convention
    for name, attribute in FLAG_ATTRIBUTES.items():
        if name in op.properties or name in op.attributes:  # parsed as either
            function.attributes.add(attribute)


def _convert_body(op: llvm.FuncOp, function: ir.Function) -> None:
    """Translate the blocks of `op` into `function` (block arguments become phis)."""
    blocks: dict[Block, ir.Block] = {}
    values: Values = {}
    for block in op.body.blocks:
        blocks[block] = function.append_basic_block(block.name_hint or "")
    entry = op.body.blocks.first
    assert entry is not None
    values.update(zip(entry.args, function.args))
    for block in op.body.blocks:
        if block is not entry:
            builder = ir.IRBuilder(blocks[block])
            values.update(
                (arg, builder.phi(convert_type(arg.type))) for arg in block.args
            )
    for block in op.body.blocks:
        builder = ir.IRBuilder(blocks[block])
        for inner in block.ops:
            try:
                if (handler := EXTRA_OPS.get(type(inner))) is not None:
                    value = handler(inner, builder, values)
                    if inner.results:
                        values[inner.results[0]] = value
                else:
                    convert_op(inner, builder, values, blocks)
            except (NotImplementedError, LLVMTranslationException) as e:
                raise HeteroError(
                    f"no LLVM IR translation for '{inner.name}': {e}", inner
                ) from e
            if BRANCH_LOOP_ANNOTATION in inner.attributes:
                back_edge = blocks[block].terminator
                assert back_edge is not None
                back_edge.set_metadata("llvm.loop", _loop_id(inner, function.module))


class LoopID(ir.values.MDValue):
    """A `!llvm.loop` node: distinct, and its own first operand (`!0 =
    distinct !{!0, !1}`), so that two loops never share it.  llvmlite's
    `Module.add_metadata` makes only uniqued nodes, looked up by their operands,
    which cannot contain themselves."""

    def __init__(self, module: ir.Module, properties: list[ir.MDValue]):
        super().__init__(module, [], name=str(len(module.metadata)))
        self.operands = (self, *properties)

    def descr(self, buf: list[str]) -> None:
        buf.append("distinct ")
        super().descr(buf)

    def __eq__(self, other: object) -> bool:
        return self is other  # hashing or comparing the operands would recurse

    def __hash__(self) -> int:
        return id(self)


def _loop_id(branch: Operation, module: ir.Module) -> LoopID:
    """The loop metadata of the back edge `branch`."""
    annotation = branch.attributes[BRANCH_LOOP_ANNOTATION]
    if not isinstance(annotation, LoopAnnotationAttr):
        raise HeteroError(
            f"'{branch.name}': expected a #llvm.loop_annotation as "
            f"{BRANCH_LOOP_ANNOTATION}, got {annotation}",
            branch,
        )
    properties = []
    if annotation.unroll.full.value.data:
        properties.append(module.add_metadata(["llvm.loop.unroll.full"]))
    return LoopID(module, properties)
