// RUN: hetero-opt %s -p fold-scale-axis --split-input-file | filecheck %s
// RUN: hetero-opt %s -p fold-scale-axis --split-input-file > %t && hetero-opt %t -p fold-scale-axis --split-input-file | diff %t -

// conv2d · s with s per output channel ([C,1,1]): the scale moves onto the
// constant OIHW weights, laid along axis 0.
relay.func @conv(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = relay.constant dense<1.0> : tensor<2x2x1x1xf32>
  %s = relay.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
  %c = relay.nn.conv2d %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %0 = relay.multiply %c, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  relay.return %0 : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: relay.func @conv
// CHECK:         %[[LAID:.*]] = relay.reshape %s {newshape = array<i64: 2, 1, 1, 1>} : (tensor<2x1x1xf32>) -> tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[W:.*]] = relay.multiply %w, %[[LAID]] : (tensor<2x2x1x1xf32>, tensor<2x1x1x1xf32>) -> tensor<2x2x1x1xf32>
// CHECK-NEXT:    %c = relay.nn.conv2d %x, %[[W]]
// CHECK-NEXT:    relay.return %c

// -----

// Through a bias_add on the channel axis, the constant on the left, and a
// uniform (all-ones shape) scale: bias_add(dense, b) · s.
relay.func @dense_bias(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = relay.constant dense<1.0> : tensor<2x3xf32>
  %b = relay.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %s = relay.constant dense<0.5> : tensor<1x1xf32>
  %d = relay.nn.dense %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %y = relay.nn.bias_add %d, %b {axis = 1 : i64} : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %0 = relay.multiply %s, %y : (tensor<1x1xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  relay.return %0 : tensor<4x2xf32>
}

// CHECK-LABEL: relay.func @dense_bias
// CHECK:         %[[LAID:.*]] = relay.reshape %s {newshape = array<i64: 1, 1>}
// CHECK-NEXT:    %[[W:.*]] = relay.multiply %w, %[[LAID]]
// CHECK-NEXT:    %d = relay.nn.dense %x, %[[W]]
// CHECK-NEXT:    %[[SB:.*]] = relay.reshape %s {newshape = array<i64: 1>}
// CHECK-NEXT:    %[[B:.*]] = relay.multiply %b, %[[SB]]
// CHECK-NEXT:    %{{.*}} = relay.nn.bias_add %d, %[[B]] {axis = 1 : i64}
// CHECK-NOT:     relay.multiply

// -----

// Not folded: a scale that varies along a spatial axis, an anchor with a
// second user, a weight computed at run time.
relay.func @kept(%x: tensor<1x2x3x3xf32>, %wx: tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32> {
  %w = relay.constant dense<1.0> : tensor<2x2x1x1xf32>
  %spatial = relay.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %s = relay.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
  %c0 = relay.nn.conv2d %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %0 = relay.multiply %c0, %spatial : (tensor<1x2x3x3xf32>, tensor<3xf32>) -> tensor<1x2x3x3xf32>
  %c1 = relay.nn.conv2d %0, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %1 = relay.multiply %c1, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %2 = relay.add %1, %c1 : tensor<1x2x3x3xf32>
  %c2 = relay.nn.conv2d %2, %wx : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %3 = relay.multiply %c2, %s : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  relay.return %3 : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: relay.func @kept
// CHECK-NOT:     relay.reshape
// CHECK:         relay.multiply %c0, %spatial
// CHECK:         relay.multiply %c1, %s
// CHECK:         relay.multiply %c2, %s

// -----

// Not folded either: a bias_add on another axis, a bias that is not a
// constant, a scale with more dimensions than the result.
relay.func @kept_bias(%x: tensor<4x3xf32>, %b: tensor<2xf32>) -> tensor<4x2xf32> {
  %w = relay.constant dense<1.0> : tensor<2x3xf32>
  %w2 = relay.constant dense<1.0> : tensor<2x2xf32>
  %bc = relay.constant dense<1.0> : tensor<4xf32>
  %s = relay.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %big = relay.constant dense<2.0> : tensor<1x1x2xf32>
  %d0 = relay.nn.dense %x, %w : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  %y0 = relay.nn.bias_add %d0, %bc {axis = 0 : i64} : (tensor<4x2xf32>, tensor<4xf32>) -> tensor<4x2xf32>
  %0 = relay.multiply %y0, %s : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %d1 = relay.nn.dense %0, %w2 : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %y1 = relay.nn.bias_add %d1, %b {axis = 1 : i64} : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %1 = relay.multiply %y1, %s : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %d2 = relay.nn.dense %1, %w2 : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %2 = relay.multiply %d2, %big : (tensor<4x2xf32>, tensor<1x1x2xf32>) -> tensor<1x4x2xf32>
  %r = relay.reshape %2 {newshape = array<i64: 4, 2>} : (tensor<1x4x2xf32>) -> tensor<4x2xf32>
  relay.return %r : tensor<4x2xf32>
}

// CHECK-LABEL: relay.func @kept_bias
// CHECK-NOT:     relay.reshape %s
// CHECK:         relay.multiply %y0, %s
// CHECK:         relay.multiply %y1, %s
// CHECK:         relay.multiply %d2, %big

// -----

// A batch norm (scale, bias_add) followed by a Caffe-style scale and shift
// (Inception v2): the first scale folds into the weights, the second through
// the bias_add into the weights made of the first (a constant expression,
// which fold-constant computes), and the shift joins the bias: the
// convolution's epilogue is one bias_add.
relay.func @norm_then_scale(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = relay.constant dense<1.0> : tensor<2x2x1x1xf32>
  %s1 = relay.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
  %b = relay.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %s2 = relay.constant dense<[[[4.0]], [[5.0]]]> : tensor<2x1x1xf32>
  %t = relay.constant dense<[[[1.0]], [[-1.0]]]> : tensor<2x1x1xf32>
  %c = relay.nn.conv2d %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %0 = relay.multiply %c, %s1 : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %1 = relay.nn.bias_add %0, %b {axis = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %2 = relay.multiply %1, %s2 : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %3 = relay.add %t, %2 : (tensor<2x1x1xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  relay.return %3 : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: relay.func @norm_then_scale
// CHECK:         %[[W1:.*]] = relay.multiply %w, %{{.*}} : (tensor<2x2x1x1xf32>, tensor<2x1x1x1xf32>)
// CHECK:         %[[W2:.*]] = relay.multiply %[[W1]], %{{.*}} : (tensor<2x2x1x1xf32>, tensor<2x1x1x1xf32>)
// CHECK-NEXT:    %c = relay.nn.conv2d %x, %[[W2]]
// CHECK:         %[[B2:.*]] = relay.multiply %b, %{{.*}} : tensor<2xf32>
// CHECK:         %[[T:.*]] = relay.reshape %t {newshape = array<i64: 2>}
// CHECK-NEXT:    %[[B3:.*]] = relay.add %[[B2]], %[[T]] : tensor<2xf32>
// CHECK-NEXT:    %[[R:.*]] = relay.nn.bias_add %c, %[[B3]] {axis = 1 : i64}
// CHECK-NEXT:    relay.return %[[R]]

// -----

// A shift that varies along another axis than the bias's, or a bias_add
// whose input is no anchor, stays an add.
relay.func @shift_across(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = relay.constant dense<1.0> : tensor<2x2x1x1xf32>
  %b = relay.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %rows = relay.constant dense<[[1.0], [2.0], [3.0]]> : tensor<3x1xf32>
  %c = relay.nn.conv2d %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %0 = relay.nn.bias_add %c, %b {axis = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %1 = relay.add %0, %rows : (tensor<1x2x3x3xf32>, tensor<3x1xf32>) -> tensor<1x2x3x3xf32>
  relay.return %1 : tensor<1x2x3x3xf32>
}

relay.func @no_anchor(%y: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %b = relay.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %t = relay.constant dense<[[[1.0]], [[-1.0]]]> : tensor<2x1x1xf32>
  %0 = relay.nn.bias_add %y, %b {axis = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %1 = relay.add %0, %t : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  relay.return %1 : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: relay.func @shift_across
// CHECK:         %[[A:.*]] = relay.nn.bias_add %c, %b
// CHECK-NEXT:    relay.add %[[A]], %rows
// CHECK-LABEL: relay.func @no_anchor
// CHECK:         %[[B:.*]] = relay.nn.bias_add %y, %b
// CHECK-NEXT:    relay.add %[[B]], %t
