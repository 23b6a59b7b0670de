// RUN: hetero-opt %s -p convert-to-llvm | filecheck %s
// RUN: hetero-opt %s -p convert-to-llvm,reconcile-unrealized-casts | filecheck %s --check-prefix=SAME
// RUN: hetero-opt %s -p convert-memref-to-llvm,convert-vector-to-llvm,convert-index-to-llvm,convert-arith-to-llvm,convert-math-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts | filecheck %s --check-prefix=SAME
// RUN: hetero-opt %s -p convert-to-llvm{index-bitwidth=32},reconcile-unrealized-casts | filecheck %s --check-prefix=I32

// Every dialect at once: the memref ABI, vectors, math, index arithmetic,
// branches with index block arguments, a call, a returned index.  Converted
// values are used as they are: the only cast left for
// reconcile-unrealized-casts is the one for %n, used before its function's
// signature is converted (an i64 to i64 cast).
// CHECK-LABEL: llvm.func @scale
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr, %[[A0:.*]]: i64, %[[N:.*]]: i64, %{{.*}}: f32) -> i64
// CHECK-SAME: attributes {hetero.signature = (memref<?x16xf32>, i64, f32) -> i64}
// CHECK: ^[[HEAD:.*]](%[[I:.*]]: i64):
// CHECK-NEXT: %[[NC:.*]] = builtin.unrealized_conversion_cast %[[N]] : i64 to i64
// CHECK-NEXT: llvm.icmp "slt" %[[I]], %[[NC]] : i64
// CHECK-NOT: builtin.unrealized_conversion_cast
// CHECK: llvm.getelementptr inbounds %[[A]][%[[I]], 0]
// CHECK: llvm.call_intrinsic "llvm.exp.v16f32"
// CHECK: %[[NEXT:.*]] = llvm.add %[[I]], %{{.*}} : i64
// CHECK-NEXT: llvm.br ^[[HEAD]](%[[NEXT]] : i64)
// CHECK: llvm.call @first(%[[A]], %[[A0]]) : (!llvm.ptr, i64) -> f32
// CHECK: llvm.trunc %[[I]] : i64 to i32
// CHECK: llvm.return %[[I]] : i64
// CHECK-LABEL: llvm.func internal @first

// The same code as the passes of one dialect each, then the casts removed.
// SAME-NOT: {{(arith|math|func|cf|memref|vector|builtin\.unrealized_conversion_cast)[.(]}}
// SAME-LABEL: llvm.func @scale
// SAME-SAME: (%[[A:.*]]: !llvm.ptr, %[[A0:.*]]: i64, %[[N:.*]]: i64, %[[S:.*]]: f32) -> i64
// SAME-SAME: attributes {hetero.signature = (memref<?x16xf32>, i64, f32) -> i64}
// SAME: %[[C1:.*]] = llvm.mlir.constant(1) : i64
// SAME: llvm.br ^[[HEAD:.*]](%{{.*}} : i64)
// SAME: ^[[HEAD]](%[[I:.*]]: i64):
// SAME-NEXT: %[[MORE:.*]] = llvm.icmp "slt" %[[I]], %[[N]] : i64
// SAME-NEXT: llvm.cond_br %[[MORE]], ^[[BODY:.*]], ^[[EXIT:.*]]
// SAME: ^[[BODY]]:
// SAME-NEXT: %[[P:.*]] = llvm.getelementptr inbounds %[[A]][%[[I]], 0] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<16 x f32>
// SAME-NEXT: %[[ROW:.*]] = llvm.load %[[P]] {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// SAME-NEXT: %[[T:.*]] = llvm.call_intrinsic "llvm.exp.v16f32"(%[[ROW]])
// SAME-NEXT: %[[R:.*]] = llvm.fmul %[[T]], %{{.*}} : vector<16xf32>
// SAME-NEXT: %[[Q:.*]] = llvm.getelementptr inbounds %[[A]][%[[I]], 0]
// SAME-NEXT: llvm.store %[[R]], %[[Q]] {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
// SAME-NEXT: %[[NEXT:.*]] = llvm.add %[[I]], %[[C1]] : i64
// SAME-NEXT: llvm.br ^[[HEAD]](%[[NEXT]] : i64)
// SAME: ^[[EXIT]]:
// SAME-NEXT: llvm.call @first(%[[A]], %[[A0]]) : (!llvm.ptr, i64) -> f32
// SAME-NEXT: llvm.trunc %[[I]] : i64 to i32
// SAME-NEXT: llvm.return %[[I]] : i64
// SAME-LABEL: llvm.func internal @first
// SAME-SAME: attributes {hetero.signature = (memref<?x16xf32>) -> f32}
// SAME-NOT: {{(arith|math|func|cf|memref|vector|builtin\.unrealized_conversion_cast)[.(]}}

// I32-LABEL: llvm.func @scale
// I32-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: f32) -> i32
// I32-SAME: attributes {hetero.signature = (memref<?x16xf32>, i32, f32) -> i32}
// I32: llvm.add %{{.*}}, %{{.*}} : i32
// I32-NOT: llvm.trunc
// I32: llvm.return %{{.*}} : i32
func.func @scale(%a: memref<?x16xf32>, %n: index, %s: f32) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %vs = vector.broadcast %s : f32 to vector<16xf32>
  cf.br ^head(%c0 : index)
^head(%i: index):
  %more = arith.cmpi slt, %i, %n : index
  cf.cond_br %more, ^body, ^exit
^body:
  %row = vector.load %a[%i, %c0] : memref<?x16xf32>, vector<16xf32>
  %t = math.exp %row : vector<16xf32>
  %r = arith.mulf %t, %vs : vector<16xf32>
  vector.store %r, %a[%i, %c0] : memref<?x16xf32>, vector<16xf32>
  %next = arith.addi %i, %c1 : index
  cf.br ^head(%next : index)
^exit:
  %total = func.call @first(%a) : (memref<?x16xf32>) -> f32
  %k = arith.index_cast %i : index to i32
  return %i : index
}
func.func private @first(%a: memref<?x16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0, %c0] : memref<?x16xf32>
  return %x : f32
}
