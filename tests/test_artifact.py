"""`.hetero` files: `CompiledFunction.save`, `hetero.load`, `hetero-compile`,
`hetero-run model.hetero` (docs/deployment.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import llvmlite
import numpy as np
import pytest

import hetero
from hetero.runtime import artifact, framing
from hetero.runtime.artifact import ArtifactError, check_host, required_features

PROGRAM = """
relay.func @main(%data: tensor<64x48xf32>, %bias: tensor<32xf32>) -> tuple<tensor<64x32xf32>, tensor<64x32xf32>> {
  %w = relay.constant dense<0.25> : tensor<32x48xf32>
  %0 = relay.nn.dense %data, %w : (tensor<64x48xf32>, tensor<32x48xf32>) -> tensor<64x32xf32>
  %1 = relay.nn.bias_add %0, %bias : (tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32>
  %2 = relay.tanh %1 : tensor<64x32xf32>
  %3 = relay.tuple(%2, %0) : tuple<tensor<64x32xf32>, tensor<64x32xf32>>
  relay.return %3 : tuple<tensor<64x32xf32>, tensor<64x32xf32>>
}
"""

TARGET = "llvm -mcpu=x86-64-v2"
"""Runs on any x86-64 host the tests run on (the level CI's AVX2 hosts have)."""

ONLY_THE_RUNTIME = """
import sys
sys.modules["xdsl"] = None  # not installed: importing it or its modules fails
import hetero  # the package, whose own imports need no xDSL
package = set(sys.modules)
class _Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.startswith("hetero.") and not name.startswith(
            ("hetero.runtime", "hetero.utils")
        ):
            raise ImportError(f"{name} is not deployed here")
sys.meta_path.insert(0, _Blocker())
"""
"""Makes a process where xDSL, and then every module of hetero but its
runtime (and the utilities below it), fail to import: what a deployed model
needs.  `package`: the modules that `import hetero` imported."""


@pytest.fixture(scope="module")
def saved(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[np.ndarray], tuple]:
    """A compiled program saved, its inputs and its results."""
    compiled = hetero.compile(PROGRAM, TARGET)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s.shape).astype(np.float32) for s in compiled.inputs]
    path = tmp_path_factory.mktemp("artifact") / "model.hetero"
    compiled.save(path)
    return path, inputs, compiled(*inputs)


def test_load_runs_as_compiled(saved) -> None:
    path, inputs, expected = saved
    loaded = hetero.load(path)
    got = loaded(*inputs)
    assert isinstance(got, tuple) and len(got) == 2
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    assert [s.name for s in loaded.inputs] == ["data", "bias"]
    assert "load" in loaded.timings
    np.testing.assert_array_equal(
        loaded(bias=inputs[1], data=inputs[0])[0], expected[0]
    )


def _run_with_only_the_runtime(code: str, **env: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", ONLY_THE_RUNTIME + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_runtime_stands_alone(saved, tmp_path: Path) -> None:
    """Loading and calling need only `hetero.runtime` (and `hetero.utils`):
    neither xDSL nor any other layer of the compiler can be imported."""
    path, inputs, expected = saved
    np.savez(tmp_path / "in.npz", *inputs)
    out = _run_with_only_the_runtime(
        f"""
        import numpy as np, hetero
        for blocked in ("xdsl", "hetero.lowering", "hetero.utils.diagnostics"):
            try:
                __import__(blocked)
            except ImportError:
                pass
            else:
                raise SystemExit(f"{{blocked}} is importable")
        f = hetero.load({str(path)!r})
        with np.load({str(tmp_path / "in.npz")!r}) as a:
            y, z = f(a["arr_0"], a["arr_1"])
        np.save({str(tmp_path / "y.npy")!r}, y)
        print(sorted(m for m, v in sys.modules.items() if v and m not in package))
        """
    )
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), expected[0])
    modules = eval(out)
    assert "hetero.runtime.artifact" in modules
    assert not [
        m
        for m in modules
        if m.startswith(("xdsl", "hetero."))
        and not m.startswith(("hetero.runtime", "hetero.utils"))
    ]


def test_fresh_venv_without_xdsl(saved, tmp_path: Path) -> None:
    """The deployment this is for: a new virtual environment holding NumPy,
    llvmlite and hetero, where xDSL is not installed at all."""
    path, inputs, expected = saved
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    packages = Path(sysconfig.get_paths()["purelib"])
    for name in ("numpy", "numpy.libs", "llvmlite"):
        if (packages / name).exists():
            (site / name).symlink_to(packages / name)
    assert Path(llvmlite.__file__).parent == packages / "llvmlite"
    (site / "hetero").symlink_to(Path(hetero.__file__).parent)
    np.save(tmp_path / "x.npy", inputs[0])
    np.save(tmp_path / "b.npy", inputs[1])
    code = f"""
        import numpy as np, hetero
        try:
            import xdsl
        except ImportError:
            pass
        else:
            raise SystemExit("xdsl is importable")
        f = hetero.load({str(path)!r})
        y, _ = f({{"data": np.load({str(tmp_path / "x.npy")!r}), "bias": np.load({str(tmp_path / "b.npy")!r})}})
        np.save({str(tmp_path / "y.npy")!r}, y)
        """
    result = subprocess.run(
        [python, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), expected[0])


def test_host_without_the_features(saved, monkeypatch: pytest.MonkeyPatch) -> None:
    """An x86-64-v2 file on a host without SSE4.2 (an AVX-512 file on an
    AVX2 host alike): a clear error naming what is missing."""
    path, _, _ = saved
    features = dict(artifact.llvm.get_host_cpu_features())
    features["sse4.2"] = False
    features["popcnt"] = False
    monkeypatch.setattr(artifact.llvm, "get_host_cpu_features", lambda: features)
    with pytest.raises(ArtifactError, match=r"lacks: popcnt, sse4\.2; compile"):
        hetero.load(path)


def test_required_features() -> None:
    assert "avx2" in required_features({"mcpu": "x86-64-v3", "mattr": ""})
    assert "sse4.2" in required_features({"mcpu": "x86-64-v3", "mattr": ""})
    assert "avx512f" not in required_features({"mcpu": "x86-64-v3", "mattr": ""})
    assert required_features({"mcpu": "znver4", "mattr": "+avx2,-avx512f,+fma"}) == [
        "avx2",
        "fma",
    ]
    with pytest.raises(ArtifactError, match="hetero-test-feature"):
        check_host(
            {
                "triple": artifact.llvm.get_process_triple(),
                "mcpu": "x",
                "mattr": "+hetero-test-feature",
            },
            "m.hetero",
        )
    with pytest.raises(
        ArtifactError, match="compiled for aarch64-unknown-linux-gnu; this host"
    ):
        check_host(
            {"triple": "aarch64-unknown-linux-gnu", "mcpu": "generic", "mattr": ""}, "m"
        )
    with pytest.raises(ArtifactError, match="cannot check"):
        check_host(
            {
                "triple": artifact.llvm.get_process_triple(),
                "mcpu": "hetero-cpu",
                "mattr": "",
            },
            "m",
        )


def test_not_a_model(saved, tmp_path: Path) -> None:
    path, _, _ = saved
    data = path.read_bytes()
    for name, content, message in [
        ("empty", b"", "too short"),
        ("text", b"builtin.module {}" * 4, "not a file of this format"),
        ("cut", data[:-100], "truncated"),
        (
            "newer",
            data[:8] + (artifact.VERSION + 1).to_bytes(4, "little") + data[12:],
            f"version {artifact.VERSION + 1}",
        ),
    ]:
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ArtifactError, match=message):
            hetero.load(tmp_path / name)
    with pytest.raises(ArtifactError, match="cannot read"):
        hetero.load(tmp_path / "missing.hetero")


def test_format(saved) -> None:
    """The layout docs/deployment.md describes; a function of static shapes
    is written as version 1, which hetero before version 2 reads too."""
    path, _, _ = saved
    manifest, payload = framing.unpack(artifact.MAGIC, 1, 2, path.read_bytes())
    fields = json.loads(manifest)
    assert fields["format"] == 1 and "dynamic" not in fields
    assert fields["target"]["mcpu"] == "x86-64-v2"
    assert fields["inputs"][0] == {
        "label": "input #0 (%data)",
        "name": "data",
        "shape": [64, 48],
        "dtype": "<f4",
        "device": "cpu",
    }
    (constant,) = fields["constants"]
    offset, size = constant["data"]
    assert offset % artifact.ALIGNMENT == 0 and offset + size <= len(payload)
    assert fields["entry"]["name"] == "main_host"


def test_save_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A save that fails leaves the file that was there, and no other."""
    import hetero.utils.files

    compiled = hetero.compile(PROGRAM, TARGET)
    target = tmp_path / "model.hetero"
    target.write_bytes(b"old")

    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(hetero.utils.files.os, "replace", fail)
    with pytest.raises(ArtifactError, match="No space left"):
        compiled.save(target)
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.hetero"]
    with pytest.raises(ArtifactError, match="cannot write"):
        compiled.save(tmp_path / "no" / "such" / "dir.hetero")


def test_gpu_programs_are_refused(tmp_path: Path) -> None:
    from dataclasses import replace

    compiled = hetero.compile(PROGRAM, TARGET)
    gpu = replace(compiled, native=object())
    with pytest.raises(ArtifactError, match="GPU kernels cannot be saved yet"):
        gpu.save(tmp_path / "gpu.hetero")
    assert not (tmp_path / "gpu.hetero").exists()


def test_tools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """hetero-compile of an ONNX model, then hetero-run of its file."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    from hetero.tools import hetero_compile, hetero_run

    weight = numpy_helper.from_array(np.full((8, 4), 0.5, np.float32), "w")
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["data", "w"], ["y"]),
            helper.make_node("Relu", ["y"], ["out"]),
        ],
        "g",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 4])],
        [weight],
    )
    model = tmp_path / "m.onnx"
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model
    )
    out = tmp_path / "m.hetero"
    assert hetero_compile.main([str(model), "-o", str(out), "--target", TARGET]) == 0
    loaded = hetero.load(out)
    x = np.ones((2, 8), np.float32)
    np.testing.assert_allclose(loaded(data=x), np.full((2, 4), 4.0))
    capsys.readouterr()
    np.savez(tmp_path / "in.npz", data=x)
    assert (
        hetero_run.main([str(out), "--inputs", str(tmp_path / "in.npz"), "--timing"])
        == 0
    )
    printed = capsys.readouterr().out
    assert "load:" in printed and "  load " in printed
    assert "result 0: float32[2, 4] sum=32" in printed
    assert hetero_run.main([str(out), "--random", "--check"]) == 1
    assert "has no relay program to check" in capsys.readouterr().err
    assert hetero_compile.main([str(tmp_path / "none.onnx"), "-o", str(out)]) == 1
