"""oneDNN, the library the `dnnl` external codegen calls: primitives made once,
executed from compiled code.

    library = load_dnnl()                    # once per process; DnnlUnavailable if absent
    plan = library.plan(spec)                # steps: reorders, the primitive; plan.impl
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
`dnnl_primitive_execute` per step of its plan: `hetero_dnnl_execute(plan,
buffers)`, defined here in LLVM IR (no C compiler needed) and bound by name
for every module like the buffer runtime (`hetero.runtime.buffers`), runs the
plan's steps (reorders into oneDNN's preferred layouts, the primitive,
the reorder back) on a stream of its own, each on memory objects wrapping
the call's buffers, made and freed around it.  Memory objects and streams are made per call, so concurrent calls of
one compiled function share nothing but the primitive, which oneDNN allows.
oneDNN's threads are OpenMP's: `OMP_NUM_THREADS` sets them.
"""

from __future__ import annotations

import ctypes
import hashlib
import threading
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from typing import Any

import llvmlite.binding as llvm
import numpy as np

from hetero.runtime.native import runtime_ir

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
_LRN_ACROSS_CHANNELS = 0xAFF
ARG_SRC, ARG_SRC_1, ARG_DST, ARG_WEIGHTS, ARG_BIAS = 1, 2, 17, 33, 41
_POST_OP_BASE = 32768
_MAX_NDIMS = 12
_FORMAT_ANY = 1
_QUERY_IMPL_INFO, _QUERY_SRC, _QUERY_WEIGHTS, _QUERY_DST = 8, 129, 131, 133

DTYPES = {"f32": _F32}
"""Element types oneDNN's CPU convolution and matmul compute in."""


def execute_ir() -> str:
    """The LLVM IR of `EXECUTE` (`dnnl.ll`, a template: `MAX_ARGS` filled in)."""
    return runtime_ir("dnnl.ll").replace("{max}", str(MAX_ARGS))


class DnnlUnavailable(RuntimeError):
    """No usable oneDNN; the message says what to install."""


class DnnlError(RuntimeError):
    """oneDNN refused a primitive (shapes, post-ops it has no kernel for)."""


class _StepStruct(ctypes.Structure):
    """A `%step` the runtime function reads: a primitive, its arguments'
    kinds and descriptors, and the slot of each one's buffer."""

    _fields_ = [
        ("primitive", ctypes.c_void_p),
        ("nargs", ctypes.c_int64),
        ("kinds", ctypes.POINTER(ctypes.c_int32)),
        ("descs", ctypes.POINTER(ctypes.c_void_p)),
        ("slots", ctypes.POINTER(ctypes.c_int64)),
    ]


class _PlanStruct(ctypes.Structure):
    """The `%plan` the runtime function reads: its steps, run in order."""

    _fields_ = [
        ("engine", ctypes.c_void_p),
        ("nsteps", ctypes.c_int64),
        ("steps", ctypes.POINTER(_StepStruct)),
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
    """What oneDNN applies to a primitive's result before storing it: adds
    of `Tensor`s (a residual) and relus, in `order`.  An add first is
    oneDNN's `sum` post-op (the addend copied into the destination before
    the primitive runs): its jit kernels take that, where a binary add of a
    whole tensor sends oneDNN 3.2 to its reference convolution, which is
    far slower."""

    order: tuple[str | Tensor, ...] = ()
    """`"relu"` or the tensor added, in program order."""

    def addends(self) -> list[Tensor]:
        return [p for p in self.order if isinstance(p, Tensor)]

    def summed(self) -> Tensor | None:
        """The addend taken as the `sum` post-op."""
        first = self.order[0] if self.order else None
        return first if isinstance(first, Tensor) else None


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
    constant_weights: bool = False
    """The caller passes the weights already in the plan's `weights` layout."""


@dataclass(frozen=True)
class Matmul:
    """`dst = src · weights (+ bias)`, 2-d or batched 3-d; the weights' strides
    say whether they are transposed (a dense's `[N, K]` read as `[K, N]`)."""

    src: Tensor
    weights: Tensor
    bias: Tensor | None
    dst: Tensor
    post_ops: PostOps = PostOps()
    constant_weights: bool = False
    """As `Convolution`'s."""


@dataclass(frozen=True)
class Lrn:
    """Local response normalisation across the channels of NCHW data (odd
    `size`): `src / (bias + alpha / size * sum of src² over size channels) **
    beta`, oneDNN's `lrn_across_channels`."""

    src: Tensor
    size: int
    alpha: float
    beta: float
    bias: float


Spec = Convolution | Matmul | Lrn

BLOCKED_ACTIVATIONS: dict[type[Spec], bool] = {Convolution: True, Matmul: False}
"""Whether oneDNN picks the layout of the primitive's src and dst (then
reordered from and to the program's row-major buffers per call): its
blocked (`nChw16c`) convolutions are faster than its `gemm:jit` one on plain
NCHW, by more than the reorders cost; a matmul is as fast row-major."""


@dataclass
class Plan:
    """The steps computing a spec: its primitive, with reorders around it.

    Compiled code passes a pointer per slot: src, weights, bias (if any),
    dst, each post-op addend, then one per `scratch` size (buffers of the
    call, for blocked copies)."""

    address: int
    """Of the `%plan` struct `hetero_dnnl_execute` reads."""
    impl: str
    """oneDNN's implementation of the primitive (`brgconv:avx512_core`,
    `jit:avx2`, `gemm:jit`; `ref:any` is its slow reference code)."""
    scratch: tuple[int, ...] = ()
    """Bytes of each per-call buffer."""
    weights: tuple[Any, Any] | None = None
    """Where the spec's weights are constant and oneDNN prefers another
    layout: the descriptors of the row-major one and of that one
    (`Dnnl.reordered_weights`)."""
    keep: list[Any] = field(default_factory=list)
    """ctypes objects the struct points into."""


@dataclass
class _Steps:
    """A plan being assembled: slots `0..external-1` are the caller's buffers."""

    library: Dnnl
    external: int
    scratch: list[int] = field(default_factory=list)
    steps: list[tuple[ctypes.c_void_p, list[int], list[Any], list[int]]] = field(
        default_factory=list
    )

    def buffer(self, desc: Any) -> int:
        """A new per-call buffer for `desc`'s layout; its slot."""
        self.scratch.append(self.library.size(desc))
        return self.external + len(self.scratch) - 1

    def step(
        self, primitive: ctypes.c_void_p, args: list[tuple[int, Any, int]]
    ) -> None:
        kinds, descs, slots = zip(*args, strict=True) if args else ((), (), ())
        self.steps.append((primitive, list(kinds), list(descs), list(slots)))

    def reorder(self, src: Any, src_slot: int, dst: Any, dst_slot: int) -> None:
        primitive = self.library.reorder(src, dst)
        self.step(primitive, [(ARG_SRC, src, src_slot), (ARG_DST, dst, dst_slot)])

    def into(self, plain: Any, slot: int, chosen: Any) -> int:
        """The slot holding the caller's buffer `slot` in the `chosen` layout
        (reordered into a per-call buffer first where it differs)."""
        if self.library.equal(plain, chosen):
            return slot
        copy = self.buffer(chosen)
        self.reorder(plain, slot, chosen, copy)
        return copy

    def struct(self, engine: ctypes.c_void_p, keep: list[Any]) -> _PlanStruct:
        array = (_StepStruct * len(self.steps))()
        for i, (primitive, kinds, descs, slots) in enumerate(self.steps):
            k = (ctypes.c_int32 * len(kinds))(*kinds)
            d = (ctypes.c_void_p * len(descs))(*(_address(x) for x in descs))
            s = (ctypes.c_int64 * len(slots))(*slots)
            keep += [k, d, s]
            array[i] = _StepStruct(
                primitive.value,
                len(kinds),
                ctypes.cast(k, ctypes.POINTER(ctypes.c_int32)),
                ctypes.cast(d, ctypes.POINTER(ctypes.c_void_p)),
                ctypes.cast(s, ctypes.POINTER(ctypes.c_int64)),
            )
        keep.append(array)
        return _PlanStruct(engine.value, len(self.steps), array)


def _address(desc: Any) -> int | None:
    return desc.value if isinstance(desc, ctypes.c_void_p) else desc


class Dnnl:
    """The loaded library, its CPU engine and the plans made so far."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lib = ctypes.CDLL(path)
        self.lib.dnnl_primitive_desc_query_md.restype = ctypes.c_void_p
        self.lib.dnnl_primitive_desc_query_md.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
        ]  # fmt: skip
        self.lib.dnnl_memory_desc_get_size.restype = ctypes.c_size_t
        self.lib.dnnl_memory_desc_get_size.argtypes = [ctypes.c_void_p]
        self.lib.dnnl_memory_desc_equal.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.engine = ctypes.c_void_p()
        self._check(
            "dnnl_engine_create", ctypes.byref(self.engine), _CPU, ctypes.c_size_t(0)
        )
        self._plans: dict[Spec, Plan] = {}
        self._weights: dict[tuple[int, bytes], Any] = {}
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

    def _desc(self, tensor: Tensor, chosen: bool = False) -> ctypes.c_void_p:
        """The descriptor of `tensor`'s buffer, or (`chosen`) of its dims in
        the layout the primitive prefers (`format_tag any`)."""
        desc = ctypes.c_void_p()
        dims = (ctypes.c_int64 * _MAX_NDIMS)(*tensor.dims)
        if chosen:
            self._check(
                "dnnl_memory_desc_create_with_tag",
                ctypes.byref(desc), len(tensor.dims), dims, _F32, _FORMAT_ANY,
            )  # fmt: skip
            return desc
        strides = (ctypes.c_int64 * _MAX_NDIMS)(*tensor.row_major_strides())
        self._check(
            "dnnl_memory_desc_create_with_strides",
            ctypes.byref(desc), len(tensor.dims), dims, _F32, strides,
        )  # fmt: skip
        return desc

    def size(self, desc: Any) -> int:
        return self.lib.dnnl_memory_desc_get_size(desc)

    def equal(self, a: Any, b: Any) -> bool:
        return bool(self.lib.dnnl_memory_desc_equal(a, b))

    def reorder(self, src: Any, dst: Any) -> ctypes.c_void_p:
        """The primitive copying a `src`-laid-out buffer into `dst`'s layout."""
        pd, primitive = ctypes.c_void_p(), ctypes.c_void_p()
        self._check(
            "dnnl_reorder_primitive_desc_create",
            ctypes.byref(pd), ctypes.c_void_p(_address(src)), self.engine,
            ctypes.c_void_p(_address(dst)), self.engine, None,
        )  # fmt: skip
        self._check("dnnl_primitive_create", ctypes.byref(primitive), pd)
        return primitive

    def _attr(self, post_ops: PostOps) -> ctypes.c_void_p:
        attr, ops = ctypes.c_void_p(), ctypes.c_void_p()
        self._check("dnnl_primitive_attr_create", ctypes.byref(attr))
        self._check("dnnl_post_ops_create", ctypes.byref(ops))
        for i, op in enumerate(post_ops.order):
            if isinstance(op, Tensor) and i == 0:
                self._check("dnnl_post_ops_append_sum", ops, ctypes.c_float(1.0), 0, 0)
            elif isinstance(op, Tensor):
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

    def plan(self, spec: Spec) -> Plan:
        """The plan computing `spec`, made at the first request (per process)."""
        with self._lock:
            if spec not in self._plans:
                make = self._make_lrn if isinstance(spec, Lrn) else self._make
                self._plans[spec] = make(spec)  # type: ignore[arg-type]
            return self._plans[spec]

    def _impl(self, pd: ctypes.c_void_p) -> str:
        """The implementation oneDNN chose for the primitive descriptor `pd`."""
        info = ctypes.c_char_p()
        self._check(
            "dnnl_primitive_desc_query", pd, _QUERY_IMPL_INFO, 0, ctypes.byref(info)
        )
        return info.value.decode() if info.value else ""

    def _make_lrn(self, spec: Lrn) -> Plan:
        """The LRN primitive on the caller's NCHW src, its dst in the layout
        oneDNN picks (reordered into the caller's buffer where it differs).
        Slots: src, dst."""
        plain = self._desc(spec.src)
        pd, primitive = ctypes.c_void_p(), ctypes.c_void_p()
        self._check(
            "dnnl_lrn_forward_primitive_desc_create",
            ctypes.byref(pd), self.engine, _FORWARD_INFERENCE, _LRN_ACROSS_CHANNELS,
            plain, self._desc(spec.src, True), ctypes.c_int64(spec.size),
            ctypes.c_float(spec.alpha), ctypes.c_float(spec.beta),
            ctypes.c_float(spec.bias), self._attr(PostOps()),
        )  # fmt: skip
        dst = self.lib.dnnl_primitive_desc_query_md(pd, _QUERY_DST, 0)
        self._check("dnnl_primitive_create", ctypes.byref(primitive), pd)
        steps = _Steps(self, 2)
        out = 1 if self.equal(plain, dst) else steps.buffer(dst)
        steps.step(primitive, [(ARG_SRC, plain, 0), (ARG_DST, dst, out)])
        if out != 1:
            steps.reorder(dst, out, plain, 1)
        keep: list[Any] = [pd, plain]
        struct = steps.struct(self.engine, keep)
        keep.append(struct)
        return Plan(
            ctypes.addressof(struct), self._impl(pd), tuple(steps.scratch), None, keep
        )

    def _primitive_desc(
        self, spec: Spec, descs: list[ctypes.c_void_p], bias: Any
    ) -> ctypes.c_void_p:
        src, weights, dst = descs
        attr = self._attr(spec.post_ops)
        pd = ctypes.c_void_p()
        if isinstance(spec, Matmul):
            self._check(
                "dnnl_matmul_primitive_desc_create",
                ctypes.byref(pd), self.engine, src, weights, bias, dst, attr,
            )  # fmt: skip
            return pd

        def pair(*v: int) -> ctypes.Array[ctypes.c_int64]:
            return (ctypes.c_int64 * _MAX_NDIMS)(*v)

        top, left, bottom, right = spec.padding
        self._check(
            "dnnl_convolution_forward_primitive_desc_create",
            ctypes.byref(pd), self.engine, _FORWARD_INFERENCE, _CONVOLUTION_AUTO,
            src, weights, bias, dst, pair(*spec.strides),
            pair(*(d - 1 for d in spec.dilation)), pair(top, left), pair(bottom, right), attr,
        )  # fmt: skip
        return pd

    def _make(self, spec: Spec) -> Plan:
        """The primitive with oneDNN's preferred layouts for the weights (and,
        per `BLOCKED_ACTIVATIONS`, src and dst), and the reorders between
        them and the caller's row-major buffers."""
        blocked = BLOCKED_ACTIVATIONS[type(spec)]
        main = [spec.src, spec.weights, spec.dst]
        plain = [self._desc(t) for t in main]
        bias = self._desc(spec.bias) if spec.bias else None
        pd = self._primitive_desc(
            spec,
            [
                self._desc(t, chosen)
                for t, chosen in zip(main, (blocked, True, blocked))
            ],
            bias,
        )
        src, weights, dst = (
            self.lib.dnnl_primitive_desc_query_md(pd, q, 0)
            for q in (_QUERY_SRC, _QUERY_WEIGHTS, _QUERY_DST)
        )
        primitive = ctypes.c_void_p()
        self._check("dnnl_primitive_create", ctypes.byref(primitive), pd)

        addends = spec.post_ops.addends()
        has_bias = spec.bias is not None
        dst_slot = 2 + has_bias
        steps = _Steps(self, dst_slot + 1 + len(addends))
        src_slot = steps.into(plain[0], 0, src)
        constant = spec.constant_weights and not self.equal(plain[1], weights)
        weights_slot = 1 if constant else steps.into(plain[1], 1, weights)
        out = dst_slot if self.equal(plain[2], dst) else steps.buffer(dst)
        addend_descs = [self._desc(t) for t in addends]
        if spec.post_ops.summed() is not None:
            steps.reorder(addend_descs[0], dst_slot + 1, dst, out)
        adds = [i for i, p in enumerate(spec.post_ops.order) if isinstance(p, Tensor)]
        args = [
            (ARG_SRC, src, src_slot),
            (ARG_WEIGHTS, weights, weights_slot),
            *([(ARG_BIAS, bias, 2)] if has_bias else []),
            (ARG_DST, dst, out),
            *(
                (_POST_OP_BASE * (i + 1) | ARG_SRC_1, desc, dst_slot + 1 + n)
                for n, (i, desc) in enumerate(zip(adds, addend_descs))
                if i > 0
            ),
        ]
        steps.step(primitive, args)
        if out != dst_slot:
            steps.reorder(dst, out, plain[2], dst_slot)
        keep: list[Any] = [pd, plain, bias, addend_descs]
        struct = steps.struct(self.engine, keep)
        keep.append(struct)
        return Plan(
            ctypes.addressof(struct),
            self._impl(pd),
            tuple(steps.scratch),
            (plain[1], weights) if constant else None,
            keep,
        )

    def reordered_weights(self, plan: Plan, weights: Any) -> int:
        """The address of the constant `weights` (a C-contiguous float32
        array of the spec's weights) in `plan.weights`' layout: reordered once
        per process and plan, kept for the life of the process."""
        source = np.ascontiguousarray(weights, dtype=np.float32)
        key = (plan.address, hashlib.sha256(source.data).digest())
        with self._lock:
            if key not in self._weights:
                self._weights[key] = self._reorder_now(plan.weights, source)
            return self._weights[key].ctypes.data

    def _reorder_now(self, descs: tuple[Any, Any], source: Any) -> Any:
        """`source` (laid out as `descs[0]`) copied into a new array laid out
        as `descs[1]`, by a reorder primitive run here."""
        plain, chosen = descs
        target = np.empty(-(-self.size(chosen) // 4), np.float32)
        steps = _Steps(self, 2)
        steps.reorder(plain, 0, chosen, 1)
        keep: list[Any] = []
        struct = steps.struct(self.engine, keep)
        buffers = (ctypes.c_void_p * 2)(source.ctypes.data, target.ctypes.data)
        status = _execute()(ctypes.addressof(struct), buffers)
        if status != 0:
            raise DnnlError(
                f"oneDNN's reorder of constant weights failed (status {status})"
            )
        return target


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
    from hetero.runtime.native import initialize as _initialize

    path = library_path()
    try:
        llvm.load_library_permanently(path)
        library = Dnnl(path)
    except (OSError, RuntimeError) as e:
        raise DnnlUnavailable(f"cannot load {path} ({e}); reinstall: {INSTALL}") from e
    _initialize()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    machine = target.create_target_machine(opt=2, codemodel="jitdefault", jit=True)
    module = llvm.parse_assembly(execute_ir())
    module.verify()
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    llvm.add_symbol(EXECUTE, engine.get_function_address(EXECUTE))
    engine.detach()
    return library


@cache
def _execute() -> Any:
    """`hetero_dnnl_execute` callable from Python (compile-time reorders)."""
    load_dnnl()
    address = llvm.address_of_symbol(EXECUTE)
    return ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)(address)
