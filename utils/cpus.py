"""How many CPUs this process may use, and so how many threads parallel loops take.

`os.cpu_count()` counts the machine's CPUs.  A process may use fewer: those
of its affinity mask (`taskset`, a container's cpuset) and, where its cgroup
has a CPU quota (a container's `--cpus`), only as much time as that many
CPUs have.  In a container allowed 4 of 64 CPUs, 64 threads each get a
sixteenth of a CPU and spend it waiting for one another, so
`available_cpus` takes the smaller of the two.

The quota is read through `/proc/self/cgroup` (this process's cgroup in each
hierarchy) and `/proc/self/mountinfo` (where each hierarchy is mounted):
cgroup v2's `cpu.max` and v1's `cpu.cfs_quota_us`/`cpu.cfs_period_us`, in
this process's cgroup and each ancestor (a parent's quota bounds its
children's), the tightest winning.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path, PurePosixPath

THREADS_VARIABLE = "HETERO_NUM_THREADS"
"""The thread count of parallel loops whose target and caller set none."""

PROC_SELF = Path("/proc/self")


def _whole_cpus(quota: str, period: str) -> int | None:
    """A quota of `quota` microseconds per `period` in CPUs, rounded up (a
    quota of 1.5 CPUs keeps 2 threads busy part of the time); None for no
    quota (`max` in v2, `-1` in v1)."""
    if quota == "max" or int(quota) <= 0:
        return None
    return max(1, math.ceil(int(quota) / int(period)))


def _v2_quota(group: Path) -> int | None:
    """`cpu.max`: `<quota> <period>`, or `max <period>`."""
    return _whole_cpus(*(group / "cpu.max").read_text().split())


def _v1_quota(group: Path) -> int | None:
    return _whole_cpus(
        (group / "cpu.cfs_quota_us").read_text().strip(),
        (group / "cpu.cfs_period_us").read_text().strip(),
    )


QUOTA_READERS: dict[str, Callable[[Path], int | None]] = {
    "cgroup2": _v2_quota,
    "cgroup": _v1_quota,
}
"""Filesystem type of a cgroup hierarchy → the reader of a cgroup's CPU quota."""


def _hierarchy(controllers: str) -> str | None:
    """The filesystem type of the hierarchy of a `/proc/self/cgroup` line
    listing `controllers` (empty: v2's one hierarchy) if it limits CPU time."""
    if not controllers:
        return "cgroup2"
    return "cgroup" if "cpu" in controllers.split(",") else None


def _mounts(mountinfo: str) -> Iterator[tuple[str, PurePosixPath, Path]]:
    """Filesystem type, root and mount point of each cgroup hierarchy that
    can limit CPU time (v1: one mounted with the `cpu` controller)."""
    for line in mountinfo.splitlines():
        fields, _, filesystem = line.partition(" - ")
        mount, kind = fields.split(), filesystem.split()
        if len(mount) < 5 or len(kind) < 3 or kind[0] not in QUOTA_READERS:
            continue
        if kind[0] == "cgroup2" or "cpu" in kind[2].split(","):
            yield kind[0], PurePosixPath(mount[3]), Path(mount[4])


def _ancestors(mount_point: Path, root: PurePosixPath, group: str) -> Iterator[Path]:
    """The directories of cgroup `group` and of its ancestors under a
    hierarchy mounted at `mount_point` from its cgroup `root`, innermost
    first.  A group outside `root` (another cgroup namespace's view) is read
    at the mount point: the process's own cgroup, as the mount shows it."""
    path = PurePosixPath(group)
    inner = path.relative_to(root) if path.is_relative_to(root) else PurePosixPath()
    directory = mount_point / inner
    yield directory
    yield from (d for d in directory.parents if d.is_relative_to(mount_point))


def cgroup_cpu_limit(proc: Path = PROC_SELF) -> int | None:
    """The tightest CPU quota on the process whose `/proc/<pid>` is `proc`,
    in CPUs rounded up; None where no quota is set or none can be read."""
    try:
        groups = (proc / "cgroup").read_text().splitlines()
        mountinfo = (proc / "mountinfo").read_text()
    except OSError:
        return None
    paths: dict[str, str] = {}
    for line in groups:
        _, controllers, group = line.split(":", 2)
        if (kind := _hierarchy(controllers)) is not None:
            paths[kind] = group
    limits: list[int] = []
    for kind, root, mount_point in _mounts(mountinfo):
        if kind not in paths:
            continue
        for directory in _ancestors(mount_point, root, paths[kind]):
            try:
                limit = QUOTA_READERS[kind](directory)
            except (
                OSError,
                ValueError,
                TypeError,
            ):  # no such cgroup or file, or garbled
                continue
            if limit is not None:
                limits.append(limit)
    return min(limits, default=None)


@cache
def _own_cgroup_limit() -> int | None:
    """`cgroup_cpu_limit()` of this process, read once: each schedule asks
    for the thread count, and reading the files costs a few hundred µs."""
    return cgroup_cpu_limit()


def available_cpus() -> int:
    """How many CPUs this process may use: those of its affinity mask
    (read at each call: it can change), fewer where its cgroup's CPU
    quota (read once) allows less time; at least 1."""
    if hasattr(os, "sched_getaffinity"):
        cpus = len(os.sched_getaffinity(0))
    else:
        cpus = os.cpu_count() or 1
    limit = _own_cgroup_limit()
    return max(1, min(cpus, limit) if limit is not None else cpus)


def default_threads() -> int:
    """How many threads a parallel loop takes where neither its target's
    `num_threads` nor its caller sets a count: `HETERO_NUM_THREADS`, else
    `available_cpus()`."""
    text = os.environ.get(THREADS_VARIABLE)
    if text is None:
        return available_cpus()
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"{THREADS_VARIABLE} must be a positive integer, got {text!r}")
    return int(text)


ARCH_ALIASES = {"arm64": "aarch64", "amd64": "x86_64"}
"""Other spellings of a triple's architecture (Apple's, BSD's)."""


def triple_arch(triple: str) -> str:
    """The architecture of an LLVM target triple (`aarch64-linux-gnu`), as
    `platform.machine()` names it on Linux: `x86_64`, `aarch64`.  A target
    of another architecture than the host's gets code that is written out,
    not run (`hetero.runtime.cpu.CpuMachine`)."""
    arch = triple.split("-")[0]
    return ARCH_ALIASES.get(arch, arch)
