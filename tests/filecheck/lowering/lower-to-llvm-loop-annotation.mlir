// RUN: hetero-opt %s --split-input-file -p convert-tir-to-scf,lower-to-llvm | filecheck %s

// The full-unroll annotation of an `unrolled` loop survives `lower-to-llvm`
// on the loop's back edge only (the branch from its latch to its header, as
// LLVM wants `!llvm.loop`), not on its entry or exit; a serial loop nested in
// it gets none.
// CHECK-LABEL: llvm.func @unrolled_outer
// CHECK:         llvm.br ^[[OUTER:bb[0-9]+]](%c0 : i64){{$}}
// CHECK-NEXT:  ^[[OUTER]](%i: i64):
// CHECK:         llvm.cond_br %{{.*}}, ^{{bb[0-9]+}}, ^[[EXIT:bb[0-9]+]]{{$}}
// CHECK:         llvm.br ^[[INNER:bb[0-9]+]](%c0 : i64){{$}}
// CHECK-NEXT:  ^[[INNER]](%j: i64):
// CHECK:         llvm.br ^[[INNER]](%{{.*}} : i64){{$}}
// CHECK:         llvm.br ^[[OUTER]](%{{.*}} : i64) {loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<full = true>>}
// CHECK-NEXT:  ^[[EXIT]]:
// CHECK-NEXT:    llvm.return
tir.prim_func @unrolled_outer(%a: memref<4x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %x = arith.constant 1.0 : f32
  tir.for %i = %c0 to %c4 step %c1 unrolled {
    tir.for %j = %c0 to %n step %c1 {
      memref.store %x, %a[%i, %j] : memref<4x?xf32>
    }
  }
}

// -----

// An `unrolled` loop nested in a serial one: only the inner back edge.
// CHECK-LABEL: llvm.func @unrolled_inner
// CHECK:         llvm.br ^[[OUTER:bb[0-9]+]](%c0 : i64){{$}}
// CHECK:         llvm.br ^[[INNER:bb[0-9]+]](%c0 : i64){{$}}
// CHECK-NEXT:  ^[[INNER]](%j: i64):
// CHECK:         llvm.br ^[[INNER]](%{{.*}} : i64) {loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<full = true>>}
// CHECK:         llvm.br ^[[OUTER]](%{{.*}} : i64){{$}}
tir.prim_func @unrolled_inner(%a: memref<?x4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %x = arith.constant 1.0 : f32
  tir.for %i = %c0 to %n step %c1 {
    tir.for %j = %c0 to %c4 step %c1 unrolled {
      memref.store %x, %a[%i, %j] : memref<?x4xf32>
    }
  }
}
