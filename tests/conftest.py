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
