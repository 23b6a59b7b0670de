// RUN: not hetero-opt %s -p 'merge-composite{compilers=nosuchlib}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not hetero-opt %s -p 'merge-composite{compilers=llvm}' 2>&1 | filecheck %s --check-prefix=REGULAR
// RUN: not hetero-opt %s -p 'merge-composite{compilers=cudnn}' 2>&1 | filecheck %s --check-prefix=UNCONFIGURED
// RUN: env PYTHONPATH=%S/merge-composite-patterns hetero-opt %s -p merge-composite --verify-diagnostics

// `compilers` names external-codegen kinds of the configuration; a pattern
// table (here a third party's, through the `hetero.patterns` entry point)
// that names an unknown op is an error before anything is matched.

// UNKNOWN: merge-composite-invalid.mlir:14:1: error: unknown compiler 'nosuchlib': no external-codegen target kind has that name (known: blas, cublas, cudnn, cutlass, dnnl, tensorrt
// REGULAR: error: unknown compiler 'llvm': no external-codegen target kind has that name
// UNCONFIGURED: error: compiler 'cudnn' is not in the compilation configuration (its external kinds: blas)
// expected-error@+1 {{merge-composite: entry point 'blas = bad_patterns:PATTERNS': pattern 'blas.dense_typo' names unknown op 'nn.dence'}}
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
    %d = relay.nn.dense %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    relay.return %d : tensor<4x16xf32>
  }
}
