// RUN: hetero-opt %s -p inline-private-functions --split-input-file | filecheck %s
// RUN: hetero-opt %s -p inline-private-functions --split-input-file > %t && hetero-opt %t -p inline-private-functions --split-input-file | diff %t -

// TVM TestSimple: without targets no code generator is known, so (as in TVM)
// the private subroutine is inlined, its parameters bound to the arguments,
// and removed once no call is left.
// CHECK:      builtin.module {
// CHECK-NEXT:   tir.prim_func @main(%A: memref<64x16xf32>, %B: memref<64xf32>) {
// CHECK:          tir.for %i = %c0 to %c64 step %c1 {
// CHECK-NEXT:       %c0_1 = arith.constant 0 : index
// CHECK-NEXT:       %c1_1 = arith.constant 1 : index
// CHECK-NEXT:       %c16 = arith.constant 16 : index
// CHECK-NEXT:       %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:       memref.store %zero, %B[%i] : memref<64xf32>
// CHECK-NEXT:       tir.for %j = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:         %a = memref.load %A[%i, %j] : memref<64x16xf32>
// CHECK-NEXT:         %b = memref.load %B[%i] : memref<64xf32>
// CHECK-NEXT:         %s = arith.addf %b, %a : f32
// CHECK-NEXT:         memref.store %s, %B[%i] : memref<64xf32>
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }
tir.prim_func @main(%A: memref<64x16xf32>, %B: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tir.for %i = %c0 to %c64 step %c1 {
    tir.call @subroutine(%A, %B, %i) : (memref<64x16xf32>, memref<64xf32>, index) -> ()
  }
}
tir.prim_func private @subroutine(%A: memref<64x16xf32>, %B: memref<64xf32>, %row: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %B[%row] : memref<64xf32>
  tir.for %j = %c0 to %c16 step %c1 {
    %a = memref.load %A[%row, %j] : memref<64x16xf32>
    %b = memref.load %B[%row] : memref<64xf32>
    %s = arith.addf %b, %a : f32
    memref.store %s, %B[%row] : memref<64xf32>
  }
}

// -----

// TVM TestRetainCrossFunctionSubroutines: a call to another target is kept
// (lower-device-kernel-launch needs it), even from a caller that cannot call.
// CHECK:      tir.prim_func @main(%A: memref<16xf32>) target #target.target<"llvm"> {
// CHECK-NEXT:   tir.call @subroutine(%A) : (memref<16xf32>) -> ()
// CHECK:      tir.prim_func @kernel(%A: memref<16xf32>) target #target.target<"cuda"> {
// CHECK-NEXT:   tir.call @other_arch(%A) : (memref<16xf32>) -> ()
// CHECK:      tir.prim_func private @subroutine(
// CHECK:      tir.prim_func private @other_arch(
tir.prim_func @main(%A: memref<16xf32>) target #target.target<"llvm"> {
  tir.call @subroutine(%A) : (memref<16xf32>) -> ()
}
tir.prim_func @kernel(%A: memref<16xf32>) target #target.target<"cuda"> {
  tir.call @other_arch(%A) : (memref<16xf32>) -> ()
}
tir.prim_func private @subroutine(%A: memref<16xf32>) target #target.target<"cuda"> {
}
tir.prim_func private @other_arch(%A: memref<16xf32>) target #target.target<"cuda", {arch = "sm_80"}> {
}

// -----

// TVM TestRetainRecursiveSubroutines: recursive callees, directly or through
// another function, are never inlined (that would not terminate).
// CHECK:      tir.prim_func @main(%n: index) target #target.target<"cuda"> {
// CHECK-NEXT:   tir.call @countdown(%n) : (index) -> ()
// CHECK-NEXT:   tir.call @ping(%n) : (index) -> ()
// CHECK-NEXT: }
// CHECK:      tir.prim_func private @countdown(
// CHECK:      tir.prim_func private @ping(
// CHECK:      tir.prim_func private @pong(
tir.prim_func @main(%n: index) target #target.target<"cuda"> {
  tir.call @countdown(%n) : (index) -> ()
  tir.call @ping(%n) : (index) -> ()
}
tir.prim_func private @countdown(%n: index) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %more = arith.cmpi ugt, %n, %c0 : index
  scf.if %more {
    %m = arith.subi %n, %c1 : index
    tir.call @countdown(%m) : (index) -> ()
  }
}
tir.prim_func private @ping(%n: index) target #target.target<"cuda"> {
  tir.call @pong(%n) : (index) -> ()
}
tir.prim_func private @pong(%n: index) target #target.target<"cuda"> {
  tir.call @ping(%n) : (index) -> ()
}

// -----

// The capability decides: llvm's code generator can call, so its calls stay;
// cuda's cannot, so chains of private same-target helpers are inlined
// (calls with results too: TVM's xfail TestInlineCallOccurringInExpression),
// and removed once nothing calls them.  A helper still called elsewhere, or
// a public one, stays.
// CHECK:      tir.prim_func @cpu(%x: f32) -> f32 target #target.target<"llvm"> {
// CHECK-NEXT:   %y = tir.call @cpu_square(%x) : (f32) -> f32
// CHECK-NEXT:   tir.return %y : f32
// CHECK:      tir.prim_func @gpu(%A: memref<32xf32>) target #target.target<"cuda"> {
// CHECK:          tir.for %tx = %c0 to %c32 step %c1 thread_binding "threadIdx.x" {
// CHECK-NEXT:       %x = memref.load %A[%tx] : memref<32xf32>
// CHECK-NEXT:       %y = arith.mulf %x, %x : f32
// CHECK-NEXT:       %z = arith.addf %y, %x : f32
// CHECK-NEXT:       memref.store %z, %A[%tx] : memref<32xf32>
// CHECK-NEXT:       tir.call @public_helper(%A) : (memref<32xf32>) -> ()
// CHECK-NEXT:     }
// CHECK-NOT:    tir.prim_func private @square(
// CHECK-NOT:    tir.prim_func private @square_plus(
// CHECK:        tir.prim_func @also_cpu(%A: memref<32xf32>) target #target.target<"llvm"> {
// CHECK-NEXT:     tir.call @shared_helper(%A) : (memref<32xf32>) -> ()
// CHECK:        tir.prim_func private @cpu_square(
// CHECK:        tir.prim_func private @shared_helper(%A: memref<32xf32>) {
// CHECK:        tir.prim_func @public_helper(
tir.prim_func @cpu(%x: f32) -> f32 target #target.target<"llvm"> {
  %y = tir.call @cpu_square(%x) : (f32) -> f32
  tir.return %y : f32
}
tir.prim_func @gpu(%A: memref<32xf32>) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tir.for %tx = %c0 to %c32 step %c1 thread_binding "threadIdx.x" {
    %x = memref.load %A[%tx] : memref<32xf32>
    %y = tir.call @square_plus(%x) : (f32) -> f32
    memref.store %y, %A[%tx] : memref<32xf32>
    tir.call @shared_helper(%A) : (memref<32xf32>) -> ()
    tir.call @public_helper(%A) : (memref<32xf32>) -> ()
  }
}
tir.prim_func @also_cpu(%A: memref<32xf32>) target #target.target<"llvm"> {
  tir.call @shared_helper(%A) : (memref<32xf32>) -> ()
}
tir.prim_func private @square_plus(%x: f32) -> f32 target #target.target<"cuda"> {
  %y = tir.call @square(%x) : (f32) -> f32
  %z = arith.addf %y, %x : f32
  tir.return %z : f32
}
tir.prim_func private @square(%x: f32) -> f32 {
  %y = arith.mulf %x, %x : f32
  tir.return %y : f32
}
tir.prim_func private @cpu_square(%x: f32) -> f32 target #target.target<"llvm"> {
  %y = arith.mulf %x, %x : f32
  tir.return %y : f32
}
tir.prim_func private @shared_helper(%A: memref<32xf32>) {
}
tir.prim_func @public_helper(%A: memref<32xf32>) target #target.target<"cuda"> {
}

// -----

// Where a call runs decides, not the function it is in: in a function for
// cuda with an llvm host, host code (llvm) keeps its call, the thread-bound
// loop (cuda) gets the body inlined.
// CHECK:      tir.prim_func @mixed(%A: memref<32xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
// CHECK-NEXT:   tir.call @zero(%A) : (memref<32xf32>) -> ()
// CHECK:        tir.for %tx = %c0 to %c32 step %c1 thread_binding "threadIdx.x" {
// CHECK-NEXT:     %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:     memref.store %z, %A[%tx] : memref<32xf32>
// CHECK-NEXT:   }
// CHECK:      tir.prim_func private @zero(
tir.prim_func @mixed(%A: memref<32xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
  tir.call @zero(%A) : (memref<32xf32>) -> ()
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tir.for %tx = %c0 to %c32 step %c1 thread_binding "threadIdx.x" {
    tir.call @zero_at(%A, %tx) : (memref<32xf32>, index) -> ()
  }
}
tir.prim_func private @zero(%A: memref<32xf32>) {
}
tir.prim_func private @zero_at(%A: memref<32xf32>, %i: index) {
  %z = arith.constant 0.0 : f32
  memref.store %z, %A[%i] : memref<32xf32>
}

// -----

// A call with results in the host part of a host-exposed cuda function, of
// a helper for its device: a launch cannot return the value, so the helper
// joins the function (annotate-device-regions then places its body).  A
// kernel (`tir.is_global_func`) is never inlined.
// CHECK:      tir.prim_func @scale(%a: memref<64xf32>, %s: f32) target #target.target<"cuda", host = #target.target<"llvm">> {
// CHECK-NEXT:   %y = arith.addf %s, %s : f32
// CHECK-NEXT:   tir.call @scale_kernel(%a, %y) : (memref<64xf32>, f32) -> ()
// CHECK-NEXT: }
// CHECK-NOT:  @twice
// CHECK:      tir.prim_func private @scale_kernel(
tir.prim_func @scale(%a: memref<64xf32>, %s: f32) target #target.target<"cuda", host = #target.target<"llvm">> {
  %t = tir.call @twice(%s) : (f32) -> f32
  tir.call @scale_kernel(%a, %t) : (memref<64xf32>, f32) -> ()
}
tir.prim_func private @twice(%x: f32) -> f32 target #target.target<"cuda"> {
  %y = arith.addf %x, %x : f32
  tir.return %y : f32
}
tir.prim_func private @scale_kernel(%a: memref<64xf32>, %t: f32) target #target.target<"cuda"> attributes {tir.is_global_func = true} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  tir.for %tx = %c0 to %c64 step %c1 thread_binding "threadIdx.x" {
    %x = memref.load %a[%tx] : memref<64xf32>
    %y = arith.mulf %x, %t : f32
    memref.store %y, %a[%tx] : memref<64xf32>
  }
}
