// RUN: hetero-opt %s -p annotate-device-regions --split-input-file | filecheck %s
// RUN: hetero-opt %s -p annotate-device-regions --split-input-file > %t && hetero-opt %t -p annotate-device-regions --split-input-file | diff %t -

// TVM TestAnnotateThreadExtent: a thread-bound loop is device code; it is
// wrapped in a region for the target without its host.  The constants it
// uses stay on the host (split-host-device clones constants into kernels).
// CHECK-LABEL: tir.prim_func @thread_extent(
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c16 = arith.constant 16 : index
// CHECK-NEXT:    tir.target_region #target.target<"cuda"> {
// CHECK-NEXT:      tir.for %i = %c0 to %c16 step %c1 thread_binding "threadIdx.x" {
// CHECK-NEXT:        %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        memref.store %zero, %a[%i] : memref<16xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
tir.prim_func @thread_extent(%a: memref<16xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  tir.for %i = %c0 to %c16 step %c1 thread_binding "threadIdx.x" {
    %zero = arith.constant 0.0 : f32
    memref.store %zero, %a[%i] : memref<16xf32>
  }
}

// -----

// TVM TestAnnotateEntireBody: nothing needs the host or the device, so the
// function is assumed to belong on the device: the entire body is wrapped.
// CHECK-LABEL: tir.prim_func @entire_body(
// CHECK-NEXT:    tir.target_region #target.target<"cuda"> {
// CHECK-NEXT:      %c0 = arith.constant 0 : index
// CHECK-NEXT:      %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      memref.store %zero, %a[%c0] : memref<1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
tir.prim_func @entire_body(%a: memref<1xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %a[%c0] : memref<1xf32>
}

// -----

// TVM TestNoAnnotationForSameHostDevice: host and device are the same.
// CHECK-LABEL: tir.prim_func @same_host_device(
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NOT:     tir.target_region
tir.prim_func @same_host_device(%a: memref<1xf32>) target #target.target<"llvm", host = #target.target<"llvm">> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %a[%c0] : memref<1xf32>
}

// -----

// A target without a host is left alone (the function is
// already device code, or host code with explicit regions).
// CHECK-LABEL: tir.prim_func @no_host(
// CHECK-NOT:     tir.target_region
// CHECK-LABEL: tir.prim_func @llvm_no_host(
// CHECK-NOT:     tir.target_region
tir.prim_func @no_host(%a: memref<16xf32>) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  tir.for %i = %c0 to %c16 step %c1 thread_binding "threadIdx.x" {
    %zero = arith.constant 0.0 : f32
    memref.store %zero, %a[%i] : memref<16xf32>
  }
}
tir.prim_func @llvm_no_host(%a: memref<1xf32>) target #target.target<"llvm"> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %a[%c0] : memref<1xf32>
}

// -----

// TVM TestAnnotationAvoidsHostConstructs / TestAnnotationNoRepetition:
// host-only ops (tir.call_packed, tir.launch) stay on the host; each run of
// other statements between them becomes ONE region.  The constants the run
// uses are defined before the first host statement, so they stay on the host
// (a value used outside its run never moves into a region).
// CHECK-LABEL: tir.prim_func @host_constructs(
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    tir.call_packed "dummy_function"() : () -> ()
// CHECK-NEXT:    tir.target_region #target.target<"cuda"> {
// CHECK-NEXT:      %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      memref.store %zero, %a[%c0] : memref<2xf32>
// CHECK-NEXT:      %one = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      memref.store %one, %a[%c1] : memref<2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    tir.call_packed "dummy_function"() : () -> ()
// CHECK-NEXT:  }
tir.prim_func @host_constructs(%a: memref<2xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tir.call_packed "dummy_function"() : () -> ()
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %a[%c0] : memref<2xf32>
  %one = arith.constant 1.0 : f32
  memref.store %one, %a[%c1] : memref<2xf32>
  tir.call_packed "dummy_function"() : () -> ()
}

// -----

// A statement whose result a host statement uses is computed on the host;
// so is the value a function returns.
// CHECK-LABEL: tir.prim_func @results_stay(
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x = memref.load %a[%c0] : memref<2xf32>
// CHECK-NEXT:    tir.call_packed "log"(%x) : (f32) -> ()
// CHECK-NEXT:    tir.target_region #target.target<"cuda"> {
// CHECK-NEXT:      memref.store %x, %a[%c0] : memref<2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %r = arith.constant 7 : i32
// CHECK-NEXT:    tir.return %r : i32
tir.prim_func @results_stay(%a: memref<2xf32>) -> i32 target #target.target<"cuda", host = #target.target<"llvm">> {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<2xf32>
  tir.call_packed "log"(%x) : (f32) -> ()
  memref.store %x, %a[%c0] : memref<2xf32>
  %r = arith.constant 7 : i32
  tir.return %r : i32
}

// -----

// Classification is recursive: a serial loop holding a host-only op stays on
// the host and its body is split in turn.  Other statements between host
// statements form runs, wrapped whole (the serial loop over a thread-bound
// nest goes into the kernel).  Existing target regions are left as they
// are, whatever their target, and end a run.
// CHECK-LABEL: tir.prim_func @nested(
// CHECK:         tir.for %i = %c0 to %c4 step %c1 {
// CHECK-NEXT:      tir.call_packed "before"(%i) : (index) -> ()
// CHECK-NEXT:      tir.target_region #target.target<"cuda"> {
// CHECK-NEXT:        tir.for %bx = %c0 to %c4 step %c1 thread_binding "blockIdx.x" {
// CHECK-NEXT:          tir.for %tx = %c0 to %c4 step %c1 thread_binding "threadIdx.x" {
// CHECK:             }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    tir.target_region #target.target<"cuda"> {
// CHECK-NEXT:      tir.for %j = %c0 to %c4 step %c1 {
// CHECK-NEXT:        tir.for %{{.*}} = %c0 to %c4 step %c1 thread_binding "threadIdx.x" {
// CHECK:           }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    tir.call_packed "after"() : () -> ()
// CHECK-NEXT:    tir.target_region #target.target<"llvm"> {
// CHECK-NEXT:      memref.store %f, %a[%c0] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    tir.target_region #target.target<"cuda"> {
// CHECK-NEXT:      memref.store %f, %a[%c1] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
tir.prim_func @nested(%a: memref<4xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  tir.for %i = %c0 to %c4 step %c1 {
    tir.call_packed "before"(%i) : (index) -> ()
    tir.for %bx = %c0 to %c4 step %c1 thread_binding "blockIdx.x" {
      tir.for %tx = %c0 to %c4 step %c1 thread_binding "threadIdx.x" {
        memref.store %f, %a[%tx] : memref<4xf32>
      }
    }
  }
  tir.for %j = %c0 to %c4 step %c1 {
    tir.for %tx = %c0 to %c4 step %c1 thread_binding "threadIdx.x" {
      memref.store %f, %a[%tx] : memref<4xf32>
    }
  }
  tir.call_packed "after"() : () -> ()
  tir.target_region #target.target<"llvm"> {
    memref.store %f, %a[%c0] : memref<4xf32>
  }
  memref.store %f, %a[%c1] : memref<4xf32>
}

// -----

// Without host statements, only thread-bound nests move: a serial loop
// around one stays on the host and launches the kernel every iteration
// (TVM wraps each `thread_extent`), and statements after it stay too.
// CHECK-LABEL: tir.prim_func @launch_in_loop(
// CHECK:         tir.for %j = %c0 to %c4 step %c1 {
// CHECK-NEXT:      tir.target_region #target.target<"cuda"> {
// CHECK-NEXT:        tir.for %tx = %c0 to %c4 step %c1 thread_binding "threadIdx.x" {
// CHECK:           }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.store %f, %a[%c0] : memref<4xf32>
// CHECK-NEXT:  }
tir.prim_func @launch_in_loop(%a: memref<4xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  tir.for %j = %c0 to %c4 step %c1 {
    tir.for %tx = %c0 to %c4 step %c1 thread_binding "threadIdx.x" {
      memref.store %f, %a[%tx] : memref<4xf32>
    }
  }
  memref.store %f, %a[%c0] : memref<4xf32>
}

// -----

// A call of a host-exposed function (public, not a kernel) is a host
// statement: such a function is entered through the host API.  @main's body
// would otherwise be "either" code and wrapped whole, putting the call on
// the device.  Around the call, a run of other statements still moves; a
// call of a private function is not host code.
// CHECK-LABEL: tir.prim_func @main(
// CHECK-NEXT:    %v = arith.constant 4.200000e+01 : f32
// CHECK-NEXT:    tir.call @subroutine(%a, %v) : (memref<1xf32>, f32) -> ()
// CHECK-NEXT:    tir.target_region #target.target<"cuda"> {
// CHECK-NEXT:      tir.call @helper(%a) : (memref<1xf32>) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-LABEL: tir.prim_func @subroutine(
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    tir.target_region #target.target<"cuda"> {
// CHECK-NEXT:      tir.for %i = %c0 to %c1 step %c1 thread_binding "threadIdx.x" {
tir.prim_func @main(%a: memref<1xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
  %v = arith.constant 42.0 : f32
  tir.call @subroutine(%a, %v) : (memref<1xf32>, f32) -> ()
  tir.call @helper(%a) : (memref<1xf32>) -> ()
}
tir.prim_func @subroutine(%a: memref<1xf32>, %v: f32) target #target.target<"cuda", host = #target.target<"llvm">> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tir.for %i = %c0 to %c1 step %c1 thread_binding "threadIdx.x" {
    %two = arith.constant 2.0 : f32
    %x = arith.mulf %two, %v : f32
    memref.store %x, %a[%c0] : memref<1xf32>
  }
}
tir.prim_func private @helper(%a: memref<1xf32>) target #target.target<"cuda"> {
}
