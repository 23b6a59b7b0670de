// RUN: hetero-translate %s --emit=llvm-ir | filecheck %s

// The back edge of each `unrolled` loop carries `!llvm.loop` metadata: a
// distinct node of its own, listing itself first, then the shared property
// `llvm.loop.unroll.full` (CHECK-DAG matches do not overlap: the two nodes
// differ).  At `opt_level = 0` LLVM unrolls nothing, so the metadata is still
// there to see.
// CHECK-LABEL: define void @two
// CHECK:         br label %{{.*}}, !llvm.loop ![[FIRST:[0-9]+]]
// CHECK:         br label %{{.*}}, !llvm.loop ![[SECOND:[0-9]+]]
// CHECK-DAG:   ![[FIRST]] = distinct !{![[FIRST]], ![[FULL:[0-9]+]]}
// CHECK-DAG:   ![[SECOND]] = distinct !{![[SECOND]], ![[FULL]]}
// CHECK-DAG:   ![[FULL]] = !{!"llvm.loop.unroll.full"}
tir.prim_func @two(%a: memref<8xf32>, %x: f32) target #target.target<"llvm", {opt_level = 0}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  tir.for %i = %c0 to %c4 step %c1 unrolled {
    memref.store %x, %a[%i] : memref<8xf32>
  }
  tir.for %j = %c4 to %c8 step %c1 unrolled {
    memref.store %x, %a[%j] : memref<8xf32>
  }
}
