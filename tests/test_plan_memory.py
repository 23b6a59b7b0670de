"""`plan-memory`: offsets never overlap for live-together buffers, and planned
programs compute what the reference interpreter computes."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import hetero
from hetero.context import parse_module
from hetero.interpreter.relay import run
from hetero.transforms.plan_memory import ALIGNMENT, Buffer, assign_offsets

CHAIN = """
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %0 = relay.nn.softmax %x : tensor<64x64xf32>
    %1 = relay.nn.dense %0, %x : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %2 = relay.nn.softmax %1 : tensor<64x64xf32>
    %3 = relay.nn.dense %2, %0 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %4 = relay.nn.softmax %3 : tensor<64x64xf32>
    %5 = relay.add %4, %2 : tensor<64x64xf32>
    relay.return %5 : tensor<64x64xf32>
  }
}
"""


def test_planned_program_matches_the_reference():
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    f = hetero.compile(CHAIN)
    np.testing.assert_allclose(f(x), run(parse_module(CHAIN), x), rtol=1e-5, atol=1e-6)
    planned, requested = f.memory["cpu:0"]
    assert planned < requested  # some intermediates share bytes
    assert planned >= 3 * 64 * 64 * 4  # %0, %2 and one more are live together


def test_distinct_cpu_devices_get_distinct_arenas():
    text = CHAIN.replace(
        "%2 = relay.nn.softmax %1 : tensor<64x64xf32>",
        "%c = relay.device_copy %1 from #target.vdevice<cpu:0> to #target.vdevice<cpu:1> : tensor<64x64xf32>\n"
        "    %2 = relay.nn.softmax %c : tensor<64x64xf32>",
    ).replace(
        "%0 = relay.nn.softmax %x : tensor<64x64xf32>",
        "%z = relay.on_device %x to #target.vdevice<cpu:0> fixed : tensor<64x64xf32>\n"
        "    %0 = relay.nn.softmax %z : tensor<64x64xf32>",
    )
    x = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32)
    f = hetero.compile(text)
    np.testing.assert_allclose(f(x), run(parse_module(text), x), rtol=1e-5, atol=1e-6)
    assert set(f.memory) == {"cpu:0", "cpu:1"}


intervals = st.lists(
    st.tuples(st.integers(1, 64), st.integers(0, 20), st.integers(0, 5)), max_size=25
)


@settings(max_examples=200, deadline=None)
@given(intervals)
def test_live_together_buffers_never_share_bytes(specs):
    buffers = [
        Buffer(None, size * ALIGNMENT, first, first + length)  # type: ignore[arg-type]
        for size, first, length in specs
    ]
    arena = assign_offsets(buffers)
    for i, a in enumerate(buffers):
        assert a.offset % ALIGNMENT == 0 and a.offset + a.size <= arena
        for b in buffers[i + 1 :]:
            if a.overlaps_in_time(b):
                assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset
    # Never worse than no reuse at all.
    assert arena <= sum(b.size for b in buffers)
