"""Malformed input never crashes hetero-opt.

Truncated and mutated copies of every FileCheck input are fed to `hetero-opt`
(in process, so the suite stays fast); each run must end with exit code 0 or
with a diagnostic and exit code 1 — never the internal-error path (exit 2),
which is where a Python exception would have surfaced.
"""

import random
import re
from pathlib import Path

import pytest

from hetero.tools.hetero_opt import main

ROOT = Path(__file__).parent
INPUTS = sorted(
    p for p in (ROOT / "filecheck").rglob("*.mlir") if "RUN:" in p.read_text()
)
MUTANTS_PER_FILE = 12


def _chunks(text: str) -> list[str]:
    return [c for c in re.split(r"^// -----.*$", text, flags=re.MULTILINE) if c.strip()]


def _mutate(text: str, rng: random.Random) -> str:
    """One random edit of the kinds a user's typo or a broken tool produces."""
    pos = rng.randrange(len(text))
    end = min(len(text), pos + rng.randint(1, 12))
    mutation = rng.choice(["truncate", "delete", "insert", "number", "duplicate", "swap"])
    match mutation:
        case "truncate":
            return text[:pos]
        case "delete":
            return text[:pos] + text[end:]
        case "insert":
            return text[:pos] + rng.choice("<>{}()[],:=%@#!?\"x0-") + text[pos:]
        case "number":
            return re.sub(r"\d+", lambda _m: str(rng.choice([0, -1, 7, 99999999999])), text, count=1)
        case "duplicate":
            lines = text.splitlines(keepends=True)
            i = rng.randrange(len(lines))
            return "".join(lines[: i + 1] + lines[i:])
        case _:
            words = re.findall(r"[\w.]+", text)
            a, b = rng.choice(words), rng.choice(words)
            return text.replace(a, b, 1)


def _cases() -> list[tuple[str, int]]:
    return [(str(p.relative_to(ROOT)), i) for p in INPUTS for i in range(MUTANTS_PER_FILE)]


@pytest.mark.parametrize("path, seed", _cases())
def test_mutated_input_ends_in_a_diagnostic(path: str, seed: int, tmp_path: Path, capsys):
    rng = random.Random(f"{path}:{seed}")
    chunks = _chunks((ROOT / path).read_text())
    mutant = _mutate(rng.choice(chunks), rng)
    source = tmp_path / "mutant.mlir"
    source.write_text(mutant)
    code = main([str(source), "-o", str(tmp_path / "out.mlir")])
    err = capsys.readouterr().err
    assert code in (0, 1), f"internal error on mutant:\n{mutant}\n{err}"
    if code == 1:
        assert "error:" in err
        assert not (tmp_path / "out.mlir").exists()
