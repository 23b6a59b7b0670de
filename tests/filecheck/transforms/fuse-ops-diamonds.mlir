// RUN: hetero-opt %s -p fuse-ops --split-input-file | filecheck %s

// SiLU as PyTorch exports it, y * sigmoid(y), after a convolution: y has two
// users that meet again at the multiply (a diamond), so the multiply
// post-dominates y and the whole diamond is the convolution's epilogue.
builtin.module {
  relay.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32> {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
    %1 = relay.sigmoid %0 : tensor<1x2x4x4xf32>
    %2 = relay.multiply %0, %1 : tensor<1x2x4x4xf32>
    relay.return %2 : tensor<1x2x4x4xf32>
  }
}

// CHECK:      %0 = relay.call @fused_nn_conv2d_sigmoid_multiply(%x, %w)
// CHECK-NEXT: relay.return %0
// CHECK:      relay.func private @fused_nn_conv2d_sigmoid_multiply
// CHECK-NEXT:   %2 = relay.nn.conv2d %0, %1
// CHECK-NEXT:   %3 = relay.sigmoid %2
// CHECK-NEXT:   %4 = relay.multiply %2, %3
// CHECK-NEXT:   relay.return %4

// -----

// A residual y + relu(y) after a dense layer.
builtin.module {
  relay.func @main(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>) -> tensor<2x3xf32> {
    %0 = relay.nn.dense %x, %w : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
    %1 = relay.relu %0 : tensor<2x3xf32>
    %2 = relay.add %0, %1 : tensor<2x3xf32>
    relay.return %2 : tensor<2x3xf32>
  }
}

// CHECK:      %0 = relay.call @fused_nn_dense_relu_add(%x, %w)
// CHECK-NEXT: relay.return %0

// -----

// GELU written with erf, 0.5 * y * (1 + erf(y / sqrt 2)): nested diamonds
// (y feeds two multiplies' paths), its constants outside as parameters.
builtin.module {
  relay.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32> {
    %half = relay.constant dense<0.5> : tensor<f32>
    %one = relay.constant dense<1.0> : tensor<f32>
    %root2 = relay.constant dense<1.41421354> : tensor<f32>
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
    %1 = relay.divide %0, %root2 : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
    %2 = relay.erf %1 : tensor<1x2x4x4xf32>
    %3 = relay.add %2, %one : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
    %4 = relay.multiply %0, %half : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
    %5 = relay.multiply %4, %3 : tensor<1x2x4x4xf32>
    relay.return %5 : tensor<1x2x4x4xf32>
  }
}

// CHECK:      %0 = relay.call @fused_nn_conv2d_divide_erf_add_multiply_multiply(%x, %w, %root2, %one, %half)
// CHECK-NEXT: relay.return %0

// -----

// Squeeze-and-excitation's gate, y * sigmoid(y * g) with g broadcast per
// channel: the broadcast multiplies are legal inside the diamond.
builtin.module {
  relay.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>, %g: tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
    %1 = relay.multiply %0, %g : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
    %2 = relay.sigmoid %1 : tensor<1x2x4x4xf32>
    %3 = relay.multiply %0, %2 : tensor<1x2x4x4xf32>
    relay.return %3 : tensor<1x2x4x4xf32>
  }
}

// CHECK:      %0 = relay.call @fused_nn_conv2d_multiply_sigmoid_multiply(%x, %w, %g)
// CHECK-NEXT: relay.return %0

// -----

// A squeeze-and-excitation block itself: the paths from y meet at the
// multiply, but through a reduction (the pool): not a diamond.  The
// convolution stands alone; the broadcast multiply joins its gate's group.
builtin.module {
  relay.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32> {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
    %1 = relay.nn.global_avg_pool2d %0 : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32>
    %2 = relay.sigmoid %1 : tensor<1x2x1x1xf32>
    %3 = relay.multiply %0, %2 : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
    relay.return %3 : tensor<1x2x4x4xf32>
  }
}

// CHECK:      %0 = relay.call @fused_nn_conv2d(%x, %w)
// CHECK-NEXT: %1 = relay.call @fused_nn_global_avg_pool2d_sigmoid_multiply(%0)
// CHECK-NEXT: relay.return %1

// -----

// An escaping value: sigmoid(y) is also read by a second convolution, so
// the paths from y do not meet at one op and nothing joins the first
// convolution (the multiply then starts a group of its own, which the add
// joins as before).
builtin.module {
  relay.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32> {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
    %1 = relay.sigmoid %0 : tensor<1x2x4x4xf32>
    %2 = relay.multiply %0, %1 : tensor<1x2x4x4xf32>
    %3 = relay.nn.conv2d %1, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
    %4 = relay.add %2, %3 : tensor<1x2x4x4xf32>
    relay.return %4 : tensor<1x2x4x4xf32>
  }
}

// CHECK:      %0 = relay.call @fused_nn_conv2d(%x, %w)
// CHECK-NEXT: %1 = relay.call @fused_sigmoid(%0)
// CHECK-NEXT: %2 = relay.call @fused_nn_conv2d_1(%1, %w)
// CHECK-NEXT: %3 = relay.call @fused_multiply_add(%0, %1, %2)
// CHECK-NEXT: relay.return %3

// -----

// A value returned as well as used: no diamond closes (relay.tuple is no
// tensor op); relu and add still make a chain of their own.
builtin.module {
  relay.func @main(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>) -> tuple<tensor<2x3xf32>, tensor<2x3xf32>> {
    %0 = relay.nn.dense %x, %w : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
    %1 = relay.relu %0 : tensor<2x3xf32>
    %2 = relay.add %0, %1 : tensor<2x3xf32>
    %3 = relay.tuple(%0, %2) : tuple<tensor<2x3xf32>, tensor<2x3xf32>>
    relay.return %3 : tuple<tensor<2x3xf32>, tensor<2x3xf32>>
  }
}

// CHECK:      %0 = relay.call @fused_nn_dense(%x, %w)
// CHECK-NEXT: %1 = relay.call @fused_relu_add(%0)

// -----

// A non-elementwise middle: a transpose on one path (injective) keeps the
// paths from y apart.
builtin.module {
  relay.func @main(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %0 = relay.nn.dense %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %1 = relay.transpose %0 : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %2 = relay.add %0, %1 : tensor<4x4xf32>
    relay.return %2 : tensor<4x4xf32>
  }
}

// CHECK:      %0 = relay.call @fused_nn_dense(%x, %w)
// CHECK-NEXT: %1 = relay.call @fused_transpose_add(%0)

// -----

// A diamond from an elementwise op: the add's result feeds the sigmoid and
// the multiply, all one kernel.
builtin.module {
  relay.func @main(%x: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
    %0 = relay.add %x, %b : tensor<8xf32>
    %1 = relay.sigmoid %0 : tensor<8xf32>
    %2 = relay.multiply %1, %0 : tensor<8xf32>
    relay.return %2 : tensor<8xf32>
  }
}

// CHECK:      %0 = relay.call @fused_add_sigmoid_multiply(%x, %b)
// CHECK-NEXT: relay.return %0

// -----

// Two values' diamonds meet at one op: the maximum takes both and its result
// is unused, so it closes either value's paths.  The first group takes it
// (with its where); the second value stays its group's result, read by the
// maximum of the first (an imported `Shape(Max(a, b))` leaves such an op).
builtin.module {
  relay.func @main(%x: tensor<2xf32>, %y: tensor<3xf32>, %c: tensor<2x3xi1>) -> tensor<2x3xf32> {
    %0 = relay.expand_dims %x {axis = 1 : i64} : (tensor<2xf32>) -> tensor<2x1xf32>
    %1 = relay.expand_dims %y {axis = 0 : i64} : (tensor<3xf32>) -> tensor<1x3xf32>
    %2 = relay.maximum %0, %1 : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
    %3 = relay.where %c, %0, %0 : (tensor<2x3xi1>, tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
    %4 = relay.where %c, %1, %1 : (tensor<2x3xi1>, tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
    %5 = relay.add %3, %4 : tensor<2x3xf32>
    relay.return %5 : tensor<2x3xf32>
  }
}

// CHECK:      %0 = relay.call @fused_expand_dims(%y)
// CHECK-NEXT: %1 = relay.call @fused_where(%c, %0)
// CHECK-NEXT: %2 = relay.call @fused_expand_dims_maximum_where_add(%x, %0, %c, %1)
// CHECK-NEXT: relay.return %2
