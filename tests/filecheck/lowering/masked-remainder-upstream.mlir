// A masked remainder (AVX-512) is MLIR's llvm.intr.masked.load/store, with
// the alignment as an attribute: mlir-translate writes LLVM 21's signature
// (the pointer's `align`), which a call of the intrinsic with the old `i32`
// alignment operand does not match.
// RUN: hetero-opt %s -p convert-tir-to-scf,lower-to-llvm | filecheck %s
// RUN: %if mlir-translate %{ hetero-opt %s -p convert-tir-to-scf,lower-to-llvm --print-op-generic | %mlir-translate --mlir-to-llvmir | filecheck %s --check-prefix=LLVM %}

// CHECK-LABEL: llvm.func @masked_remainder
// CHECK:         %[[X:.*]] = llvm.intr.masked.load %{{.*}}, %[[M:.*]], %{{.*}} {alignment = 4 : i32} : (!llvm.ptr, vector<16xi1>, vector<16xf32>) -> vector<16xf32>
// CHECK:         llvm.intr.masked.store %{{.*}}, %{{.*}}, %[[M]] {alignment = 4 : i32} : vector<16xf32>, vector<16xi1> into !llvm.ptr
// CHECK-NOT:     llvm.call_intrinsic "llvm.masked
// LLVM-LABEL: define void @masked_remainder
// LLVM:         call <16 x float> @llvm.masked.load.v16f32.p0(ptr align 4 %{{.*}}, <16 x i1> <i1 true, i1 true, i1 true,
// LLVM:         call void @llvm.masked.store.v16f32.p0(<16 x float> %{{.*}}, ptr align 4 %{{.*}}, <16 x i1> <i1 true,
tir.prim_func @masked_remainder(%a: memref<19xf32>, %b: memref<19xf32>, %s: f32)
    target #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c19 = arith.constant 19 : index
  tir.for %i = %c0 to %c19 step %c1 vectorized {
    %x = memref.load %a[%i] : memref<19xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %b[%i] : memref<19xf32>
  }
}
