// RUN: hetero-opt %s -p fuse-ops | filecheck %s

// layer_norm is an anchor (OUT_ELEMWISE_FUSABLE): it starts a kernel, its
// producer (a residual add) stays a kernel of its own, and an elementwise
// consumer joins it as an epilogue; the dense after it starts another.
builtin.module {
  relay.func @main(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %w: tensor<3x8xf32>) -> tensor<4x3xf32> {
    %0 = relay.add %x, %r : tensor<4x8xf32>
    %1 = relay.nn.layer_norm %0, %g, %b : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %2 = relay.multiply %1, %g : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %3 = relay.nn.dense %2, %w : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
    relay.return %3 : tensor<4x3xf32>
  }
}

// CHECK:      %0 = relay.call @fused_add(%x, %r)
// CHECK-NEXT: %1 = relay.call @fused_nn_layer_norm_multiply(%0, %g, %b)
// CHECK-NEXT: %2 = relay.call @fused_nn_dense(%1, %w)
// CHECK:      relay.func private @fused_nn_layer_norm_multiply(%0: tensor<4x8xf32>, %1: tensor<8xf32>, %2: tensor<8xf32>) -> tensor<4x8xf32> attributes {Primitive} {
// CHECK-NEXT:   %3 = relay.nn.layer_norm %0, %1, %2
// CHECK-NEXT:   %4 = relay.multiply %3, %1
// CHECK-NEXT:   relay.return %4
