// RUN: HETERO_ROUNDTRIP
// RUN: HETERO_GENERIC_ROUNDTRIP

// relay calls a tir.prim_func (TVM's call_lowered) in the destination-passing
// style of hetero's kernels: a buffer per argument, then one per tensor of the
// result; the buffers' scopes are not the verifier's business (plan-devices').
builtin.module {
  tir.prim_func @vadd(%a: memref<8xf32>, %b: memref<8xf32, "shared">, %c: memref<8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    tir.for %i = %c0 to %c8 step %c1 {
      %x = memref.load %a[%i] : memref<8xf32>
      %y = memref.load %b[%i] : memref<8xf32, "shared">
      %z = arith.addf %x, %y : f32
      memref.store %z, %c[%i] : memref<8xf32>
    }
  }
  tir.prim_func @split(%a: memref<2x3xi32>, %b: memref<2x3xi32>, %c: memref<i32>) {
  }
  relay.func @main(%x: tensor<8xf32>, %m: tensor<2x3xi32>) -> tensor<8xf32> {
    %0 = relay.call @vadd(%x, %x) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %1 = relay.call @split(%m) : (tensor<2x3xi32>) -> tuple<tensor<2x3xi32>, tensor<i32>>
    relay.return %0 : tensor<8xf32>
  }
}

// CHECK:      %0 = relay.call @vadd(%x, %x) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT: %1 = relay.call @split(%m) : (tensor<2x3xi32>) -> tuple<tensor<2x3xi32>, tensor<i32>>
// CHECK-GENERIC: "relay.call"(%{{.*}}, %{{.*}}) <{callee = @vadd}> : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
