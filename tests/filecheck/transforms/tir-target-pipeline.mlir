// RUN: hetero-opt %s -p 'bind-target{target="cuda -host=llvm"},annotate-device-regions,split-host-device,lower-device-kernel-launch,inline-private-functions' | filecheck %s
// RUN: hetero-opt %s -p 'bind-target{target="cuda -host=llvm"},annotate-device-regions,split-host-device,lower-device-kernel-launch,inline-private-functions' > %t && hetero-opt %t -p 'bind-target{target="cuda -host=llvm"},annotate-device-regions,split-host-device,lower-device-kernel-launch,inline-private-functions' | diff %t -
// RUN: hetero-opt %s -p 'bind-target{target="cuda -host=llvm"},annotate-device-regions,split-host-device,lower-device-kernel-launch,inline-private-functions,convert-tir-to-gpu' | filecheck %s --check-prefix=GPU

// The pipeline of docs/passes/tir-target-passes.md: CPU and GPU functions in
// one module, each compiled for its own target; the whole pipeline is
// idempotent.  The CPU function keeps its call (llvm can call); the GPU
// function becomes host code launching its outlined kernel, into which the
// private helper was inlined (cuda cannot call).
// CHECK:      tir.prim_func @cpu_scale(%a: memref<64xf32>, %s: f32) target #target.target<"llvm", host = #target.target<"llvm">> {
// CHECK:          %y = tir.call @mul(%x, %s) : (f32, f32) -> f32
// CHECK:      tir.prim_func private @mul(%x: f32, %s: f32) -> f32 target #target.target<"llvm"> {
// CHECK:      tir.prim_func @gpu_add(%a: memref<256xf32>, %b: memref<256xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
// CHECK-NEXT:   %c4 = arith.constant 4 : index
// CHECK-NEXT:   %c64 = arith.constant 64 : index
// CHECK-NEXT:   tir.launch @gpu_add_kernel(%a, %b) grid(%c4) block(%c64) : (memref<256xf32>, memref<256xf32>)
// CHECK-NEXT: }
// CHECK-NEXT: tir.prim_func @gpu_add_kernel(%a: memref<256xf32>, %b: memref<256xf32>) target #target.target<"cuda"> attributes {tir.noalias = true, tir.is_global_func = true, tir.is_entry_func = false, calling_conv = 2 : i64, tir.kernel_launch_params = ["blockIdx.x", "threadIdx.x"]} {
// CHECK:            %y = arith.addf %x, %x : f32
// CHECK-NOT:  @twice

// What GPU code generation makes of the launch: the same grid and block.
// GPU: "gpu.launch_func"(%c4, %0, %0, %c64, %0, %0, %a, %b) <{kernel = @gpu_add_kernel::@gpu_add_kernel
// GPU: gpu.known_block_size = array<i32: 64, 1, 1>, gpu.known_grid_size = array<i32: 4, 1, 1>
builtin.module {
  tir.prim_func @cpu_scale(%a: memref<64xf32>, %s: f32) target #target.target<"llvm"> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    tir.for %i = %c0 to %c64 step %c1 parallel {
      %x = memref.load %a[%i] : memref<64xf32>
      %y = tir.call @mul(%x, %s) : (f32, f32) -> f32
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  tir.prim_func private @mul(%x: f32, %s: f32) -> f32 target #target.target<"llvm"> {
    %y = arith.mulf %x, %s : f32
    tir.return %y : f32
  }
  tir.prim_func @gpu_add(%a: memref<256xf32>, %b: memref<256xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    tir.for %bx = %c0 to %c4 step %c1 thread_binding "blockIdx.x" {
      tir.for %tx = %c0 to %c64 step %c1 thread_binding "threadIdx.x" {
        %base = arith.muli %bx, %c64 : index
        %i = arith.addi %base, %tx : index
        %x = memref.load %a[%i] : memref<256xf32>
        %y = tir.call @twice(%x) : (f32) -> f32
        memref.store %y, %b[%i] : memref<256xf32>
      }
    }
  }
  tir.prim_func private @twice(%x: f32) -> f32 {
    %y = arith.addf %x, %x : f32
    tir.return %y : f32
  }
}
