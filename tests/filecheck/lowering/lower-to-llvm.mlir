// RUN: hetero-opt %s --split-input-file --verify-diagnostics -p lower-to-llvm | filecheck %s

// A whole program (loops, memrefs of dynamic shape, vectors, math, a call)
// ends as llvm dialect only, without casts.
// CHECK-NOT: {{(arith|math|func|cf|scf|memref|vector|builtin\.unrealized_conversion_cast)[.(]}}
// CHECK-LABEL: llvm.func @scale_rows
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr, %[[A0:.*]]: i64, %[[S:.*]]: f32) attributes {hetero.signature = (memref<?x16xf32>, f32) -> ()}
func.func @scale_rows(%a: memref<?x16xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x16xf32>
  %vs = vector.broadcast %s : f32 to vector<16xf32>
  // CHECK: ^[[HEAD:.*]](%[[I:.*]]: i64):
  // CHECK: llvm.icmp "slt" %[[I]], %[[A0]] : i64
  scf.for %i = %c0 to %n step %c1 {
    // CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
    %row = vector.load %a[%i, %c0] : memref<?x16xf32>, vector<16xf32>
    %t = math.tanh %row : vector<16xf32>
    %r = arith.mulf %t, %vs : vector<16xf32>
    // CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
    vector.store %r, %a[%i, %c0] : memref<?x16xf32>, vector<16xf32>
  }
  %total = func.call @sum(%a) : (memref<?x16xf32>) -> f32
  return
}
// CHECK-LABEL: llvm.func internal @sum
func.func private @sum(%a: memref<?x16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0, %c0] : memref<?x16xf32>
  return %x : f32
}
// CHECK-NOT: {{(arith|math|func|cf|scf|memref|vector|builtin\.unrealized_conversion_cast)[.(]}}

// -----

func.func @tensors(%n: index) {
  // expected-error@+1 {{lower-to-llvm: 'tensor.empty' is left after lowering}}
  %t = tensor.empty(%n) : tensor<?xf32>
  "test.op"(%t) : (tensor<?xf32>) -> ()
  return
}
