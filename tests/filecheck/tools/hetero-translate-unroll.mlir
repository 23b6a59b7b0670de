// RUN: hetero-translate %s --emit=asm | filecheck %s

// LLVM unrolls `unrolled` loops (their annotation forces it): the 12 x 32
// AVX-512 register tile of `docs/cpu-schedules.md` becomes one loop over `k`
// of 24 FMAs on zmm accumulators.  LLVM's own heuristics would not unroll
// the 12 rows: with `%i` serial, the `k` loop keeps an inner loop of 2 FMAs.
// CHECK-LABEL: tile:
// CHECK-NOT:     vfmadd
// CHECK:       .LBB0_[[K:[0-9]+]]:
// CHECK-COUNT-24: vfmadd231ps {{.*}}%zmm{{[0-9]+}}, %zmm{{[0-9]+}}, %zmm{{[0-9]+}}
// CHECK-NOT:   {{^}}.LBB
// CHECK:         jne .LBB0_[[K]]
// CHECK-NOT:     vfmadd
// CHECK:       .Lfunc_end0:
tir.prim_func @tile(%a: memref<?x12xf32>, %b: memref<?x32xf32>, %c: memref<12x32xf32>, %n: index)
    target #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f", "+fma"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %acc = tir.alloc : memref<12x32xf32, "local">
  tir.for %i = %c0 to %c12 step %c1 unrolled {
    tir.for %j = %c0 to %c32 step %c1 vectorized {
      memref.store %zero, %acc[%i, %j] : memref<12x32xf32, "local">
    }
  }
  tir.for %k = %c0 to %n step %c1 {
    tir.for %i = %c0 to %c12 step %c1 unrolled {
      %x = memref.load %a[%k, %i] : memref<?x12xf32>
      tir.for %j = %c0 to %c32 step %c1 vectorized {
        %y = memref.load %b[%k, %j] : memref<?x32xf32>
        %p = arith.mulf %x, %y fastmath<contract> : f32
        %s = memref.load %acc[%i, %j] : memref<12x32xf32, "local">
        %t = arith.addf %s, %p fastmath<contract> : f32
        memref.store %t, %acc[%i, %j] : memref<12x32xf32, "local">
      }
    }
  }
  tir.for %i = %c0 to %c12 step %c1 unrolled {
    tir.for %j = %c0 to %c32 step %c1 vectorized {
      %s = memref.load %acc[%i, %j] : memref<12x32xf32, "local">
      memref.store %s, %c[%i, %j] : memref<12x32xf32>
    }
  }
}
