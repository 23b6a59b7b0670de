"""`hetero.utils.dense_resources`: blobs decoded once, and re-decoded when
the blob behind a key changes."""

from __future__ import annotations

import numpy as np
from hetero.utils.dense_resources import _blobs, dense_resource, resource_bytes
from xdsl.dialects.builtin import TensorType, f32


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
