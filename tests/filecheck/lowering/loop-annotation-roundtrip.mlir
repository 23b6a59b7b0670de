// RUN: hetero-opt %s | hetero-opt | filecheck %s
// RUN: hetero-opt %s -p lower-to-llvm | filecheck %s --check-prefix=LLVM

// The loop annotation that convert-tir-to-scf puts on an unrolled loop is
// MLIR's #llvm.loop_annotation: it prints and parses (hetero-opt loads it
// next to xDSL's llvm dialect, which lacks it), and lower-to-llvm moves it
// to the loop's back edge.

func.func @f(%n: index, %a: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    memref.store %zero, %a[%i] : memref<?xf32>
  } {llvm.loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<full = true>>}
  func.return
}

// CHECK:      scf.for %i = %c0 to %n step %c1 {
// CHECK-NEXT:   memref.store
// CHECK-NEXT: } {llvm.loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<full = true>>}

// LLVM:       llvm.br ^{{.*}} {loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<full = true>>}
