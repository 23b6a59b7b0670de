// RUN: hetero-opt %s --split-input-file --verify-diagnostics -p convert-gpu-to-nvvm

// No libdevice: a math function without an NVPTX lowering is an error at the
// op (LLVM would abort the process on its library call).
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "k"}> ({
    "gpu.func"() <{function_type = (f32, memref<1xf32>) -> (), kernel}> ({
    ^bb0(%x: f32, %out: memref<1xf32>):
      %c0 = arith.constant 0 : index
      // expected-error@+1 {{convert-gpu-to-nvvm: 'math.erf' is a C library function (no libdevice on the GPU)}}
      %y = math.erf %x : f32
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
