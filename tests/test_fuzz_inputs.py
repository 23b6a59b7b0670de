"""Malformed input never crashes a tool.

Each tool gets inputs corrupted the ways a typo, a broken exporter or an
attacker corrupts them: `hetero-opt`, `hetero-run` and `hetero-translate`
mutated `.mlir` programs (byte flips, token deletions and duplications,
swapped lines, ...) made from the FileCheck inputs and the examples;
`hetero-import-onnx` ONNX models corrupted through the protobuf API (node
inputs naming no tensor, initializers whose dims and data disagree, negative
dimensions, wrong element types, missing graph outputs, flipped bytes);
`hetero-run --inputs` bad `.npz` files (a `.npy`, an empty file, a truncated
zip, a header declaring a huge array, wrong dtypes, shapes and names).

Every input runs in process through the tool's `main(argv)` and must end in
exit status 0 or 1 with no traceback and no "internal error"; an exit 1
leaves no output file, an exit 0 a file that parses.  The inputs come from a
fixed seed; `HETERO_FUZZ_COUNT=N` runs N inputs per tool instead of the few
that keep the suite fast.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
import signal
import traceback
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from hetero.tools import hetero_import_onnx, hetero_opt, hetero_run, hetero_translate

ROOT = Path(__file__).parent
COUNT = os.environ.get("HETERO_FUZZ_COUNT")
SECONDS_PER_INPUT = 120
"""An input still running after this long counts as a hang."""


def _count(default: int) -> int:
    return int(COUNT) if COUNT else default


# ----------------------------------------------------------------------------
# Running a tool on many inputs
# ----------------------------------------------------------------------------


class Hang(BaseException):
    """Raised by the alarm in a tool that ran too long (no `except Exception` catches it)."""


@contextlib.contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    def expire(_signum: int, _frame: object) -> None:
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _run(main: Callable[[Sequence[str]], int], argv: Sequence[str]) -> tuple[int, str]:
    """Exit status and stderr of `main(argv)`; an exception that escapes it
    (what a user would see as a traceback) is status -1 and its traceback."""
    err = io.StringIO()
    try:
        with (
            contextlib.redirect_stderr(err),
            contextlib.redirect_stdout(io.StringIO()),
            _deadline(SECONDS_PER_INPUT),
        ):
            code = main(argv)
    except BaseException:  # noqa: BLE001 (every escape is a finding)
        return -1, err.getvalue() + traceback.format_exc()
    return code, err.getvalue()


@dataclass
class Campaign:
    """The outcomes of one tool's inputs: exit statuses and failures."""

    tool: str
    statuses: dict[int, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def record(
        self, what: str, code: int, err: str, output: Path | None = None
    ) -> None:
        self.statuses[code] = self.statuses.get(code, 0) + 1
        problem = _problem(code, err, output)
        if problem is not None:
            self.failures.append(f"{what}: {problem}\n{err[-3000:]}")

    def check(self) -> None:
        total = sum(self.statuses.values())
        print(
            f"{self.tool}: {total} inputs, exit statuses {sorted(self.statuses.items())}"
        )
        assert not self.failures, (
            f"{len(self.failures)} of {total} inputs broke {self.tool}:\n\n"
            + "\n\n".join(self.failures[:5])
        )


def _problem(code: int, err: str, output: Path | None) -> str | None:
    if code not in (0, 1):
        return f"exit status {code}"
    if "Traceback" in err or "internal error" in err:
        return "a traceback or an internal error"
    if code == 1 and "error:" not in err:
        return "exit 1 without a diagnostic"
    if output is not None and code == 1 and output.exists():
        return "exit 1 left an output file"
    if output is not None and code == 0 and output.suffix == ".mlir":
        return _unparsable(output)
    return None


def _unparsable(path: Path) -> str | None:
    from hetero.context import parse_module
    from hetero.utils.diagnostics import HeteroError

    try:
        parse_module(path.read_text(), str(path))
    except HeteroError as e:
        return f"exit 0 wrote a file that does not parse: {e}"
    return None


# ----------------------------------------------------------------------------
# Mutated .mlir programs
# ----------------------------------------------------------------------------


def _chunks(path: Path) -> list[str]:
    text = path.read_text()
    return [c for c in re.split(r"^// -----.*$", text, flags=re.MULTILINE) if c.strip()]


def _programs() -> list[str]:
    files = [p for p in (ROOT / "filecheck").rglob("*.mlir") if "RUN:" in p.read_text()]
    files += (ROOT.parent / "examples").glob("*.mlir")
    return [chunk for path in sorted(files) for chunk in _chunks(path)]


def _runnable(program: str) -> bool:
    """A relay `@main` with static parameters that is meant to verify."""
    header = re.search(r"relay\.func @main\(([^{]*)", program)
    return (
        header is not None and "?" not in header.group(1) and "expected-" not in program
    )


PROGRAMS = _programs()
RUNNABLE = [p for p in PROGRAMS if _runnable(p)]
TOKEN = re.compile(r"[%@^#!]?[\w.$-]+|\s+|.", re.DOTALL)


def _edit_token(text: str, rng: random.Random, edit: Callable[[str], str]) -> str:
    tokens = TOKEN.findall(text)
    i = rng.randrange(len(tokens))
    return "".join(tokens[:i] + [edit(tokens[i])] + tokens[i + 1 :])


def _swap_lines(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


def _duplicate_line(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    i = rng.randrange(len(lines))
    return "".join(lines[: i + 1] + lines[i:])


def _replace_name(text: str, rng: random.Random) -> str:
    names = re.findall(r"%[\w.$-]+", text) or ["%0"]
    return text.replace(rng.choice(names), rng.choice(names), 1)


TEXT_MUTATIONS: dict[str, Callable[[str, random.Random], str]] = {
    "delete a token": lambda t, rng: _edit_token(t, rng, lambda _tok: ""),
    "duplicate a token": lambda t, rng: _edit_token(t, rng, lambda tok: tok + tok),
    "swap two lines": _swap_lines,
    "duplicate a line": _duplicate_line,
    "truncate": lambda t, rng: t[: rng.randrange(len(t))],
    "rename a use": _replace_name,
    "insert punctuation": lambda t, rng: _edit_token(
        t, rng, lambda tok: tok + rng.choice('<>{}()[],:=%@#!?"x0-')
    ),
    "change a number": lambda t, rng: _edit_token(
        t, rng, lambda tok: str(rng.choice([0, -1, 3, 64])) if tok.isdigit() else tok
    ),
}


def _mutants(
    programs: Sequence[str], count: int, seed: str
) -> Iterator[tuple[str, bytes]]:
    """`count` programs with one to three mutations each, and what was done."""
    rng = random.Random(seed)
    for _ in range(count):
        text = rng.choice(programs)
        done = []
        for _ in range(rng.randint(1, 3)):
            name = rng.choice(list(TEXT_MUTATIONS))
            text = TEXT_MUTATIONS[name](text, rng) if text else text
            done.append(name)
        data = text.encode()
        if data and rng.random() < 0.3:
            data = _flipped(data, rng)
            done.append("flipped bytes")
        yield ", ".join(done), data


def _fuzz_mlir(
    tool: str,
    main: Callable[[Sequence[str]], int],
    options: Sequence[str],
    programs: Sequence[str],
    count: int,
    tmp_path: Path,
) -> None:
    """`count` mutants through `main(mutant.mlir *options OUT)`, where the
    last option names the output file."""
    campaign = Campaign(tool)
    source, output = (
        tmp_path / "mutant.mlir",
        tmp_path / f"out{Path(options[-1]).suffix}",
    )
    for what, mutant in _mutants(programs, count, tool):
        source.write_bytes(mutant)
        output.unlink(missing_ok=True)
        code, err = _run(main, [str(source), *options[:-1], str(output)])
        campaign.record(
            f"{what}:\n{mutant.decode(errors='replace')}", code, err, output
        )
    campaign.check()


def test_hetero_opt_on_mutated_programs(tmp_path: Path) -> None:
    _fuzz_mlir(
        "hetero-opt", hetero_opt.main, ["-o", ".mlir"], PROGRAMS, _count(150), tmp_path
    )


def test_hetero_run_on_mutated_programs(tmp_path: Path) -> None:
    options = ["--random", "--output", ".npz"]
    _fuzz_mlir("hetero-run", hetero_run.main, options, RUNNABLE, _count(200), tmp_path)


def test_hetero_translate_on_mutated_programs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HETERO_COMPILE_JOBS", "1")
    options = ["--emit=llvm-ir", "-o", ".ll"]
    _fuzz_mlir(
        "hetero-translate",
        hetero_translate.main,
        options,
        RUNNABLE,
        _count(20),
        tmp_path,
    )


# ----------------------------------------------------------------------------
# Corrupted ONNX models
# ----------------------------------------------------------------------------


def _onnx_models() -> list[bytes]:
    """The small models among the `onnx` package's node tests."""
    from hetero.frontends.onnx_models import DATA

    paths = sorted(Path(DATA).glob("pytorch-*/*/model.onnx"))
    return [p.read_bytes() for p in paths if p.stat().st_size < 64 * 1024]


def _pick(items: Sequence[object], rng: random.Random) -> object | None:
    return rng.choice(items) if len(items) else None


def _rename_node_input(model, rng: random.Random) -> None:
    node = _pick([n for n in model.graph.node if n.input], rng)
    if node is not None:
        names = ["missing", "", *node.output]
        node.input[rng.randrange(len(node.input))] = rng.choice(names)


def _change_op_type(model, rng: random.Random) -> None:
    node = _pick(model.graph.node, rng)
    if node is not None:
        node.op_type = rng.choice(
            [
                "Add",
                "Conv",
                "Gemm",
                "Reshape",
                "Concat",
                "MaxPool",
                "Softmax",
                "Transpose",
                "Slice",
                "Gather",
                "Split",
                "Pad",
                "Resize",
                "NoSuchOp",
            ]
        )


def _corrupt_attribute(model, rng: random.Random) -> None:
    attrs = [a for n in model.graph.node for a in n.attribute]
    attr = _pick(attrs, rng)
    if attr is None:
        return
    value = rng.choice([-1, 0, 7, -(2**40)])
    if attr.ints:
        attr.ints[rng.randrange(len(attr.ints))] = value
    elif attr.floats:
        attr.floats[0] = rng.choice([float("nan"), float("inf"), -1.0])
    else:
        attr.i, attr.f, attr.type = value, float("nan"), rng.randrange(1, 15)


def _drop_node_field(model, rng: random.Random) -> None:
    node = _pick(model.graph.node, rng)
    if node is not None:
        values = rng.choice([node.input, node.output, node.attribute])
        if len(values):
            del values[rng.randrange(len(values))]


def _initializer_dims(model, rng: random.Random) -> None:
    tensor = _pick(model.graph.initializer, rng)
    if tensor is None:
        return
    if tensor.dims and rng.random() < 0.7:
        tensor.dims[rng.randrange(len(tensor.dims))] = rng.choice([-1, -3, 0, 2, 2**40])
    else:
        tensor.dims.append(rng.choice([-1, 0, 2]))


def _initializer_data(model, rng: random.Random) -> None:
    tensor = _pick(model.graph.initializer, rng)
    if tensor is None:
        return
    if tensor.raw_data:
        tensor.raw_data = tensor.raw_data[: rng.randrange(len(tensor.raw_data))]
    for values in (tensor.float_data, tensor.int64_data, tensor.int32_data):
        del values[: rng.randrange(len(values) + 1)]


def _initializer_dtype(model, rng: random.Random) -> None:
    tensor = _pick(model.graph.initializer, rng)
    if tensor is not None:
        tensor.data_type = rng.randrange(0, 26)


def _graph_input_type(model, rng: random.Random) -> None:
    value = _pick(model.graph.input, rng)
    if value is None:
        return
    tensor = value.type.tensor_type
    if tensor.shape.dim and rng.random() < 0.7:
        dim = tensor.shape.dim[rng.randrange(len(tensor.shape.dim))]
        dim.dim_value = rng.choice([-1, -7, 0, 2**40])
    else:
        tensor.elem_type = rng.randrange(0, 26)


def _drop_graph_value(model, rng: random.Random) -> None:
    values = rng.choice([model.graph.input, model.graph.output, model.graph.node])
    if len(values):
        del values[rng.randrange(len(values))]


def _rename_graph_output(model, rng: random.Random) -> None:
    value = _pick(model.graph.output, rng)
    if value is not None:
        value.name = "nowhere"


def _reorder_nodes(model, rng: random.Random) -> None:
    nodes = list(model.graph.node)
    rng.shuffle(nodes)
    del model.graph.node[:]
    model.graph.node.extend(nodes)


def _opset(model, rng: random.Random) -> None:
    if model.opset_import:
        model.opset_import[0].version = rng.choice([0, 1, 5, 99])


ONNX_MUTATIONS = {
    "a node input names no tensor": _rename_node_input,
    "another op type": _change_op_type,
    "a bad attribute": _corrupt_attribute,
    "a node field dropped": _drop_node_field,
    "initializer dims": _initializer_dims,
    "initializer data": _initializer_data,
    "initializer dtype": _initializer_dtype,
    "graph input type": _graph_input_type,
    "a graph input, output or node dropped": _drop_graph_value,
    "a graph output produced by no node": _rename_graph_output,
    "nodes out of order": _reorder_nodes,
    "opset": _opset,
}


def _corrupt_model(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """`data` with one to three field mutations, then maybe flipped bytes."""
    import onnx

    model = onnx.ModelProto.FromString(data)
    done = rng.sample(list(ONNX_MUTATIONS), rng.randint(1, 3))
    for name in done:
        ONNX_MUTATIONS[name](model, rng)
    data = bytearray(model.SerializeToString())
    if rng.random() < 0.2:
        done.append("flipped bytes")
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    return ", ".join(done), bytes(data)


def test_hetero_import_onnx_on_corrupted_models(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    models = _onnx_models()
    rng = random.Random("hetero-import-onnx")
    campaign = Campaign("hetero-import-onnx")
    source, output = tmp_path / "model.onnx", tmp_path / "out.mlir"
    for _ in range(_count(200)):
        what, data = _corrupt_model(rng.choice(models), rng)
        source.write_bytes(data)
        output.unlink(missing_ok=True)
        code, err = _run(hetero_import_onnx.main, [str(source), "-o", str(output)])
        campaign.record(what, code, err, output)
    campaign.check()


# ----------------------------------------------------------------------------
# Bad .npz inputs
# ----------------------------------------------------------------------------

NPZ_PROGRAM = """
relay.func @main(%x: tensor<2x3xf32>, %n: tensor<?x3xi32>) -> tensor<2x3xf32> {
  %0 = relay.add %x, %x : tensor<2x3xf32>
  relay.return %0 : tensor<2x3xf32>
}
"""


def _npy(array: np.ndarray) -> bytes:
    member = io.BytesIO()
    np.save(member, array, allow_pickle=True)
    return member.getvalue()


def _npz(arrays: dict[str, np.ndarray | bytes], compress: bool = False) -> bytes:
    """A zip of `name.npy` members: arrays saved, bytes as they are."""
    buffer = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, value in arrays.items():
            archive.writestr(
                f"{name}.npy", _npy(value) if isinstance(value, np.ndarray) else value
            )
    return buffer.getvalue()


def _declaring(
    shape: tuple[int, ...], dtype: str = "<f4", data: bytes = b"\0" * 24
) -> bytes:
    """A `.npy` whose header declares `shape` whatever data follows."""
    member = io.BytesIO()
    header = {"descr": dtype, "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(member, header)
    return member.getvalue() + data


def _good(rng: random.Random) -> dict[str, np.ndarray | bytes]:
    return {
        "x": rng.choice(
            [
                np.ones((2, 3), np.float32),
                np.ones((2, 3), ">f4"),
                np.asfortranarray(np.ones((2, 3), np.float32)),
            ]
        ),
        "n": np.zeros((rng.randrange(4), 3), np.int32),
    }


def _flipped(data: bytes, rng: random.Random) -> bytes:
    flipped = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
    return bytes(flipped)


def _without(
    arrays: dict[str, np.ndarray | bytes], name: str
) -> dict[str, np.ndarray | bytes]:
    return {k: v for k, v in arrays.items() if k != name}


def _truncated(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data))]


NPZ_CORRUPTIONS: dict[str, Callable[[random.Random], bytes]] = {
    "valid": lambda rng: _npz(_good(rng), rng.random() < 0.5),
    "a .npy": lambda rng: _npy(np.ones((2, 3), np.float32)),
    "empty": lambda rng: b"",
    "random bytes": lambda rng: rng.randbytes(rng.randrange(1, 400)),
    "truncated": lambda rng: _truncated(_npz(_good(rng)), rng),
    "flipped bytes": lambda rng: _flipped(_npz(_good(rng), rng.random() < 0.5), rng),
    "header declaring 224 GiB": lambda rng: _npz(
        rng.choice(
            [
                {**_good(rng), "x": _declaring((2**18, 2**18))},
                {**_good(rng), "n": _declaring((5 * 2**32, 3), "<i4")},
            ]
        )
    ),
    "header declaring a negative size": lambda rng: _npz(
        {**_good(rng), "n": _declaring((-2, 3), "<i4")}
    ),
    "header declaring more than the data": lambda rng: _npz(
        {**_good(rng), "n": _declaring((1000, 3), "<i4")}
    ),
    "a member that is no .npy": lambda rng: _npz({**_good(rng), "x": b"hello"}),
    "wrong dtype": lambda rng: _npz(
        {
            **_good(rng),
            "x": np.ones(
                (2, 3), rng.choice(["f8", "i4", "?", "c8", "U3", "O", "i4,f4"])
            ),
        }
    ),
    "wrong shape": lambda rng: _npz(
        {
            **_good(rng),
            rng.choice("xn"): np.ones(
                rng.choice([(3, 2), (6,), (2, 3, 1), ()]), np.float32
            ),
        }
    ),
    "missing name": lambda rng: _npz(_without(_good(rng), rng.choice(["x", "n"]))),
    "names by position": lambda rng: _npz(
        {f"arg{i}": v for i, v in enumerate(_good(rng).values())}
    ),
    ".npy version 3": lambda rng: _npz({**_good(rng), "x": _version_3()}),
}


def _version_3() -> bytes:
    member = io.BytesIO()
    np.lib.format.write_array(member, np.ones((2, 3), np.float32), version=(3, 0))
    return member.getvalue()


def test_hetero_run_on_bad_npz_inputs(tmp_path: Path) -> None:
    program, inputs = tmp_path / "main.mlir", tmp_path / "in.npz"
    program.write_text(NPZ_PROGRAM)
    rng = random.Random("hetero-run --inputs")
    campaign = Campaign("hetero-run --inputs")
    for _ in range(_count(200)):
        what = rng.choice(list(NPZ_CORRUPTIONS))
        inputs.write_bytes(NPZ_CORRUPTIONS[what](rng))
        code, err = _run(hetero_run.main, [str(program), "--inputs", str(inputs)])
        campaign.record(what, code, err)
        if what in ("valid", "names by position"):
            assert code == 0, err
    campaign.check()
