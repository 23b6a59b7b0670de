"""Random relay programs of the heavy and shape-changing ops, compiled with
`hetero.compile` for several `llvm` target variants and compared with two
oracles: the reference interpreter and a float64 NumPy evaluation written
here (direct formulas, independent of both).

A seeded generator builds each program as text and evaluates it at once:
every step applies one op to the running value (new operands are
parameters or constants), records its relay line and its float64 value, and
carries an estimate of the float32 rounding error that the compiled code may
accumulate, which scales the tolerance with each reduction's depth.  The
suite runs `HETERO_DIFF_COUNT` programs (default small enough for CI); set
it to a few hundred for a campaign.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from itertools import product

import isas
import numpy as np
import pytest

import hetero
from hetero.context import parse_module
from hetero.interpreter.relay import run
from hetero.utils.programs import tensor

COUNT = int(os.environ.get("HETERO_DIFF_COUNT", "24"))
EPS = 2.0**-24
"""The unit roundoff of float32."""
Ints = list[int] | tuple[int, ...]

VARIANTS = {
    "llvm": "",
    "avx2": isas.options("avx2"),
    "threads1": "num_threads = 1",
    "nchwc": 'data_layout = "NCHWc"',
}
"""`llvm` target options per variant; program `i` compiles for variant `i % 4`."""


@dataclass
class Value:
    """A relay value: its SSA name, float64 oracle value and error estimate."""

    name: str
    array: np.ndarray
    err: float

    @property
    def shape(self) -> tuple[int, ...]:
        return self.array.shape

    @property
    def type(self) -> str:
        return tensor(*self.shape)


class Rejected(Exception):
    """A drawn op that this value cannot take; the generator draws another."""


def _window(size: int, pad: int, kernel: int, stride: int, dilation: int) -> int:
    """The output length of a convolution or pooling window along one axis."""
    return (size + pad - dilation * (kernel - 1) - 1) // stride + 1


def conv2d(
    x: np.ndarray,
    w: np.ndarray,
    strides: Ints,
    padding: Ints,
    dilation: Ints,
    groups: int,
) -> np.ndarray:
    """NCHW × OIHW convolution: one einsum per group and kernel tap."""
    (sh, sw), (dh, dw), (pt, pl, pb, pr) = strides, dilation, padding
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh, ow = _window(h, pt + pb, kh, sh, dh), _window(wd, pl + pr, kw, sw, dw)
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    og = o // groups
    out = np.zeros((n, o, oh, ow))
    for g, ky, kx in product(range(groups), range(kh), range(kw)):
        patch = xp[:, g * cg : (g + 1) * cg, ky * dh :: sh, kx * dw :: sw][
            :, :, :oh, :ow
        ]
        out[:, g * og : (g + 1) * og] += np.einsum(
            "nchw,oc->nohw", patch, w[g * og : (g + 1) * og, :, ky, kx]
        )
    return out


def conv2d_transpose(
    x: np.ndarray,
    w: np.ndarray,
    strides: Ints,
    padding: Ints,
    dilation: Ints,
    output_padding: Ints,
    groups: int,
) -> np.ndarray:
    """IOHW transposed convolution: each input pixel scatters its kernel into
    the full result, which is then cropped by `padding` (output_padding rows
    past the full result are zero)."""
    (sh, sw), (dh, dw), (pt, pl, pb, pr) = strides, dilation, padding
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    cg = c // groups
    fh = (h - 1) * sh + dh * (kh - 1) + 1 + output_padding[0]
    fw = (wd - 1) * sw + dw * (kw - 1) + 1 + output_padding[1]
    full = np.zeros((n, og * groups, fh, fw))
    for g, ky, kx in product(range(groups), range(kh), range(kw)):
        full[
            :,
            g * og : (g + 1) * og,
            ky * dh : ky * dh + sh * (h - 1) + 1 : sh,
            kx * dw : kx * dw + sw * (wd - 1) + 1 : sw,
        ] += np.einsum(
            "nchw,co->nohw",
            x[:, g * cg : (g + 1) * cg],
            w[g * cg : (g + 1) * cg, :, ky, kx],
        )
    return full[:, :, pt : fh - pb, pl : fw - pr]


def pool2d(
    x: np.ndarray,
    kind: str,
    size: Ints,
    strides: Ints,
    padding: Ints,
    dilation: Ints,
    ceil_mode: bool,
    count_include_pad: bool,
) -> np.ndarray:
    """Max or average pooling over the taps of each window (NaN marks a tap
    outside the input; outside the padding too past the end in ceil mode)."""
    (kh, kw), (sh, sw), (dh, dw), (pt, pl, pb, pr) = size, strides, dilation, padding
    h, wd = x.shape[2:]
    extra = [s - 1 if ceil_mode else 0 for s in (sh, sw)]
    oh = _window(h, pt + pb + extra[0], kh, sh, dh)
    ow = _window(wd, pl + pr + extra[1], kw, sw, dw)
    bottom = max(0, (oh - 1) * sh + dh * (kh - 1) + 1 - h - pt)
    right = max(0, (ow - 1) * sw + dw * (kw - 1) + 1 - wd - pl)
    xp = np.pad(x, ((0, 0), (0, 0), (pt, bottom), (pl, right)), constant_values=np.nan)
    inside = np.zeros(xp.shape[2:], bool)
    inside[: pt + h + pb, : pl + wd + pr] = True
    taps = [
        (
            xp[:, :, ky * dh :: sh, kx * dw :: sw][:, :, :oh, :ow],
            inside[ky * dh :: sh, kx * dw :: sw][:oh, :ow],
        )
        for ky, kx in product(range(kh), range(kw))
    ]
    values = np.stack([t for t, _ in taps])
    valid = ~np.isnan(values)
    if not valid.any(axis=0).all():
        raise Rejected("a window of padding only")
    if kind == "max":
        return np.nanmax(values, axis=0)
    count = (
        np.stack([i for _, i in taps]).sum(axis=0)
        if count_include_pad
        else valid.sum(axis=0)
    )
    return np.nansum(values, axis=0) / count


def softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _ints(values: Ints | np.ndarray) -> str:
    return "array<i64: " + ", ".join(str(int(v)) for v in values) + ">"


def _dense(array: np.ndarray, dtype: str) -> str:
    """A `dense<...>` literal of `array`'s values."""

    def nested(a: np.ndarray) -> str:
        if a.ndim == 0:
            return repr(a.item())
        return "[" + ", ".join(nested(r) for r in a) + "]"

    return f"dense<{nested(array)}> : {tensor(*array.shape, dtype=dtype)}"


@dataclass
class Program:
    """A program under construction: its parameters (with their inputs), its
    lines and its running value."""

    rng: np.random.Generator
    params: list[Value] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    counter: int = 0

    def param(self, shape: tuple[int, ...]) -> Value:
        array = self.rng.uniform(-1, 1, shape).astype(np.float32).astype(np.float64)
        value = Value(f"%p{len(self.params)}", array, 0.0)
        self.params.append(value)
        return value

    def emit(self, text: str, array: np.ndarray, err: float) -> Value:
        self.counter += 1
        value = Value(f"%v{self.counter}", array, err)
        self.lines.append(f"{value.name} = {text}")
        return value

    def int(self, low: int, high: int) -> int:
        """A random integer in [low, high]."""
        return int(self.rng.integers(low, high + 1))

    def text(self, result: Value, options: str) -> str:
        params = ", ".join(f"{p.name}: {p.type}" for p in self.params)
        target = f'#target.target<"llvm"{", {" + options + "}" if options else ""}>'
        body = "\n    ".join(self.lines)
        return (
            f"builtin.module attributes {{target.config = #target.config<[{target}]>}} {{\n"
            f"  relay.func @main({params}) -> {result.type} {{\n    {body}\n"
            f"    relay.return {result.name} : {result.type}\n  }}\n}}\n"
        )

    # -- ops: each takes the running value and returns the next ------------

    def _conv_window(
        self, x: Value
    ) -> tuple[int, int, int, list[int], list[int], list[int]]:
        """Groups (any divisor of the channels: depthwise too), kernel size,
        strides, dilation and padding of a random convolution of `x`."""
        if x.array.ndim != 4:
            raise Rejected("a convolution needs NCHW")
        c = x.shape[1]
        groups = int(self.rng.choice([g for g in range(1, c + 1) if c % g == 0]))
        kh, kw = self.int(1, 3), self.int(1, 3)
        strides = [self.int(1, 2), self.int(1, 2)]
        dilation = [self.int(1, 2), self.int(1, 2)]
        padding = [self.int(0, k - 1) for k in (kh, kw, kh, kw)]
        return groups, kh, kw, strides, dilation, padding

    def _convolution(
        self,
        op: str,
        x: Value,
        weight: Value,
        array: np.ndarray,
        groups: int,
        **lists: Ints,
    ) -> Value:
        """Emits a convolution of `lists` attributes; its reduction runs over
        the group's channels and the kernel's taps."""
        attrs = ", ".join(f"{k} = {_ints(v)}" for k, v in lists.items())
        depth = x.shape[1] // groups * weight.shape[2] * weight.shape[3]
        return self.emit(
            f"relay.nn.{op} {x.name}, {weight.name} {{{attrs}, groups = {groups} : i64}} : "
            f"({x.type}, {weight.type}) -> {tensor(*array.shape)}",
            array,
            _reduction_err(x, depth),
        )

    def conv2d(self, x: Value) -> Value:
        groups, kh, kw, strides, dilation, padding = self._conv_window(x)
        _fits(x, (kh, kw), padding, dilation)
        weight = self.param((groups * self.int(1, 3), x.shape[1] // groups, kh, kw))
        array = conv2d(x.array, weight.array, strides, padding, dilation, groups)
        return self._convolution(
            "conv2d",
            x,
            weight,
            array,
            groups,
            strides=strides,
            padding=padding,
            dilation=dilation,
        )

    def conv2d_transpose(self, x: Value) -> Value:
        groups, kh, kw, strides, dilation, padding = self._conv_window(x)
        output_padding = [self.int(0, max(s, d) - 1) for s, d in zip(strides, dilation)]
        weight = self.param((x.shape[1], self.int(1, 3), kh, kw))
        array = conv2d_transpose(
            x.array, weight.array, strides, padding, dilation, output_padding, groups
        )
        if 0 in array.shape:
            raise Rejected("cropped to nothing")
        return self._convolution(
            "conv2d_transpose",
            x,
            weight,
            array,
            groups,
            strides=strides,
            padding=padding,
            dilation=dilation,
            output_padding=output_padding,
        )

    def pool2d(self, x: Value) -> Value:
        if x.array.ndim != 4:
            raise Rejected("pooling needs NCHW")
        kind = str(self.rng.choice(["max", "avg"]))
        size = [self.int(1, 3), self.int(1, 3)]
        strides, dilation = (
            [self.int(1, 2), self.int(1, 2)],
            [self.int(1, 2), self.int(1, 2)],
        )
        padding = [self.int(0, size[i % 2] // 2) for i in range(4)]
        ceil_mode = bool(self.rng.integers(2))
        count_include_pad = (
            kind == "avg" and not ceil_mode and bool(self.rng.integers(2))
        )
        _fits(x, size, padding, dilation)
        array = pool2d(
            x.array,
            kind,
            size,
            strides,
            padding,
            dilation,
            ceil_mode,
            count_include_pad,
        )
        attrs = [
            f"pool_size = {_ints(size)}",
            f"strides = {_ints(strides)}",
            f"padding = {_ints(padding)}",
            f"dilation = {_ints(dilation)}",
        ]
        attrs += ["ceil_mode = true"] * ceil_mode + [
            "count_include_pad = true"
        ] * count_include_pad
        err = x.err + (4 * EPS * np.abs(x.array).max() if kind == "avg" else 0.0)
        return self.emit(
            f"relay.nn.{kind}_pool2d {x.name} {{{', '.join(attrs)}}} : ({x.type}) -> {tensor(*array.shape)}",
            array,
            err,
        )

    def dense(self, x: Value) -> Value:
        if x.array.ndim != 2:
            x = self._reshape(x, (x.shape[0], -1))
        k = x.shape[1]
        weight = self.param((self.int(1, 12), k))
        array = x.array @ weight.array.T
        return self.emit(
            f"relay.nn.dense {x.name}, {weight.name} : ({x.type}, {weight.type}) -> {tensor(*array.shape)}",
            array,
            _reduction_err(x, k),
        )

    def matmul(self, x: Value) -> Value:
        if x.array.ndim < 2:
            raise Rejected("matmul needs rank 2")
        *batch, _, k = x.shape
        batch = [d if self.rng.integers(2) else 1 for d in batch][
            self.int(0, len(batch)) :
        ]
        other = self.param((*batch, k, self.int(1, 9)))
        array = np.matmul(x.array, other.array)
        return self.emit(
            f"relay.matmul {x.name}, {other.name} : ({x.type}, {other.type}) -> {tensor(*array.shape)}",
            array,
            _reduction_err(x, k),
        )

    def softmax(self, x: Value) -> Value:
        axis = self.int(-x.array.ndim, x.array.ndim - 1)
        array = softmax(x.array, axis)
        err = 2 * x.err + 8 * EPS * x.shape[axis]
        return self.emit(
            f"relay.nn.softmax {x.name} {{axis = {axis} : i64}} : {x.type}", array, err
        )

    def concatenate(self, x: Value) -> Value:
        axis = self.int(0, x.array.ndim - 1)
        shape = list(x.shape)
        shape[axis] = self.int(1, 3)
        other = self.param(tuple(shape))
        pair = [x, other] if self.rng.integers(2) else [other, x]
        array = np.concatenate([v.array for v in pair], axis=axis)
        return self.emit(
            f"relay.concatenate {pair[0].name}, {pair[1].name} {{axis = {axis} : i64}} : "
            f"({pair[0].type}, {pair[1].type}) -> {tensor(*array.shape)}",
            array,
            x.err,
        )

    def _reshape(self, x: Value, newshape: tuple[int, ...]) -> Value:
        array = x.array.reshape(
            [d if d else x.shape[i] for i, d in enumerate(newshape)]
        )
        return self.emit(
            f"relay.reshape {x.name} {{newshape = {_ints(newshape)}}} : ({x.type}) -> {tensor(*array.shape)}",
            array,
            x.err,
        )

    def reshape(self, x: Value) -> Value:
        """A random factorisation of the element count, with a `-1` or a
        `0` (the input's dimension) in it at times."""
        total, dims = x.array.size, []
        for _ in range(self.int(0, 3)):
            divisors = [d for d in range(1, total + 1) if total % d == 0]
            dims.append(int(self.rng.choice(divisors)))
            total //= dims[-1]
        dims.append(total)
        dims = [int(d) for d in self.rng.permutation(dims)]
        special = self.int(0, 2)
        if special == 1:
            dims[self.int(0, len(dims) - 1)] = -1
        elif special == 2 and dims[0] == x.shape[0]:
            dims[0] = 0
        return self._reshape(x, tuple(dims))

    def transpose(self, x: Value) -> Value:
        axes = [int(a) for a in self.rng.permutation(x.array.ndim)]
        array = x.array.transpose(axes)
        return self.emit(
            f"relay.transpose {x.name} {{axes = {_ints(axes)}}} : ({x.type}) -> {tensor(*array.shape)}",
            array,
            x.err,
        )

    def _broadcastable(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """`shape` with some dims 1 and some leading dims dropped."""
        dims = [d if self.rng.integers(3) else 1 for d in shape]
        return tuple(dims[self.int(0, len(dims)) :])

    def binary(self, x: Value) -> Value:
        op = str(self.rng.choice(["add", "subtract", "multiply", "maximum", "minimum"]))
        other = self.param(self._broadcastable(x.shape))
        lhs, rhs = (x, other) if self.rng.integers(2) else (other, x)
        function = {
            "add": np.add,
            "subtract": np.subtract,
            "multiply": np.multiply,
            "maximum": np.maximum,
            "minimum": np.minimum,
        }[op]
        array = function(lhs.array, rhs.array)
        err = x.err + 2 * EPS * np.abs(array).max()
        return self.emit(
            f"relay.{op} {lhs.name}, {rhs.name} : ({lhs.type}, {rhs.type}) -> {tensor(*array.shape)}",
            array,
            err,
        )

    def unary(self, x: Value) -> Value:
        op, function = [
            ("relu", lambda a: np.maximum(a, 0)),
            ("tanh", np.tanh),
            ("sigmoid", lambda a: 1 / (1 + np.exp(-a))),
            ("negative", np.negative),
        ][self.int(0, 3)]
        array = function(x.array)
        return self.emit(
            f"relay.{op} {x.name} : {x.type}",
            array,
            x.err + 8 * EPS * np.abs(array).max(),
        )

    def pad(self, x: Value) -> Value:
        mode = str(self.rng.choice(["constant", "edge", "reflect"]))
        top = 1 if mode == "reflect" else 2
        widths = [
            [self.int(0, min(top, d - 1) if mode == "reflect" else top) for _ in "ab"]
            for d in x.shape
        ]
        value = float(self.rng.choice([0.0, 0.5, -2.0]))
        if mode == "constant":
            array = np.pad(x.array, widths, constant_values=value)
        else:
            array = np.pad(x.array, widths, mode=mode)
        attrs = f'pad_width = {_ints(np.ravel(widths))}, pad_value = {value}, pad_mode = "{mode}"'
        return self.emit(
            f"relay.nn.pad {x.name} {{{attrs}}} : ({x.type}) -> {tensor(*array.shape)}",
            array,
            x.err,
        )

    def take(self, x: Value) -> Value:
        """Indices include negative and out-of-range ones (clamped)."""
        axis = self.int(0, x.array.ndim - 1)
        size = x.shape[axis]
        shape = tuple(self.int(1, 3) for _ in range(self.int(1, 2)))
        indices = self.rng.integers(-size - 2, size + 2, shape)
        clamped = np.clip(np.where(indices < 0, indices + size, indices), 0, size - 1)
        constant = self.emit(f"relay.constant {_dense(indices, 'i64')}", indices, 0.0)
        array = np.take(x.array, clamped, axis=axis)
        return self.emit(
            f"relay.take {x.name}, {constant.name} {{axis = {axis} : i64}} : "
            f"({x.type}, {tensor(*shape, dtype='i64')}) -> {tensor(*array.shape)}",
            array,
            x.err,
        )

    def cast(self, x: Value) -> Value:
        """A round trip through f16 (or f64): the rounding is the oracle's."""
        dtype, np_type = [("f16", np.float16), ("f64", np.float64)][self.int(0, 1)]
        narrow = f"relay.cast {x.name} {{dtype = {dtype}}} : ({x.type}) -> {tensor(*x.shape, dtype=dtype)}"
        self.counter += 1
        mid = f"%v{self.counter}"
        self.lines.append(f"{mid} = {narrow}")
        array = x.array.astype(np.float32).astype(np_type).astype(np.float64)
        err = x.err * 2 + (2.0**-11 * np.abs(array).max() if dtype == "f16" else 0.0)
        return self.emit(
            f"relay.cast {mid} {{dtype = f32}} : ({tensor(*x.shape, dtype=dtype)}) -> {x.type}",
            array,
            err,
        )

    def where(self, x: Value) -> Value:
        """The condition compares two parameters (exact, so no tap flips)."""
        a, b = (
            self.param(self._broadcastable(x.shape)),
            self.param(self._broadcastable(x.shape)),
        )
        cond_shape = np.broadcast_shapes(a.shape, b.shape)
        cond = self.emit(
            f"relay.greater {a.name}, {b.name} : ({a.type}, {b.type}) -> {tensor(*cond_shape, dtype='i1')}",
            a.array > b.array,
            0.0,
        )
        other = self.param(self._broadcastable(x.shape))
        pair = [x, other] if self.rng.integers(2) else [other, x]
        array = np.where(cond.array, pair[0].array, pair[1].array)
        return self.emit(
            f"relay.where {cond.name}, {pair[0].name}, {pair[1].name} : "
            f"({tensor(*cond_shape, dtype='i1')}, {pair[0].type}, {pair[1].type}) -> {tensor(*array.shape)}",
            array,
            x.err,
        )


def _fits(x: Value, kernel: Ints, padding: Ints, dilation: Ints) -> None:
    """Rejects a dilated window larger than the padded image."""
    for axis in range(2):
        padded = x.shape[2 + axis] + padding[axis] + padding[2 + axis]
        if padded < dilation[axis] * (kernel[axis] - 1) + 1:
            raise Rejected("window larger than the input")


def _reduction_err(x: Value, depth: int) -> float:
    """A float32 reduction of `depth` products of `x` by weights in [-1, 1]:
    the input's error summed `depth` times, and a rounding per addition."""
    return depth * (x.err + 2 * EPS * float(np.abs(x.array).max()))


IMAGE_OPS = [Program.conv2d, Program.conv2d, Program.conv2d_transpose, Program.pool2d]
"""The ops of NCHW images, one of which opens every program."""
OPS = [
    *IMAGE_OPS,
    Program.pool2d,
    Program.dense,
    Program.matmul,
    Program.softmax,
    Program.concatenate,
    Program.reshape,
    Program.transpose,
    Program.binary,
    Program.unary,
    Program.pad,
    Program.take,
    Program.cast,
    Program.where,
]


def generate(seed: int) -> tuple[Program, Value]:
    """A program of an image op and up to four more on an NCHW parameter."""
    program = Program(np.random.default_rng(seed))
    x = program.param(
        (program.int(1, 2), program.int(1, 6), program.int(3, 8), program.int(3, 8))
    )
    for step in range(program.int(1, 5)):
        ops = OPS if step else IMAGE_OPS
        for _attempt in range(20):
            op = ops[program.int(0, len(ops) - 1)]
            mark = (len(program.lines), len(program.params), program.counter)
            try:
                x = op(program, x)
                break
            except Rejected:
                del program.lines[mark[0] :], program.params[mark[1] :]
                program.counter = mark[2]
    return program, x


def _assert_close(
    got: np.ndarray, expected: np.ndarray, err: float, what: str, text: str
) -> None:
    tolerance = 4 * err + 1e-6 + 1e-5 * np.abs(expected)
    bad = np.abs(got.astype(np.float64) - expected) > tolerance
    assert got.shape == expected.shape, (
        f"{what}: shape {got.shape} != {expected.shape}\n{text}"
    )
    assert not bad.any(), (
        f"{what}: {bad.sum()} of {bad.size} differ, max error "
        f"{np.abs(got - expected).max():.3g} (tolerance {4 * err + 1e-6:.3g})\n{text}"
    )


@pytest.mark.parametrize("seed", range(COUNT))
def test_compiled_matches_interpreter_and_numpy(seed: int) -> None:
    """Program `seed`, compiled for variant `seed % 4`, against both oracles."""
    variant = list(VARIANTS)[seed % len(VARIANTS)]
    if variant == "avx2" and not isas.runs_here("avx2"):
        pytest.skip("no AVX2 here")
    program, result = generate(seed)
    text = program.text(result, VARIANTS[variant])
    inputs = [p.array.astype(np.float32) for p in program.params]
    interpreted = np.asarray(run(parse_module(text), *inputs))
    compiled = np.asarray(hetero.compile(text)(*inputs))
    _assert_close(interpreted, result.array, result.err, "interpreter vs NumPy", text)
    _assert_close(
        compiled, result.array, result.err, f"compiled ({variant}) vs NumPy", text
    )
    _assert_close(
        compiled,
        interpreted.astype(np.float64),
        2 * result.err,
        f"compiled ({variant}) vs interpreter",
        text,
    )
