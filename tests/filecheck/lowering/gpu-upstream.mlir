// REQUIRES: mlir-opt
// The generic form of the gpu and NVVM-flavoured llvm dialect that hetero emits
// is valid upstream MLIR (hetero's own attributes parse as unregistered ones).
// RUN: hetero-opt %s -p convert-tir-to-gpu --print-op-generic | %mlir-opt --allow-unregistered-dialect | filecheck %s --check-prefix=GPU
// RUN: hetero-opt %s -p convert-tir-to-gpu,convert-gpu-to-nvvm --print-op-generic | %mlir-opt --allow-unregistered-dialect | filecheck %s --check-prefix=NVVM

// GPU: gpu.module @k
// GPU: gpu.func @k
// GPU: gpu.thread_id x
// GPU: gpu.barrier
// NVVM: gpu.module @k
// NVVM: llvm.mlir.global internal @__shared0
// NVVM: llvm.func @k
// NVVM: llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"
// NVVM: llvm.getelementptr {{.*}} -> !llvm.ptr<3>
// NVVM: llvm.call_intrinsic "llvm.nvvm.barrier0"
tir.prim_func @k(%a: memref<64xf32>) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tir.for %tx = %c0 to %c64 step %c1 thread_binding "threadIdx.x" {
    %tile = tir.alloc : memref<64xf32, "shared">
    %v = memref.load %a[%tx] : memref<64xf32>
    memref.store %v, %tile[%tx] : memref<64xf32, "shared">
    "gpu.barrier"() : () -> ()
    %w = memref.load %tile[%tx] : memref<64xf32, "shared">
    %e = math.exp %w : f32
    memref.store %e, %a[%tx] : memref<64xf32>
  }
}
