"""The test session's environment."""

import os
from collections.abc import Callable
from typing import Any

import pytest

from hetero.lowering.compile_cache import CACHE_VARIABLE
from hetero.utils import dense_resources

# Every test compiles afresh (tests read the passes' timings and compare
# builds); tests/test_compile_cache.py turns the cache on where it tests it.
os.environ[CACHE_VARIABLE] = ""

MODEL_CORPUS_VARIABLE = "HETERO_MODEL_CORPUS"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "models: the model corpus (tests/test_model_corpus.py), minutes of exports and "
        f"compiles: run with {MODEL_CORPUS_VARIABLE}=1 or -m models",
    )


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    """The `models` tests are skipped unless asked for: by the environment
    variable, or by a `-m` expression that names them."""
    if (
        os.environ.get(MODEL_CORPUS_VARIABLE) == "1"
        or "models" in config.option.markexpr
    ):
        return
    skip = pytest.mark.skip(
        reason=f"set {MODEL_CORPUS_VARIABLE}=1 or pass -m models to run"
    )
    for item in items:
        if item.get_closest_marker("models") is not None:
            item.add_marker(skip)


@pytest.fixture
def background_jobs(monkeypatch: pytest.MonkeyPatch) -> list[Callable[[], Any]]:
    """The blobs queued for the background thread (`dense_resource_later`)
    while the test runs."""
    queued: list[Callable[[], Any]] = []
    submit = dense_resources.later

    def recording(job: Callable[[], Any]) -> Any:
        queued.append(job)
        return submit(job)

    monkeypatch.setattr(dense_resources, "later", recording)
    return queued
