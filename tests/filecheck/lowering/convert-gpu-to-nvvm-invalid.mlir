// RUN: hetero-opt %s --split-input-file --verify-diagnostics -p convert-gpu-to-nvvm

// No libdevice: a math function without an NVPTX lowering is an error at the
// op (LLVM would abort the process on its library call).
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "k"}> ({
    "gpu.func"() <{function_type = (f32, memref<1xf32>) -> (), kernel}> ({
    ^bb0(%x: f32, %out: memref<1xf32>):
      %c0 = arith.constant 0 : index
      // expected-error@+1 {{convert-gpu-to-nvvm: 'math.cbrt' is a C library function (no libdevice on the GPU)}}
      %y = math.cbrt %x : f32
      memref.store %y, %out[%c0] : memref<1xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

// -----

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "k"}> ({
    "gpu.func"() <{function_type = (f64, memref<1xf64>) -> (), kernel}> ({
    ^bb0(%x: f64, %out: memref<1xf64>):
      %c0 = arith.constant 0 : index
      // expected-error@+1 {{convert-gpu-to-nvvm: 'math.exp' on f64 needs 'llvm.exp.f64', which has no GPU lowering}}
      %y = math.exp %x : f64
      memref.store %y, %out[%c0] : memref<1xf64>
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

// -----

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "k"}> ({
    "gpu.func"() <{function_type = (f64, memref<1xf64>) -> (), kernel}> ({
    ^bb0(%x: f64, %out: memref<1xf64>):
      %c0 = arith.constant 0 : index
      // expected-error@+1 {{convert-gpu-to-nvvm: 'math.tanh' on f64 needs 'llvm.exp.f64', which has no GPU lowering}}
      %y = math.tanh %x : f64
      memref.store %y, %out[%c0] : memref<1xf64>
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

// -----

// Shared memory is a global of the module: its size must be static.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "k"}> ({
    "gpu.func"() <{function_type = (index) -> (), kernel}> ({
    ^bb0(%n: index):
      // expected-error@+1 {{convert-gpu-to-nvvm: a shared buffer of dynamic size (memref<?xf32, 3 : i64>); shared memory is a global of the module, its size must be static}}
      %t = memref.alloca(%n) : memref<?xf32, 3 : i64>
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

// -----

// GPU code cannot call functions defined elsewhere (there is no linker step).
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "k"}> ({
    func.func private @ext(f32) -> f32
    "gpu.func"() <{function_type = (f32) -> (), kernel}> ({
    ^bb0(%x: f32):
      // expected-error@+1 {{convert-gpu-to-nvvm: call of the external function @ext in GPU code}}
      %y = func.call @ext(%x) : (f32) -> f32
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

// -----

// An op no conversion handles is an error at the op, not bad PTX later.
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "k"}> ({
    "gpu.func"() <{function_type = () -> (), kernel}> ({
      // expected-error@+1 {{convert-gpu-to-nvvm: 'test.op' is left after lowering}}
      "test.op"() : () -> ()
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}
