// RUN: hetero-translate %s --emit=asm | filecheck %s

// An aarch64 target (`mtriple`) on any host: AArch64 code from LLVM's cross
// target.  The parallel loop (outlined however small: parallel_min_ops = 0)
// calls the thread pool (whose AArch64 build
// `hetero-translate --emit=runtime-obj` writes), and its body's vectorized
// exp, log, tanh and erf (`approximate-math`) are straight-line NEON code on
// 4-lane `v` registers: no call of the C library, nothing of x86.
// CHECK-LABEL: activations:
// CHECK:         bl hetero_parallel_for
// CHECK-LABEL: activations_parallel0.task:
// CHECK-NOT:     {{bl[[:space:]]|expf|logf|tanhf|erff|%[xyz]mm}}
// CHECK:         fmla v{{[0-9]+}}.4s, v{{[0-9]+}}.4s, v{{[0-9]+}}.4s
// CHECK-NOT:     {{bl[[:space:]]|expf|logf|tanhf|erff|%[xyz]mm}}
// CHECK:       .Lfunc_end1:
tir.prim_func @activations(%x: memref<64x1024xf32>, %y: memref<64x1024xf32>)
    target #target.target<"llvm", {mtriple = "aarch64-linux-gnu", num_threads = 2, parallel_min_ops = 0}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  tir.for %i = %c0 to %c64 step %c1 parallel {
    tir.for %j = %c0 to %c1024 step %c1 vectorized {
      %v = memref.load %x[%i, %j] : memref<64x1024xf32>
      %e = math.exp %v : f32
      %l = math.log %e : f32
      %t = math.tanh %l : f32
      %r = math.erf %t : f32
      memref.store %r, %y[%i, %j] : memref<64x1024xf32>
    }
  }
}
