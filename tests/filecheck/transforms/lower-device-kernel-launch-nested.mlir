// RUN: hetero-opt %s -p 'bind-target{target="cuda -host=llvm"},annotate-device-regions,split-host-device,lower-device-kernel-launch,inline-private-functions,fold-device-call-results' | filecheck %s

// Every TIR target pass processes the prim_funcs of nested modules (as
// external codegens make them) too, each function named and looked up in its
// own module's symbol table: the nested @main is outlined into its own
// @main_kernel (no `_1`: the outer one is in another table), its launch is
// lowered and the private helper is inlined into the kernel.

// CHECK:      builtin.module @blas {
// CHECK-NEXT:   tir.prim_func @main(%a: memref<64xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
// CHECK-NEXT:     %0 = arith.constant 1 : index
// CHECK-NEXT:     %c64 = arith.constant 64 : index
// CHECK-NEXT:     tir.launch @main_kernel(%a) grid(%0) block(%c64) : (memref<64xf32>)
// CHECK-NEXT:   }
// CHECK-NEXT:   tir.prim_func @main_kernel(%a: memref<64xf32>) target #target.target<"cuda"> attributes {{.*}}calling_conv = 2 : i64, tir.kernel_launch_params = ["threadIdx.x"]} {
// CHECK:          tir.for %tx = %c0 to %c64 step %c1 thread_binding "threadIdx.x" {
// CHECK-NEXT:       %x = memref.load %a[%tx] : memref<64xf32>
// CHECK-NEXT:       %y = arith.addf %x, %x : f32
// CHECK-NEXT:       memref.store %y, %a[%tx] : memref<64xf32>
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-NEXT: tir.prim_func @main(%a: memref<64xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
// CHECK:        tir.launch @main_kernel(%a) grid(%0) block(%c32) : (memref<64xf32>)
// CHECK:      tir.prim_func @main_kernel(%a: memref<64xf32>) target #target.target<"cuda">

builtin.module @blas {
  tir.prim_func @main(%a: memref<64xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    tir.for %tx = %c0 to %c64 step %c1 thread_binding "threadIdx.x" {
      %x = memref.load %a[%tx] : memref<64xf32>
      %y = tir.call @helper(%x) : (f32) -> f32
      memref.store %y, %a[%tx] : memref<64xf32>
    }
  }
  tir.prim_func private @helper(%x: f32) -> f32 {
    %y = arith.addf %x, %x : f32
    tir.return %y : f32
  }
}
tir.prim_func @main(%a: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tir.for %tx = %c0 to %c32 step %c1 thread_binding "threadIdx.x" {
    %x = memref.load %a[%tx] : memref<64xf32>
    memref.store %x, %a[%tx] : memref<64xf32>
  }
}
