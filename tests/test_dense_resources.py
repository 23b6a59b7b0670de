"""`hetero.utils.dense_resources`: blobs decoded once, and re-decoded when
the blob behind a key changes."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp, TensorType, f32, f64

from hetero.context import parse_module
from hetero.dialects import relay
from hetero.utils.background import later
from hetero.utils.dense_resources import (
    BlobScope,
    _blobs,
    dense_resource,
    dense_resource_later,
    print_with_resources,
    resource_bytes,
)


def test_a_blob_is_decoded_once_and_again_when_it_changes() -> None:
    values = np.arange(6, dtype=np.float32)
    attr = dense_resource(values, TensorType(f32, [6]), "decoded_once")
    first = resource_bytes(attr)
    assert first is resource_bytes(attr)
    np.testing.assert_array_equal(np.frombuffer(first, np.float32), values)
    key = attr.resource_handle.data
    other = np.full(6, 2.5, np.float32)
    _blobs().parse_resource(key, "0x04000000" + other.tobytes().hex())
    np.testing.assert_array_equal(
        np.frombuffer(resource_bytes(attr), np.float32), other
    )


def test_a_new_blob_becomes_text_only_when_read_as_text() -> None:
    values = np.arange(5, dtype=np.float64)
    attr = dense_resource(values, TensorType(f64, [5]), "lazy_blob")
    raw = resource_bytes(attr)
    assert raw == values.tobytes() and raw is resource_bytes(attr)
    key = attr.resource_handle.data
    # MLIR's blob: "0x", the alignment (8 for f64) as a little-endian u32, the bytes.
    assert _blobs().lookup(key) == "0x08000000" + values.tobytes().hex()
    assert resource_bytes(attr) is raw


def test_a_printed_module_carries_the_blobs_of_new_resources() -> None:
    values = np.linspace(-1, 1, 7, dtype=np.float32)
    attr = dense_resource(values, TensorType(f32, [7]), "printed_blob")
    module = ModuleOp([relay.ConstantOp(attr)])
    text = print_with_resources(module)
    assert f'{attr.resource_handle.data}: "0x04000000{values.tobytes().hex()}"' in text


def test_a_scope_releases_the_blobs_made_in_it() -> None:
    kept = dense_resource(np.ones(3, np.float32), TensorType(f32, [3]), "kept")
    with BlobScope():
        made = dense_resource(np.zeros(3, np.float32), TensorType(f32, [3]), "made")
        held = np.frombuffer(resource_bytes(made), np.float32)
        with BlobScope() as inner:
            parsed = parse_module(
                "%c = relay.constant dense_resource<parsed_blob> : tensor<1xf32>\n"
                '{-# dialect_resources: {builtin: {parsed_blob: "0x0400000000000000"}} #-}'
            )
            inner.keep()
    assert made.resource_handle.data not in _blobs()._blob_storage
    assert kept.resource_handle.data in _blobs()._blob_storage
    np.testing.assert_array_equal(held, np.zeros(3, np.float32))  # arrays keep theirs
    # The kept inner scope's blob was the outer scope's too.
    (constant,) = parsed.ops
    assert constant.value.resource_handle.data not in _blobs()._blob_storage


def test_a_scope_releases_only_its_own_threads_blobs() -> None:
    """Made in another thread while the scope is open, a blob is the other
    thread's (a model imported, a network compiled meanwhile)."""
    made_elsewhere: list[DenseResourceAttr] = []
    with BlobScope():
        other = threading.Thread(
            target=lambda: made_elsewhere.append(
                dense_resource(np.ones(2, np.float32), TensorType(f32, [2]), "theirs")
            )
        )
        other.start()
        other.join()
    assert made_elsewhere[0].resource_handle.data in _blobs()._blob_storage


WEIGHTED = """
relay.func @main(%x: tensor<{n}x64xf32>) -> tensor<{n}x8xf32> {{
  %w = relay.constant dense_resource<scoped_weight> : tensor<8x64xf32>
  %two = relay.constant dense<2.0> : tensor<8x64xf32>
  %w2 = relay.multiply %w, %two : tensor<8x64xf32>
  %y = relay.nn.dense %x, %w2 : (tensor<{n}x64xf32>, tensor<8x64xf32>) -> tensor<{n}x8xf32>
  relay.return %y : tensor<{n}x8xf32>
}}
{{-# dialect_resources: {{builtin: {{scoped_weight: "0x04000000{blob}"}}}} #-}}
"""


def test_compile_keeps_no_blob_of_its_own() -> None:
    """The weights `hetero.compile` folds (and, from text, parses) stay with
    the compiled function only: compiling again and again holds no more
    memory.  A program with dynamic shapes keeps its parsed weights for the
    compiles to come."""
    import hetero

    w = np.arange(8 * 64, dtype=np.float32).reshape(8, 64) / 512
    text = WEIGHTED.format(n=2, blob=w.tobytes().hex())
    gc.collect()  # earlier tests' dropped constants release their blobs now
    before = set(_blobs()._blob_storage)
    compiled = [hetero.compile(text) for _ in range(3)]
    assert set(_blobs()._blob_storage) == before
    x = np.random.default_rng(0).standard_normal((2, 64)).astype(np.float32)
    for f in compiled:
        np.testing.assert_allclose(f(x), x @ (2 * w).T, rtol=1e-5, atol=1e-5)
    dynamic = hetero.compile(WEIGHTED.format(n="?", blob=w.tobytes().hex()))
    np.testing.assert_allclose(dynamic(x), x @ (2 * w).T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dynamic(x[:1]), x[:1] @ (2 * w).T, rtol=1e-5, atol=1e-5)


def test_a_blob_lives_as_long_as_a_module_that_refers_to_it() -> None:
    """An imported model's weights go with the last module holding them: a
    clone keeps them after the original is gone, and dropping both frees
    them (a process importing model after model held every one's)."""
    values = np.arange(32, dtype=np.float32)
    attr = dense_resource(values, TensorType(f32, [32]), "owned_weight")
    key = attr.resource_handle.data
    module = ModuleOp([relay.ConstantOp(attr)])
    del attr
    clone = module.clone()
    del module
    gc.collect()
    (constant,) = clone.ops
    read = np.frombuffer(resource_bytes(constant.value), np.float32)  # type: ignore[attr-defined]
    np.testing.assert_array_equal(read, values)
    del clone, constant
    gc.collect()
    assert key not in _blobs()._blob_storage  # pyright: ignore[reportPrivateUsage]


def test_handles_are_unique_and_never_given_again() -> None:
    """The first blob of a hint gets the hint, the others `_N`; a handle
    released with its scope is not given to a later blob."""
    with BlobScope():
        first, second = (
            dense_resource(np.ones(2, np.float32), TensorType(f32, [2]), "handle_test")
            for _ in range(2)
        )
    third = dense_resource(np.ones(2, np.float32), TensorType(f32, [2]), "handle_test")
    names = [a.resource_handle.data for a in (first, second, third)]
    assert names == ["handle_test", "handle_test_0", "handle_test_1"]


def test_a_blob_made_later_is_read_once_made() -> None:
    gate = threading.Event()
    values = np.arange(8, dtype=np.float32) / 3

    def make() -> np.ndarray:
        gate.wait(5)
        return values.copy()

    attr = dense_resource_later(make, TensorType(f32, [8]), "made_later")
    later(gate.set)  # queued after the blob: reading it must wait for both
    raw = resource_bytes(attr)
    assert gate.is_set()
    assert isinstance(raw, memoryview)  # the made array is the blob's own: no copy
    np.testing.assert_array_equal(np.frombuffer(raw, np.float32), values)
    text = print_with_resources(ModuleOp([relay.ConstantOp(attr)]))
    assert f'{attr.resource_handle.data}: "0x04000000{values.tobytes().hex()}"' in text


def test_a_blob_made_later_may_read_one_made_before() -> None:
    first = dense_resource_later(
        lambda: np.full(4, 2.0, np.float32), TensorType(f32, [4]), "first_made"
    )
    second = dense_resource_later(
        lambda: np.frombuffer(resource_bytes(first), np.float32) * 3,
        TensorType(f32, [4]),
        "second_made",
    )
    np.testing.assert_array_equal(
        np.frombuffer(resource_bytes(second), np.float32), 6.0
    )


def test_a_blob_that_failed_to_be_made_fails_where_it_is_read() -> None:
    def make() -> np.ndarray:
        raise ValueError("the weight could not be packed")

    attr = dense_resource_later(make, TensorType(f32, [2]), "failed_blob")
    with pytest.raises(ValueError, match="could not be packed"):
        resource_bytes(attr)
    with pytest.raises(ValueError, match="could not be packed"):
        print_with_resources(ModuleOp([relay.ConstantOp(attr)]))
