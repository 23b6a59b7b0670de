// RUN: hetero-opt %s -p fold-device-call-results | filecheck %s
// RUN: hetero-opt %s -p fold-device-call-results,lower-device-kernel-launch | filecheck %s --check-prefix=LAUNCH
// RUN: not hetero-opt %s -p lower-device-kernel-launch 2>&1 | filecheck %s --check-prefix=NOFOLD

// The single-module flow's motivating case (docs/design.md §7.7): the host asks a device subroutine which
// kernel to use.  Its result only depends on a constant, so the host knows
// it: the call is evaluated at compile time, the conditions on it fold
// (`arith.xori`, then both `scf.if`s), the branch not taken disappears with
// its kernel, and so does the subroutine.  One launch is left; without the
// fold the i1-returning device call cannot even be launched.
// CHECK:      builtin.module {
// CHECK-NEXT:   tir.prim_func private @small(%a: memref<512xf32>) target #target.target<"cuda"> {
// CHECK-NOT:    tir.prim_func private @use_small_kernel
// CHECK-NOT:    tir.prim_func private @large
// CHECK:        tir.prim_func @main(%a: memref<512xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
// CHECK-NEXT:     tir.call @small(%a) : (memref<512xf32>) -> ()
// CHECK-NEXT:   }
// CHECK-NEXT: }
// LAUNCH:     tir.prim_func @main(
// LAUNCH-NEXT:  %0 = arith.constant 1 : index
// LAUNCH-NEXT:  %c512 = arith.constant 512 : index
// LAUNCH-NEXT:  tir.launch @small(%a) grid(%0) block(%c512) : (memref<512xf32>)
// LAUNCH-NEXT: }
// LAUNCH-NOT:  @large
// NOFOLD:     error: @use_small_kernel is launched on a device, so it may only return the error code 0
tir.prim_func private @use_small_kernel(%n: index) -> i1 target #target.target<"cuda"> {
  %limit = arith.constant 1024 : index
  %small = arith.cmpi ult, %n, %limit : index
  tir.return %small : i1
}
tir.prim_func private @small(%a: memref<512xf32>) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  tir.for %tx = %c0 to %c512 step %c1 thread_binding "threadIdx.x" {
    %x = memref.load %a[%tx] : memref<512xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %a[%tx] : memref<512xf32>
  }
}
tir.prim_func private @large(%a: memref<512xf32>) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  tir.for %bx = %c0 to %c4 step %c1 thread_binding "blockIdx.x" {
    tir.for %tx = %c0 to %c128 step %c1 thread_binding "threadIdx.x" {
      %i0 = arith.muli %bx, %c128 : index
      %i = arith.addi %i0, %tx : index
      %x = memref.load %a[%i] : memref<512xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %a[%i] : memref<512xf32>
    }
  }
}
tir.prim_func @main(%a: memref<512xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
  %n = arith.constant 512 : index
  %small = tir.call @use_small_kernel(%n) : (index) -> i1
  %true = arith.constant true
  %large = arith.xori %small, %true : i1
  scf.if %small {
    tir.call @small(%a) : (memref<512xf32>) -> ()
  }
  scf.if %large {
    tir.call @large(%a) : (memref<512xf32>) -> ()
  }
}

