// RUN: hetero-opt %s -p lower-gpu-launch | filecheck %s
// Run twice, the pass adds nothing: a wait it finds counts as one.
// RUN: hetero-opt %s -p lower-gpu-launch,lower-gpu-launch | filecheck %s

// Launches are asynchronous: the host waits (`@hetero_cuda_wait`) before the
// first op after a launch that touches memory, and nowhere else.

// Launches in a row need no wait; neither do allocations, views, constants or
// the return. Freeing memory a kernel may use does.
// CHECK-LABEL: func.func @in_a_row(
// CHECK-NEXT: memref.alloc
// CHECK-NEXT: arith.constant
// CHECK-NEXT: memref.view
// CHECK-NEXT: arith.constant
// CHECK-NEXT: func.call @k.launch(
// CHECK-NEXT: func.call @k.launch(
// CHECK-NEXT: arith.constant
// CHECK-NEXT: func.call @hetero_cuda_wait() : () -> ()
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: func.return

// A function starts as if work were pending (its caller may have launched):
// the first host read waits, the second does not.
// CHECK-LABEL: func.func @reads(
// CHECK-NEXT: arith.constant
// CHECK-NEXT: func.call @hetero_cuda_wait()
// CHECK-NEXT: memref.load
// CHECK-NEXT: func.call @k.launch(
// CHECK-NEXT: func.call @hetero_cuda_wait()
// CHECK-NEXT: memref.store
// CHECK-NEXT: memref.load
// CHECK-NEXT: func.return

// A host loop after a launch waits once, before the loop; a call of CPU code
// (a function that launches nothing) waits too.
// CHECK-LABEL: func.func @loop_and_cpu_call(
// CHECK: func.call @k.launch(
// CHECK-NEXT: func.call @hetero_cuda_wait()
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: func.call @k.launch(
// CHECK-NEXT: func.call @hetero_cuda_wait()
// CHECK-NEXT: func.call @cpu_only(

// A loop that launches gets its waits inside, and the host waits after it.
// CHECK-LABEL: func.func @launches_in_a_loop(
// CHECK: scf.for
// CHECK-NEXT: func.call @k.launch(
// CHECK-NEXT: func.call @hetero_cuda_wait()
// CHECK-NEXT: memref.load
// CHECK-NEXT: }
// CHECK-NEXT: func.call @hetero_cuda_wait()
// CHECK-NEXT: memref.store

// A caller of a launching function launches too, transitively (its buffers
// are managed memory): such a call may leave work pending, so it needs no wait
// before it, and the host waits after it.
// CHECK-LABEL: func.func @caller(
// CHECK-SAME: attributes {hetero.launches_kernels}
// CHECK-NEXT: func.call @in_a_row(
// CHECK-NEXT: arith.constant
// CHECK-NEXT: func.call @hetero_cuda_wait()
// CHECK-NEXT: memref.load
// CHECK-LABEL: func.func @callers_caller(
// CHECK-SAME: attributes {hetero.launches_kernels}
// CHECK-NEXT: func.call @caller(
// CHECK-NEXT: func.return

// A function that launches nothing has no waits.
// CHECK-LABEL: func.func @cpu_only(
// CHECK-NOT: hetero.launches_kernels
// CHECK-NOT: @hetero_cuda_wait()
// CHECK: func.func private @k.launch(
// The wait is declared once, at the end.
// CHECK-NEXT: func.func private @hetero_cuda_wait() -> ()
// CHECK-NOT: @hetero_cuda_wait

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "k"}> ({
    "gpu.func"() <{function_type = (memref<70xf32>) -> (), kernel}> ({
    ^bb0(%a: memref<70xf32>):
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
  func.func @in_a_row(%a: memref<70xf32>) {
    %t = memref.alloc() : memref<280xi8>
    %z = arith.constant 0 : index
    %v = memref.view %t[%z][] : memref<280xi8> to memref<70xf32>
    %o = arith.constant 1 : index
    "gpu.launch_func"(%o, %o, %o, %o, %o, %o, %a) <{kernel = @k::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<70xf32>) -> ()
    "gpu.launch_func"(%o, %o, %o, %o, %o, %o, %v) <{kernel = @k::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<70xf32>) -> ()
    %two = arith.constant 2 : index
    memref.dealloc %t : memref<280xi8>
    func.return
  }
  func.func @reads(%a: memref<70xf32>) -> f32 {
    %o = arith.constant 1 : index
    %x = memref.load %a[%o] : memref<70xf32>
    "gpu.launch_func"(%o, %o, %o, %o, %o, %o, %a) <{kernel = @k::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<70xf32>) -> ()
    memref.store %x, %a[%o] : memref<70xf32>
    %y = memref.load %a[%o] : memref<70xf32>
    func.return %y : f32
  }
  func.func @loop_and_cpu_call(%a: memref<70xf32>, %b: memref<70xf32>) {
    %z = arith.constant 0 : index
    %o = arith.constant 1 : index
    %n = arith.constant 70 : index
    "gpu.launch_func"(%o, %o, %o, %o, %o, %o, %a) <{kernel = @k::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<70xf32>) -> ()
    scf.for %i = %z to %n step %o {
      %x = memref.load %a[%i] : memref<70xf32>
      memref.store %x, %b[%i] : memref<70xf32>
    }
    "gpu.launch_func"(%o, %o, %o, %o, %o, %o, %b) <{kernel = @k::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<70xf32>) -> ()
    func.call @cpu_only(%b) : (memref<70xf32>) -> ()
    func.return
  }
  func.func @launches_in_a_loop(%a: memref<70xf32>) {
    %z = arith.constant 0 : index
    %o = arith.constant 1 : index
    %n = arith.constant 4 : index
    %f = arith.constant 0.0 : f32
    scf.for %i = %z to %n step %o {
      "gpu.launch_func"(%o, %o, %o, %o, %o, %o, %a) <{kernel = @k::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<70xf32>) -> ()
      %x = memref.load %a[%i] : memref<70xf32>
    }
    memref.store %f, %a[%z] : memref<70xf32>
    func.return
  }
  func.func @caller(%a: memref<70xf32>) -> f32 {
    func.call @in_a_row(%a) : (memref<70xf32>) -> ()
    %o = arith.constant 1 : index
    %x = memref.load %a[%o] : memref<70xf32>
    func.return %x : f32
  }
  func.func @callers_caller(%a: memref<70xf32>) {
    %x = func.call @caller(%a) : (memref<70xf32>) -> f32
    func.return
  }
  func.func @cpu_only(%b: memref<70xf32>) {
    %o = arith.constant 1 : index
    %x = memref.load %b[%o] : memref<70xf32>
    memref.store %x, %b[%o] : memref<70xf32>
    func.return
  }
}
