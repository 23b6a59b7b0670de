// RUN: HETERO_ROUNDTRIP
// RUN: HETERO_GENERIC_ROUNDTRIP

// 3-D windows: NCDHW data, OIDHW weights; padding is front, top, left,
// back, bottom, right.
relay.func @f(%x: tensor<2x4x5x6x7xf32>, %w: tensor<6x2x2x3x3xf32>) -> tensor<2x6x4x4x5xf32> {
  %0 = relay.nn.conv3d %x, %w {groups = 2 : i64} : (tensor<2x4x5x6x7xf32>, tensor<6x2x2x3x3xf32>) -> tensor<2x6x4x4x5xf32>
  %1 = relay.nn.conv3d %x, %w {strides = array<i64: 2, 1, 2>, padding = array<i64: 1, 1, 0, 0, 1, 1>, dilation = array<i64: 1, 2, 1>, groups = 2 : i64} : (tensor<2x4x5x6x7xf32>, tensor<6x2x2x3x3xf32>) -> tensor<2x6x3x4x3xf32>
  %2 = relay.nn.max_pool3d %x {pool_size = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, ceil_mode = true} : (tensor<2x4x5x6x7xf32>) -> tensor<2x4x3x3x4xf32>
  %3 = relay.nn.avg_pool3d %x {pool_size = array<i64: 3, 3, 3>, padding = array<i64: 1, 1, 1, 1, 1, 1>, count_include_pad = true} : (tensor<2x4x5x6x7xf32>) -> tensor<2x4x5x6x7xf32>
  relay.return %0 : tensor<2x6x4x4x5xf32>
}

// CHECK:      %0 = relay.nn.conv3d %x, %w {groups = 2 : i64} : (tensor<2x4x5x6x7xf32>, tensor<6x2x2x3x3xf32>) -> tensor<2x6x4x4x5xf32>
// CHECK-NEXT: %1 = relay.nn.conv3d %x, %w {strides = array<i64: 2, 1, 2>, padding = array<i64: 1, 1, 0, 0, 1, 1>, dilation = array<i64: 1, 2, 1>, groups = 2 : i64} : (tensor<2x4x5x6x7xf32>, tensor<6x2x2x3x3xf32>) -> tensor<2x6x3x4x3xf32>
// CHECK-NEXT: %2 = relay.nn.max_pool3d %x {pool_size = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, ceil_mode = true} : (tensor<2x4x5x6x7xf32>) -> tensor<2x4x3x3x4xf32>
// CHECK-NEXT: %3 = relay.nn.avg_pool3d %x {pool_size = array<i64: 3, 3, 3>, padding = array<i64: 1, 1, 1, 1, 1, 1>, count_include_pad = true} : tensor<2x4x5x6x7xf32>

// CHECK-GENERIC: %0 = "relay.nn.conv3d"(%x, %w) <{groups = 2 : i64}>
// CHECK-GENERIC: %2 = "relay.nn.max_pool3d"(%x) <{pool_size = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, ceil_mode = true}>
