// RUN: hetero-opt %s -p lower-gpu-launch | filecheck %s

// The kernel module leaves the host module (it is compiled to PTX on its own).
// CHECK: builtin.module {
// CHECK-NOT: gpu.module
// A launch becomes a call of the kernel's stub: sizes, then the operands; the
// function is marked as launching kernels, and its stack buffers go to the heap
// (the runtime makes that heap managed memory).
// CHECK: func.func @host(%[[A:.*]]: memref<70xf32>) attributes {hetero.launches_kernels} {
// CHECK-NEXT: %[[T:.*]] = memref.alloc() : memref<70xf32>
// CHECK: func.call @k.launch(%[[G:.*]], %[[O:.*]], %[[O]], %[[B:.*]], %[[O]], %[[O]], %[[A]], %[[T]]) : (index, index, index, index, index, index, memref<70xf32>, memref<70xf32>) -> ()
// CHECK-NEXT: func.call @k.launch(%[[G]], %[[O]], %[[O]], %[[B]], %[[O]], %[[O]], %[[A]], %[[T]])
// The host waits for the kernels before it frees their buffer
// (lower-gpu-launch-wait.mlir has the rules).
// CHECK-NEXT: func.call @hetero_cuda_wait() : () -> ()
// CHECK-NEXT: memref.dealloc %[[T]] : memref<70xf32>
// CHECK-NEXT: func.return
// Functions without launches keep their stack buffers.
// CHECK: func.func @cpu_only() {
// CHECK-NEXT: memref.alloca
// The stub is declared once.
// CHECK: func.func private @k.launch(index, index, index, index, index, index, memref<70xf32>, memref<70xf32>) -> () attributes {hetero.launch_stub}
// CHECK-NOT: @k.launch(
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "k"}> ({
    "gpu.func"() <{function_type = (memref<70xf32>, memref<70xf32>) -> (), kernel}> ({
    ^bb0(%a: memref<70xf32>, %b: memref<70xf32>):
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
  func.func @host(%a: memref<70xf32>) {
    %t = memref.alloca() : memref<70xf32>
    %g = arith.constant 2 : index
    %b = arith.constant 64 : index
    %o = arith.constant 1 : index
    "gpu.launch_func"(%g, %o, %o, %b, %o, %o, %a, %t) <{kernel = @k::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}> : (index, index, index, index, index, index, memref<70xf32>, memref<70xf32>) -> ()
    "gpu.launch_func"(%g, %o, %o, %b, %o, %o, %a, %t) <{kernel = @k::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}> : (index, index, index, index, index, index, memref<70xf32>, memref<70xf32>) -> ()
    func.return
  }
  func.func @cpu_only() {
    %s = memref.alloca() : memref<4xf32>
    func.return
  }
}
