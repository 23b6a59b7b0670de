// RUN: hetero-opt %s --split-input-file --verify-diagnostics

// Blocked data layouts: the block must match the data, the channels must
// fill whole blocks, and a layout is NCHW or NCHW<b>c.

relay.func @f(%x: tensor<1x40x8x8xf32>) -> tensor<1x40x8x8xf32> {
  // expected-error@+1 {{the data has 40 channels, not a multiple of the block of NCHW16c}}
  %0 = relay.layout_transform %x {src_layout = "NCHW", dst_layout = "NCHW16c"} : (tensor<1x40x8x8xf32>) -> tensor<1x2x8x8x16xf32>
  relay.return %x : tensor<1x40x8x8xf32>
}

// -----

relay.func @f(%x: tensor<1x2x8x8x16xf32>) -> tensor<1x2x8x8x16xf32> {
  // expected-error@+1 {{the data in layout NCHW8c is [N, C / 8, H, W, 8], got [1, 2, 8, 8, 16]}}
  %0 = relay.layout_transform %x {src_layout = "NCHW8c", dst_layout = "NCHW"} : (tensor<1x2x8x8x16xf32>) -> tensor<1x32x8x8xf32>
  relay.return %x : tensor<1x2x8x8x16xf32>
}

// -----

relay.func @f(%x: tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32> {
  // expected-error@+1 {{"NCHW" or "NCHW<b>c" (b >= 1)}}
  %0 = relay.layout_transform %x {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  relay.return %x : tensor<1x32x8x8xf32>
}

// -----

relay.func @f(%x: tensor<1x32x8x8xf32>, %w: tensor<40x32x1x1xf32>) -> tensor<1x32x8x8xf32> {
  // expected-error@+1 {{the conv2d result has 40 channels, not a multiple of the block of NCHW16c}}
  %0 = relay.nn.conv2d %x, %w {out_layout = "NCHW16c"} : (tensor<1x32x8x8xf32>, tensor<40x32x1x1xf32>) -> tensor<1x3x8x8x16xf32>
  relay.return %x : tensor<1x32x8x8xf32>
}

// -----

relay.func @f(%x: tensor<1x32x8x8xf32>, %w: tensor<32x32x1x1xf32>) -> tensor<1x32x8x8xf32> {
  // expected-error@+1 {{conv2d data (NCHW16c) must have rank 5}}
  %0 = relay.nn.conv2d %x, %w {data_layout = "NCHW16c"} : (tensor<1x32x8x8xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x8x8xf32>
  relay.return %x : tensor<1x32x8x8xf32>
}

// -----

relay.func @f(%x: tensor<1x2x8x8x16xf32>) -> tensor<1x2x8x8x16xf32> {
  // expected-error@+1 {{pooling data (NCHW) must have rank 4}}
  %0 = relay.nn.max_pool2d %x {pool_size = array<i64: 2, 2>} : (tensor<1x2x8x8x16xf32>) -> tensor<1x2x7x7x16xf32>
  relay.return %x : tensor<1x2x8x8x16xf32>
}
