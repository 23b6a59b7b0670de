// RUN: hetero-opt %s --split-input-file --verify-diagnostics -p lower-gpu-launch

// A launch still inside a tir.prim_func: convert-tir-to-scf has not run.
builtin.module attributes {gpu.container_module} {
  tir.prim_func @main(%a: memref<64xf32>) target #target.target<"llvm"> {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    // expected-error@+1 {{lower-gpu-launch: 'gpu.launch_func' outside a 'func.func'; run convert-tir-to-scf first}}
    "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %a) <{kernel = @k::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<64xf32>) -> ()
  }
  "gpu.module"() <{sym_name = "k"}> ({
    "gpu.func"() <{function_type = (memref<64xf32>) -> (), kernel}> ({
    ^bb0(%a: memref<64xf32>):
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

// -----

// The launch stubs pass no dynamic shared memory size.
builtin.module attributes {gpu.container_module} {
  func.func @main(%a: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %bytes = arith.constant 256 : i32
    // expected-error@+1 {{lower-gpu-launch: async, cluster and dynamic shared memory launches are not supported}}
    "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %bytes, %a) <{kernel = @k::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0>}> : (index, index, index, index, index, index, i32, memref<64xf32>) -> ()
    func.return
  }
  "gpu.module"() <{sym_name = "k"}> ({
    "gpu.func"() <{function_type = (memref<64xf32>) -> (), kernel}> ({
    ^bb0(%a: memref<64xf32>):
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

// -----

// The stubs take `index` sizes.
builtin.module attributes {gpu.container_module} {
  func.func @main(%a: memref<64xf32>) {
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    // expected-error@+1 {{lower-gpu-launch: launch sizes must be 'index'}}
    "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %a) <{kernel = @k::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (i32, i32, i32, i32, i32, i32, memref<64xf32>) -> ()
    func.return
  }
  "gpu.module"() <{sym_name = "k"}> ({
    "gpu.func"() <{function_type = (memref<64xf32>) -> (), kernel}> ({
    ^bb0(%a: memref<64xf32>):
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}
