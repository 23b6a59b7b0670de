"""The device-placement picture: DOT text, `hetero-opt -t dot/-t svg`, and
the files Graphviz draws from it."""

import re
import shutil
from pathlib import Path

import pytest
from xdsl.passes import PassPipeline

from hetero.context import make_context, parse_module
from hetero.tools.device_graph import DEVICE_COLORS, UNPLACED, device_graph, render
from hetero.tools.hetero_opt import main as hetero_opt
from hetero.universe import HETERO_UNIVERSE

ROOT = Path(__file__).resolve().parents[1]
MULTI_TARGET = ROOT / "examples" / "multi_target.mlir"
BYOC = ROOT / "tests" / "filecheck" / "transforms" / "byoc-end-to-end.mlir"
needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz not installed"
)


def _planned(path: Path, passes: str = "plan-devices") -> str:
    module = parse_module(path.read_text(), str(path))
    PassPipeline.parse_spec(dict(HETERO_UNIVERSE.all_passes), passes).apply(
        make_context(), module
    )
    return device_graph(module)


def _nodes(dot: str) -> dict[str, tuple[str, str]]:
    """Node id → (label, fill colour)."""
    found = re.findall(r'(n\d+) \[label="([^"]*)".*?fillcolor="([^"]*)"', dot)
    return {node: (label, color) for node, label, color in found}


def _by_label(dot: str) -> dict[str, tuple[str, str]]:
    """First line of each node's label → (node id, fill colour)."""
    return {label.split("\\n")[0]: (n, c) for n, (label, c) in _nodes(dot).items()}


def test_planned_ops_are_coloured_by_their_device():
    nodes = _by_label(_planned(MULTI_TARGET))
    cpu, cuda = DEVICE_COLORS["cpu"], DEVICE_COLORS["cuda"]
    assert nodes["add"][1] == nodes["%a"][1] == nodes["%b"][1] == cuda
    assert nodes["exp"][1] == nodes["multiply"][1] == cpu
    assert nodes["device_copy"][1] == cpu  # its result is on the CPU


def test_copies_are_marked_and_edges_follow_the_data():
    dot = _planned(MULTI_TARGET)
    nodes = _by_label(dot)
    add, copy, exp = nodes["add"][0], nodes["device_copy"][0], nodes["exp"][0]
    assert "device_copy\\ncuda:0 → cpu:0" in dot
    assert re.search(rf"{copy} \[.*shape=octagon.*penwidth=2", dot)
    assert re.search(rf"{add} -> {copy} \[color=\"#de2d26\"", dot)
    assert re.search(rf"{copy} -> {exp} \[color=\"#de2d26\"", dot)
    assert dot.count(f"{exp} -> {nodes['multiply'][0]};") == 2  # exp(x) * exp(x)
    assert '"legend_cpu:0" [label="cpu:0"' in dot and '"legend_cuda:0"' in dot


def test_an_unplanned_module_is_white():
    module = parse_module(MULTI_TARGET.read_text())
    colors = {color for _, color in _nodes(device_graph(module)).values()}
    assert colors == {UNPLACED}
    assert "cluster_legend" not in device_graph(module)


def test_byoc_partitions_are_boxed_with_their_kind():
    passes = "plan-devices,merge-composite,annotate-target,merge-compiler-regions,partition-graph"
    dot = _planned(BYOC, passes)
    for kind in ("cublas", "cudnn", "blas"):
        assert f'label="%fn (Compiler = {kind})"; style=bold;' in dot
    assert 'label="%fn (Composite = cublas.dense)"' in dot
    # each partition's call draws its function from the partition's box
    assert len(re.findall(r"\[ltail=cluster_n\d+, style=dashed\]", dot)) == 6
    assert dot.count("{") == dot.count("}")


def _hetero_opt(tmp_path: Path, target: str) -> Path:
    """`hetero-opt -p plan-devices -t target` of the multi-target example."""
    out = tmp_path / f"g.{target}"
    args = [str(MULTI_TARGET), "-p", "plan-devices", "-t", target, "-o", str(out)]
    assert hetero_opt(args) == 0
    return out


def test_hetero_opt_writes_dot(tmp_path: Path):
    out = _hetero_opt(tmp_path, "dot")
    assert out.read_text() == _planned(MULTI_TARGET)


@needs_dot
def test_hetero_opt_draws_svg_with_every_node(tmp_path: Path):
    out = _hetero_opt(tmp_path, "svg")
    svg = out.read_text()
    assert svg.startswith("<?xml") and "</svg>" in svg
    for text in ("add", "device_copy", "cuda:0 → cpu:0", "exp", "multiply", "%a"):
        assert f">{text}</text>" in svg
    assert f'fill="{DEVICE_COLORS["cuda"]}"' in svg and 'stroke="#de2d26"' in svg


def test_without_graphviz_svg_is_a_clean_error(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setattr(shutil, "which", lambda _: None)
    assert (
        hetero_opt([str(MULTI_TARGET), "-t", "svg", "-o", str(tmp_path / "g.svg")]) == 1
    )
    assert "Graphviz's 'dot' is not installed" in capsys.readouterr().err
    assert not (tmp_path / "g.svg").exists()
    # render() falls back to DOT text
    written = render(_planned(MULTI_TARGET), tmp_path / "g.svg")
    assert written == tmp_path / "g.dot" and written.read_text().startswith("digraph")


@needs_dot
def test_render_draws_png(tmp_path: Path):
    written = render(_planned(MULTI_TARGET), tmp_path / "g.png")
    assert written.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
