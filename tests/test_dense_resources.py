"""`hetero.utils.dense_resources`: blobs decoded once, and re-decoded when
the blob behind a key changes."""

from __future__ import annotations

import numpy as np
from hetero.dialects import relay
from hetero.utils.dense_resources import (
    _blobs,
    dense_resource,
    print_with_resources,
    resource_bytes,
)
from xdsl.dialects.builtin import ModuleOp, TensorType, f32, f64


def test_a_blob_is_decoded_once_and_again_when_it_changes() -> None:
    values = np.arange(6, dtype=np.float32)
    attr = dense_resource(values, TensorType(f32, [6]), "decoded_once")
    first = resource_bytes(attr)
    assert first is resource_bytes(attr)
    np.testing.assert_array_equal(np.frombuffer(first, np.float32), values)
    key = attr.resource_handle.data
    other = np.full(6, 2.5, np.float32)
    _blobs().parse_resource(key, "0x04000000" + other.tobytes().hex())
    np.testing.assert_array_equal(np.frombuffer(resource_bytes(attr), np.float32), other)


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
    assert f"{attr.resource_handle.data}: \"0x04000000{values.tobytes().hex()}\"" in text
