// RUN: hetero-opt %s --split-input-file -p fuse-ops | filecheck %s

// Attention's products read their operands' views in place: the reshapes
// and transposes that make Q, Kᵀ and V per head join the matmul reading
// them (a view used by nothing else), the scale and the mask join it as
// its epilogue, the softmax is a kernel of its own.  A view with another
// user (%vr, returned too) stays a kernel, as does a view that is not
// only renumbering (a concatenation) and the transpose after the second
// product (a view of an anchor's result, not read by a matmul).
builtin.module {
  relay.func @main(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x8xf32>, %m: tensor<1x1x4xf32>) -> tuple<tensor<4x2x4xf32>, tensor<2x4x4xf32>> {
    %qr = relay.reshape %q {newshape = array<i64: 4, 2, 4>} : (tensor<4x8xf32>) -> tensor<4x2x4xf32>
    %qh = relay.transpose %qr {axes = array<i64: 1, 0, 2>} : (tensor<4x2x4xf32>) -> tensor<2x4x4xf32>
    %kr = relay.reshape %k {newshape = array<i64: 4, 2, 4>} : (tensor<4x8xf32>) -> tensor<4x2x4xf32>
    %kt = relay.transpose %kr {axes = array<i64: 1, 2, 0>} : (tensor<4x2x4xf32>) -> tensor<2x4x4xf32>
    %s = relay.matmul %qh, %kt : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %d = relay.multiply %s, %m : (tensor<2x4x4xf32>, tensor<1x1x4xf32>) -> tensor<2x4x4xf32>
    %a = relay.add %d, %m : (tensor<2x4x4xf32>, tensor<1x1x4xf32>) -> tensor<2x4x4xf32>
    %p = relay.nn.softmax %a : tensor<2x4x4xf32>
    %vr = relay.reshape %v {newshape = array<i64: 4, 2, 4>} : (tensor<4x8xf32>) -> tensor<4x2x4xf32>
    %vh = relay.transpose %vr {axes = array<i64: 1, 0, 2>} : (tensor<4x2x4xf32>) -> tensor<2x4x4xf32>
    %o = relay.matmul %p, %vh : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %j = relay.concatenate %o, %o {axis = 0 : i64} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<4x4x4xf32>
    %js = relay.strided_slice %j {begin = array<i64: 0, 0, 0>, end = array<i64: 2, 4, 4>} : (tensor<4x4x4xf32>) -> tensor<2x4x4xf32>
    %w = relay.matmul %js, %vh : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
    %t = relay.transpose %w {axes = array<i64: 1, 0, 2>} : (tensor<2x4x4xf32>) -> tensor<4x2x4xf32>
    %r = relay.tuple(%t, %vh) : tuple<tensor<4x2x4xf32>, tensor<2x4x4xf32>>
    relay.return %r : tuple<tensor<4x2x4xf32>, tensor<2x4x4xf32>>
  }
}

// CHECK:      %{{.*}} = relay.call @fused_reshape_transpose_reshape_transpose_matmul_multiply_add(%q, %k, %m)
// CHECK:      %{{.*}} = relay.call @fused_nn_softmax(
// CHECK:      %[[VH:.*]] = relay.call @fused_reshape_transpose(%v)
// CHECK:      relay.call @fused_matmul(%{{.*}}, %[[VH]])
// CHECK:      relay.call @fused_concatenate_strided_slice(
// CHECK:      relay.call @fused_matmul_1(
// CHECK:      relay.call @fused_transpose(
// CHECK:      relay.func private @fused_reshape_transpose_reshape_transpose_matmul_multiply_add(
// CHECK-NEXT:   relay.reshape
// CHECK-NEXT:   relay.transpose
// CHECK-NEXT:   relay.reshape
// CHECK-NEXT:   relay.transpose
// CHECK-NEXT:   relay.matmul
// CHECK-NEXT:   relay.multiply
// CHECK-NEXT:   relay.add
// CHECK-NEXT:   relay.return

// -----

// A dense layer reads the reshape of its rows in place too (`nn.Linear` on
// 3-D activations after `matmul-to-dense`).
builtin.module {
  relay.func @main(%x: tensor<1x4x8xf32>, %w: tensor<3x8xf32>) -> tensor<4x3xf32> {
    %0 = relay.reshape %x {newshape = array<i64: 4, 8>} : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
    %1 = relay.nn.dense %0, %w : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
    relay.return %1 : tensor<4x3xf32>
  }
}

// CHECK:      relay.call @fused_reshape_nn_dense(%x, %w)
