// RUN: hetero-opt %s -p plan-devices,fuse-ops,lower-te,lower-aot-main | filecheck %s

// A tuple result is one output memref per tensor, flattened in order.  Each
// returned value is written straight into its output by its producer (no
// copy for %s, %e); a returned parameter and a value returned a second time
// are copied.  tuple/get_item only regroup buffers.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%x: tensor<4x2xf32>) -> tuple<tensor<4x2xf32>, tuple<tensor<4x2xf32>, tensor<4x2xf32>>, tensor<4x2xf32>> {
    %s = relay.nn.softmax %x : tensor<4x2xf32>
    %pair = relay.tuple(%x, %s) : tuple<tensor<4x2xf32>, tensor<4x2xf32>>
    %again = relay.get_item %pair[1] : tuple<tensor<4x2xf32>, tensor<4x2xf32>> -> tensor<4x2xf32>
    %e = relay.nn.softmax %again : tensor<4x2xf32>
    %t = relay.tuple(%e, %pair, %s) : tuple<tensor<4x2xf32>, tuple<tensor<4x2xf32>, tensor<4x2xf32>>, tensor<4x2xf32>>
    relay.return %t : tuple<tensor<4x2xf32>, tuple<tensor<4x2xf32>, tensor<4x2xf32>>, tensor<4x2xf32>>
  }
}

// CHECK:      tir.prim_func @main_host(%[[X:.*]]: memref<4x2xf32>, %[[O0:.*]]: memref<4x2xf32>, %[[O1:.*]]: memref<4x2xf32>, %[[O2:.*]]: memref<4x2xf32>, %[[O3:.*]]: memref<4x2xf32>)
// CHECK-NOT:    tir.alloc
// CHECK:        tir.call @fused_nn_softmax_tir(%[[X]], %[[O2]])
// CHECK-NEXT:   tir.call @fused_nn_softmax_tir(%[[O2]], %[[O0]])
// CHECK-NEXT:   tir.for
// CHECK:          memref.load %[[X]]
// CHECK-NEXT:     memref.store %{{.*}}, %[[O1]]
// CHECK:        tir.for
// CHECK:          memref.load %[[O2]]
// CHECK-NEXT:     memref.store %{{.*}}, %[[O3]]
