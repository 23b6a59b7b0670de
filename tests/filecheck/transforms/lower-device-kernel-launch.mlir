// RUN: hetero-opt %s -p lower-device-kernel-launch --split-input-file | filecheck %s
// RUN: hetero-opt %s -p lower-device-kernel-launch --split-input-file > %t && hetero-opt %t -p lower-device-kernel-launch --split-input-file | diff %t -

// TVM test_lower_device_kernel_launch / test_externally_visible_kernel_launch:
// a host → device call becomes a launch; with no thread-bound loop the grid
// and block are 1.  The kernel becomes public (its symbol is the device
// entry point), calling_conv = 2 (kernel launch), launch params [].
// CHECK:      tir.prim_func @main(%A: memref<1xf32>) target #target.target<"llvm"> {
// CHECK-NEXT:   %0 = arith.constant 1 : index
// CHECK-NEXT:   tir.launch @kernel(%A) grid(%0) block(%0) : (memref<1xf32>)
// CHECK-NEXT: }
// CHECK-NEXT: tir.prim_func @kernel(%A: memref<1xf32>) target #target.target<"cuda"> attributes {tir.is_global_func = true, calling_conv = 2 : i64, tir.kernel_launch_params = []} {
tir.prim_func @main(%A: memref<1xf32>) target #target.target<"llvm"> {
  tir.call @kernel(%A) : (memref<1xf32>) -> ()
}
tir.prim_func private @kernel(%A: memref<1xf32>) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %A[%c0] : memref<1xf32>
}

// -----

// TVM test_collect_launch_parameter: the extents of the thread-bound loops
// are the launch sizes, and their axes the launch params.
// CHECK:      tir.prim_func @main(%A: memref<16xf32>) target #target.target<"llvm"> {
// CHECK-NEXT:   %0 = arith.constant 1 : index
// CHECK-NEXT:   %c16 = arith.constant 16 : index
// CHECK-NEXT:   tir.launch @kernel(%A) grid(%0) block(%c16) : (memref<16xf32>)
// CHECK:      tir.prim_func @kernel(%A: memref<16xf32>) target #target.target<"cuda"> attributes {tir.is_global_func = true, calling_conv = 2 : i64, tir.kernel_launch_params = ["threadIdx.x"]} {
tir.prim_func @main(%A: memref<16xf32>) target #target.target<"llvm"> {
  tir.call @kernel(%A) : (memref<16xf32>) -> ()
}
tir.prim_func @kernel(%A: memref<16xf32>) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  tir.for %i = %c0 to %c16 step %c1 thread_binding "threadIdx.x" {
    %zero = arith.constant 0.0 : f32
    memref.store %zero, %A[%i] : memref<16xf32>
  }
}

// -----

// TVM test_same_device_different_target: same device type, another code
// generator: an extern call of the callee's symbol; the callee becomes public.
// Calls between equal targets are left alone, also when the caller's target
// has a host (its body runs on that host).
// CHECK:      tir.prim_func @main(%A: memref<1xf32>, %x: f32) -> f32 target #target.target<"cuda", host = #target.target<"llvm">> {
// CHECK-NEXT:   tir.call_extern "kernel"(%A) : (memref<1xf32>) -> ()
// CHECK-NEXT:   %y = tir.call_extern "square"(%x) : (f32) -> f32
// CHECK-NEXT:   %z = tir.call @same(%y) : (f32) -> f32
// CHECK-NEXT:   tir.return %z : f32
// CHECK:      tir.prim_func @kernel(%A: memref<1xf32>) target #target.target<"llvm", {opt_level = 2 : i64}> attributes {tir.is_global_func = true} {
// CHECK:      tir.prim_func @square(%x: f32) -> f32 target #target.target<"llvm", {opt_level = 2 : i64}> attributes {tir.is_global_func = true} {
// CHECK:      tir.prim_func private @same(%x: f32) -> f32 target #target.target<"llvm"> {
tir.prim_func @main(%A: memref<1xf32>, %x: f32) -> f32 target #target.target<"cuda", host = #target.target<"llvm">> {
  tir.call @kernel(%A) : (memref<1xf32>) -> ()
  %y = tir.call @square(%x) : (f32) -> f32
  %z = tir.call @same(%y) : (f32) -> f32
  tir.return %z : f32
}
tir.prim_func private @kernel(%A: memref<1xf32>) target #target.target<"llvm", {opt_level = 2}> {
}
tir.prim_func private @square(%x: f32) -> f32 target #target.target<"llvm", {opt_level = 2}> {
  %y = arith.mulf %x, %x : f32
  tir.return %y : f32
}
tir.prim_func private @same(%x: f32) -> f32 target #target.target<"llvm"> {
  tir.return %x : f32
}

// -----

// Extents in terms of kernel parameters are computed on the host from the
// call's arguments (pure ops cloned, parameters replaced by arguments).  Grid
// and block list x, y, z up to the highest axis bound, missing ones 1;
// vthread is not a launch axis.  A launch inside a host loop stays there.
// CHECK:      tir.prim_func @main(%A: memref<?xf32>, %n: index) target #target.target<"llvm"> {
// CHECK:        tir.for %rep = %c0 to %c2 step %c1 {
// CHECK-NEXT:     %0 = arith.constant 1 : index
// CHECK-NEXT:     %c255 = arith.constant 255 : index
// CHECK-NEXT:     %padded = arith.addi %n, %c255 : index
// CHECK-NEXT:     %c256 = arith.constant 256 : index
// CHECK-NEXT:     %blocks = arith.divui %padded, %c256 : index
// CHECK-NEXT:     %c64 = arith.constant 64 : index
// CHECK-NEXT:     %c4 = arith.constant 4 : index
// CHECK-NEXT:     tir.launch @kernel(%A, %n) grid(%0, %blocks) block(%c64, %c4) : (memref<?xf32>, index)
// CHECK-NEXT:   }
// CHECK:      tir.prim_func @kernel(%A: memref<?xf32>, %len: index) target #target.target<"cuda"> attributes {tir.is_global_func = true, calling_conv = 2 : i64, tir.kernel_launch_params = ["blockIdx.y", "threadIdx.y", "threadIdx.x"]} {
tir.prim_func @main(%A: memref<?xf32>, %n: index) target #target.target<"llvm"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  tir.for %rep = %c0 to %c2 step %c1 {
    tir.call @kernel(%A, %n) : (memref<?xf32>, index) -> ()
  }
}
tir.prim_func private @kernel(%A: memref<?xf32>, %len: index) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c255 = arith.constant 255 : index
  %c256 = arith.constant 256 : index
  %padded = arith.addi %len, %c255 : index
  %blocks = arith.divui %padded, %c256 : index
  tir.for %by = %c0 to %blocks step %c1 thread_binding "blockIdx.y" {
    tir.for %ty = %c0 to %c4 step %c1 thread_binding "threadIdx.y" {
      tir.for %tx = %c0 to %c64 step %c1 thread_binding "threadIdx.x" {
        tir.for %v = %c0 to %c2 step %c1 thread_binding "vthread" {
          %zero = arith.constant 0.0 : f32
          memref.store %zero, %A[%tx] : memref<?xf32>
        }
      }
    }
  }
}

// -----

// A `shared.dyn` buffer gives the dynamic shared memory in bytes (here
// 4 * 2 * n for f32 elements), launch param tir.use_dyn_shared_memory last.
// Sibling nests may bind an axis with different constant extents: the
// launch takes the largest (48 here; convert-tir-to-gpu guards the shorter).
// CHECK:      tir.prim_func @main(%A: memref<64xf32>, %n: index) target #target.target<"llvm"> {
// CHECK-NEXT:   %0 = arith.constant 1 : index
// CHECK-NEXT:   %c64 = arith.constant 64 : index
// CHECK-NEXT:   %1 = arith.constant 8 : index
// CHECK-NEXT:   %2 = arith.muli %1, %n : index
// CHECK-NEXT:   tir.launch @kernel(%A, %n) grid(%0) block(%c64) dynamic_shared_memory(%2) : (memref<64xf32>, index)
// CHECK:      tir.prim_func @kernel({{.*}}) target #target.target<"cuda"> attributes {tir.is_global_func = true, calling_conv = 2 : i64, tir.kernel_launch_params = ["threadIdx.x", "tir.use_dyn_shared_memory"]} {
tir.prim_func @main(%A: memref<64xf32>, %n: index) target #target.target<"llvm"> {
  tir.call @kernel(%A, %n) : (memref<64xf32>, index) -> ()
}
tir.prim_func private @kernel(%A: memref<64xf32>, %n: index) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  %tile = tir.alloc(%n) : memref<2x?xf32, "shared.dyn">
  tir.for %tx = %c0 to %c48 step %c1 thread_binding "threadIdx.x" {
    %x = memref.load %A[%tx] : memref<64xf32>
    memref.store %x, %tile[%c0, %tx] : memref<2x?xf32, "shared.dyn">
  }
  tir.for %tx = %c0 to %c64 step %c1 thread_binding "threadIdx.x" {
    %x = memref.load %tile[%c0, %tx] : memref<2x?xf32, "shared.dyn">
    memref.store %x, %A[%tx] : memref<64xf32>
  }
}

// -----

// A kernel returning the CPU error code 0 stops returning it (as in TVM:
// only `ret(0)` may be removed); the call's result becomes 0 on the host.
// CHECK:      tir.prim_func @main() -> i32 target #target.target<"llvm"> {
// CHECK-NEXT:   %0 = arith.constant 1 : index
// CHECK-NEXT:   %rc = arith.constant 0 : i32
// CHECK-NEXT:   tir.launch @kernel() grid(%0) block(%0) : ()
// CHECK-NEXT:   tir.return %rc : i32
// CHECK:      tir.prim_func @kernel() target #target.target<"cuda"> attributes {tir.is_global_func = true, calling_conv = 2 : i64, tir.kernel_launch_params = []} {
// CHECK-NEXT:   %zero = arith.constant 0 : i32
// CHECK-NEXT: }
tir.prim_func @main() -> i32 target #target.target<"llvm"> {
  %rc = tir.call @kernel() : () -> i32
  tir.return %rc : i32
}
tir.prim_func private @kernel() -> i32 target #target.target<"cuda"> {
  %zero = arith.constant 0 : i32
  tir.return %zero : i32
}

// -----

// A constant extent may be defined anywhere in the kernel (here inside the
// blockIdx loop): it is cloned to the host like one at the top level.
// CHECK:      tir.prim_func @main(%A: memref<256xf32>) target #target.target<"llvm"> {
// CHECK-NEXT:   %c4 = arith.constant 4 : index
// CHECK-NEXT:   %c64 = arith.constant 64 : index
// CHECK-NEXT:   tir.launch @kernel(%A) grid(%c4) block(%c64) : (memref<256xf32>)
tir.prim_func @main(%A: memref<256xf32>) target #target.target<"llvm"> {
  tir.call @kernel(%A) : (memref<256xf32>) -> ()
}
tir.prim_func private @kernel(%A: memref<256xf32>) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  tir.for %bx = %c0 to %c4 step %c1 thread_binding "blockIdx.x" {
    %c64 = arith.constant 64 : index
    tir.for %tx = %c0 to %c64 step %c1 thread_binding "threadIdx.x" {
      %i0 = arith.muli %bx, %c64 : index
      %i = arith.addi %i0, %tx : index
      %x = memref.load %A[%i] : memref<256xf32>
      memref.store %x, %A[%i] : memref<256xf32>
    }
  }
}
