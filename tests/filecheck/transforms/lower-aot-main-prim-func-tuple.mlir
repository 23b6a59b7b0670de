// RUN: hetero-opt %s -p plan-devices,fuse-ops,lower-te,lower-aot-main | filecheck %s

// A prim_func's tuple result returned whole by main: the call writes each
// tensor straight into its output buffer (one buffer per tensor, in order).
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  tir.prim_func @split(%a: memref<2x4xf32>, %lo: memref<4xf32>, %hi: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    tir.for %i = %c0 to %c4 step %c1 {
      %x = memref.load %a[%c0, %i] : memref<2x4xf32>
      %y = memref.load %a[%c1, %i] : memref<2x4xf32>
      memref.store %x, %lo[%i] : memref<4xf32>
      memref.store %y, %hi[%i] : memref<4xf32>
    }
  }
  relay.func @main(%a: tensor<2x4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>> {
    %0 = relay.call @split(%a) : (tensor<2x4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
    relay.return %0 : tuple<tensor<4xf32>, tensor<4xf32>>
  }
}

// CHECK:      tir.prim_func @main_host(%[[A:.*]]: memref<2x4xf32>, %[[LO:.*]]: memref<4xf32>, %[[HI:.*]]: memref<4xf32>)
// CHECK-NEXT:   tir.call @split(%[[A]], %[[LO]], %[[HI]]) : (memref<2x4xf32>, memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT: }
