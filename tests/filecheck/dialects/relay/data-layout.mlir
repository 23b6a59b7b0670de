// RUN: HETERO_ROUNDTRIP
// RUN: HETERO_GENERIC_ROUNDTRIP

// Channel-blocked data (NCHW<b>c: [N, C / b, H, W, b]): layout_transform in
// both directions, conv2d reading and writing blocked data, pooling of
// blocked data; dynamic batch sizes pass through.
relay.func @f(%x: tensor<1x32x8x8xf32>, %w: tensor<48x32x3x3xf32>, %d: tensor<?x32x4x4xf32>) -> tensor<1x32x8x8xf32> {
  %0 = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW16c"} : (tensor<1x32x8x8xf32>) -> tensor<1x2x8x8x16xf32>
  %1 = relay.nn.conv2d %0, %w {padding = array<i64: 1, 1, 1, 1>, data_layout = "NCHW16c", out_layout = "NCHW16c"} : (tensor<1x2x8x8x16xf32>, tensor<48x32x3x3xf32>) -> tensor<1x3x8x8x16xf32>
  %2 = relay.nn.conv2d %x, %w {out_layout = "NCHW8c"} : (tensor<1x32x8x8xf32>, tensor<48x32x3x3xf32>) -> tensor<1x6x6x6x8xf32>
  %3 = relay.nn.max_pool2d %1 {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NCHW16c"} : (tensor<1x3x8x8x16xf32>) -> tensor<1x3x4x4x16xf32>
  %4 = relay.nn.global_avg_pool2d %1 {layout = "NCHW16c"} : (tensor<1x3x8x8x16xf32>) -> tensor<1x3x1x1x16xf32>
  %5 = relay.layout_transform %1 {src_layout = "NCHW16c", dst_layout = "NCHW8c"} : (tensor<1x3x8x8x16xf32>) -> tensor<1x6x8x8x8xf32>
  %6 = relay.layout_transform %d {src_layout = "NCHW", dst_layout = "NCHW16c"} : (tensor<?x32x4x4xf32>) -> tensor<?x2x4x4x16xf32>
  %7 = relay.layout_transform %0 {src_layout = "NCHW16c", dst_layout = "NCHW"} : (tensor<1x2x8x8x16xf32>) -> tensor<1x32x8x8xf32>
  relay.return %7 : tensor<1x32x8x8xf32>
}

// CHECK:      %0 = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW16c"} : (tensor<1x32x8x8xf32>) -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT: %1 = relay.nn.conv2d %0, %w {padding = array<i64: 1, 1, 1, 1>, data_layout = "NCHW16c", out_layout = "NCHW16c"} : (tensor<1x2x8x8x16xf32>, tensor<48x32x3x3xf32>) -> tensor<1x3x8x8x16xf32>
// CHECK-NEXT: %2 = relay.nn.conv2d %x, %w {out_layout = "NCHW8c"} : (tensor<1x32x8x8xf32>, tensor<48x32x3x3xf32>) -> tensor<1x6x6x6x8xf32>
// CHECK-NEXT: %3 = relay.nn.max_pool2d %1 {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NCHW16c"} : (tensor<1x3x8x8x16xf32>) -> tensor<1x3x4x4x16xf32>
// CHECK-NEXT: %4 = relay.nn.global_avg_pool2d %1 {layout = "NCHW16c"} : (tensor<1x3x8x8x16xf32>) -> tensor<1x3x1x1x16xf32>
// CHECK-NEXT: %5 = relay.layout_transform %1 {src_layout = "NCHW16c", dst_layout = "NCHW8c"} : (tensor<1x3x8x8x16xf32>) -> tensor<1x6x8x8x8xf32>
// CHECK-NEXT: %6 = relay.layout_transform %d {src_layout = "NCHW", dst_layout = "NCHW16c"} : (tensor<?x32x4x4xf32>) -> tensor<?x2x4x4x16xf32>

// CHECK-GENERIC: %0 = "relay.layout_transform"(%x) <{src_layout = "NCHW", dst_layout = "NCHW16c"}> : (tensor<1x32x8x8xf32>) -> tensor<1x2x8x8x16xf32>
// CHECK-GENERIC: "relay.nn.conv2d"(%0, %w) <{padding = array<i64: 1, 1, 1, 1>, data_layout = "NCHW16c", out_layout = "NCHW16c"}>
