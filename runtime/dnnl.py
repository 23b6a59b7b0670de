"""oneDNN, the library the `dnnl` external codegen calls: primitives made once,
executed from compiled code.

    library = load_dnnl()                    # once per process; DnnlUnavailable if absent
    plan = library.convolution(spec)         # a primitive and its arguments' descriptors
    # compiled code: hetero_dnnl_execute(plan.address, pointers of the buffers)

Why this package: `onednn-cpu-gomp` is Intel's CPU-only build of oneDNN (3.2,
GNU OpenMP threads, no dependencies: 39 MB to download).  The newer `onednn`
wheel is built for SYCL: its `libdnnl.so` needs `libsycl`, TBB and the Intel
compiler's runtimes (`dpcpp-cpp-rt`, `intel-opencl-rt`), hundreds of MB for
GPUs hetero does not drive through it.  Neither wheel ships headers, so the
few C API entry points used are declared here, with ctypes (compile time)
and in LLVM IR (run time).

Creating a primitive is slow (oneDNN picks and JIT-compiles a kernel for the
shapes and post-ops), so it happens once per distinct layer, when the
codegen runs: `Plan`s are kept for the life of the process, keyed by what
they compute, and shared by every module that needs the same layer (a
network compiled again, or Collage's candidates).  A call then costs one
`dnnl_primitive_execute`: `hetero_dnnl_execute(plan, buffers)`, defined here
in LLVM IR (no C compiler needed) and bound by name for every module like
the buffer runtime (`hetero.runtime.buffers`), wraps the call's buffers in
memory objects, runs the primitive on a stream of its own, waits and frees
them.  Memory objects and streams are made per call, so concurrent calls of
one compiled function share nothing but the primitive, which oneDNN allows.
oneDNN's threads are OpenMP's: `OMP_NUM_THREADS` sets them.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from typing import Any

import llvmlite.binding as llvm

PACKAGE = "onednn-cpu-gomp"
INSTALL = "pip install 'hetero[dnnl]' (which installs onednn-cpu-gomp, oneDNN's CPU-only build)"
LIBRARY = "libdnnl.so.3"

EXECUTE = "hetero_dnnl_execute"
"""`i32 execute(ptr plan, ptr buffers)`: the plan's primitive run on the
buffers (one pointer per argument, in the plan's order); oneDNN's status."""

MAX_ARGS = 8

# dnnl_types.h / dnnl_common_types.h (oneDNN 3.x)
_CPU, _F32, _F64 = 1, 3, 7
_FORWARD_INFERENCE, _CONVOLUTION_AUTO = 96, 0x3
_ELTWISE_RELU, _BINARY_ADD = 0x20, 0x1FFF0
ARG_SRC, ARG_SRC_1, ARG_DST, ARG_WEIGHTS, ARG_BIAS = 1, 2, 17, 33, 41
_POST_OP_BASE = 32768
_MAX_NDIMS = 12

DTYPES = {"f32": _F32}
"""Element types oneDNN's CPU convolution and matmul compute in."""

RUNTIME_IR = r"""
%plan = type { ptr, ptr, i64, ptr, ptr }
%arg = type { i32, ptr }

declare i32 @dnnl_memory_create(ptr, ptr, ptr, ptr)
declare i32 @dnnl_memory_destroy(ptr)
declare i32 @dnnl_stream_create(ptr, ptr, i32)
declare i32 @dnnl_stream_wait(ptr)
declare i32 @dnnl_stream_destroy(ptr)
declare i32 @dnnl_primitive_execute(ptr, ptr, i32, ptr)

define i32 @hetero_dnnl_execute(ptr %plan, ptr %buffers) {
entry:
  %args = alloca [{max} x %arg]
  %stream = alloca ptr
  %primitive = load ptr, ptr %plan
  %engine_at = getelementptr %plan, ptr %plan, i32 0, i32 1
  %engine = load ptr, ptr %engine_at
  %n_at = getelementptr %plan, ptr %plan, i32 0, i32 2
  %n = load i64, ptr %n_at
  %kinds_at = getelementptr %plan, ptr %plan, i32 0, i32 3
  %kinds = load ptr, ptr %kinds_at
  %descs_at = getelementptr %plan, ptr %plan, i32 0, i32 4
  %descs = load ptr, ptr %descs_at
  br label %wrap

wrap:
  %i = phi i64 [ 0, %entry ], [ %i1, %wrap ]
  %kind_at = getelementptr i32, ptr %kinds, i64 %i
  %kind = load i32, ptr %kind_at
  %desc_at = getelementptr ptr, ptr %descs, i64 %i
  %desc = load ptr, ptr %desc_at
  %buffer_at = getelementptr ptr, ptr %buffers, i64 %i
  %buffer = load ptr, ptr %buffer_at
  %arg_kind = getelementptr [{max} x %arg], ptr %args, i64 0, i64 %i, i32 0
  store i32 %kind, ptr %arg_kind
  %arg_memory = getelementptr [{max} x %arg], ptr %args, i64 0, i64 %i, i32 1
  call i32 @dnnl_memory_create(ptr %arg_memory, ptr %desc, ptr %engine, ptr %buffer)
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %wrap, label %run

run:
  call i32 @dnnl_stream_create(ptr %stream, ptr %engine, i32 1)
  %s = load ptr, ptr %stream
  %n32 = trunc i64 %n to i32
  %status = call i32 @dnnl_primitive_execute(ptr %primitive, ptr %s, i32 %n32, ptr %args)
  call i32 @dnnl_stream_wait(ptr %s)
  call i32 @dnnl_stream_destroy(ptr %s)
  br label %free

free:
  %j = phi i64 [ 0, %run ], [ %j1, %free ]
  %memory_at = getelementptr [{max} x %arg], ptr %args, i64 0, i64 %j, i32 1
  %memory = load ptr, ptr %memory_at
  call i32 @dnnl_memory_destroy(ptr %memory)
  %j1 = add i64 %j, 1
  %again = icmp ult i64 %j1, %n
  br i1 %again, label %free, label %done

done:
  ret i32 %status
}
""".replace("{max}", str(MAX_ARGS))


class DnnlUnavailable(RuntimeError):
    """No usable oneDNN; the message says what to install."""


class DnnlError(RuntimeError):
    """oneDNN refused a primitive (shapes, post-ops it has no kernel for)."""


class _PlanStruct(ctypes.Structure):
    """The `%plan` the runtime function reads."""

    _fields_ = [
        ("primitive", ctypes.c_void_p),
        ("engine", ctypes.c_void_p),
        ("nargs", ctypes.c_int64),
        ("kinds", ctypes.POINTER(ctypes.c_int32)),
        ("descs", ctypes.POINTER(ctypes.c_void_p)),
    ]


@dataclass(frozen=True)
class Tensor:
    """A dense argument: its dims and the strides of its buffer (elements)."""

    dims: tuple[int, ...]
    strides: tuple[int, ...] | None = None
    """None: row-major."""

    def row_major_strides(self) -> tuple[int, ...]:
        if self.strides is not None:
            return self.strides
        strides, step = [], 1
        for d in reversed(self.dims):
            strides.append(step)
            step *= d
        return tuple(reversed(strides))


@dataclass(frozen=True)
class PostOps:
    """What oneDNN applies to a primitive's result before storing it: a
    binary add of each `adds` tensor (a residual) and relus, in `order`."""

    order: tuple[str | Tensor, ...] = ()
    """`"relu"` or the tensor added, in program order."""

    def addends(self) -> list[Tensor]:
        return [p for p in self.order if isinstance(p, Tensor)]


@dataclass(frozen=True)
class Convolution:
    """conv2d of NCHW data with (grouped) OIHW weights."""

    src: Tensor
    weights: Tensor
    """`[G, O/G, I/G, KH, KW]` where `groups > 1`, as oneDNN takes groups."""
    bias: Tensor | None
    dst: Tensor
    strides: tuple[int, int]
    dilation: tuple[int, int]
    padding: tuple[int, int, int, int]
    """top, left, bottom, right."""
    post_ops: PostOps = PostOps()


@dataclass(frozen=True)
class Matmul:
    """`dst = src · weights (+ bias)`, 2-d or batched 3-d; the weights' strides
    say whether they are transposed (a dense's `[N, K]` read as `[K, N]`)."""

    src: Tensor
    weights: Tensor
    bias: Tensor | None
    dst: Tensor
    post_ops: PostOps = PostOps()


@dataclass
class Plan:
    """A primitive and the descriptors of its arguments, in the order compiled
    code passes their buffers: src, weights, bias (if any), dst, then each
    post-op addend."""

    address: int
    """Of the `%plan` struct `hetero_dnnl_execute` reads."""
    kinds: Sequence[int]
    keep: list[Any] = field(default_factory=list)
    """ctypes objects the struct points into."""


class Dnnl:
    """The loaded library, its CPU engine and the plans made so far."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lib = ctypes.CDLL(path)
        self.engine = ctypes.c_void_p()
        self._check(
            "dnnl_engine_create", ctypes.byref(self.engine), _CPU, ctypes.c_size_t(0)
        )
        self._plans: dict[Convolution | Matmul, Plan] = {}
        self._lock = threading.Lock()

    @property
    def version(self) -> str:
        class Version(ctypes.Structure):
            _fields_ = [
                ("major", ctypes.c_int),
                ("minor", ctypes.c_int),
                ("patch", ctypes.c_int),
            ]

        self.lib.dnnl_version.restype = ctypes.POINTER(Version)
        v = self.lib.dnnl_version().contents
        return f"{v.major}.{v.minor}.{v.patch}"

    def _check(self, name: str, *args: Any) -> None:
        status = getattr(self.lib, name)(*args)
        if status != 0:
            raise DnnlError(f"oneDNN's {name} failed (status {status})")

    def _desc(self, tensor: Tensor) -> ctypes.c_void_p:
        desc = ctypes.c_void_p()
        dims = (ctypes.c_int64 * _MAX_NDIMS)(*tensor.dims)
        strides = (ctypes.c_int64 * _MAX_NDIMS)(*tensor.row_major_strides())
        self._check(
            "dnnl_memory_desc_create_with_strides",
            ctypes.byref(desc), len(tensor.dims), dims, _F32, strides,
        )  # fmt: skip
        return desc

    def _attr(self, post_ops: PostOps) -> ctypes.c_void_p:
        attr, ops = ctypes.c_void_p(), ctypes.c_void_p()
        self._check("dnnl_primitive_attr_create", ctypes.byref(attr))
        self._check("dnnl_post_ops_create", ctypes.byref(ops))
        for op in post_ops.order:
            if isinstance(op, Tensor):
                self._check(
                    "dnnl_post_ops_append_binary", ops, _BINARY_ADD, self._desc(op)
                )
            else:
                self._check(
                    "dnnl_post_ops_append_eltwise",
                    ops, _ELTWISE_RELU, ctypes.c_float(0.0), ctypes.c_float(0.0),
                )  # fmt: skip
        self._check("dnnl_primitive_attr_set_post_ops", attr, ops)
        return attr

    def plan(self, spec: Convolution | Matmul) -> Plan:
        """The plan computing `spec`, made at the first request (per process)."""
        with self._lock:
            if spec not in self._plans:
                self._plans[spec] = self._make(spec)
            return self._plans[spec]

    def _make(self, spec: Convolution | Matmul) -> Plan:
        tensors = [
            spec.src,
            spec.weights,
            *([spec.bias] if spec.bias else []),
            spec.dst,
        ]
        kinds = [ARG_SRC, ARG_WEIGHTS, *([ARG_BIAS] if spec.bias else []), ARG_DST]
        addends = spec.post_ops.addends()
        adds = [i for i, p in enumerate(spec.post_ops.order) if isinstance(p, Tensor)]
        kinds += [_POST_OP_BASE * (i + 1) | ARG_SRC_1 for i in adds]
        descs = [self._desc(t) for t in [*tensors, *addends]]
        bias = descs[2] if spec.bias else None
        dst = descs[len(tensors) - 1]
        attr = self._attr(spec.post_ops)
        pd = ctypes.c_void_p()
        if isinstance(spec, Convolution):

            def pair(*v: int) -> ctypes.Array[ctypes.c_int64]:
                return (ctypes.c_int64 * _MAX_NDIMS)(*v)

            top, left, bottom, right = spec.padding
            self._check(
                "dnnl_convolution_forward_primitive_desc_create",
                ctypes.byref(pd), self.engine, _FORWARD_INFERENCE, _CONVOLUTION_AUTO,
                descs[0], descs[1], bias, dst, pair(*spec.strides),
                pair(*(d - 1 for d in spec.dilation)), pair(top, left), pair(bottom, right), attr,
            )  # fmt: skip
        else:
            self._check(
                "dnnl_matmul_primitive_desc_create",
                ctypes.byref(pd), self.engine, descs[0], descs[1], bias, dst, attr,
            )  # fmt: skip
        primitive = ctypes.c_void_p()
        self._check("dnnl_primitive_create", ctypes.byref(primitive), pd)
        kind_array = (ctypes.c_int32 * len(kinds))(*kinds)
        desc_array = (ctypes.c_void_p * len(descs))(*(d.value for d in descs))
        struct = _PlanStruct(
            primitive.value,
            self.engine.value,
            len(kinds),
            ctypes.cast(kind_array, ctypes.POINTER(ctypes.c_int32)),
            ctypes.cast(desc_array, ctypes.POINTER(ctypes.c_void_p)),
        )
        return Plan(
            ctypes.addressof(struct), kinds, [struct, kind_array, desc_array, descs, pd]
        )


def library_path() -> str:
    """`libdnnl.so.3` of `onednn-cpu-gomp`; `DnnlUnavailable` if not installed."""
    try:
        files = metadata.distribution(PACKAGE).files or []
    except metadata.PackageNotFoundError as e:
        raise DnnlUnavailable(
            f"the 'dnnl' external codegen needs oneDNN: {INSTALL}"
        ) from e
    for file in files:
        if file.name == LIBRARY:
            return str(file.locate())
    raise DnnlUnavailable(
        f"{PACKAGE} is installed without {LIBRARY}; reinstall: {INSTALL}"
    )


@cache
def load_dnnl() -> Dnnl:
    """Load oneDNN (once), compile and bind `hetero_dnnl_execute`."""
    from hetero.runtime.cpu import _initialize

    path = library_path()
    try:
        llvm.load_library_permanently(path)
        library = Dnnl(path)
    except (OSError, RuntimeError) as e:
        raise DnnlUnavailable(f"cannot load {path} ({e}); reinstall: {INSTALL}") from e
    _initialize()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    machine = target.create_target_machine(opt=2, codemodel="jitdefault", jit=True)
    module = llvm.parse_assembly(RUNTIME_IR)
    module.verify()
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    llvm.add_symbol(EXECUTE, engine.get_function_address(EXECUTE))
    engine.detach()
    return library
