// RUN: HETERO_ROUNDTRIP
// RUN: HETERO_GENERIC_ROUNDTRIP

// relay.nn.conv2d_transpose: NCHW data, IOHW weight ([C, O / groups, KH,
// KW]); (H - 1) * sh - pt - pb + dh * (KH - 1) + oph + 1 output rows.
relay.func @f(%x: tensor<1x4x5x6xf32>, %w: tensor<4x3x3x2xf32>, %d: tensor<?x4x?x6xf32>) -> tensor<1x3x7x7xf32> {
  %0 = relay.nn.conv2d_transpose %x, %w : (tensor<1x4x5x6xf32>, tensor<4x3x3x2xf32>) -> tensor<1x3x7x7xf32>
  %1 = relay.nn.conv2d_transpose %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 0, 1>, output_padding = array<i64: 1, 0>, groups = 2 : i64} : (tensor<1x4x5x6xf32>, tensor<4x3x3x2xf32>) -> tensor<1x6x11x11xf32>
  %2 = relay.nn.conv2d_transpose %d, %w {dilation = array<i64: 2, 3>} : (tensor<?x4x?x6xf32>, tensor<4x3x3x2xf32>) -> tensor<?x3x?x9xf32>
  relay.return %0 : tensor<1x3x7x7xf32>
}

// CHECK:      %0 = relay.nn.conv2d_transpose %x, %w : (tensor<1x4x5x6xf32>, tensor<4x3x3x2xf32>) -> tensor<1x3x7x7xf32>
// CHECK-NEXT: %1 = relay.nn.conv2d_transpose %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 0, 1>, output_padding = array<i64: 1, 0>, groups = 2 : i64} : (tensor<1x4x5x6xf32>, tensor<4x3x3x2xf32>) -> tensor<1x6x11x11xf32>
// CHECK-NEXT: %2 = relay.nn.conv2d_transpose %d, %w {dilation = array<i64: 2, 3>} : (tensor<?x4x?x6xf32>, tensor<4x3x3x2xf32>) -> tensor<?x3x?x9xf32>

// CHECK-GENERIC: %1 = "relay.nn.conv2d_transpose"(%x, %w) <{strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 0, 1>, output_padding = array<i64: 1, 0>, groups = 2 : i64}>
