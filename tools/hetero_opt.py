"""`hetero-opt`: parse a `.mlir` file, run a pass pipeline, print the result.

It is xDSL's `xdsl-opt` (same pipelines, `-p a,b{opt=v}`, targets, generic
printing) with the behaviour a compiler user expects from `mlir-opt`:

* every op carries its `file:line:col`, and every error prints as
  `file:line:col: error: message` plus the op; no input makes it print a
  Python traceback (set `HETERO_DEBUG=1` to see one for an internal error);
* `--verify-diagnostics` checks MLIR-style `// expected-error {{...}}`
  annotations (also `expected-note`, with `@+N`, `@-N`, `@above`, `@below`,
  `@unknown`) and fails when a diagnostic is missing or unexpected;
* `--print-ir-after-all` and `--timing` (a per-pass wall-time table) write to
  stderr, as in MLIR (xDSL's `--print-between-passes` and `--time-passes`
  are their aliases);
* `--help` lists the passes, hetero's then xDSL's, each with its first
  docstring line and its options;
* MLIR's single-dash spellings (`-split-input-file`, `-pass-pipeline=...`)
  are accepted, and `-` reads standard input;
* `-o FILE` is written atomically: a failed run leaves no file behind and never
  touches an existing one (including the input).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline, get_pass_option_infos
from xdsl.printer import Printer
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from hetero.context import load_upstream_extras
from hetero.universe import REPLACED_PASSES, lazy
from hetero.utils.diagnostics import (
    HeteroError,
    LocatedParser,
    Location,
    location_of,
    parse_error_to_hetero,
    run_tool,
    verify_module,
)
from hetero.utils.files import write_output

SPLIT_MARKER = "// -----"


@dataclass(frozen=True)
class Diag:
    """One emitted diagnostic: severity, location (None: unknown), message, text."""

    severity: str
    location: Location | None
    message: str
    text: str


class ToolError(Exception):
    """A problem with the invocation itself (bad file, bad pipeline)."""


class HeteroOptMain(xDSLOptMain):
    version_format = "hetero-opt (hetero 0.1.0) built on xdsl {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None):
        self.timings: dict[str, float] = {}
        args = sys.argv[1:] if args is None else args
        super().__init__(
            description="hetero modular optimizer driver",
            args=mlir_spellings(args, self._long_options()),
        )
        # Loaded up front: a pass may create `dense_resource` blobs in an input
        # that never named a builtin op, and printing them needs the dialect.
        self.ctx.get_optional_dialect("builtin")
        load_upstream_extras(self.ctx)

    def register_all_passes(self):
        super().register_all_passes()
        for name, (module, attr) in REPLACED_PASSES.items():
            self.register_pass(name, lazy(module, attr))  # type: ignore[arg-type]

    def register_all_targets(self):
        super().register_all_targets()
        self.available_targets["dot"] = _emit_dot
        self.available_targets["svg"] = _emit_svg

    # -- arguments -------------------------------------------------------------

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        # Ours replace xDSL's of the same spelling (help, what they do); the
        # options go to the parser's group, which keeps its own handler.
        arg_parser._optionals.conflict_handler = "resolve"
        arg_parser.add_argument(
            "-h",
            "--help",
            action=PassHelpAction,
            passes=self.available_passes,
            help="show this help and the passes, then exit",
        )
        arg_parser.add_argument(
            "-p",
            "--passes",
            default="",
            help="the pass pipeline, 'a,b{option=value}' (the passes: --help)",
        )
        arg_parser.add_argument(
            "--pass-pipeline",
            help="MLIR's spelling of the pipeline: 'builtin.module(a,b{option=value})'",
        )
        arg_parser.add_argument(
            "--verify-diagnostics",
            action="store_true",
            help="check the diagnostics against the input's '// expected-error {{...}}' "
            "annotations (also warning, note, remark); exit 1 on any mismatch",
        )
        arg_parser.add_argument(
            "--print-ir-after-all",
            "--mlir-print-ir-after-all",
            "--print-between-passes",
            action="store_true",
            help="print the IR to stderr after every pass",
        )
        arg_parser.add_argument(
            "--timing",
            "--mlir-timing",
            "--time-passes",
            action="store_true",
            help="print a per-pass wall-time table to stderr",
        )
        arg_parser.add_argument(
            "--mlir-print-op-generic",
            dest="print_op_generic",
            action="store_true",
            help="alias of --print-op-generic",
        )

    def _long_options(self) -> set[str]:
        """The `--` options, from a parser of our arguments (before xDSL's
        `__init__` parses them, with the passes and targets not yet known)."""
        self.available_passes, self.available_targets, self.available_frontends = (
            {},
            {},
            {},
        )
        parser = argparse.ArgumentParser(add_help=False)
        self.register_all_arguments(parser)
        return {
            o for a in parser._actions for o in a.option_strings if o.startswith("--")
        }

    def setup_pipeline(self):
        if self.args.pass_pipeline is not None:
            self.args.passes = _unwrap_pipeline(self.args.pass_pipeline)
        try:
            self.pipeline = PassPipeline.parse_spec(
                self.available_passes, self.args.passes, self._between_passes
            )
        # xDSL's ArgSpecParseError (malformed options) is a BaseException.
        except (Exception, ArgSpecParseError) as e:  # unknown pass, bad option, ...
            raise ToolError(f"invalid pass pipeline '{self.args.passes}': {e}") from e

    def _between_passes(
        self, previous: ModulePass | None, module: ModuleOp, _next: ModulePass | None
    ) -> None:
        now = time.perf_counter()
        if previous is not None:
            self._add_time(previous.name, now - self._pass_start)
            if self.args.print_ir_after_all:
                print(
                    f"// -----// IR Dump After {previous.name} //----- //",
                    file=sys.stderr,
                )
                Printer(stream=sys.stderr).print_op(module)
                print(file=sys.stderr)
        if not self.args.disable_verify:
            verify_module(module)
        self._pass_start = time.perf_counter()

    def _add_time(self, name: str, seconds: float) -> None:
        self.timings[name] = self.timings.get(name, 0.0) + seconds

    # -- running -------------------------------------------------------------------

    def run(self) -> int:  # type: ignore[override]
        text, name = self._read_input()
        chunks = _split(text) if self.args.split_input_file else [(text, 0)]
        outputs: list[str] = []
        failed = False
        for chunk, offset in chunks:
            diags, output = self._process_chunk(chunk, name, offset)
            if self.args.verify_diagnostics:
                mismatches = check_expected(chunk, offset, name, diags)
                for line in mismatches:
                    print(line, file=sys.stderr)
                failed |= bool(mismatches)
            else:
                for d in diags:
                    print(d.text, file=sys.stderr)
                failed |= any(d.severity == "error" for d in diags)
            if output is not None:
                outputs.append(output)
        if self.args.timing:
            print_timing_table(self.timings, sys.stderr)
        if failed:
            return 1
        self._write_output(("\n" + SPLIT_MARKER + "\n").join(outputs))
        return 0

    def _read_input(self) -> tuple[str, str]:
        path = self.args.input_file
        if path in (None, "-"):
            return sys.stdin.read(), "<stdin>"
        try:
            with open(path, encoding="utf-8") as f:
                return f.read(), path
        except (OSError, UnicodeDecodeError) as e:
            raise ToolError(f"cannot read input file '{path}': {e}") from e

    def _process_chunk(
        self, chunk: str, name: str, offset: int
    ) -> tuple[list[Diag], str | None]:
        start = time.perf_counter()
        try:
            module = self._parse(chunk, name, offset)
        except ParseError as e:
            loc, msg = parse_error_to_hetero(e, offset)
            return [Diag("error", loc, msg, _render_parse_error(e, loc, msg))], None
        except HeteroError as e:
            return _diags_of(e, name), None
        self._add_time("(parse)", time.perf_counter() - start)
        try:
            self._pass_start = time.perf_counter()
            self.pipeline.apply(self.ctx, module)
            start = time.perf_counter()
            try:
                output = self.output_resulting_program(module)
            except NotImplementedError as e:  # a target for ops it cannot translate
                message = _untranslatable(self.args.target, e)
                return [Diag("error", None, message, f"{name}: error: {message}")], None
            self._add_time("(print)", time.perf_counter() - start)
            return [], output
        except HeteroError as e:
            return _diags_of(e, name), None
        except DiagnosticException as e:
            return [Diag("error", None, str(e), f"{name}: error: {e}")], None

    def _parse(self, chunk: str, name: str, offset: int) -> ModuleOp:
        """Parse and verify one chunk; any parser failure becomes a located error."""
        parser = LocatedParser(self.ctx, chunk, name, offset)
        module = parser.parse_module(not self.args.no_implicit_module)
        if not self.args.disable_verify:
            verify_module(module)
        return module

    def _write_output(self, text: str) -> None:
        write_output(self.args.output_file, text)


def mlir_spellings(argv: Sequence[str], long_options: set[str]) -> list[str]:
    """`argv` with MLIR's single-dash spellings of long options (`-split-input-file`,
    `-pass-pipeline=...`) made double-dash; short options (`-p`, `-o`, also with
    a value attached) and everything after `--` are left as they are."""
    out: list[str] = []
    for index, arg in enumerate(argv):
        if arg == "--":
            return out + list(argv[index:])
        name = arg.split("=", 1)[0]
        single_dash = arg.startswith("-") and not arg.startswith("--")
        out.append("-" + arg if single_dash and "-" + name in long_options else arg)
    return out


def _unwrap_pipeline(spec: str) -> str:
    """`builtin.module(a,b)` (MLIR's pipeline spelling) as xDSL's `a,b`; a spec
    without the anchor is taken as it is."""
    spec = spec.strip()
    anchor = "builtin.module("
    if spec.startswith(anchor) and spec.endswith(")"):
        return spec[len(anchor) : -1]
    return spec


UNLOWERED = {
    "relay": "lower the relay module first (hetero.compile's relay passes, then "
    "convert-tir-to-scf,lower-to-llvm), or use `hetero-translate --emit=llvm-ir`, "
    "which runs them all",
    "tir": "run -p convert-tir-to-scf,lower-to-llvm first",
}
"""What to do when `-t llvm` meets an op of a dialect it cannot translate."""


def _untranslatable(target: str, e: NotImplementedError) -> str:
    """Why `-t target` cannot print the module, and what to run first."""
    op = str(e).rsplit(": ", 1)[-1]
    advice = UNLOWERED.get(
        op.split(".", 1)[0], "lower the module to the llvm dialect first"
    )
    return f"-t {target} cannot translate '{op}' ({e}): {advice}"


def _emit_dot(module: ModuleOp, stream: IO[str]) -> None:
    """`-t dot`: the module's relay functions coloured by device (Graphviz)."""
    from hetero.tools.device_graph import device_graph

    stream.write(device_graph(module))


def _emit_svg(module: ModuleOp, stream: IO[str]) -> None:
    """`-t svg`: `-t dot` drawn by Graphviz, where it is installed."""
    from hetero.tools.device_graph import device_graph, graphviz

    stream.write(graphviz(device_graph(module), "svg").decode())


def _split(text: str) -> list[tuple[str, int]]:
    """Split on `// -----` lines; each chunk with the line offset of its start."""
    chunks: list[tuple[str, int]] = []
    offset = 0
    for chunk in re.split(r"^// -----.*$", text, flags=re.MULTILINE):
        chunks.append((chunk, offset))
        offset += chunk.count("\n")
    return chunks


def _diags_of(e: HeteroError, name: str) -> list[Diag]:
    diags = [Diag("error", e.location, e.message, e.render(name))]
    diags += [Diag("note", location_of(n.op), n.message, "") for n in e.notes]
    return diags


def _render_parse_error(e: ParseError, loc: Location, msg: str) -> str:
    context = e.span.print_with_context().splitlines()[1:3]  # source line + carets
    return "\n".join([f"{loc}: error: {msg}", *context])


# ----------------------------------------------------------------------------
# --verify-diagnostics: MLIR's expected-* annotations
# ----------------------------------------------------------------------------

_EXPECTED = re.compile(
    r"//\s*expected-(error|warning|note|remark)\s*(?:@(above|below|unknown|[+-]\d+))?\s*\{\{(.*?)\}\}"
)


@dataclass
class Expected:
    severity: str
    line: int | None  # None: @unknown
    message: str
    source_line: int
    seen: bool = False


def parse_expected(chunk: str, offset: int) -> list[Expected]:
    expected: list[Expected] = []
    for index, text in enumerate(chunk.splitlines()):
        line = index + 1 + offset
        for m in _EXPECTED.finditer(text):
            severity, where, message = m.groups()
            target: int | None = line
            if where == "unknown":
                target = None
            elif where == "above":
                target = line - 1
            elif where == "below":
                target = line + 1
            elif where:
                target = line + int(where)
            expected.append(Expected(severity, target, message, line))
    return expected


def check_expected(
    chunk: str, offset: int, name: str, diags: Sequence[Diag]
) -> list[str]:
    """Match diagnostics with annotations; return one message per mismatch."""
    expected = parse_expected(chunk, offset)
    problems: list[str] = []
    for d in diags:
        line = d.location.line if d.location is not None else None
        match = next(
            (
                e
                for e in expected
                if not e.seen
                and e.severity == d.severity
                and e.line == line
                and e.message in d.message
            ),
            None,
        )
        if match is None:
            where = str(d.location) if d.location is not None else name
            problems.append(f"{where}: error: unexpected {d.severity}: {d.message}")
        else:
            match.seen = True
    for e in expected:
        if not e.seen:
            problems.append(
                f'{name}:{e.source_line}: error: expected {e.severity} "{e.message}" '
                "was not produced"
            )
    return problems


# ----------------------------------------------------------------------------
# --help
# ----------------------------------------------------------------------------


class PassHelpAction(argparse.Action):
    """`--help`: argparse's help, then the passes (`pass_listing`)."""

    def __init__(self, option_strings: list[str], dest: str, passes: dict, help: str):
        super().__init__(option_strings, dest, nargs=0, help=help)
        self.passes = passes

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[override]
        parser.print_help()
        print("\n" + pass_listing(self.passes))
        parser.exit()


def pass_listing(passes: dict[str, object]) -> str:
    """The passes, hetero's then xDSL's, each with its first docstring line
    and its options (the pass class's fields), as mlir-opt's `--help` has them."""
    classes = {name: factory() for name, factory in passes.items()}  # type: ignore[operator]
    groups = {"hetero passes": [], "xDSL passes": []}
    for name, cls in sorted(classes.items()):
        group = (
            "hetero passes" if cls.__module__.startswith("hetero.") else "xDSL passes"
        )
        groups[group].append(_pass_entry(name, cls))
    return "\n\n".join(
        f"{title}:\n" + "\n".join(lines) for title, lines in groups.items()
    )


def _pass_entry(name: str, cls: type[ModulePass]) -> str:
    """`name`, the first paragraph of its docstring (a sentence may wrap),
    then an `option: type = default` line an option."""
    summary = " ".join((cls.__doc__ or "").strip().split("\n\n", 1)[0].split())
    if summary.startswith(f"{cls.__name__}("):  # the signature a dataclass makes up
        summary = ""
    lines = [f"  {name:<34} {summary}".rstrip()]
    for option in get_pass_option_infos(cls):
        kind = option.expected_type.strip("'")  # a string annotation's quotes
        default = option.default_value
        default = "" if default is None else f" = {default or repr('')}"
        lines.append(f"      {option.name}: {kind}{default}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------
# --timing
# ----------------------------------------------------------------------------


def print_timing_table(timings: dict[str, float], stream: IO[str]) -> None:
    total = sum(timings.values()) or 1e-12
    bar = "===" + "-" * 73 + "==="
    print(bar, file=stream)
    print("  ... Execution time report ...".center(79), file=stream)
    print(bar, file=stream)
    print(f"  Total Execution Time: {total:.4f} seconds\n", file=stream)
    print("  ----Wall Time----  ----Name----", file=stream)
    for name, seconds in timings.items():
        print(f"  {seconds:8.4f} ({100 * seconds / total:5.1f}%)  {name}", file=stream)
    print(f"  {total:8.4f} (100.0%)  Total", file=stream)


def main(argv: Sequence[str] | None = None) -> int:
    return run_tool(
        "hetero-opt", "hetero-opt", lambda: HeteroOptMain(argv).run(), (ToolError,)
    )


if __name__ == "__main__":
    sys.exit(main())
