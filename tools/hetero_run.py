"""`hetero-run`: run a relay function of a `.mlir` file on given or random inputs.

By default it runs the NumPy reference interpreter (`hetero.interpreter.relay`),
the semantics every compiled result is checked against.  `--compile` compiles
the program with `hetero.compile` and runs the native code instead; `--check`
does both and compares (exit status 1 on a mismatch); on a module imported
from ONNX (`hetero-import-onnx`) it also compares the native results with
onnxruntime's for that model, where onnxruntime is installed.  It prints
each result's shape, dtype and a checksum, and the times.

    hetero-run model.mlir --random [--seed 0] [--entry main] [--output out.npz]
    hetero-run model.mlir --inputs in.npz          # arrays arg0, arg1, ... (or by name)
    hetero-run model.mlir --random --compile [--repeat 10] [--targets llvm]
    hetero-run model.mlir --random --check [--rtol 1e-4 --atol 1e-5]
    hetero-run model.mlir --random --profile [--repeat 10]   # time per kernel
    hetero-run model.mlir --random --profile --trace run.json  # Chrome trace
    hetero-run model.hetero --random [--timing]     # a compiled model (hetero-compile)
    hetero-run model.hetero --random --shape input_ids=1,37   # sizes for its ? dims

`--profile` compiles and replays the host function kernel by kernel
(`CompiledFunction.profile`), printing each kernel's calls and time, the
costliest first; `--trace FILE` (implies `--profile`) also writes those
kernel calls as a Chrome trace (chrome://tracing, Perfetto).  `--timing` prints the seconds of each compilation stage
(`CompiledFunction.timings`).  A `.hetero` file (`hetero-compile`,
docs/deployment.md) is run natively as it was compiled: no relay program to
interpret, check or profile; one compiled once for dynamic input dimensions
takes its inputs from `--inputs`, at any sizes its rules admit.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import math
import statistics
import sys
import time
import zipfile
import zlib
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType, TupleType
from xdsl.ir import Attribute

from hetero.context import parse_module
from hetero.dialects.relay import DYNAMIC, FuncOp
from hetero.interpreter.relay import InterpreterError, element_dtype, run
from hetero.tools.hetero_import_onnx import add_shape_argument, shapes_of
from hetero.utils import progress
from hetero.utils.diagnostics import HeteroError, run_tool
from hetero.utils.files import write_output


class RunError(Exception):
    """A problem with the inputs or the invocation."""


def entry_function(module: ModuleOp, name: str) -> FuncOp:
    """`@name`, which must return tensors (or tuples of them): what is printed."""
    for op in module.ops:
        if isinstance(op, FuncOp) and op.sym_name.data == name:
            if not all(_holds_tensors(t) for t in op.function_type.outputs):
                raise HeteroError(
                    f"@{name} returns {op.function_type.outputs.data[0]}: hetero-run runs "
                    "functions returning tensors or tuples of them",
                    op,
                )
            return op
    raise RunError(f"no relay.func @{name} in the module")


def _holds_tensors(type_: Attribute) -> bool:
    if isinstance(type_, TupleType):
        return all(_holds_tensors(t) for t in type_.types)
    return isinstance(type_, TensorType)


def random_inputs(
    func: FuncOp, seed: int, shapes: dict[str, tuple[int, ...]] | None = None
) -> list[np.ndarray]:
    """Standard-normal data (booleans: random bits) for every tensor
    parameter, of its static shape or the one `shapes` gives its name."""
    rng = np.random.default_rng(seed)
    inputs = []
    for arg in func.args:
        t = arg.type
        if not isinstance(t, TensorType):
            raise RunError(
                f"--random makes tensors; {arg.name_hint or arg.index} is {t}"
            )
        name = arg.name_hint or f"arg{arg.index}"
        shape = random_shape(name, tuple(t.get_shape()), shapes or {})
        inputs.append(_random_array(rng, shape, element_dtype(t.element_type)))
    return inputs


def random_shape(
    name: str, declared: tuple[int, ...], shapes: dict[str, tuple[int, ...]]
) -> tuple[int, ...]:
    """The shape of input `name`'s random data: `--shape`'s, which must fit
    the declared one (`?` any size), else the declared one, which must then
    be static."""
    text = "x".join("?" if d < 0 else str(d) for d in declared)
    if name not in shapes:
        if any(d < 0 for d in declared):
            raise RunError(
                f"--random needs a size for each ? dimension: {name} is {text}; give "
                f"--shape {name}=D,D,... or the inputs with --inputs FILE.npz"
            )
        return declared
    shape = shapes[name]
    if len(shape) != len(declared) or any(
        d >= 0 and d != n for d, n in zip(declared, shape)
    ):
        raise RunError(f"--shape {name}: {list(shape)} does not fit {text}")
    return shape


def _random_array(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype
) -> np.ndarray:
    data = (
        rng.integers(0, 2, shape) if dtype == np.bool_ else rng.standard_normal(shape)
    )
    return np.asarray(data).astype(dtype)


NPY_HEADERS = {
    (1, 0): np.lib.format.read_array_header_1_0,
    (2, 0): np.lib.format.read_array_header_2_0,
}
"""`.npy` format versions → header readers (3.0 only adds non-Latin-1
field names of structured dtypes, which no tensor has)."""

UNREADABLE = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError)
"""What `zipfile`, `zlib` and NumPy's `.npy` reader raise on a corrupted file."""


def load_inputs(path: str, func: FuncOp) -> list[np.ndarray]:
    """`func`'s arguments from the `.npz` at `path`, by parameter name or
    position (`arg0`, ...), each checked against its parameter's type
    before its data is read: a header may declare more than the file holds."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = {n.removesuffix(".npy"): n for n in archive.namelist()}
            names = [a.name_hint or f"arg{a.index}" for a in func.args]
            keys = [n if n in members else f"arg{i}" for i, n in enumerate(names)]
            missing = [f"{n} (or {k})" for n, k in zip(names, keys) if k not in members]
            if missing:
                raise RunError(
                    f"{path} lacks the inputs {', '.join(missing)} "
                    f"(has {', '.join(members) or 'none'})"
                )
            return [
                _read_input(archive, members[k], n, arg.type)
                for k, n, arg in zip(keys, names, func.args)
            ]
    except UNREADABLE as e:
        raise RunError(
            f"{path} is not a readable .npz file ({type(e).__name__}: {e})"
        ) from e


def _read_input(
    archive: zipfile.ZipFile, member: str, name: str, type_: Attribute
) -> np.ndarray:
    """The array `member` of `archive` for parameter `name` of type `type_`."""
    with archive.open(member) as f:
        version = np.lib.format.read_magic(f)
        if version not in NPY_HEADERS:
            raise RunError(
                f"{archive.filename}: {member} is .npy version {version[0]}.{version[1]}; "
                "hetero-run reads 1.0 and 2.0"
            )
        shape, fortran_order, dtype = NPY_HEADERS[version](f)
        _check_input(archive.filename, name, shape, dtype, type_)
        size = math.prod(shape) * dtype.itemsize
        data = f.read(min(size, archive.getinfo(member).file_size))
        if len(data) != size:
            raise RunError(
                f"{archive.filename}: {member} holds {len(data)} bytes of data, "
                f"its header declares {size}"
            )
    array = np.frombuffer(data, dtype).reshape(
        shape, order="F" if fortran_order else "C"
    )
    return array.astype(dtype.newbyteorder("="))


def _check_input(
    path: str | None,
    name: str,
    shape: tuple[int, ...],
    dtype: np.dtype,
    type_: Attribute,
) -> None:
    """A `RunError` unless an array of `shape` and `dtype` fits parameter `name`."""
    given = f"{dtype}{list(shape)}"
    if not isinstance(type_, TensorType):
        raise RunError(f"{path}: input {name} is {given}; the parameter is a {type_}")
    want = element_dtype(type_.element_type)
    fits = len(shape) == len(type_.get_shape()) and all(
        d == w or (w == DYNAMIC and d >= 0) for d, w in zip(shape, type_.get_shape())
    )
    if dtype.newbyteorder("=") != want or not fits:
        raise RunError(f"{path}: input {name} is {given}; the parameter is {type_}")


def _flatten(result: object) -> list[np.ndarray]:
    if isinstance(result, tuple):
        return [leaf for item in result for leaf in _flatten(item)]
    return [np.asarray(result)]


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hetero-run", description=__doc__.splitlines()[0]
    )
    parser.add_argument("file")
    parser.add_argument("--entry", default="main")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--random", action="store_true", help="random inputs")
    source.add_argument("--inputs", help=".npz with one array per parameter")
    add_shape_argument(parser, "give random input NAME this shape (its ? sizes)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", help="write the results to this .npz")
    parser.add_argument(
        "--compile", action="store_true", help="run natively compiled code"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="compile, run, compare with the reference interpreter",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="compile, time each kernel call in the network",
    )
    parser.add_argument(
        "--trace",
        metavar="FILE",
        help="with --profile: write the kernel calls as a Chrome trace",
    )
    parser.add_argument(
        "--targets", default="llvm", help="targets of a module without target.config"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="native runs to time (median)"
    )
    parser.add_argument(
        "--timing",
        action="store_true",
        help="print the seconds of each compilation stage",
    )
    parser.add_argument(
        "--progress",
        action="store_true",
        help="report a long compile's progress on stderr",
    )
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-5)
    return parser


def _native(
    module: ModuleOp, inputs: list[np.ndarray], args: argparse.Namespace
) -> list[np.ndarray]:
    """Compile and run `inputs` through the native code, printing the times."""
    import hetero

    start = time.perf_counter()
    with progress.reporting(args.progress or None):
        compiled = hetero.compile(
            module, targets=args.targets.split(","), entry=args.entry
        )
        if not isinstance(compiled, hetero.CompiledFunction):
            # Dynamic input shapes: compiled for these inputs.
            compiled = compiled.specialized(inputs)
    compile_seconds = time.perf_counter() - start
    return _run_native(
        compiled, inputs, args, f"compile: {compile_seconds * 1e3:.1f} ms"
    )


def _run_native(
    compiled: object, inputs: list[np.ndarray], args: argparse.Namespace, heading: str
) -> list[np.ndarray]:
    """Run `compiled` on `inputs`, printing `heading` and the times."""
    from hetero.lowering.compile_cache import all_cached

    times, result = [], None
    for _ in range(max(1, args.repeat)):
        start = time.perf_counter()
        result = compiled(*inputs)
        times.append(time.perf_counter() - start)
    cached = " (code from the compile cache)" if all_cached(compiled.timings) else ""
    print(f"{heading}{cached}")
    if args.timing:
        print_timings(compiled.timings)
    for device, (planned, requested) in compiled.memory.items():
        print(f"memory {device}: {planned} bytes planned ({requested} without reuse)")
    print(f"native: {statistics.median(times) * 1e3:.3f} ms (median of {len(times)})")
    if args.profile:
        _print_profile(compiled, inputs, max(1, args.repeat), args.trace)
    return _flatten(result)


def print_timings(timings: dict[str, float]) -> None:
    """The stage table: each stage's seconds, in the order they ran."""
    width = max(map(len, timings), default=0)
    for stage, seconds in timings.items():
        print(f"  {stage:<{width}}  {seconds * 1e3:10.1f} ms")


def _execute_artifact(args: argparse.Namespace) -> bool:
    """Run the compiled model of a `.hetero` file on random or given inputs."""
    import hetero

    if args.check or args.profile:
        raise RunError(
            f"{args.file} is compiled code: it has no relay program to check or "
            "profile (run the .mlir it was compiled from)"
        )
    from hetero.runtime.dynamic import DynamicCalls

    start = time.perf_counter()
    compiled = hetero.load(args.file)
    heading = f"load: {(time.perf_counter() - start) * 1e3:.1f} ms"
    signatures = (
        compiled.compiled if isinstance(compiled, DynamicCalls) else compiled
    ).inputs
    if args.random:
        rng = np.random.default_rng(args.seed)
        inputs = [
            _random_array(
                rng, random_shape(s.name or s.label, s.shape, args.shape), s.dtype
            )
            for s in signatures
        ]
    else:
        inputs = _npz_inputs(args.inputs, [s.name for s in signatures])
    _print_results(_run_native(compiled, inputs, args, heading), args)
    return True


def _npz_inputs(path: str, names: list[str | None]) -> list[np.ndarray]:
    """The arrays of the `.npz` at `path` by input name or position (`arg0`, ...)."""
    try:
        with np.load(path) as archive:
            keys = [n if n in archive else f"arg{i}" for i, n in enumerate(names)]
            missing = [k for k in keys if k not in archive]
            if missing:
                raise RunError(f"{path} lacks the inputs {', '.join(missing)}")
            return [archive[k] for k in keys]
    except UNREADABLE as e:
        raise RunError(
            f"{path} is not a readable .npz file ({type(e).__name__}: {e})"
        ) from e


def _print_profile(
    compiled: object, inputs: list[np.ndarray], repeat: int, trace: str | None
) -> None:
    """Each kernel's calls and time in the network, the costliest first;
    every run's calls written to `trace` as a Chrome trace."""
    from hetero.runtime.profiler import save_trace, summarize

    runs = [compiled.profile(*inputs).calls for _ in range(repeat)]  # type: ignore[attr-defined]
    if trace is not None:
        save_trace([call for run in runs for call in run], trace)
    rows = summarize(runs)
    total = sum(r.seconds for r in rows)
    print(
        f"profile: {len(rows)} kernels, {sum(r.calls for r in rows)} calls, {total * 1e3:.3f} ms"
    )
    for row in rows:
        share = 100 * row.seconds / total if total else 0.0
        print(
            f"{row.seconds * 1e3:10.3f} ms {share:5.1f}% {row.calls:4d}x  {row.kernel}"
        )


def _compare(
    native: list[np.ndarray],
    reference: list[np.ndarray],
    args: argparse.Namespace,
    check: str = "check",
) -> bool:
    """Print the largest errors (lines starting with `check`); True where
    every result is within tolerance."""
    if len(native) != len(reference):
        print(
            f"{check}: MISMATCH ({len(native)} results, the reference has {len(reference)})"
        )
        return False
    ok = True
    for i, (got, want) in enumerate(zip(native, reference)):
        if got.shape != want.shape:
            print(
                f"{check} result {i}: MISMATCH (shape {got.shape}, the reference's {want.shape})"
            )
            ok = False
            continue
        close = np.allclose(got, want, rtol=args.rtol, atol=args.atol)
        error = np.abs(got.astype(np.float64) - want.astype(np.float64))
        worst = float(error.max()) if error.size else 0.0
        ok &= close
        print(
            f"{check} result {i}: {'ok' if close else 'MISMATCH'} (max abs error {worst:.3g})"
        )
    return ok


def _onnxruntime(path: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """onnxruntime's results for the model at `path` (its inputs in order)."""
    import onnxruntime

    onnxruntime.set_default_logger_severity(3)
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {arg.name: value for arg, value in zip(session.get_inputs(), inputs)}
    return [np.asarray(r) for r in session.run(None, feeds)]


def _check_onnxruntime(
    module: ModuleOp,
    inputs: list[np.ndarray],
    native: list[np.ndarray],
    args: argparse.Namespace,
) -> bool:
    """Compare `native` with onnxruntime's results for the ONNX model that
    `module` was imported from, if any: an oracle written by others.  True
    unless they differ; a comparison that cannot be made says why."""
    from hetero.tools.hetero_import_onnx import imported_model

    try:
        path = imported_model(module)
    except OSError as e:
        print(f"onnxruntime: not compared ({e})")
        return True
    if path is None:
        return True
    if importlib.util.find_spec("onnxruntime") is None:
        print("onnxruntime: not compared (not installed)")
        return True
    start = time.perf_counter()
    try:
        reference = _onnxruntime(path, inputs)
    except Exception as e:  # noqa: BLE001 (onnxruntime's errors share no other base)
        print(f"onnxruntime: not compared (it failed: {e})")
        return True
    print(f"onnxruntime: {(time.perf_counter() - start) * 1e3:.3f} ms ({path})")
    return _compare(native, reference, args, "onnxruntime check")


def _execute(args: argparse.Namespace) -> bool:
    """Run as the arguments say, print the results; True where they check out."""
    if args.file.endswith(".hetero"):
        return _execute_artifact(args)
    with open(args.file, encoding="utf-8") as f:
        module = parse_module(f.read(), args.file)
    func = entry_function(module, args.entry)
    inputs = (
        random_inputs(func, args.seed, args.shape)
        if args.random
        else load_inputs(args.inputs, func)
    )
    results = reference = None
    if args.compile or args.check or args.profile:
        results = _native(module, inputs, args)
    if args.check or not (args.compile or args.profile):
        start = time.perf_counter()
        reference = _flatten(run(module, *inputs, entry=args.entry))
        print(f"reference interpreter: {(time.perf_counter() - start) * 1e3:.3f} ms")
    ok = _compare(results, reference, args) if results and reference else True
    if args.check and results:
        ok &= _check_onnxruntime(module, inputs, results, args)
    _print_results(results or reference or [], args)
    return ok


def _print_results(results: list[np.ndarray], args: argparse.Namespace) -> None:
    for i, value in enumerate(results):
        print(
            f"result {i}: {value.dtype}{list(value.shape)} sum={float(np.sum(value)):.6g}"
        )
    if args.output:
        buffer = io.BytesIO()
        np.savez(buffer, **{f"result{i}": v for i, v in enumerate(results)})
        write_output(args.output, buffer.getvalue())


def main(argv: Sequence[str] | None = None) -> int:
    parser = _arguments()
    args = parser.parse_args(argv)
    args.shape = shapes_of(parser, args.shape)
    args.profile |= args.trace is not None
    errors = (RunError, InterpreterError, OSError, ValueError)
    return run_tool("hetero-run", args.file, lambda: 0 if _execute(args) else 1, errors)


if __name__ == "__main__":
    sys.exit(main())
