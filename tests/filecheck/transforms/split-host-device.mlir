// RUN: hetero-opt %s -p split-host-device --split-input-file | filecheck %s
// RUN: hetero-opt %s -p split-host-device --split-input-file > %t && hetero-opt %t -p split-host-device --split-input-file | diff %t -

// TVM TestSplitHostDevice: the region becomes a private kernel for the
// region's target (without host), called from where the region was; the
// host function's own target is unchanged.
// CHECK:      tir.prim_func @main(%n: i32) target #target.target<"cuda", host = #target.target<"llvm", {opt_level = 0 : i64}>> {
// CHECK-NEXT:   tir.call @main_kernel(%n) : (i32) -> ()
// CHECK-NEXT: }
// CHECK-NEXT: tir.prim_func private @main_kernel(%n: i32) target #target.target<"cuda"> attributes {tir.noalias = true, tir.is_global_func = true, tir.is_entry_func = false} {
// CHECK-NEXT:   tir.call_extern "evaluate"(%n) : (i32) -> ()
// CHECK-NEXT: }
tir.prim_func @main(%n: i32) target #target.target<"cuda", host = #target.target<"llvm", {opt_level = 0}>> {
  tir.target_region #target.target<"cuda", host = #target.target<"llvm">> {
    tir.call_extern "evaluate"(%n) : (i32) -> ()
  }
}

// -----

// TVM TestSplitHostDeviceOnCPU: a kernel for a CPU device type returns an
// i32 error code, 0 at its end, which the caller asserts.
// CHECK:      tir.prim_func @main(%n: i32) target #target.target<"cuda", host = #target.target<"llvm">> {
// CHECK-NEXT:   %kernel_error_code = tir.call @main_kernel(%n) : (i32) -> i32
// CHECK-NEXT:   %0 = arith.constant 0 : i32
// CHECK-NEXT:   %1 = arith.cmpi eq, %kernel_error_code, %0 : i32
// CHECK-NEXT:   cf.assert %1, "Error executing compute kernel"
// CHECK-NEXT: }
// CHECK-NEXT: tir.prim_func private @main_kernel(%n: i32) -> i32 target #target.target<"llvm"> attributes {tir.noalias = true, tir.is_global_func = true, tir.is_entry_func = false} {
// CHECK-NEXT:   tir.call_extern "evaluate"(%n) : (i32) -> ()
// CHECK-NEXT:   %0 = arith.constant 0 : i32
// CHECK-NEXT:   tir.return %0 : i32
// CHECK-NEXT: }
tir.prim_func @main(%n: i32) target #target.target<"cuda", host = #target.target<"llvm">> {
  tir.target_region #target.target<"llvm"> {
    tir.call_extern "evaluate"(%n) : (i32) -> ()
  }
}

// -----

// TVM TestSplitHostDeviceWithoutFuncHostAttribute: a region is split out
// whatever the function's own target.
// CHECK:      tir.prim_func @main(%n: i32) target #target.target<"llvm"> {
// CHECK-NEXT:   tir.call @main_kernel(%n) : (i32) -> ()
// CHECK:      tir.prim_func private @main_kernel(%n: i32) target #target.target<"cuda">
tir.prim_func @main(%n: i32) target #target.target<"llvm"> {
  tir.target_region #target.target<"cuda"> {
    tir.call_extern "evaluate"(%n) : (i32) -> ()
  }
}

// -----

// TVM TestSplitHostDeviceWithoutDeviceRegion: nothing to split, nothing changes.
// CHECK:      tir.prim_func @main() target #target.target<"cuda", host = #target.target<"llvm">> {
// CHECK-NEXT:   tir.call_extern "evaluate"() : () -> ()
// CHECK-NEXT: }
// CHECK-NEXT: }
tir.prim_func @main() target #target.target<"cuda", host = #target.target<"llvm">> {
  tir.call_extern "evaluate"() : () -> ()
}

// -----

// TVM TestSplitHostDeviceNameCollision: `main_kernel` is taken, so `_1`;
// with several regions the names count on, and each kernel follows its host
// function in order.
// CHECK:      tir.prim_func @main(%n: i32) target #target.target<"llvm"> {
// CHECK-NEXT:   tir.call @main_kernel_1(%n) : (i32) -> ()
// CHECK-NEXT:   tir.call @main_kernel_2(%n) : (i32) -> ()
// CHECK-NEXT: }
// CHECK-NEXT: tir.prim_func private @main_kernel_1(%n: i32) target #target.target<"cuda">
// CHECK:      tir.prim_func private @main_kernel_2(%n: i32) target #target.target<"cuda">
// CHECK:      tir.prim_func @main_kernel() target #target.target<"llvm"> {
tir.prim_func @main(%n: i32) target #target.target<"llvm"> {
  tir.target_region #target.target<"cuda"> {
    tir.call_extern "first"(%n) : (i32) -> ()
  }
  tir.target_region #target.target<"cuda"> {
    tir.call_extern "second"(%n) : (i32) -> ()
  }
}
tir.prim_func @main_kernel() target #target.target<"llvm"> {
}

// -----

// TVM test_dynamic_launch_thread: a thread extent computed on the host is a
// kernel parameter.  Parameters: buffers first, then scalars, each by name
// (num_blocks < seq_len); constants are cloned into the kernel, never passed.
// CHECK:      tir.prim_func @default_function(%B: memref<?xi32>, %A: memref<?xi32>, %seq_len: index) target #target.target<"cuda"> {
// CHECK:        %num_blocks = arith.divui %{{.*}}, %c128 : index
// CHECK-NEXT:   tir.call @default_function_kernel(%A, %B, %num_blocks, %seq_len) : (memref<?xi32>, memref<?xi32>, index, index) -> ()
// CHECK-NEXT: }
// CHECK-NEXT: tir.prim_func private @default_function_kernel(%A: memref<?xi32>, %B: memref<?xi32>, %num_blocks: index, %seq_len: index) target #target.target<"cuda"> attributes {tir.noalias = true, tir.is_global_func = true, tir.is_entry_func = false} {
// CHECK-NEXT:   %c0 = arith.constant 0 : index
// CHECK-NEXT:   %c1 = arith.constant 1 : index
// CHECK-NEXT:   %c128 = arith.constant 128 : index
// CHECK-NEXT:   tir.for %bx = %c0 to %num_blocks step %c1 thread_binding "blockIdx.x" {
// CHECK-NEXT:     tir.for %tx = %c0 to %c128 step %c1 thread_binding "threadIdx.x" {
tir.prim_func @default_function(%B: memref<?xi32>, %A: memref<?xi32>, %seq_len: index) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c127 = arith.constant 127 : index
  %c128 = arith.constant 128 : index
  %padded = arith.addi %seq_len, %c127 : index
  %num_blocks = arith.divui %padded, %c128 : index
  tir.target_region #target.target<"cuda"> {
    tir.for %bx = %c0 to %num_blocks step %c1 thread_binding "blockIdx.x" {
      tir.for %tx = %c0 to %c128 step %c1 thread_binding "threadIdx.x" {
        %base = arith.muli %bx, %c128 : index
        %i = arith.addi %base, %tx : index
        %in = arith.cmpi ult, %i, %seq_len : index
        scf.if %in {
          %x = memref.load %A[%i] : memref<?xi32>
          memref.store %x, %B[%i] : memref<?xi32>
        }
      }
    }
  }
}

// -----

// Only outermost regions are outlined; a region nested in one becomes a
// kernel of the kernel (running the pass again would find it anyway).
// CHECK:      tir.prim_func @main(%n: i32) target #target.target<"llvm"> {
// CHECK-NEXT:   tir.call @main_kernel(%n) : (i32) -> ()
// CHECK:      tir.prim_func private @main_kernel(%n: i32) target #target.target<"cuda">
// CHECK-NEXT:   tir.call_extern "outer"(%n) : (i32) -> ()
// CHECK-NEXT:   tir.call @main_kernel_kernel(%n) : (i32) -> ()
// CHECK-NEXT: }
// CHECK-NEXT: tir.prim_func private @main_kernel_kernel(%n: i32) target #target.target<"cuda">
// CHECK-NEXT:   tir.call_extern "inner"(%n) : (i32) -> ()
tir.prim_func @main(%n: i32) target #target.target<"llvm"> {
  tir.target_region #target.target<"cuda"> {
    tir.call_extern "outer"(%n) : (i32) -> ()
    tir.target_region #target.target<"cuda"> {
      tir.call_extern "inner"(%n) : (i32) -> ()
    }
  }
}
