// RUN: hetero-opt %s -p fold-device-call-results --split-input-file | filecheck %s
// RUN: hetero-opt %s -p fold-device-call-results --split-input-file > %t && hetero-opt %t -p fold-device-call-results --split-input-file | diff %t -

// The example where this removes a launch: fold-device-call-results-launch.mlir.

// Results of every scalar type are folded; a public subroutine stays (the
// outside may call it); what uses a result but is not foldable (a store)
// gets the constant.
// CHECK:      tir.prim_func @main(%out: memref<1xf32>) target #target.target<"llvm"> {
// CHECK-NEXT:   %c0 = arith.constant 0 : index
// CHECK-NEXT:   %s = arith.constant 6.250000e+00 : f32
// CHECK-NEXT:   memref.store %s, %out[%c0] : memref<1xf32>
// CHECK-NEXT: }
// CHECK:      tir.prim_func @scale(%x: f32) -> f32 target #target.target<"cuda"> {
tir.prim_func @main(%out: memref<1xf32>) target #target.target<"llvm"> {
  %c0 = arith.constant 0 : index
  %x = arith.constant 2.5 : f32
  %s = tir.call @scale(%x) : (f32) -> f32
  memref.store %s, %out[%c0] : memref<1xf32>
}
tir.prim_func @scale(%x: f32) -> f32 target #target.target<"cuda"> {
  %y = arith.mulf %x, %x : f32
  tir.return %y : f32
}

// -----

// Nothing is folded when the result is not known: an argument that is not
// a constant, a subroutine with side effects (it must run), or a call on
// the same target (not a device boundary: inlining and folding handle it).
// CHECK:      tir.prim_func @main(%n: index, %buf: memref<1xindex>) -> (i1, i1, i1) target #target.target<"llvm"> {
// CHECK-NEXT:   %c4 = arith.constant 4 : index
// CHECK-NEXT:   %a = tir.call @is_small(%n) : (index) -> i1
// CHECK-NEXT:   %b = tir.call @store_and_check(%c4, %buf) : (index, memref<1xindex>) -> i1
// CHECK-NEXT:   %c = tir.call @is_small_here(%c4) : (index) -> i1
tir.prim_func @main(%n: index, %buf: memref<1xindex>) -> (i1, i1, i1) target #target.target<"llvm"> {
  %c4 = arith.constant 4 : index
  %a = tir.call @is_small(%n) : (index) -> i1
  %b = tir.call @store_and_check(%c4, %buf) : (index, memref<1xindex>) -> i1
  %c = tir.call @is_small_here(%c4) : (index) -> i1
  tir.return %a, %b, %c : i1, i1, i1
}
tir.prim_func private @is_small(%n: index) -> i1 target #target.target<"cuda"> {
  %limit = arith.constant 1024 : index
  %small = arith.cmpi ult, %n, %limit : index
  tir.return %small : i1
}
tir.prim_func private @store_and_check(%n: index, %buf: memref<1xindex>) -> i1 target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  memref.store %n, %buf[%c0] : memref<1xindex>
  %limit = arith.constant 1024 : index
  %small = arith.cmpi ult, %n, %limit : index
  tir.return %small : i1
}
tir.prim_func private @is_small_here(%n: index) -> i1 target #target.target<"llvm"> {
  %limit = arith.constant 1024 : index
  %small = arith.cmpi ult, %n, %limit : index
  tir.return %small : i1
}

// -----

// An evaluation that fails (a division by zero) is left for run time.
// CHECK:      tir.prim_func @main() -> index target #target.target<"llvm"> {
// CHECK-NEXT:   %c0 = arith.constant 0 : index
// CHECK-NEXT:   %q = tir.call @divide(%c0) : (index) -> index
tir.prim_func @main() -> index target #target.target<"llvm"> {
  %c0 = arith.constant 0 : index
  %q = tir.call @divide(%c0) : (index) -> index
  tir.return %q : index
}
tir.prim_func private @divide(%d: index) -> index target #target.target<"cuda"> {
  %c8 = arith.constant 8 : index
  %q = arith.divui %c8, %d : index
  tir.return %q : index
}
