"""The compile cache (`hetero.lowering.compile_cache`).

A program compiled again must come from the cache and compute what NumPy
computes; anything the code depends on must change the key, in any process
alike; a broken entry or an unwritable directory must cost a compile, never
a wrong or failed one.
"""

import os
import shutil
import stat
import subprocess
import sys
import warnings
from dataclasses import replace

import numpy as np
import pytest
from test_parallel_compile import PROGRAM, N, X

import hetero
from hetero.context import parse_module
from hetero.lowering import compile_cache
from hetero.lowering.compile_cache import (
    CACHE_VARIABLE,
    HEADER,
    HIT,
    MAC_BYTES,
    SECRET,
    cache_directory,
    cache_key,
)
from hetero.lowering.cpu_codegen import _lower_and_compile, compile_cpu
from hetero.lowering.llvm_codegen import CpuTarget

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
    return sorted(p.name for p in directory.iterdir() if p.suffix == ".entry")


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
        "from hetero.lowering.cpu_codegen import _lower_and_compile, compile_cpu\n"
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
        "from hetero.lowering.llvm_codegen import CpuTarget\n"
        "from test_parallel_compile import PROGRAM\n"
        "print(cache_key(parse_module(PROGRAM), CpuTarget()))\n"
    )
    keys = {python(script, PYTHONHASHSEED=seed) for seed in ("1", "2")}
    assert len(keys) == 1 and len(keys.pop().strip()) == 64


def test_an_entry_reads_back_as_the_code_written():
    """Object file, bitcode and each function's `FunctionInfo` (declared,
    private, several results through a wrapper), but not the timings."""
    code = _lower_and_compile(parse_module(PROGRAM), CpuTarget(), None)
    secret, key = b"s" * 32, "0" * 64
    entry = compile_cache._encode(secret, key, code)
    assert compile_cache._decode(secret, key, entry) == replace(code, timings={})


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
    with pytest.warns(RuntimeWarning, match="compile cache cannot write to") as caught:  # noqa: PT031
        compiled = hetero.compile(RELAY)
        native = compile_cpu(parse_module(PROGRAM), jobs=2, cached=True)
    assert len(caught) == 1
    shown = warnings.formatwarning(
        caught[0].message, caught[0].category, caught[0].filename, caught[0].lineno
    )
    assert shown.count("\n") == 1 and ": warning: hetero's compile cache" in shown
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


def test_eviction_touches_only_entries_and_the_caches_stale_temporary_files(
    cache, monkeypatch
):
    """Files of others (a `.tmp` among them, however old) stay; a temporary
    file of the cache's own naming left by a dead writer goes."""
    theirs = cache / "results.pickle"
    theirs.write_bytes(b"x" * 4096)
    foreign, dead, live = (
        cache / "tmpdead.tmp",
        cache / "hetero-dead1234.tmp",
        cache / "hetero-live1234.tmp",
    )
    for path in (foreign, dead, live):
        path.write_bytes(b"")
    os.utime(foreign, (0, 0))
    os.utime(dead, (0, 0))
    monkeypatch.setattr(compile_cache, "MAX_BYTES", 0)
    hetero.compile(RELAY)
    assert entries(cache) == []  # the new entry went
    assert theirs.stat().st_size == 4096 and foreign.exists()
    assert live.exists() and not dead.exists()
    assert (cache / SECRET).exists()


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


UNARY = """
relay.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = relay.OP %x : tensor<8xf32>
  relay.return %r : tensor<8xf32>
}
"""
TANH, EXP = UNARY.replace("OP", "tanh"), UNARY.replace("OP", "exp")
V = np.linspace(-2, 2, 8, dtype=np.float32)


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def refused(directory, match: str = "does not use"):
    """Expects `hetero.compile` to refuse `directory` (one warning) and
    compile right without it, writing nothing there."""
    before = sorted(directory.iterdir())
    with pytest.warns(RuntimeWarning, match=match) as caught:
        compiled = hetero.compile(TANH)
    assert len(caught) == 1 and str(directory) in str(caught[0].message)
    assert HIT not in compiled.timings
    np.testing.assert_allclose(compiled(V), np.tanh(V), rtol=1e-5, atol=1e-6)
    assert sorted(directory.iterdir()) == before


def another_users(path, monkeypatch) -> None:
    """Makes `path` another user's: chown'd as root, else the owner checks
    are told this process is another user."""
    try:
        os.chown(path, 12345, -1, follow_symlinks=False)
    except OSError:  # not root
        me = os.geteuid()
        monkeypatch.setattr(compile_cache.os, "geteuid", lambda: me + 1)


def test_the_directory_and_the_parents_made_are_0700_under_umask_000(
    tmp_path, monkeypatch
):
    directory = tmp_path / "home" / "cache" / "hetero"
    monkeypatch.setenv(CACHE_VARIABLE, str(directory))
    umask = os.umask(0)
    try:
        hetero.compile(TANH)
    finally:
        os.umask(umask)
    assert [mode(p) for p in (directory, *directory.parents[:2])] == [0o700] * 3
    assert HIT in hetero.compile(TANH).timings


@pytest.mark.parametrize(
    "bits", [0o770, 0o707, 0o1777], ids=["group", "world", "sticky"]
)
def test_a_directory_others_can_write_is_refused(cache, bits):
    """A group's, a world's, a shared sticky one like /tmp: anyone there
    could plant an entry or replace one."""
    cache.chmod(bits)
    refused(cache, match=f"mode {bits:o}")


def test_a_directory_of_another_user_is_refused(cache, monkeypatch):
    """`sudo` keeping HOME: root must not run code from a user's cache."""
    another_users(cache, monkeypatch)
    refused(cache, match="is owned by user")


def test_a_link_is_judged_by_its_directory(tmp_path, monkeypatch):
    target = tmp_path / "target"
    target.mkdir(0o700)
    link = tmp_path / "link"
    link.symlink_to(target)
    monkeypatch.setenv(CACHE_VARIABLE, str(link))
    hetero.compile(TANH)
    assert HIT in hetero.compile(TANH).timings and len(entries(target)) == 1
    target.chmod(0o777)
    refused(link, match="others can write")


def test_the_secret_is_the_users_alone(cache):
    hetero.compile(TANH)
    secret = cache / SECRET
    status = os.lstat(secret)
    assert stat.S_ISREG(status.st_mode) and mode(secret) == 0o600
    assert status.st_uid == os.geteuid() and status.st_size == 32


@pytest.mark.parametrize("problem", ["mode", "size", "link"])
def test_a_secret_others_may_know_turns_the_cache_off(cache, tmp_path, problem):
    hetero.compile(TANH)
    secret = cache / SECRET
    if problem == "mode":
        secret.chmod(0o644)
    elif problem == "size":
        secret.write_bytes(b"short")
    else:
        elsewhere = tmp_path.parent / f"{tmp_path.name}-secret"
        shutil.move(secret, elsewhere)
        secret.symlink_to(elsewhere)
    refused(cache, match="its secret")


def test_a_secret_of_another_user_turns_the_cache_off(cache):
    hetero.compile(TANH)
    try:
        os.chown(cache / SECRET, 12345, -1)
    except PermissionError:
        pytest.skip("only root can give a file away")
    refused(cache, match="its secret .* is owned by user")


def flip(path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0x10
    path.write_bytes(bytes(data))


def positions(path) -> dict[str, int]:
    """A byte in each part of the entry at `path`."""
    _, _, functions, object_file, _ = HEADER.unpack_from(path.read_bytes())
    return {
        "magic": 2,
        "format": 8,
        "sizes": 16,
        "functions": HEADER.size + 10,
        "object": HEADER.size + functions + object_file // 2,
        "bitcode": HEADER.size + functions + object_file + 40,
        "mac": path.stat().st_size - MAC_BYTES // 2,
    }


@pytest.mark.parametrize(
    "part", ["magic", "format", "sizes", "functions", "object", "bitcode", "mac"]
)
def test_a_corrupted_entry_is_compiled_again(cache, part):
    hetero.compile(TANH)
    (entry,) = entries(cache)
    flip(cache / entry, positions(cache / entry)[part])
    compiled = hetero.compile(TANH)
    assert HIT not in compiled.timings
    np.testing.assert_allclose(compiled(V), np.tanh(V), rtol=1e-5, atol=1e-6)
    assert HIT in hetero.compile(TANH).timings  # replaced


@pytest.mark.parametrize("length", [0, 10, HEADER.size + MAC_BYTES, -1])
def test_a_truncated_entry_is_compiled_again(cache, length):
    hetero.compile(TANH)
    (entry,) = entries(cache)
    data = (cache / entry).read_bytes()
    (cache / entry).write_bytes(data[:length])
    compiled = hetero.compile(TANH)
    assert HIT not in compiled.timings
    np.testing.assert_allclose(compiled(V), np.tanh(V), rtol=1e-5, atol=1e-6)


def test_an_entry_copied_over_another_key_is_refused(cache):
    """Each entry signs its own key: exp's code under tanh's key is not
    tanh's."""
    hetero.compile(TANH)
    (tanh,) = entries(cache)
    hetero.compile(EXP)
    (exp,) = set(entries(cache)) - {tanh}
    shutil.copy(cache / exp, cache / tanh)
    compiled = hetero.compile(TANH)
    assert HIT not in compiled.timings
    np.testing.assert_allclose(compiled(V), np.tanh(V), rtol=1e-5, atol=1e-6)


def test_an_entry_planted_without_the_secret_is_refused(cache):
    """Another user can compute a key (compiling the same program) and write
    a well-formed entry of their own code, but not sign it with this user's
    secret; signed with it, the same entry would be run."""
    hetero.compile(EXP)
    (exp,) = entries(cache)
    secret = (cache / SECRET).read_bytes()
    code = compile_cache._decode(
        secret, exp.removesuffix(".entry"), (cache / exp).read_bytes()
    )
    (cache / exp).unlink()
    hetero.compile(TANH)
    (tanh,) = entries(cache)
    key = tanh.removesuffix(".entry")
    (cache / tanh).write_bytes(compile_cache._encode(bytes(32), key, code))
    compiled = hetero.compile(TANH)
    assert HIT not in compiled.timings
    np.testing.assert_allclose(compiled(V), np.tanh(V), rtol=1e-5, atol=1e-6)
    (cache / tanh).write_bytes(compile_cache._encode(secret, key, code))
    np.testing.assert_allclose(hetero.compile(TANH)(V), np.exp(V), rtol=1e-5)
