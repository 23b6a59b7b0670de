// RUN: hetero-opt %s -p fold-device-call-results --split-input-file | filecheck %s
// RUN: hetero-opt %s -p fold-device-call-results --split-input-file > %t && hetero-opt %t -p fold-device-call-results --split-input-file | diff %t -

// The example where this removes a launch: fold-device-call-results-launch.mlir.

// Integer results (index, iN, i1) are folded; a public subroutine stays
// (the outside may call it); what uses a result but is not foldable (a
// store) gets the constant.
// CHECK:      tir.prim_func @main(%out: memref<1xi32>) -> i1 target #target.target<"llvm"> {
// CHECK-NEXT:   %c0 = arith.constant 0 : index
// CHECK-NEXT:   %s = arith.constant 25 : i32
// CHECK-NEXT:   %big = arith.constant true
// CHECK-NEXT:   memref.store %s, %out[%c0] : memref<1xi32>
// CHECK-NEXT:   tir.return %big : i1
// CHECK-NEXT: }
// CHECK:      tir.prim_func @scale(%x: i32) -> (i32, i1) target #target.target<"cuda"> {
tir.prim_func @main(%out: memref<1xi32>) -> i1 target #target.target<"llvm"> {
  %c0 = arith.constant 0 : index
  %x = arith.constant 5 : i32
  %s, %big = tir.call @scale(%x) : (i32) -> (i32, i1)
  memref.store %s, %out[%c0] : memref<1xi32>
  tir.return %big : i1
}
tir.prim_func @scale(%x: i32) -> (i32, i1) target #target.target<"cuda"> {
  %y = arith.muli %x, %x : i32
  %c9 = arith.constant 9 : i32
  %big = arith.cmpi sgt, %y, %c9 : i32
  tir.return %y, %big : i32, i1
}

// -----

// Float arithmetic is never folded: the interpreter computes in double
// precision ((1e8 + 1) - 1e8 would fold to 1.0, where f32 gives 0.0) and
// the device's approximate math differs again.
// CHECK:      tir.prim_func @main() -> f32 target #target.target<"llvm"> {
// CHECK-NEXT:   %x = arith.constant 1.000000e+08 : f32
// CHECK-NEXT:   %r = tir.call @cancel(%x) : (f32) -> f32
tir.prim_func @main() -> f32 target #target.target<"llvm"> {
  %x = arith.constant 1.0e8 : f32
  %r = tir.call @cancel(%x) : (f32) -> f32
  tir.return %r : f32
}
tir.prim_func private @cancel(%x: f32) -> f32 target #target.target<"cuda"> {
  %one = arith.constant 1.0 : f32
  %y = arith.addf %x, %one : f32
  %z = arith.subf %y, %x : f32
  tir.return %z : f32
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

// -----

// Any failure of the evaluation is left for run time, even where xDSL's
// interpreter asserts (a signed division by zero) ...
// CHECK:      tir.prim_func @main() -> i32 target #target.target<"llvm"> {
// CHECK-NEXT:   %c0 = arith.constant 0 : i32
// CHECK-NEXT:   %q = tir.call @divide(%c0) : (i32) -> i32
tir.prim_func @main() -> i32 target #target.target<"llvm"> {
  %c0 = arith.constant 0 : i32
  %q = tir.call @divide(%c0) : (i32) -> i32
  tir.return %q : i32
}
tir.prim_func private @divide(%d: i32) -> i32 target #target.target<"cuda"> {
  %c8 = arith.constant 8 : i32
  %q = arith.divsi %c8, %d : i32
  tir.return %q : i32
}

// -----

// ... and so is an evaluation running past the step budget (a long loop
// must not stall compilation).
// CHECK:      tir.prim_func @main() -> index target #target.target<"llvm"> {
// CHECK-NEXT:   %n = arith.constant 1000000000 : index
// CHECK-NEXT:   %r = tir.call @spin(%n) : (index) -> index
tir.prim_func @main() -> index target #target.target<"llvm"> {
  %n = arith.constant 1000000000 : index
  %r = tir.call @spin(%n) : (index) -> index
  tir.return %r : index
}
tir.prim_func private @spin(%n: index) -> index target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tir.for %i = %c0 to %n step %c1 {
    %j = arith.addi %i, %c1 : index
  }
  tir.return %n : index
}
