"""The test session's environment."""

import os

from hetero.lowering.compile_cache import CACHE_VARIABLE

# Every test compiles afresh (tests read the passes' timings and compare
# builds); tests/test_compile_cache.py turns the cache on where it tests it.
os.environ[CACHE_VARIABLE] = ""
