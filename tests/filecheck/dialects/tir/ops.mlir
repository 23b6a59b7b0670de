// RUN: HETERO_ROUNDTRIP
// RUN: HETERO_GENERIC_ROUNDTRIP

// A public function with a target and the discardable attributes later passes use.
// CHECK:      tir.prim_func @vadd(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>) target #target.target<"llvm"> attributes {tir.noalias = true, tir.is_global_func = false, tir.is_entry_func = true, tir.is_host_func = true, calling_conv = 1 : i64, tir.kernel_launch_params = ["blockIdx.x", "threadIdx.x"]} {
// CHECK-NEXT:   %c0 = arith.constant 0 : index
// CHECK-NEXT:   %c1 = arith.constant 1 : index
// CHECK-NEXT:   %c8 = arith.constant 8 : index
// CHECK-NEXT:   tir.for %i = %c0 to %c8 step %c1 parallel {
// CHECK-NEXT:     %x = memref.load %a[%i] : memref<8xf32>
// CHECK-NEXT:     %y = memref.load %b[%i] : memref<8xf32>
// CHECK-NEXT:     %z = arith.addf %x, %y : f32
// CHECK-NEXT:     memref.store %z, %c[%i] : memref<8xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// CHECK-GENERIC:      "tir.prim_func"() <{sym_name = "vadd", function_type = (memref<8xf32>, memref<8xf32>, memref<8xf32>) -> (), target = #target.target<"llvm">}> ({
// CHECK-GENERIC-NEXT: ^bb0(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>):
// CHECK-GENERIC:        "tir.for"(%c0, %c8, %c1) <{kind = #tir<for_kind parallel>}> ({
// CHECK-GENERIC-NEXT:   ^bb{{[0-9]+}}(%i: index):
// CHECK-GENERIC:          "tir.yield"() : () -> ()
// CHECK-GENERIC-NEXT:   }) : (index, index, index) -> ()
// CHECK-GENERIC-NEXT:   "tir.return"() : () -> ()
// CHECK-GENERIC-NEXT: }) {tir.noalias = true, tir.is_global_func = false, tir.is_entry_func = true, tir.is_host_func = true, calling_conv = 1 : i64, tir.kernel_launch_params = ["blockIdx.x", "threadIdx.x"]} : () -> ()
tir.prim_func @vadd(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>) target #target.target<"llvm"> attributes {tir.noalias = true, tir.is_global_func = false, tir.is_entry_func = true, tir.is_host_func = true, calling_conv = 1 : i64, tir.kernel_launch_params = ["blockIdx.x", "threadIdx.x"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tir.for %i = %c0 to %c8 step %c1 parallel {
    %x = memref.load %a[%i] : memref<8xf32>
    %y = memref.load %b[%i] : memref<8xf32>
    %z = arith.addf %x, %y : f32
    memref.store %z, %c[%i] : memref<8xf32>
  }
}

// Every loop kind, loop annotations, and every storage scope.
// CHECK:      tir.prim_func private @kinds(%n: index) -> (i32, f32) {
// CHECK:        tir.for %i = %c0 to %n step %c1 {
// CHECK-NEXT:   }
// CHECK-NEXT:   tir.for %i_1 = %c0 to %n step %c1 {
// CHECK-NEXT:   } {pragma_auto_unroll_max_step = 16 : i64}
// CHECK-NEXT:   tir.for %i_2 = %c0 to %c4 step %c1 vectorized {
// CHECK-NEXT:   }
// CHECK-NEXT:   tir.for %i_3 = %c0 to %c4 step %c1 unrolled {
// CHECK-NEXT:   }
// CHECK-NEXT:   %g = tir.alloc : memref<4xf32>
// CHECK-NEXT:   %s = tir.alloc : memref<4x4xf16, "shared">
// CHECK-NEXT:   %d = tir.alloc(%n) : memref<?xi8, "shared.dyn">
// CHECK-NEXT:   %l = tir.alloc : memref<1xf32, "local">
// CHECK-NEXT:   %w = tir.alloc : memref<32xf32, "warp">
// CHECK-NEXT:   %fa = tir.alloc : memref<16x16xf16, "wmma.matrix_a">
// CHECK-NEXT:   %fb = tir.alloc : memref<16x16xf16, "wmma.matrix_b">
// CHECK-NEXT:   %fc = tir.alloc(%n, %n) : memref<?x?xf32, "wmma.accumulator">
// CHECK-NEXT:   %r = arith.constant 0 : i32
// CHECK-NEXT:   %f = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   tir.return %r, %f : i32, f32
// CHECK-NEXT: }

// CHECK-GENERIC:      "tir.prim_func"() <{sym_name = "kinds", function_type = (index) -> (i32, f32), sym_visibility = "private"}> ({
// CHECK-GENERIC:        "tir.for"(%c0, %n, %c1) <{kind = #tir<for_kind serial>}> ({
// CHECK-GENERIC:        "tir.for"(%c0, %n, %c1) <{kind = #tir<for_kind serial>}> ({
// CHECK-GENERIC:        }) {pragma_auto_unroll_max_step = 16 : i64} : (index, index, index) -> ()
// CHECK-GENERIC:        "tir.for"(%c0, %c4, %c1) <{kind = #tir<for_kind vectorized>}> ({
// CHECK-GENERIC:        "tir.for"(%c0, %c4, %c1) <{kind = #tir<for_kind unrolled>}> ({
// CHECK-GENERIC:        %g = "tir.alloc"() : () -> memref<4xf32>
// CHECK-GENERIC:        %d = "tir.alloc"(%n) : (index) -> memref<?xi8, "shared.dyn">
// CHECK-GENERIC:        "tir.return"(%r, %f) : (i32, f32) -> ()
tir.prim_func private @kinds(%n: index) -> (i32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  tir.for %i = %c0 to %n step %c1 {
  }
  tir.for %i = %c0 to %n step %c1 serial {
  } {pragma_auto_unroll_max_step = 16 : i64}
  tir.for %i = %c0 to %c4 step %c1 vectorized {
  }
  tir.for %i = %c0 to %c4 step %c1 unrolled {
  }
  %g = tir.alloc : memref<4xf32>
  %s = tir.alloc : memref<4x4xf16, "shared">
  %d = tir.alloc(%n) : memref<?xi8, "shared.dyn">
  %l = tir.alloc : memref<1xf32, "local">
  %w = tir.alloc : memref<32xf32, "warp">
  %fa = tir.alloc : memref<16x16xf16, "wmma.matrix_a">
  %fb = tir.alloc : memref<16x16xf16, "wmma.matrix_b">
  %fc = tir.alloc(%n, %n) : memref<?x?xf32, "wmma.accumulator">
  %r = arith.constant 0 : i32
  %f = arith.constant 1.0 : f32
  tir.return %r, %f : i32, f32
}

// A device kernel: every thread axis, a scoped parameter, an extern call.
// CHECK:      tir.prim_func private @kernel(%a: memref<64xf32>, %tmp: memref<8xf32, "shared">) target #target.target<"cuda", {arch = "sm_80"}> {
// CHECK:        tir.for %bx = %c0 to %c2 step %c1 thread_binding "blockIdx.x" {
// CHECK-NEXT:     tir.for %by = %c0 to %c1 step %c1 thread_binding "blockIdx.y" {
// CHECK-NEXT:       tir.for %bz = %c0 to %c1 step %c1 thread_binding "blockIdx.z" {
// CHECK-NEXT:         tir.for %tx = %c0 to %c32 step %c1 thread_binding "threadIdx.x" {
// CHECK-NEXT:           tir.for %ty = %c0 to %c1 step %c1 thread_binding "threadIdx.y" {
// CHECK-NEXT:             tir.for %tz = %c0 to %c1 step %c1 thread_binding "threadIdx.z" {
// CHECK-NEXT:               tir.for %v = %c0 to %c1 step %c1 thread_binding "vthread" {
// CHECK-NEXT:                 tir.for %vx = %c0 to %c1 step %c1 thread_binding "vthread.x" {
// CHECK-NEXT:                   tir.for %vy = %c0 to %c1 step %c1 thread_binding "vthread.y" {
// CHECK-NEXT:                     tir.for %vz = %c0 to %c1 step %c1 thread_binding "vthread.z" {
// CHECK-NEXT:                       %x = memref.load %a[%tx] : memref<64xf32>
// CHECK-NEXT:                       %e = tir.call_extern "__expf"(%x) : (f32) -> f32
// CHECK-NEXT:                       tir.call_extern "__syncthreads"() : () -> ()

// CHECK-GENERIC:      "tir.for"(%c0, %c2, %c1) <{kind = #tir<for_kind thread_binding>, thread_tag = "blockIdx.x"}> ({
// CHECK-GENERIC:      %e = "tir.call_extern"(%x) <{callee = "__expf"}> : (f32) -> f32
// CHECK-GENERIC:      "tir.call_extern"() <{callee = "__syncthreads"}> : () -> ()
tir.prim_func private @kernel(%a: memref<64xf32>, %tmp: memref<8xf32, "shared">) target #target.target<"cuda", {arch = "sm_80"}> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  tir.for %bx = %c0 to %c2 step %c1 thread_binding "blockIdx.x" {
    tir.for %by = %c0 to %c1 step %c1 thread_binding "blockIdx.y" {
      tir.for %bz = %c0 to %c1 step %c1 thread_binding "blockIdx.z" {
        tir.for %tx = %c0 to %c32 step %c1 thread_binding "threadIdx.x" {
          tir.for %ty = %c0 to %c1 step %c1 thread_binding "threadIdx.y" {
            tir.for %tz = %c0 to %c1 step %c1 thread_binding "threadIdx.z" {
              tir.for %v = %c0 to %c1 step %c1 thread_binding "vthread" {
                tir.for %vx = %c0 to %c1 step %c1 thread_binding "vthread.x" {
                  tir.for %vy = %c0 to %c1 step %c1 thread_binding "vthread.y" {
                    tir.for %vz = %c0 to %c1 step %c1 thread_binding "vthread.z" {
                      %x = memref.load %a[%tx] : memref<64xf32>
                      %e = tir.call_extern "__expf"(%x) : (f32) -> f32
                      tir.call_extern "__syncthreads"() : () -> ()
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

// Host side: calls in statement and expression position, launches, packed
// calls and a target region.
// CHECK:      tir.prim_func @main(%a: memref<64xf32>, %s: memref<8xf32, "shared">, %n: index) -> i32 target #target.target<"cuda", host = #target.target<"llvm">> {
// CHECK-NEXT:   %r, %f = tir.call @kinds(%n) : (index) -> (i32, f32)
// CHECK-NEXT:   tir.call @kernel(%a, %s) : (memref<64xf32>, memref<8xf32, "shared">) -> ()
// CHECK-NEXT:   %c1 = arith.constant 1 : index
// CHECK-NEXT:   %c2 = arith.constant 2 : index
// CHECK-NEXT:   %c32 = arith.constant 32 : index
// CHECK-NEXT:   tir.launch @kernel(%a, %s) grid(%c2) block(%c32) : (memref<64xf32>, memref<8xf32, "shared">)
// CHECK-NEXT:   tir.launch @kernel(%a, %s) grid(%c2, %c1, %c1) block(%c32, %c1, %c1) dynamic_shared_memory(%n) : (memref<64xf32>, memref<8xf32, "shared">)
// CHECK-NEXT:   %rc = tir.call_packed "tvm.contrib.sort"(%a, %n) : (memref<64xf32>, index) -> i32
// CHECK-NEXT:   tir.call_packed "log"() : () -> ()
// CHECK-NEXT:   tir.target_region #target.target<"cuda"> attributes {note = "device part"} {
// CHECK-NEXT:     tir.call @kernel(%a, %s) : (memref<64xf32>, memref<8xf32, "shared">) -> ()
// CHECK-NEXT:   }
// CHECK-NEXT:   tir.target_region #target.target<"llvm"> {
// CHECK-NEXT:   }
// CHECK-NEXT:   tir.return %rc : i32
// CHECK-NEXT: }

// CHECK-GENERIC:      %r, %f = "tir.call"(%n) <{callee = @kinds}> : (index) -> (i32, f32)
// CHECK-GENERIC:      "tir.launch"(%a, %s, %c2, %c32) <{kernel = @kernel, operandSegmentSizes = array<i32: 2, 1, 1, 0>}> : (memref<64xf32>, memref<8xf32, "shared">, index, index) -> ()
// CHECK-GENERIC:      "tir.launch"(%a, %s, %c2, %c1, %c1, %c32, %c1, %c1, %n) <{kernel = @kernel, operandSegmentSizes = array<i32: 2, 3, 3, 1>}>
// CHECK-GENERIC:      %rc = "tir.call_packed"(%a, %n) <{callee = "tvm.contrib.sort"}> : (memref<64xf32>, index) -> i32
// CHECK-GENERIC:      "tir.target_region"() <{target = #target.target<"cuda">}> ({
// CHECK-GENERIC:        "tir.yield"() : () -> ()
// CHECK-GENERIC-NEXT: }) {note = "device part"} : () -> ()
tir.prim_func @main(%a: memref<64xf32>, %s: memref<8xf32, "shared">, %n: index) -> i32 target #target.target<"cuda", host = #target.target<"llvm">> {
  %r, %f = tir.call @kinds(%n) : (index) -> (i32, f32)
  tir.call @kernel(%a, %s) : (memref<64xf32>, memref<8xf32, "shared">) -> ()
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  tir.launch @kernel(%a, %s) grid(%c2) block(%c32) : (memref<64xf32>, memref<8xf32, "shared">)
  tir.launch @kernel(%a, %s) grid(%c2, %c1, %c1) block(%c32, %c1, %c1) dynamic_shared_memory(%n) : (memref<64xf32>, memref<8xf32, "shared">)
  %rc = tir.call_packed "tvm.contrib.sort"(%a, %n) : (memref<64xf32>, index) -> i32
  tir.call_packed "log"() : () -> ()
  tir.target_region #target.target<"cuda"> attributes {note = "device part"} {
    tir.call @kernel(%a, %s) : (memref<64xf32>, memref<8xf32, "shared">) -> ()
  }
  tir.target_region #target.target<"llvm"> {
  }
  tir.return %rc : i32
}
