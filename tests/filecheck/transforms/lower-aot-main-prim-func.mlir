// RUN: hetero-opt %s -p plan-devices,fuse-ops,lower-te,lower-aot-main | filecheck %s

// relay's call of a hand-written tir.prim_func is a kernel call of the host
// function like the lowered ones: the arguments' buffers, then the result's.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  tir.prim_func @scale(%a: memref<4xf32>, %out: memref<4xf32>) target #target.target<"llvm"> {
  }
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = relay.call @scale(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = relay.exp %0 : tensor<4xf32>
    relay.return %1 : tensor<4xf32>
  }
}

// CHECK:      tir.prim_func @scale(%a: memref<4xf32>, %out: memref<4xf32>) target #target.target<"llvm"> attributes {no_inline} {
// CHECK:      tir.prim_func @main_host(%0: memref<4xf32>, %1: memref<4xf32>) target #target.target<"llvm">
// CHECK-NEXT:   %[[T:.*]] = tir.alloc {vdevice = #target.vdevice<cpu:0, {{.*}}>} : memref<4xf32>
// CHECK-NEXT:   tir.call @scale(%0, %[[T]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:   tir.call @fused_exp_tir(%[[T]], %1) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT: }
