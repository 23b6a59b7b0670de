"""Where a relay module runs, as a picture: a Graphviz DOT graph.

`hetero-opt m.mlir -p plan-devices -t dot` (and `device_graph(module)` from
Python) draws each relay function as a box of its ops and parameters, each
filled with the colour of the device it is on (its `vdevice` after
`plan-devices`; white where none is known yet), edges from producers to
consumers.  Device boundaries stand out: a `device_copy` is a red octagon
naming both devices, its edges red and bold.  A `Compiler` function (a BYOC
partition, global or literal) and a `Composite` literal are boxes of their
own labelled with their external kind, so a partition reads as a group.

`render(dot, path)` writes SVG (or any format Graphviz's `dot` knows, by the
path's suffix) where `dot` is installed; elsewhere the DOT text is written.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from hetero.analysis.devices import device_of
from hetero.dialects.relay import DeviceCopyOp, FnOp, FunctionOpBase, ReturnOp
from hetero.dialects.target import VirtualDeviceAttr
from hetero.utils.diagnostics import HeteroError

DEVICE_COLORS = {
    "cpu": "#9ecae1",
    "cuda": "#a1d99b",
    "rocm": "#fdae6b",
    "vulkan": "#bcbddc",
    "opencl": "#fdd0a2",
    "metal": "#c7e9c0",
}
"""Fill colour per device type; other types take `OTHER_COLORS` in turn."""

OTHER_COLORS = ("#fa9fb5", "#d9d9d9", "#fee391", "#9ebcda")
UNPLACED = "white"
COPY = "#de2d26"


def device_label(device: VirtualDeviceAttr | None) -> str:
    """`cuda:0` (`?` for an unconstrained device type or id), or `unplaced`."""
    if device is None:
        return "unplaced"
    kind = "?" if device.device_type is None else device.device_type.name
    return kind if device.device_id < 0 else f"{kind}:{device.device_id}"


class _Graph:
    """DOT text being written: node ids per op and value, colours per device."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ids: dict[Operation | SSAValue, str] = {}
        self.colors: dict[str, str] = {}

    def id(self, key: Operation | SSAValue) -> str:
        return self.ids.setdefault(key, f"n{len(self.ids)}")

    def color(self, device: VirtualDeviceAttr | None) -> str:
        label = device_label(device)
        if device is None:
            return UNPLACED
        if label not in self.colors:
            other = OTHER_COLORS[len(self.colors) % len(OTHER_COLORS)]
            self.colors[label] = DEVICE_COLORS.get(label.split(":")[0], other)
        return self.colors[label]


def device_graph(module: ModuleOp) -> str:
    """`module`'s relay functions as a DOT digraph coloured by device."""
    graph = _Graph()
    body: list[str] = []
    for op in module.ops:
        if isinstance(op, FunctionOpBase):
            body += _function(graph, op, op.sym_name.data, "  ")
    legend = [
        f'    "legend_{label}" [label="{label}", fillcolor="{color}"];'
        for label, color in graph.colors.items()
    ]
    return "\n".join(
        [
            "digraph hetero {",
            '  compound=true; rankdir=TB; fontname="Helvetica";',
            '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
            '  edge [fontname="Helvetica", fontsize=9];',
            *body,
            *(
                [
                    "  subgraph cluster_legend {",
                    '    label="devices"; style=dashed;',
                    *legend,
                    "  }",
                ]
                if legend
                else []
            ),
            "}",
            "",
        ]
    )


def _function(
    graph: _Graph, function: FunctionOpBase, name: str, indent: str
) -> list[str]:
    """A cluster of `function`'s parameters and ops, nested literals inside."""
    kind = _partition(function)
    lines = [
        f"{indent}subgraph cluster_{graph.id(function)} {{",
        f'{indent}  label="{_escape(name + kind)}"; style={"bold" if kind else "solid"};',
    ]
    for arg, device in zip(function.args, function.param_vdevices, strict=True):
        label = f"%{arg.name_hint or arg.index}\\n{_type(arg.type)}"
        lines.append(_node(graph, arg, label, device, indent + "  ", "ellipse"))
    for op in function.body.block.ops:
        lines += _op(graph, op, indent + "  ")
    lines.append(f"{indent}}}")
    return lines


def _partition(function: FunctionOpBase) -> str:
    """What a BYOC function is for: ` (Compiler = cublas)`, or empty."""
    for key, value in (
        ("Compiler", function.compiler),
        ("Composite", function.composite),
    ):
        if value is not None:
            return f" ({key} = {value})"
    return ""


def _op(graph: _Graph, op: Operation, indent: str) -> list[str]:
    """`op`'s node (a cluster for a function literal) and its operands' edges."""
    if isinstance(op, FnOp):
        return _function(graph, op, f"%{op.results[0].name_hint or 'fn'}", indent)
    name = op.name.removeprefix("relay.")
    device = device_of(op.results[0]) if op.results else None
    if isinstance(op, DeviceCopyOp):
        label = f"device_copy\\n{device_label(op.src)} → {device_label(op.dst)}"
        lines = [
            _node(
                graph,
                op,
                label,
                device,
                indent,
                "octagon",
                f'color="{COPY}", penwidth=2',
            )
        ]
    else:
        shown = f"{name}\\n{_type(op.results[0].type)}" if op.results else name
        lines = [
            _node(
                graph,
                op,
                shown,
                device,
                indent,
                "plaintext" if isinstance(op, ReturnOp) else "box",
            )
        ]
    for operand in op.operands:
        lines.append(indent + _edge(graph, operand, op))
    return lines


def _edge(graph: _Graph, value: SSAValue, user: Operation) -> str:
    """A data edge; red across a `device_copy`, dashed from a function value."""
    source = value.owner
    if isinstance(source, FnOp):  # from its literal's box (its return inside)
        tail = next(_returns(source), source)
        cluster = f"cluster_{graph.id(source)}"
        return f"{graph.id(tail)} -> {graph.id(user)} [ltail={cluster}, style=dashed];"
    copy = isinstance(user, DeviceCopyOp) or isinstance(source, DeviceCopyOp)
    style = f' [color="{COPY}", penwidth=2]' if copy else ""
    tail = source if isinstance(source, Operation) else value
    return f"{graph.id(tail)} -> {graph.id(user)}{style};"


def _returns(function: FnOp) -> Iterator[Operation]:
    yield from (op for op in function.body.block.ops if isinstance(op, ReturnOp))


def _node(
    graph: _Graph,
    key: Operation | SSAValue,
    label: str,
    device: VirtualDeviceAttr | None,
    indent: str,
    shape: str,
    extra: str = "",
) -> str:
    attrs = (
        f'label="{_escape(label)}", shape={shape}, fillcolor="{graph.color(device)}"'
    )
    tooltip = f', tooltip="{device_label(device)}"'
    return f"{indent}{graph.id(key)} [{attrs}{tooltip}{', ' + extra if extra else ''}];"


def _type(type: Attribute) -> str:
    """`5x7xf32` for a tensor type, else the type's own text, short."""
    if isinstance(type, TensorType):
        dims = "x".join("?" if d < 0 else str(d) for d in type.get_shape())
        return f"{dims}x{type.element_type}" if dims else str(type.element_type)
    text = str(type)
    return text if len(text) <= 40 else text[:37] + "..."


def _escape(text: str) -> str:
    return text.replace('"', '\\"')


def graphviz(dot: str, format: str) -> bytes:
    """`dot` laid out and drawn by Graphviz's `dot` in `format` (`svg`,
    `png`, ...); an error naming the fallback where it is not installed."""
    executable = shutil.which("dot")
    if executable is None:
        raise HeteroError(
            "Graphviz's 'dot' is not installed (Debian: apt-get install graphviz): "
            "write DOT text instead (hetero-opt -t dot)"
        )
    done = subprocess.run(
        [executable, f"-T{format}"],
        input=dot.encode(),
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise HeteroError(
            f"graphviz could not draw {format}: {done.stderr.decode().strip()}"
        )
    return done.stdout


def render(dot: str, path: str | Path) -> Path:
    """Writes `dot` drawn in the format of `path`'s suffix (`.svg`, `.png`,
    ...) where Graphviz is installed; else, and for a `.dot` path, the DOT
    text, at `path` with the suffix `.dot`.  Returns the path written."""
    path = Path(path)
    if path.suffix not in ("", ".dot", ".gv") and shutil.which("dot") is not None:
        path.write_bytes(graphviz(dot, path.suffix[1:]))
        return path
    written = path if path.suffix in (".dot", ".gv") else path.with_suffix(".dot")
    written.write_text(dot)
    return written
