// RUN: HETERO_ROUNDTRIP
// RUN: HETERO_GENERIC_ROUNDTRIP
// RUN: hetero-opt %s -p convert-memref-to-llvm | hetero-opt | filecheck %s --check-prefix=LLVM

// memref.prefetch, which xDSL's memref dialect lacks, in MLIR's syntax and
// generic form (properties in MLIR's alphabetical order, other attributes
// kept); convert-memref-to-llvm lowers it to the element's address
// and llvm.intr.prefetch with LLVM's immediates (rw, hint = locality, cache),
// which hetero-opt parses back too.

// CHECK-LABEL: func.func @prefetch
// CHECK:         memref.prefetch %w[%i, %j], read, locality<3>, data : memref<8x?xf32>
// CHECK:         memref.prefetch %w[%j, %i], write, locality<0>, instr {tag = 7 : i64} : memref<8x?xf32>
// CHECK-GENERIC: "memref.prefetch"(%w, %i, %j) <{isDataCache = true, isWrite = false, localityHint = 3 : i32}> : (memref<8x?xf32>, index, index) -> ()
// CHECK-GENERIC: "memref.prefetch"(%w, %j, %i) <{isDataCache = false, isWrite = true, localityHint = 0 : i32}> {tag = 7 : i64} : (memref<8x?xf32>, index, index) -> ()
// LLVM-LABEL:  func.func @prefetch
// LLVM:          %[[A:.*]] = llvm.getelementptr inbounds %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// LLVM-NEXT:     "llvm.intr.prefetch"(%[[A]]) <{cache = 1 : i32, hint = 3 : i32, rw = 0 : i32}> : (!llvm.ptr) -> ()
// LLVM:          "llvm.intr.prefetch"(%{{.*}}) <{cache = 0 : i32, hint = 0 : i32, rw = 1 : i32}> : (!llvm.ptr) -> ()
// LLVM-NOT:      memref.prefetch
func.func @prefetch(%w: memref<8x?xf32>, %i: index, %j: index) {
  memref.prefetch %w[%i, %j], read, locality<3>, data : memref<8x?xf32>
  memref.prefetch %w[%j, %i], write, locality<0>, instr {tag = 7 : i64} : memref<8x?xf32>
  func.return
}
