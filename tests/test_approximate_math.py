"""`approximate-math`'s f32 `exp`, `log`, `erf`, `tanh` (and relay's sigmoid,
built on `exp`), run natively on every binade of f32 (denormals included),
±0, ±inf and NaN, against NumPy in float64.  The bounds are those
docs/lowering.md states."""

import math

import llvmlite.binding as llvm
import numpy as np
import pytest

import hetero
from hetero.context import parse_module
from hetero.lowering.approximate_math import ApproximateMathPass, math_isa
from hetero.lowering.llvm_codegen import compile_llvm
from hetero.lowering.pipeline import lower_to_llvm
from hetero.runtime.cpu import CpuMachine
from hetero.utils.diagnostics import HeteroError

MAX_ULPS = {"exp": 1.5, "log": 1.0, "tanh": 1.5, "erf": 1.5, "sigmoid": 2.5}
"""The documented bounds, in units in the last place of the correctly
rounded result (below 2^-126: of 2^-149, denormals being exact to that)."""

REFERENCES = {
    "exp": np.exp,
    "log": np.log,
    "tanh": np.tanh,
    "erf": np.vectorize(math.erf, otypes=[np.float64]),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
}
"""Float64 references (NumPy has no erf; the relay interpreter's is Python's)."""

SPECIAL = [0.0, np.inf, np.nan, 2.0**-149, 2.0**-126, np.finfo(np.float32).max]


def every_binade(per_binade: int, seed: int = 0) -> np.ndarray:
    """`per_binade` random significands for each exponent of f32 (the
    denormals' too), with both signs, and `SPECIAL` with both signs."""
    exponents = np.arange(255, dtype=np.uint32)[:, None] << 23
    rng = np.random.default_rng(seed)
    significands = rng.integers(0, 1 << 23, (255, per_binade), dtype=np.uint32)
    positive = (exponents | significands).ravel().view(np.float32)
    special = np.array(SPECIAL, np.float32)
    return np.concatenate([positive, -positive, special, -special])


def ulp_error(got: np.ndarray, x: np.ndarray, name: str) -> np.ndarray:
    """|got - f(x)| in ulps of f(x) in f32; 0 where both are the same NaN or
    infinity, inf where only one is."""
    with np.errstate(all="ignore"):
        want = REFERENCES[name](x.astype(np.float64))
        want32 = want.astype(np.float32)
        exponent = np.floor(np.log2(np.maximum(np.abs(want), 2.0**-149)))
        error = np.abs(got - want) / 2.0 ** np.maximum(exponent - 23, -149)
    same = (np.isnan(got) & np.isnan(want32)) | (np.isinf(want32) & (got == want32))
    error[same] = 0.0
    error[np.isnan(error)] = np.inf
    return error


def assert_within_bound(got: np.ndarray, x: np.ndarray, name: str) -> None:
    got, x = got.ravel(), x.ravel()
    error = ulp_error(got, x, name)
    worst = int(np.argmax(error))
    assert error[worst] <= MAX_ULPS[name], (
        f"{name}({x[worst]!r}) = {got[worst]!r}: {error[worst]:.2f} ulps"
    )
    if name in ("tanh", "erf"):  # odd: -0 stays -0
        number = ~np.isnan(x)
        assert np.array_equal(np.signbit(got[number]), np.signbit(x[number]))


@pytest.mark.parametrize("name", list(MAX_ULPS))
def test_relay_op_over_every_binade(name: str) -> None:
    """Through `hetero.compile`: rows of 1021, a vectorized loop and its rest."""
    x = every_binade(512)
    x = np.resize(x, (-(-len(x) // 1021), 1021))
    t = f"tensor<{x.shape[0]}x1021xf32>"
    text = (
        f"relay.func @main(%x: {t}) -> {t} {{\n"
        f"  %r = relay.{name} %x : {t}\n  relay.return %r : {t}\n}}"
    )
    assert_within_bound(hetero.compile(text)(x), x, name)


KERNEL = """
func.func @{name}_{lanes}(%x: memref<?xf32>, %y: memref<?xf32>) {{
  %c0 = arith.constant 0 : index
  %step = arith.constant {lanes} : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %step {{
    %v = {load}
    %r = math.{name} %v : {type}
    {store}
  }}
  return
}}
"""

LANES = (1, 4, 8, 16)
"""Scalars, SSE-, AVX2- and AVX-512-wide vectors."""


def kernel(name: str, lanes: int) -> str:
    if lanes == 1:
        load, store, type = (
            "memref.load %x[%i] : memref<?xf32>",
            "memref.store %r, %y[%i] : memref<?xf32>",
            "f32",
        )
    else:
        type = f"vector<{lanes}xf32>"
        load = f"vector.load %x[%i] : memref<?xf32>, {type}"
        store = f"vector.store %r, %y[%i] : memref<?xf32>, {type}"
    return KERNEL.format(name=name, lanes=lanes, load=load, store=store, type=type)


HOST_FEATURES = llvm.get_host_cpu_features()
HOST_AVX512 = bool(HOST_FEATURES.get("avx512f"))
HOST_ISA = "avx2" if HOST_FEATURES.get("avx2") and HOST_FEATURES.get("fma") else None
"""The host's ISA of `approximate-math` without AVX-512."""


@pytest.mark.parametrize(
    ("options", "isa"),
    [
        ({}, None),
        ({"mcpu": "x86-64", "mattr": "-fma,-avx"}, None),
        pytest.param(
            {},
            "avx512",
            marks=pytest.mark.skipif(
                not HOST_AVX512, reason="runs AVX-512 code: the host has no avx512f"
            ),
        ),
        pytest.param(
            {"mattr": "-avx512f"},
            "avx2",
            marks=pytest.mark.skipif(
                HOST_ISA is None and not HOST_AVX512,
                reason="runs AVX2 code: the host has no avx2 and fma",
            ),
        ),
    ],
    ids=["host", "without-fma", "avx512", "avx2"],
)
def test_math_ops_of_any_width(options: dict[str, str], isa: str | None) -> None:
    """The same bounds for scalars and vectors, with and without FMA, and
    with AVX-512's and AVX2's code for their vectors (16 and 8 lanes)."""
    names = ("exp", "log", "tanh", "erf")
    text = "".join(kernel(name, lanes) for name in names for lanes in LANES)
    module = compile_llvm(lower_to_llvm(parse_module(text), isa=isa), **options)
    x = every_binade(64, seed=1)
    x = np.concatenate([x, np.zeros(-len(x) % max(LANES), np.float32)])
    for name in names:
        for lanes in LANES:
            y = np.empty_like(x)
            module.function(f"{name}_{lanes}")(x, y)
            assert_within_bound(y, x, name)


def test_avx2_instructions() -> None:
    """`isa="avx2"` code for a Haswell (on any host: not run): tanh and erf
    look their coefficients up in registers, without exp or division."""
    text = "".join(kernel(name, 8) for name in ("tanh", "erf"))
    module = compile_llvm(lower_to_llvm(parse_module(text), isa="avx2"), mcpu="haswell")
    assembly = module.assembly()
    assert "vperm" in assembly
    assert "div" not in assembly
    assert "call" not in assembly


def test_avx512_instructions() -> None:
    """`isa="avx512"` code for a Zen 4 (on any host: not run): table
    lookups in registers, exp's scaling one instruction, tanh without a
    division, and no call of libm."""
    text = "".join(kernel(name, 16) for name in ("exp", "tanh", "erf"))
    module = compile_llvm(
        lower_to_llvm(parse_module(text), isa="avx512"), mcpu="znver4"
    )
    assembly = module.assembly()
    for instruction in ("vperm", "vscalefps"):
        assert instruction in assembly
    assert "div" not in assembly
    assert "call" not in assembly


@pytest.mark.parametrize(
    ("mcpu", "mattr", "isa"),
    [
        ("x86-64", "+avx512f", "avx512"),
        ("x86-64", "+avx2,+fma", "avx2"),
        ("x86-64", "+avx2", None),  # no FMA
        ("x86-64", None, None),  # its default features are not asked of LLVM
        (None, None, "avx512" if HOST_AVX512 else HOST_ISA),  # the host's
        (None, "-avx512f", HOST_ISA),
    ],
)
def test_math_isa(mcpu: str | None, mattr: str | None, isa: str | None) -> None:
    """The ISA comes from the target's features (the host's for its CPU)."""
    assert math_isa(CpuMachine(mcpu, mattr)) == isa


def test_unknown_isa() -> None:
    with pytest.raises(HeteroError, match="no ISA 'sse9'"):
        ApproximateMathPass(isa="sse9")
