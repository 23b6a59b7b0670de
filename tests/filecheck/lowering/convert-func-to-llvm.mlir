// RUN: hetero-opt %s --split-input-file --verify-diagnostics -p convert-func-to-llvm | filecheck %s

// Linkage: public definitions and declarations external, private definitions
// internal, an explicit llvm.linkage wins; other attributes are kept.
// CHECK-LABEL: llvm.func @public(%{{.*}}: f32) -> f32 attributes {hetero.note = "kept"} {
func.func @public(%x: f32) -> f32 attributes {hetero.note = "kept"} {
  // CHECK-NEXT: %[[R:.*]] = llvm.call @helper(%{{.*}}) : (f32) -> f32
  %0 = func.call @helper(%x) : (f32) -> f32
  // CHECK-NEXT: llvm.return %[[R]] : f32
  func.return %0 : f32
}
// CHECK: llvm.func internal @helper(%[[X:.*]]: f32) -> f32 {
func.func private @helper(%x: f32) -> f32 {
  func.return %x : f32
}
// CHECK: llvm.func @declared(f64) -> f64
func.func private @declared(f64) -> f64
// CHECK: llvm.func weak @weak() {
func.func @weak() attributes {llvm.linkage = #llvm.linkage<weak>} {
  // CHECK-NEXT: llvm.return
  func.return
}

// -----

// index arguments and results are i64; casts bridge to unconverted users.
// CHECK-LABEL: llvm.func @index_args
// CHECK-SAME: (%[[N:.*]]: i64) -> i64 {
func.func @index_args(%n: index) -> index {
  // CHECK-NEXT: %[[NI:.*]] = builtin.unrealized_conversion_cast %[[N]] : i64 to index
  // CHECK-NEXT: %[[M:.*]] = arith.addi %[[NI]], %[[NI]] : index
  // CHECK-NEXT: %[[MI:.*]] = builtin.unrealized_conversion_cast %[[M]] : index to i64
  // CHECK-NEXT: llvm.return %[[MI]] : i64
  %m = arith.addi %n, %n : index
  func.return %m : index
}

// -----

// Several results travel in a struct.
// CHECK-LABEL: llvm.func @pair
// CHECK-SAME: (%[[A:.*]]: i32, %[[B:.*]]: f64) -> !llvm.struct<(i32, f64)> {
func.func @pair(%a: i32, %b: f64) -> (i32, f64) {
  // CHECK-NEXT: %[[U:.*]] = llvm.mlir.undef : !llvm.struct<(i32, f64)>
  // CHECK-NEXT: %[[S0:.*]] = llvm.insertvalue %[[A]], %[[U]][0] : !llvm.struct<(i32, f64)>
  // CHECK-NEXT: %[[S1:.*]] = llvm.insertvalue %[[B]], %[[S0]][1] : !llvm.struct<(i32, f64)>
  // CHECK-NEXT: llvm.return %[[S1]] : !llvm.struct<(i32, f64)>
  func.return %a, %b : i32, f64
}
// CHECK-LABEL: llvm.func @use_pair
func.func @use_pair(%a: i32, %b: f64) -> f64 {
  // CHECK-NEXT: %[[S:.*]] = llvm.call @pair(%{{.*}}, %{{.*}}) : (i32, f64) -> !llvm.struct<(i32, f64)>
  // CHECK-NEXT: %{{.*}} = llvm.extractvalue %[[S]][0] : !llvm.struct<(i32, f64)>
  // CHECK-NEXT: %[[Y:.*]] = llvm.extractvalue %[[S]][1] : !llvm.struct<(i32, f64)>
  // CHECK-NEXT: llvm.return %[[Y]] : f64
  %x, %y = func.call @pair(%a, %b) : (i32, f64) -> (i32, f64)
  func.return %y : f64
}
// CHECK-LABEL: llvm.func @no_results
func.func @no_results() {
  // CHECK-NEXT: llvm.call @use_nothing() : () -> ()
  func.call @use_nothing() : () -> ()
  func.return
}
func.func private @use_nothing()

// -----

// expected-error@+1 {{argument #0 of @f is a memref: run convert-memref-to-llvm before convert-func-to-llvm}}
func.func @f(%m: memref<4xf32>) {
  func.return
}
