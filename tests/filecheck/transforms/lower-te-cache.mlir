// RUN: hetero-opt %s -p plan-devices,fuse-ops,lower-te | filecheck %s

// TVM's TECompiler cache: structurally equal Primitive functions for the same
// target share one kernel (constants are parameters of the fused functions,
// so multiplying by %c or %d is the same kernel); another shape is not equal.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>) -> tuple<tensor<4x8xf32>, tensor<8x4xf32>> {
    %c = relay.constant dense<2.0> : tensor<4x8xf32>
    %d = relay.constant dense<3.0> : tensor<4x8xf32>
    %0 = relay.nn.softmax %x : tensor<4x8xf32>
    %1 = relay.multiply %0, %c : tensor<4x8xf32>
    %2 = relay.nn.softmax %1 : tensor<4x8xf32>
    %3 = relay.multiply %2, %d : tensor<4x8xf32>
    %4 = relay.nn.softmax %y : tensor<8x4xf32>
    %t = relay.tuple(%3, %4) : tuple<tensor<4x8xf32>, tensor<8x4xf32>>
    relay.return %t : tuple<tensor<4x8xf32>, tensor<8x4xf32>>
  }
}

// CHECK:      relay.call @fused_nn_softmax(%x) {{.*}}lowered = @[[SOFTMAX:fused_nn_softmax_tir]]}
// CHECK-NEXT: relay.call @fused_multiply({{.*}}lowered = @[[MUL:fused_multiply_tir]]}
// CHECK-NEXT: relay.call @fused_nn_softmax_1({{.*}}lowered = @[[SOFTMAX]]}
// CHECK-NEXT: relay.call @fused_multiply_1({{.*}}lowered = @[[MUL]]}
// CHECK-NEXT: relay.call @fused_nn_softmax_2(%y) {{.*}}lowered = @fused_nn_softmax_2_tir}
// CHECK-COUNT-3: tir.prim_func
// CHECK-NOT:  tir.prim_func
