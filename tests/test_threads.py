"""Threads: `hetero.compile` from several threads at once (a server compiling
the models its requests name), where each compile's weights and IR stay its
own; and how many threads parallel loops take (`hetero.utils.cpus`: the CPUs
this process may use, by affinity and cgroup quota, read here from fake
`/proc/self` and cgroup trees).  The pool's side is tests/test_parallel_runtime.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import xdsl.builder
from test_dense_resources import WEIGHTED
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr

import hetero
from hetero.dialects import tir
from hetero.dialects.target import TargetAttr
from hetero.targets.cpu import num_threads, outlines_parallel_loops
from hetero.utils import cpus
from hetero.utils.cpus import (
    THREADS_VARIABLE,
    available_cpus,
    cgroup_cpu_limit,
    default_threads,
)


def test_compiles_in_threads_keep_their_own_weights() -> None:
    """Two threads compiling networks of the same shape and other weights:
    each compiled function computes with its own."""
    x = np.random.default_rng(1).standard_normal((2, 64)).astype(np.float32)
    failures: list[str] = []

    def compile_again_and_again(scale: float) -> None:
        w = np.arange(8 * 64, dtype=np.float32).reshape(8, 64) * scale
        text = WEIGHTED.format(n=2, blob=w.tobytes().hex())
        for _ in range(4):
            try:
                np.testing.assert_allclose(
                    hetero.compile(text)(x), x @ (2 * w).T, rtol=1e-5, atol=1e-4
                )
            except Exception as error:  # noqa: BLE001 (reported below)
                failures.append(f"{scale}: {type(error).__name__}: {error}")

    threads = [
        threading.Thread(target=compile_again_and_again, args=(scale,))
        for scale in (1 / 512, -1 / 64)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_tir_ops_are_built_without_an_implicit_builder(monkeypatch) -> None:
    """xDSL's `ImplicitBuilder` (behind its `ensure_terminator`) swaps
    `Operation.__post_init__` process-wide: compiles in two threads, each
    building loops, inserted ops twice ("already attached to a block")."""

    def refuse(*args: object) -> None:
        raise AssertionError("an ImplicitBuilder was used")

    monkeypatch.setattr(xdsl.builder, "ImplicitBuilder", refuse)
    bound = arith.ConstantOp(IntegerAttr(4, IndexType()))
    loop = tir.ForOp(bound, bound, bound)
    function = tir.PrimFuncOp("f", ([], []))
    region = tir.TargetRegionOp(TargetAttr("llvm"))
    for op, terminator in (
        (loop, tir.YieldOp),
        (function, tir.ReturnOp),
        (region, tir.YieldOp),
    ):
        assert isinstance(op.regions[0].block.last_op, terminator)


def fake_proc(tmp_path: Path, groups: str, mounts: dict[str, tuple[str, str]]) -> Path:
    """A `/proc/self` whose `cgroup` is `groups` and whose `mountinfo`
    mounts, for each directory under `tmp_path`, (filesystem type, super
    options) of its root `/`."""
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "cgroup").write_text(groups)
    lines = [
        f"{30 + i} 23 0:{40 + i} / {tmp_path / name} rw,relatime - {kind} {kind} {options}"
        for i, (name, (kind, options)) in enumerate(mounts.items())
    ]
    (proc / "mountinfo").write_text(
        "\n".join(["22 1 8:1 / / rw - ext4 /dev/sda1 rw", *lines])
    )
    return proc


def write(directory: Path, **files: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name.replace("__", ".")).write_text(text + "\n")


def test_a_v2_quota_is_the_tightest_of_the_cgroup_and_its_ancestors(tmp_path) -> None:
    proc = fake_proc(tmp_path, "0::/a/b\n", {"v2": ("cgroup2", "rw")})
    write(tmp_path / "v2", cpu__max="max 100000")
    write(tmp_path / "v2/a", cpu__max="250000 100000")  # 2.5 CPUs: 3 threads
    write(tmp_path / "v2/a/b", cpu__max="max 100000")
    assert cgroup_cpu_limit(proc) == 3
    write(tmp_path / "v2/a/b", cpu__max="50000 100000")  # half a CPU: still 1
    assert cgroup_cpu_limit(proc) == 1


def test_a_v1_quota_is_read_where_the_cpu_controller_is_mounted(tmp_path) -> None:
    """A hybrid tree (this host's kind): v1's `cpu` hierarchy, the v2 one
    without a quota, and other v1 controllers ignored."""
    groups = "4:memory:/m\n2:cpu,cpuacct:/c\n0::/\n"
    proc = fake_proc(
        tmp_path,
        groups,
        {
            "memory": ("cgroup", "rw,memory"),
            "cpu": ("cgroup", "rw,cpu,cpuacct"),
            "unified": ("cgroup2", "rw"),
        },
    )
    write(
        tmp_path / "memory/m", cpu__cfs_quota_us="100000", cpu__cfs_period_us="100000"
    )
    write(tmp_path / "cpu", cpu__cfs_quota_us="-1", cpu__cfs_period_us="100000")
    write(tmp_path / "cpu/c", cpu__cfs_quota_us="400000", cpu__cfs_period_us="100000")
    write(tmp_path / "unified")  # no cpu.max: the cpu controller is v1's
    assert cgroup_cpu_limit(proc) == 4


def test_a_cgroup_outside_the_mounts_root_is_read_at_the_mount_point(tmp_path) -> None:
    """A container's `/proc/self/cgroup` may name its cgroup as the host
    sees it, while its mount shows that cgroup as its root."""
    proc = fake_proc(tmp_path, "0::/docker/abc\n", {"v2": ("cgroup2", "rw")})
    write(tmp_path / "v2", cpu__max="200000 100000")
    write(tmp_path / "v2/docker/abc", cpu__max="100000 100000")  # not this process's
    mountinfo = (proc / "mountinfo").read_text()
    for root in ("/docker/abc", "/other"):
        (proc / "mountinfo").write_text(mountinfo.replace("0:40 / ", f"0:40 {root} "))
        assert cgroup_cpu_limit(proc) == 2


@pytest.mark.parametrize(
    "cpu_max",
    ["max 100000", "garbled", "", None],
    ids=["max", "garbled", "empty", "missing"],
)
def test_no_quota_or_none_readable_is_no_limit(tmp_path, cpu_max) -> None:
    proc = fake_proc(tmp_path, "0::/\n", {"v2": ("cgroup2", "rw")})
    write(tmp_path / "v2")
    if cpu_max is not None:
        write(tmp_path / "v2", cpu__max=cpu_max)
    assert cgroup_cpu_limit(proc) is None


def test_no_proc_is_no_limit(tmp_path) -> None:
    assert cgroup_cpu_limit(tmp_path / "nowhere") is None


def test_the_available_cpus_are_the_fewer_of_affinity_and_quota(monkeypatch) -> None:
    mask = len(os.sched_getaffinity(0))
    monkeypatch.setattr(cpus, "_own_cgroup_limit", lambda: 1)
    assert available_cpus() == 1
    monkeypatch.setattr(cpus, "_own_cgroup_limit", lambda: mask + 5)
    assert available_cpus() == mask
    monkeypatch.setattr(cpus, "_own_cgroup_limit", lambda: None)
    assert available_cpus() == mask


def test_the_available_cpus_follow_the_affinity_mask() -> None:
    """In a process that binds itself to one CPU (`taskset`, a cpuset)."""
    script = (
        "import os\n"
        "from hetero.utils.cpus import available_cpus\n"
        "before = available_cpus()\n"
        "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
        "print(before, available_cpus())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.split() == [str(available_cpus()), "1"]


def test_the_environment_sets_the_default_thread_count(monkeypatch) -> None:
    monkeypatch.delenv(THREADS_VARIABLE, raising=False)
    assert default_threads() == available_cpus()
    monkeypatch.setenv(THREADS_VARIABLE, "7")
    assert default_threads() == 7
    for bad in ("0", "-2", "many", ""):
        monkeypatch.setenv(THREADS_VARIABLE, bad)
        with pytest.raises(
            ValueError, match=f"{THREADS_VARIABLE} must be a positive integer"
        ):
            default_threads()


def test_the_schedules_count_is_the_targets_else_the_default(monkeypatch) -> None:
    """`num_threads` (the schedules' hint) and whether parallel loops are
    outlined: serial only where the target pins one thread, even when the
    default is one."""
    monkeypatch.setenv(THREADS_VARIABLE, "1")
    assert num_threads(TargetAttr("llvm", {"num_threads": 5})) == 5
    assert num_threads(TargetAttr("llvm")) == num_threads(None) == 1
    assert outlines_parallel_loops(TargetAttr("llvm")) and outlines_parallel_loops(None)
    assert not outlines_parallel_loops(TargetAttr("llvm", {"num_threads": 1}))
