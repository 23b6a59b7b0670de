// RUN: hetero-opt %s -p plan-devices,fuse-ops,lower-te,lower-aot-main --split-input-file | filecheck %s

// A returned reshape is a view: the dense layer writes straight into the
// output, reinterpreted with its own shape, and the reshape kernel (a copy)
// is not called.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%x: tensor<2x8xf32>, %w: tensor<6x8xf32>) -> tensor<1x2x6xf32> {
    %d = relay.nn.dense %x, %w : (tensor<2x8xf32>, tensor<6x8xf32>) -> tensor<2x6xf32>
    %r = relay.reshape %d {newshape = array<i64: 1, 2, 6>} : (tensor<2x6xf32>) -> tensor<1x2x6xf32>
    relay.return %r : tensor<1x2x6xf32>
  }
}

// CHECK:      tir.prim_func @main_host(%[[X:.*]]: memref<2x8xf32>, %[[W:.*]]: memref<6x8xf32>, %[[O:.*]]: memref<1x2x6xf32>)
// CHECK-NEXT:   %[[V:.*]] = memref.reinterpret_cast %[[O]] to offset: [0], sizes: [2, 6], strides: [6, 1] : memref<1x2x6xf32> to memref<2x6xf32>
// CHECK-NEXT:   tir.call @fused_nn_dense_tir(%[[X]], %[[W]], %[[V]])
// CHECK-NEXT: }

// -----

// The reshape's input is also returned: it has its own output, and the
// reshape copies it.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%x: tensor<2x8xf32>, %w: tensor<6x8xf32>) -> tuple<tensor<12xf32>, tensor<2x6xf32>> {
    %d = relay.nn.dense %x, %w : (tensor<2x8xf32>, tensor<6x8xf32>) -> tensor<2x6xf32>
    %r = relay.reshape %d {newshape = array<i64: 12>} : (tensor<2x6xf32>) -> tensor<12xf32>
    %t = relay.tuple(%r, %d) : tuple<tensor<12xf32>, tensor<2x6xf32>>
    relay.return %t : tuple<tensor<12xf32>, tensor<2x6xf32>>
  }
}

// CHECK:      tir.prim_func @main_host(%[[X:.*]]: memref<2x8xf32>, %[[W:.*]]: memref<6x8xf32>, %[[O0:.*]]: memref<12xf32>, %[[O1:.*]]: memref<2x6xf32>)
// CHECK-NOT:    memref.reinterpret_cast
// CHECK:        tir.call @fused_nn_dense_tir(%[[X]], %[[W]], %[[O1]])
// CHECK-NEXT:   tir.call @fused_reshape_tir(%[[O1]], %[[O0]])

// -----

// The reshape's input is read again: the copy stays.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%x: tensor<2x8xf32>, %w: tensor<6x8xf32>) -> tuple<tensor<12xf32>, tensor<2x6xf32>> {
    %d = relay.nn.dense %x, %w : (tensor<2x8xf32>, tensor<6x8xf32>) -> tensor<2x6xf32>
    %r = relay.reshape %d {newshape = array<i64: 12>} : (tensor<2x6xf32>) -> tensor<12xf32>
    %e = relay.exp %d : tensor<2x6xf32>
    %t = relay.tuple(%r, %e) : tuple<tensor<12xf32>, tensor<2x6xf32>>
    relay.return %t : tuple<tensor<12xf32>, tensor<2x6xf32>>
  }
}

// CHECK:      tir.prim_func @main_host
// CHECK-NOT:    memref.reinterpret_cast
// CHECK:        %[[D:.*]] = tir.alloc
// CHECK:        tir.call @fused_nn_dense_tir(%{{.*}}, %{{.*}}, %[[D]])
// CHECK:        tir.call @fused_reshape_tir(%[[D]], %{{.*}})

// -----

// A reshaped parameter is copied into the output.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%x: tensor<2x6xf32>) -> tensor<12xf32> {
    %r = relay.reshape %x {newshape = array<i64: 12>} : (tensor<2x6xf32>) -> tensor<12xf32>
    relay.return %r : tensor<12xf32>
  }
}

// CHECK:      tir.prim_func @main_host(%[[X:.*]]: memref<2x6xf32>, %[[O:.*]]: memref<12xf32>)
// CHECK-NEXT:   tir.call @fused_reshape_tir(%[[X]], %[[O]])

// -----

// Of run-time sizes too: a dense over `[b·s, 8]` rows returned as `[b, s,
// 6]` like its input (`reshape_like`, `keep = 1`: the ONNX importer's
// MatMul over a dynamic batch and sequence) writes straight into the
// output, viewed with the rows' sizes.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%x: tensor<?x?x8xf32>, %w: tensor<6x8xf32>) -> tensor<?x?x6xf32> {
    %f = relay.reshape %x {newshape = array<i64: -1, 8>} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
    %d = relay.nn.dense %f, %w : (tensor<?x8xf32>, tensor<6x8xf32>) -> tensor<?x6xf32>
    %r = relay.reshape_like %d, %x {keep = 1} : (tensor<?x6xf32>, tensor<?x?x8xf32>) -> tensor<?x?x6xf32>
    relay.return %r : tensor<?x?x6xf32>
  }
}

// CHECK:      tir.prim_func @main_host(%[[X:.*]]: memref<?x?x8xf32>, %[[W:.*]]: memref<6x8xf32>, %[[O:.*]]: memref<?x?x6xf32>)
// CHECK:        %[[ROWS:.*]] = arith.muli
// CHECK-NEXT:   %[[V:.*]] = memref.reinterpret_cast %[[O]] to offset: [0], sizes: [%[[ROWS]], 6], strides: [6, 1] : memref<?x?x6xf32> to memref<?x6xf32>
// CHECK-NEXT:   tir.call @fused_reshape_nn_dense_tir(%[[X]], %[[W]], %[[V]])
// CHECK-NEXT: }
