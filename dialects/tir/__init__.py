"""The `tir` dialect: hetero's loop level (TVM's TIR, written the MLIR way).

A `tir.prim_func` is a function over buffers (builtin `memref`s) and scalars.
Its body is ordinary structured IR: scalars are `arith`/`math`, buffer
accesses are `memref.load`/`memref.store`, conditionals and loop-carried
values are `scf`.  This dialect adds only what TIR has and upstream lacks:

* `tir.prim_func` / `tir.return` — the function, public (TVM: "has a
  global_symbol", callable from outside) or `private` (an internal
  subroutine), with an optional `target` (`#target.target<...>`);
* `tir.for` — a loop with a *kind*: serial, parallel, vectorized, unrolled,
  or bound to a GPU thread axis (`thread_binding "threadIdx.x"`);
* `tir.alloc` — a buffer allocation; its storage scope (`shared`, `local`,
  ...) is the memory space of the memref type, as TVM keeps it in the
  pointer type, so the scope survives being passed to a subroutine;
* `tir.target_region` — TVMScript's `with T.target(...)`: the body runs on
  that target (outlined into a kernel by `split-host-device`);
* `tir.call`, `tir.launch`, `tir.call_packed`, `tir.call_extern` — calls of
  another prim_func, kernel launches, runtime (packed) functions and
  external C symbols.  Ops that can only run on the host carry the
  `HostOnly` trait, which is what `annotate-device-regions` classifies by.

The package holds one module per op family, each with the list of its ops:
`functions` (with the queries every TIR pass shares), `loops` (loops and
target regions), `buffers` and `calls` (with `HostOnly`); below them
`attrs`, the tables (loop kinds, thread axes, storage scopes, function
attributes) and the loop-kind attribute.  This module builds the dialect
from the families' lists and re-exports the names the rest of hetero uses.
The syntax is documented in `docs/dialects/tir.md`.
"""

from xdsl.ir import Dialect

from hetero.dialects.tir.attrs import (
    FUNCTION_ATTRIBUTES,
    INDEX,
    NO_INLINE,
    STORAGE_SCOPES,
    THREAD_TAGS,
    ForKind,
    ForKindAttr,
    scoped_memref,
    storage_scope,
)
from hetero.dialects.tir.buffers import BUFFER_OPS, AllocOp
from hetero.dialects.tir.calls import (
    CALL_OPS,
    CallExternOp,
    CallOp,
    CallPackedOp,
    HostOnly,
    LaunchOp,
    called_function,
)
from hetero.dialects.tir.functions import (
    FUNCTION_OPS,
    PrimFuncOp,
    ReturnOp,
    function_of,
    prim_funcs,
)
from hetero.dialects.tir.loops import LOOP_OPS, ForOp, TargetRegionOp, YieldOp

TIR = Dialect(
    "tir",
    [*FUNCTION_OPS, *LOOP_OPS, *BUFFER_OPS, *CALL_OPS],
    [ForKindAttr],
)

__all__ = [
    "FUNCTION_ATTRIBUTES",
    "INDEX",
    "NO_INLINE",
    "STORAGE_SCOPES",
    "THREAD_TAGS",
    "TIR",
    "AllocOp",
    "CallExternOp",
    "CallOp",
    "CallPackedOp",
    "ForKind",
    "ForKindAttr",
    "ForOp",
    "HostOnly",
    "LaunchOp",
    "PrimFuncOp",
    "ReturnOp",
    "TargetRegionOp",
    "YieldOp",
    "called_function",
    "function_of",
    "prim_funcs",
    "scoped_memref",
    "storage_scope",
]
