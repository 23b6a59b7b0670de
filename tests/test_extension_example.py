"""The example extension (examples/hetero-npu-example) really extends hetero.

It is installed with pip into a temporary directory and used, through entry
points only, from `hetero-opt` and from plain `xdsl-opt`: its dialect parses,
its pass runs, its target kind is checked against its schema.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parent.parent / "examples" / "hetero-npu-example"

PROGRAM = """\
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"npu", {cores = 4 : i64}>]>} {
  relay.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    %c = relay.constant dense<2.5> : tensor<8xf32>
    %y = relay.multiply %x, %c : tensor<8xf32>
    relay.return %y : tensor<8xf32>
  }
}
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    source = (
        tmp_path_factory.mktemp("src") / EXAMPLE.name
    )  # builds write next to the sources
    shutil.copytree(
        EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info")
    )
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(source),
        ],
        check=False,
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, (
        install.stderr
    )  # e.g. "No module named 'setuptools'"
    return target


def _tool(
    site: Path, tool: str, *args: str, stdin: str
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
    }
    exe = shutil.which(tool)
    assert exe is not None, f"{tool} is not installed"
    return subprocess.run(
        [exe, *args], input=stdin, env=env, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize("tool", ["hetero-opt", "xdsl-opt"])
def test_pass_dialect_and_kind_through_entry_points(site: Path, tool: str):
    proc = _tool(site, tool, "-p", "npu-offload{cores=4}", stdin=PROGRAM)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert (
        "%y = npu.scale %x by 2.500000e+00 {vdevice = #target.vdevice<ext_dev:0, "
        'target = #target.target<"npu", {cores = 4 : i64}>>} : tensor<8xf32>'
    ) in out
    assert "relay.multiply" not in out


def test_the_new_kind_schema_is_enforced(site: Path):
    bad = PROGRAM.replace("cores = 4 : i64", "cores = 3 : i64")
    proc = _tool(site, "hetero-opt", stdin=bad)
    assert proc.returncode == 1
    assert (
        "bad value 3 for option 'cores' of target kind 'npu': expected one of 1, 2, 4, 8"
        in proc.stderr
    )


def test_a_bad_pass_option_is_a_diagnostic(site: Path):
    proc = _tool(site, "hetero-opt", "-p", "npu-offload{cores=3}", stdin=PROGRAM)
    assert proc.returncode == 1
    assert "npu-offload: bad value 3 for option 'cores'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_without_the_extension_the_kind_is_unknown():
    proc = subprocess.run(
        ["hetero-opt"], input=PROGRAM, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 1
    assert "unknown target kind 'npu'" in proc.stderr
