// RUN: hetero-translate %s --emit=asm | filecheck %s
// RUN: sed -e 's/"skylake-avx512", mattr = \["+avx512f", "+fma"\]/"haswell", mattr = ["+avx2", "+fma"]/' %s > %t.mlir
// RUN: hetero-translate %t.mlir --emit=asm | filecheck %s --check-prefix=AVX2

// A vectorized loop of f32 exp, log, tanh and erf (`approximate-math`) is
// straight-line vector code: no call of the C library (`expf`, `logf`,
// `tanhf`, `erff`, once per lane), the polynomials in FMAs on whole registers.
// CHECK-LABEL: activations:
// CHECK-NOT:   {{call|expf|logf|tanhf|erff}}
// CHECK:       vfmadd{{[0-9]+}}ps {{.*}}%zmm{{[0-9]+}}
// CHECK-NOT:   {{call|expf|logf|tanhf|erff}}
// CHECK:       .Lfunc_end0:
// AVX2-LABEL:  activations:
// AVX2-NOT:    {{call|expf|logf|tanhf|erff}}
// AVX2:        vfmadd{{[0-9]+}}ps {{.*}}%ymm{{[0-9]+}}
// AVX2-NOT:    {{call|expf|logf|tanhf|erff|zmm}}
// AVX2:        .Lfunc_end0:
tir.prim_func @activations(%x: memref<1024xf32>, %y: memref<1024xf32>)
    target #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f", "+fma"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  tir.for %i = %c0 to %c1024 step %c1 vectorized {
    %v = memref.load %x[%i] : memref<1024xf32>
    %e = math.exp %v : f32
    %l = math.log %e : f32
    %t = math.tanh %l : f32
    %r = math.erf %t : f32
    memref.store %r, %y[%i] : memref<1024xf32>
  }
}
