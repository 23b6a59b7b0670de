// RUN: hetero-opt %s --split-input-file --verify-diagnostics -p convert-index-to-llvm | filecheck %s
// RUN: hetero-opt %s --split-input-file --verify-diagnostics -p "convert-index-to-llvm{index-bitwidth=32}" | filecheck %s --check-prefix=I32

// Arguments, results, block arguments, loop bounds and constants become i64;
// two zero constants (xDSL's TypeConversionPattern loops forever on those),
// which become one: equal constants are shared within a function.
// CHECK-LABEL: func.func @types
// CHECK-SAME: (%[[N:.*]]: i64, %[[V:.*]]: vector<4xi64>) -> i64 {
// I32-LABEL: func.func @types
// I32-SAME: (%{{.*}}: i32, %{{.*}}: vector<4xi32>) -> i32 {
func.func @types(%n: index, %v: vector<4xindex>) -> index {
  // CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i64
  // CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i64
  // CHECK-NEXT: %{{.*}} = arith.constant dense<[0, 1, 2, 3]> : vector<4xi64>
  // I32: arith.constant 0 : i32
  // I32: arith.constant dense<[0, 1, 2, 3]> : vector<4xi32>
  %z = arith.constant 0 : index
  %z2 = arith.constant 0 : index
  %one = arith.constant 1 : index
  %c = arith.constant dense<[0, 1, 2, 3]> : vector<4xindex>
  // CHECK-NEXT: %[[S:.*]] = scf.for %[[I:.*]] = %[[Z]] to %[[N]] step %[[ONE]] iter_args(%[[A:.*]] = %[[Z]]) -> (i64) : i64 {
  %s = scf.for %i = %z to %n step %one iter_args(%acc = %z2) -> (index) {
    // CHECK-NEXT: %[[T:.*]] = arith.addi %[[A]], %[[I]] : i64
    %t = arith.addi %acc, %i : index
    scf.yield %t : index
  }
  // CHECK: func.return %[[S]] : i64
  func.return %s : index
}

// -----

// index_cast becomes a sign extension, a truncation, or nothing.
// CHECK-LABEL: func.func @casts
// CHECK-SAME: (%[[N:.*]]: i64, %[[I:.*]]: i32, %[[W:.*]]: i64)
func.func @casts(%n: index, %i: i32, %w: i64) -> (i32, index, i64, index) {
  // CHECK-NEXT: %[[T:.*]] = arith.trunci %[[N]] : i64 to i32
  // CHECK-NEXT: %[[E:.*]] = arith.extsi %[[I]] : i32 to i64
  // CHECK-NEXT: func.return %[[T]], %[[E]], %[[N]], %[[W]] : i32, i64, i64, i64
  // I32-LABEL: func.func @casts
  // I32-NEXT: %[[N64:.*]] = arith.extsi %[[N:.*]] : i32 to i64
  // I32-NEXT: %[[W32:.*]] = arith.trunci %{{.*}} : i64 to i32
  // I32-NEXT: func.return %[[N]], %{{.*}}, %[[N64]], %[[W32]] : i32, i32, i64, i32
  %0 = arith.index_cast %n : index to i32
  %1 = arith.index_cast %i : i32 to index
  %2 = arith.index_cast %n : index to i64
  %3 = arith.index_cast %w : i64 to index
  func.return %0, %1, %2, %3 : i32, index, i64, index
}

// -----

// Unrealized casts to and from index become i64 to i64, for reconcile-unrealized-casts.
// CHECK-LABEL: func.func @casts_to_index
func.func @casts_to_index(%x: i64) -> i64 {
  // CHECK-NEXT: %[[A:.*]] = builtin.unrealized_conversion_cast %{{.*}} : i64 to i64
  // CHECK-NEXT: %[[B:.*]] = builtin.unrealized_conversion_cast %[[A]] : i64 to i64
  %a = builtin.unrealized_conversion_cast %x : i64 to index
  %b = builtin.unrealized_conversion_cast %a : index to i64
  func.return %b : i64
}

// -----

func.func @memref_first(%m: memref<4xf32>, %i: index) -> f32 {
  // expected-error@+1 {{'memref.load' takes index operands: run convert-memref-to-llvm and convert-vector-to-llvm before convert-index-to-llvm}}
  %0 = memref.load %m[%i] : memref<4xf32>
  func.return %0 : f32
}
