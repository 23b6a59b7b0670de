"""`outline-compiler-functions`: `Compiler` literals become global functions (docs/design.md §4.4).

In SSA, a `Compiler` function literal is *called* when it is the callee of a
`relay.call_indirect` — directly in call position, or bound to a value that
is called (possibly several times), which is Relay's let-bound case.  Each
such call becomes `relay.call @g(...)` of a global `relay.func @g` holding the
literal's body, signature, devices and **all** its attributes, with
`global_symbol = "g"`.  A literal with no use left is removed; one that is
also used as a value (passed, returned, put in a tuple) stays for those uses.

* The global comes from a *cache*.  By default, the literal's own
  `global_symbol`: one global per symbol, lifted once, every call rewritten
  ("shared symbols"); a literal without one is a diagnostic.  With
  `structural_cache=true` (Collage's cache): structurally equal literals —
  same signature, devices, body and attributes, `global_symbol` aside, since
  it names the global rather than being part of it — share one global, named
  by the first one's `global_symbol` (or `<kind>_<n>` when it has none).
* `compiler="cublas"` only outlines literals of that kind; others (and
  `Composite` literals inside an outlined body) are untouched.
* A `Compiler` literal must be closed (it captures no value) and
  name a registered external-codegen kind; a symbol already taken by a global
  that is not the same kind's function of the same type is a diagnostic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from hetero.dialects.relay import CallIndirectOp, CallOp, FnOp, FuncOp
from hetero.transforms.byoc import check_compiler, compiler_names, open_blocks
from hetero.transforms.plan_devices import is_optimizable
from hetero.utils.diagnostics import HeteroError
from hetero.utils.symbols import fresh_name
from hetero.utils.values import free_values

GLOBAL_SYMBOL = "global_symbol"


def compiler_literals(func: FuncOp) -> list[FnOp]:
    """`Compiler` literals in `func`'s body, in program order, not looking
    inside opaque functions (so not at composites inside a partition)."""
    return [
        op
        for block in open_blocks(func.body.block)
        for op in block.ops
        if isinstance(op, FnOp) and op.compiler is not None
    ]


def literal_calls(fn: FnOp) -> list[CallIndirectOp]:
    """The calls with the literal `fn` as their callee."""
    return [
        use.operation
        for use in fn.result.uses
        if isinstance(use.operation, CallIndirectOp) and use.index == 0
    ]


def check_closed(fn: FnOp, what: str) -> None:
    """A literal outlined to a global must capture no value of its enclosing
    function: the global has no access to them."""
    if (free := next(iter(free_values(fn.body)), None)) is not None:
        raise HeteroError(
            f"a {what} function must be closed, but this one uses "
            f"{_describe(free)} of its enclosing function",
            fn,
        )


def lift_literal(fn: FnOp, name: str, before: Operation) -> FuncOp:
    """The literal as `relay.func @name` (its signature, devices, attributes
    and a copy of its body), placed before `before`."""
    func = FuncOp(
        name,
        fn.function_type.inputs.data,
        fn.result_type,
        fn.body.clone(),
        attributes=dict(fn.attributes),
    )
    func.arg_attrs, func.res_attrs = fn.arg_attrs, fn.res_attrs
    func.location = fn.location
    Rewriter.insert_op(func, InsertPoint.before(before))
    return func


def call_global(fn: FnOp, name: str) -> None:
    """Each call of the literal `fn` becomes `relay.call @name`, keeping its
    device and attributes; the literal goes when nothing else uses it."""
    for call in literal_calls(fn):
        new = CallOp(name, list(call.args), call.result.type, vdevice=call.vdevice)
        new.attributes.update(call.attributes)
        new.location = call.location
        new.result.name_hint = call.result.name_hint
        Rewriter.replace_op(call, new)
    if not fn.result.uses:
        Rewriter.erase_op(fn)


def _attributes_without_symbol(fn: FnOp) -> dict[str, object]:
    return {k: v for k, v in fn.attributes.items() if k != GLOBAL_SYMBOL}


def structurally_equal(a: FnOp, b: FnOp) -> bool:
    """Same signature, devices, attributes (`global_symbol` aside) and body."""
    return (
        a.result.type == b.result.type
        and a.properties == b.properties
        and _attributes_without_symbol(a) == _attributes_without_symbol(b)
        and a.body.is_structurally_equivalent(b.body)
    )


@dataclass
class GlobalSymbolCache:
    """Which global a `Compiler` literal is outlined to (docs/design.md §4.4)."""

    taken: set[str]
    """Global names and `global_symbol`s already in the module."""
    structural: bool
    classes: dict[object, list[tuple[FnOp, str]]] = field(default_factory=dict)
    assigned: set[str] = field(default_factory=set)

    def name(self, fn: FnOp) -> str:
        if not self.structural:
            if fn.global_symbol is None:
                raise HeteroError(
                    "outline-compiler-functions needs a 'global_symbol' on every Compiler "
                    "function it outlines (or structural_cache=true to name them)",
                    fn,
                )
            return fn.global_symbol
        bucket = self.classes.setdefault((fn.compiler, fn.result.type), [])
        for seen, name in bucket:
            if structurally_equal(seen, fn):
                return name
        name = fn.global_symbol
        if name is None or name in self.assigned:  # a different function had it first
            name = self._fresh(f"{fn.compiler}")
        self.assigned.add(name)
        bucket.append((fn, name))
        return name

    def _fresh(self, prefix: str) -> str:
        return fresh_name(
            prefix, lambda name: name in self.taken or name in self.assigned, bare=False
        )


class _Outliner:
    def __init__(self, module: ModuleOp, cache: GlobalSymbolCache) -> None:
        self.module = module
        self.cache = cache
        self.globals = {f.sym_name.data: f for f in module.ops if isinstance(f, FuncOp)}

    def outline(self, fn: FnOp, caller: FuncOp) -> None:
        if not literal_calls(fn):
            return  # not called: a value, not outlined
        check_closed(fn, "Compiler")
        name = self.cache.name(fn)
        target = self.globals.get(name) or self._lift(fn, name, caller)
        self._check_same(target, fn, name)
        call_global(fn, name)

    def _lift(self, fn: FnOp, name: str, caller: FuncOp) -> FuncOp:
        """The literal as `relay.func @name`, placed before its first caller."""
        func = lift_literal(fn, name, caller)
        func.attributes[GLOBAL_SYMBOL] = StringAttr(name)
        self.globals[name] = func
        return func

    @staticmethod
    def _check_same(target: FuncOp, fn: FnOp, name: str) -> None:
        if target.compiler != fn.compiler or target.function_type != fn.function_type:
            raise HeteroError(
                f"cannot outline to @{name}: that global is "
                f"{'a ' + repr(target.compiler) if target.compiler else 'not a Compiler'} "
                f"function of type {target.function_type}, this is a '{fn.compiler}' "
                f"function of type {fn.function_type}",
                fn,
            )


def _describe(value: SSAValue) -> str:
    if value.name_hint:
        return f"%{value.name_hint}"
    return (
        f"a value of {value.op.name}"
        if isinstance(value, OpResult)
        else "a block argument"
    )


@dataclass(frozen=True)
class OutlineCompilerFunctionsPass(ModulePass):
    """Lift called `Compiler` literals to globals; `compiler` filters the kind,
    `structural_cache` shares one global between structurally equal literals."""

    name = "outline-compiler-functions"
    compiler: str = ""
    structural_cache: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        only = compiler_names([self.compiler] if self.compiler else [], op)
        taken = {f.sym_name.data for f in op.ops if isinstance(f, FuncOp)} | {
            f.global_symbol
            for f in op.walk()
            if isinstance(f, FnOp | FuncOp) and f.global_symbol
        }
        outliner = _Outliner(op, GlobalSymbolCache(taken, self.structural_cache))
        for func in [f for f in op.ops if isinstance(f, FuncOp) and is_optimizable(f)]:
            for fn in compiler_literals(func):
                kind = check_compiler(fn.compiler or "", fn)
                if not only or kind in only:
                    outliner.outline(fn, func)
