// RUN: hetero-opt %s -p convert-scf-to-cf | filecheck %s

// `hetero-opt -p convert-scf-to-cf` is hetero's pass, not xDSL's of the same
// name: an `scf.for`'s `llvm` loop annotation moves to the loop's back edge
// (xDSL's pass drops it); its entry and exit branches get none.
// CHECK-LABEL: func.func @annotated
// CHECK:         cf.br ^[[HEADER:bb[0-9]+]](%{{.*}} : index){{$}}
// CHECK-NEXT:  ^[[HEADER]](%{{.*}}: index):
// CHECK:         cf.cond_br %{{.*}}, ^[[BODY:bb[0-9]+]], ^[[EXIT:bb[0-9]+]]{{$}}
// CHECK:         cf.br ^[[HEADER]](%{{.*}} : index) {llvm.loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<full = true>>}
// CHECK-NEXT:  ^[[EXIT]]:
// CHECK-NEXT:    func.return
func.func @annotated(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %x = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %x, %a[%i] : memref<4xf32>
  } {llvm.loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<full = true>>}
  func.return
}
