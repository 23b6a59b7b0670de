"""The compile cache (`hetero.lowering.compile_cache`).

A program compiled again must come from the cache and compute what NumPy
computes; anything the code depends on must change the key, in any process
alike; a broken entry or an unwritable directory must cost a compile, never
a wrong or failed one.
"""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hetero.context import parse_module
from hetero.lowering import compile_cache
from hetero.lowering.compile_cache import (
    CACHE_VARIABLE,
    HIT,
    cache_directory,
    cache_key,
)
from hetero.lowering.cpu_codegen import compile_cpu
from hetero.runtime.cpu import CpuTarget
from test_parallel_compile import PROGRAM, X, N

import hetero

RELAY = """
relay.func @main(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %y = relay.nn.dense %x, %w : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %r = relay.relu %y : tensor<2x4xf32>
  relay.return %r : tensor<2x4xf32>
}
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache directory, in force for the test."""
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path))
    return tmp_path


def entries(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.suffix == ".pickle")


def python(script: str, **env: str) -> str:
    """What `script` prints, run in a new process next to these tests (and
    with the caller's PYTHONPATH, where hetero's dependencies may be)."""
    tests = os.path.dirname(__file__)
    path = os.pathsep.join(filter(None, [tests, os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=tests,
        env={**os.environ, "PYTHONPATH": path, **env},
    ).stdout


def test_a_recompiled_program_comes_from_the_cache(cache):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 8)).astype(np.float32)
    w = rng.standard_normal((4, 8)).astype(np.float32)
    first = hetero.compile(RELAY)
    assert HIT not in first.timings and "llvm-optimize" in first.timings
    assert len(entries(cache)) == 1
    again = hetero.compile(RELAY)
    assert set(again.timings) & {HIT, "llvm-optimize", "convert-tir-to-scf"} == {HIT}
    assert len(entries(cache)) == 1
    expected = np.maximum(x @ w.T, 0)
    for compiled in (first, again):
        np.testing.assert_allclose(compiled(x, w), expected, rtol=1e-5, atol=1e-6)


def test_a_network_with_weights_reparsed_comes_from_the_cache(cache):
    """Parsed again while the first module lives, the weight's blob gets a
    new handle (`weight_0`): the host function's list of constants (run-time
    arguments) is no part of the key."""
    w = np.arange(4 * 32, dtype=np.float32).reshape(4, 32) / 100
    blob = "0x04000000" + w.tobytes().hex()
    text = f"""
relay.func @main(%x: tensor<2x32xf32>) -> tensor<2x4xf32> {{
  %w = relay.constant dense_resource<weight> : tensor<4x32xf32>
  %y = relay.nn.dense %x, %w : (tensor<2x32xf32>, tensor<4x32xf32>) -> tensor<2x4xf32>
  relay.return %y : tensor<2x4xf32>
}}
{{-# dialect_resources: {{builtin: {{weight: "{blob}"}}}} #-}}
"""
    first, second = parse_module(text), parse_module(text)
    hetero.compile(first)
    again = hetero.compile(second)
    assert HIT in again.timings
    x = np.random.default_rng(1).standard_normal((2, 32)).astype(np.float32)
    np.testing.assert_allclose(again(x), x @ w.T, rtol=1e-5, atol=1e-6)


def test_each_chunk_of_a_parallel_compile_is_cached(cache):
    def run():
        native = compile_cpu(parse_module(PROGRAM), jobs=2, cached=True)
        y = np.zeros(N, np.float32)
        return native, native.function("host")(X, y, 1.5), y

    first, results, y = run()
    assert len(entries(cache)) == 2 and HIT not in first.timings
    again, results_again, y_again = run()
    assert HIT in again.timings
    assert not any(s.startswith(("convert-", "llvm-optimize")) for s in again.timings)
    expected = np.maximum(X * np.float32(1.5), 0)
    np.testing.assert_allclose(y_again, expected, rtol=1e-6)
    np.testing.assert_array_equal(y, y_again)
    assert results == results_again
    assert "host:" in again.assembly()  # the optimised IR comes back too


def test_code_from_the_cache_runs_parallel_loops_in_a_new_process(cache):
    """A hit skips `define_launchers`, which loads the thread pool: a new
    process that only loads code must load the pool all the same."""
    script = (
        "import numpy as np\n"
        "from hetero.context import parse_module\n"
        "from hetero.lowering.cpu_codegen import compile_cpu\n"
        "from test_parallel_compile import PROGRAM, X, N\n"
        "native = compile_cpu(parse_module(PROGRAM), jobs=1, cached=True)\n"
        "y = np.zeros(N, np.float32)\n"
        "native.function('scale')(X, y, 1.5)\n"
        "print('compile-cache' in native.timings, y.tobytes().hex())\n"
    )
    outputs = [python(script).split() for _ in range(2)]
    assert [hit for hit, _ in outputs] == ["False", "True"]
    y = np.frombuffer(bytes.fromhex(outputs[1][1]), np.float32)
    np.testing.assert_allclose(y, np.maximum(X * np.float32(1.5), 0), rtol=1e-6)


def test_compile_cpu_caches_only_when_asked(cache):
    module = parse_module(PROGRAM)
    compile_cpu(module, jobs=1)
    assert entries(cache) == []
    assert not any(op.name == "tir.prim_func" for op in module.ops)  # lowered here


def test_the_key_covers_module_target_and_code(monkeypatch):
    module = parse_module(PROGRAM)
    target = CpuTarget()
    key = cache_key(module, target)
    assert cache_key(parse_module(PROGRAM), CpuTarget()) == key
    assert cache_key(parse_module(PROGRAM.replace("37", "38")), target) != key
    assert cache_key(module, CpuTarget(opt_level=2)) != key
    assert cache_key(module, CpuTarget(mcpu="x86-64", mattr="+avx2")) != key
    monkeypatch.setattr(compile_cache, "default_threads", lambda: 1000)
    assert cache_key(module, target) != key
    monkeypatch.undo()
    monkeypatch.setattr(compile_cache, "code_digest", lambda: b"other code")
    assert cache_key(module, target) != key


def test_the_key_is_the_same_in_every_process():
    """A key made of something process-specific (an address, a hash seed)
    would make every process miss."""
    script = (
        "from hetero.context import parse_module\n"
        "from hetero.lowering.compile_cache import cache_key\n"
        "from hetero.runtime.cpu import CpuTarget\n"
        "from test_parallel_compile import PROGRAM\n"
        "print(cache_key(parse_module(PROGRAM), CpuTarget()))\n"
    )
    keys = {python(script, PYTHONHASHSEED=seed) for seed in ("1", "2")}
    assert len(keys) == 1 and len(keys.pop().strip()) == 64


def test_a_broken_entry_is_compiled_again_and_rewritten(cache):
    hetero.compile(RELAY)
    (entry,) = entries(cache)
    (cache / entry).write_bytes(b"not a pickle")
    compiled = hetero.compile(RELAY)
    assert HIT not in compiled.timings
    assert HIT in hetero.compile(RELAY).timings  # rewritten whole


def test_an_unwritable_directory_warns_once_and_compiles(tmp_path, monkeypatch):
    """Checked before the workers fork: one warning in this process, however
    many chunks and compiles."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(CACHE_VARIABLE, str(blocker / "cache"))
    with pytest.warns(RuntimeWarning, match="compile cache cannot write to") as caught:
        compiled = hetero.compile(RELAY)
        native = compile_cpu(parse_module(PROGRAM), jobs=2, cached=True)
    assert len(caught) == 1
    x, w = np.ones((2, 8), np.float32), np.ones((4, 8), np.float32)
    np.testing.assert_array_equal(compiled(x, w), np.full((2, 4), 8, np.float32))
    y = np.zeros(N, np.float32)
    native.function("scale")(X, y, 1.5)
    np.testing.assert_allclose(y, np.maximum(X * np.float32(1.5), 0), rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once a directory
        hetero.compile(RELAY)


def test_a_read_only_entry_still_serves(cache, monkeypatch):
    hetero.compile(RELAY)

    def refuse(*args, **kwargs):
        raise PermissionError("read-only")

    monkeypatch.setattr(compile_cache.os, "utime", refuse)
    assert HIT in hetero.compile(RELAY).timings


def test_the_least_recently_used_entries_go_past_the_limit(cache, monkeypatch):
    programs = [RELAY.replace("2x", f"{rows}x") for rows in (2, 3, 5)]
    hetero.compile(programs[0])
    (first,) = entries(cache)
    size = (cache / first).stat().st_size
    monkeypatch.setattr(compile_cache, "MAX_BYTES", int(2.5 * size))
    hetero.compile(programs[1])
    assert HIT in hetero.compile(programs[0]).timings  # used again: the newest
    hetero.compile(programs[2])  # three entries: the second goes
    assert len(entries(cache)) == 2
    assert HIT in hetero.compile(programs[0]).timings
    assert HIT not in hetero.compile(programs[1]).timings


def test_eviction_touches_only_entries_and_stale_temporary_files(cache, monkeypatch):
    theirs = cache / "results.pickle"
    theirs.write_bytes(b"x" * 4096)
    dead, live = cache / "tmpdead.tmp", cache / "tmplive.tmp"
    dead.write_bytes(b"")
    live.write_bytes(b"")
    os.utime(dead, (0, 0))
    monkeypatch.setattr(compile_cache, "MAX_BYTES", 0)
    hetero.compile(RELAY)
    assert entries(cache) == ["results.pickle"]  # the new entry went, theirs stayed
    assert theirs.stat().st_size == 4096 and live.exists() and not dead.exists()


def test_where_the_cache_is(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_VARIABLE, "")
    assert cache_directory() is None
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path))
    assert cache_directory() == tmp_path
    monkeypatch.delenv(CACHE_VARIABLE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_directory() == tmp_path / "xdg" / "hetero"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_directory() == tmp_path / ".cache" / "hetero"

    def homeless() -> None:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(compile_cache.Path, "home", homeless)
    assert cache_directory() is None


def test_no_cache_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_VARIABLE, "")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert HIT not in hetero.compile(RELAY).timings
    assert HIT not in hetero.compile(RELAY).timings
    assert list(tmp_path.iterdir()) == []
