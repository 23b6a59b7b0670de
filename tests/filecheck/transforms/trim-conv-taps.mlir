// RUN: hetero-opt %s -p trim-conv-taps --split-input-file | filecheck %s

// An atrous 3x3 at dilation 36 over a 14x14 map: its outer taps read only
// padding (row oy + 36 and oy - 36 are outside 0..13 for every oy). It is
// the centre tap alone, a 1x1 over the map, unpadded.
builtin.module {
  relay.func @main(%x: tensor<1x8x14x14xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<1x4x14x14xf32> {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 36, 36, 36, 36>, dilation = array<i64: 36, 36>} : (tensor<1x8x14x14xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x14x14xf32>
    relay.return %0 : tensor<1x4x14x14xf32>
  }
}

// CHECK:      %[[W:.*]] = relay.strided_slice %w {begin = array<i64: 0, 0, 1, 1>, end = array<i64: 4, 8, 2, 2>, strides = array<i64: 1, 1, 1, 1>} : (tensor<4x8x3x3xf32>) -> tensor<4x8x1x1xf32>
// CHECK-NEXT: relay.nn.conv2d %x, %[[W]] {{{.*}}padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>{{.*}}} : (tensor<1x8x14x14xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x14x14xf32>

// -----

// At dilation 12 every tap reads the map for some output (rows 12 and 13
// read rows 0 and 1 through the first tap row), but only 18 % of the taps'
// products do: each tap is a 1x1 product over the block of the map it
// reads, padded into place and added (the first tap: the map's 2x2 corner,
// into the outputs' last 2x2).
builtin.module {
  relay.func @main(%x: tensor<1x8x14x14xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<1x4x14x14xf32> {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 12, 12, 12, 12>, dilation = array<i64: 12, 12>} : (tensor<1x8x14x14xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x14x14xf32>
    relay.return %0 : tensor<1x4x14x14xf32>
  }
}

// CHECK:      %[[BLOCK:.*]] = relay.strided_slice %x {begin = array<i64: 0, 0, 0, 0>, end = array<i64: 1, 8, 2, 2>, {{.*}}} : (tensor<1x8x14x14xf32>) -> tensor<1x8x2x2xf32>
// CHECK-NEXT: %[[TAP:.*]] = relay.strided_slice %w {begin = array<i64: 0, 0, 0, 0>, end = array<i64: 4, 8, 1, 1>, {{.*}}} : (tensor<4x8x3x3xf32>) -> tensor<4x8x1x1xf32>
// CHECK-NEXT: %[[PRODUCT:.*]] = relay.nn.conv2d %[[BLOCK]], %[[TAP]] {{.*}} -> tensor<1x4x2x2xf32>
// CHECK-NEXT: relay.nn.pad %[[PRODUCT]] {pad_width = array<i64: 0, 0, 0, 0, 12, 0, 12, 0>, {{.*}}} : (tensor<1x4x2x2xf32>) -> tensor<1x4x14x14xf32>
// CHECK-COUNT-8: relay.add
// CHECK-NEXT: relay.return

// -----

// A 3x3 at dilation 1: its taps read the map at 92 % of their products:
// left as it is.
builtin.module {
  relay.func @main(%x: tensor<1x8x14x14xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<1x4x14x14xf32> {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x14x14xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x14x14xf32>
    relay.return %0 : tensor<1x4x14x14xf32>
  }
}

// CHECK-NOT:  relay.strided_slice
// CHECK:      relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>}

// -----

// Only the height's outer taps are dead (a 14x40 map at dilation 20): the
// rows of taps go, the columns stay, with their padding and dilation.
builtin.module {
  relay.func @main(%x: tensor<1x8x14x40xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<1x4x14x40xf32> {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 20, 20, 20, 20>, dilation = array<i64: 20, 20>} : (tensor<1x8x14x40xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x14x40xf32>
    relay.return %0 : tensor<1x4x14x40xf32>
  }
}

// CHECK:      %[[W:.*]] = relay.strided_slice %w {begin = array<i64: 0, 0, 1, 0>, end = array<i64: 4, 8, 2, 3>, {{.*}}} : (tensor<4x8x3x3xf32>) -> tensor<4x8x1x3xf32>
// CHECK-NEXT: relay.nn.conv2d %x, %[[W]] {{{.*}}padding = array<i64: 0, 20, 0, 20>, dilation = array<i64: 1, 20>{{.*}}}

// -----

// A weight already packed (OIHW16o) or blocked data: not trimmed.
builtin.module {
  relay.func @main(%x: tensor<1x8x14x14xf32>, %w: tensor<1x8x3x3x16xf32>) -> tensor<1x16x14x14xf32> {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 36, 36, 36, 36>, dilation = array<i64: 36, 36>, kernel_layout = "OIHW16o", channels = 16 : i64} : (tensor<1x8x14x14xf32>, tensor<1x8x3x3x16xf32>) -> tensor<1x16x14x14xf32>
    relay.return %0 : tensor<1x16x14x14xf32>
  }
}

// CHECK-NOT:  relay.strided_slice
