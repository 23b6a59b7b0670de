// RUN: hetero-opt %s -p external-codegen --split-input-file --verify-diagnostics
// REQUIRES: blas

builtin.module {
  // expected-error@+1 {{external-codegen: no codegen is registered for 'cutlass'}}
  relay.func @cutlass_main_0(%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "cutlass", global_symbol = "cutlass_main_0"} {
    relay.return %a : tensor<4xf32>
  }
}

// -----

builtin.module {
  // expected-error@+1 {{unknown compiler 'vendorlib': no external-codegen target kind has that name}}
  relay.func @f(%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "vendorlib", global_symbol = "f"} {
    relay.return %a : tensor<4xf32>
  }
}

// -----

// Dynamic shapes need host shape functions (not generated yet).
builtin.module {
  // expected-error@+1 {{blas: parameter #0 has a dynamic shape (tensor<?x8xf32>); the blas codegen takes static tensors (dynamic shapes need host shape functions, not supported yet)}}
  relay.func @blas_main_0(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>) -> tensor<?x16xf32> attributes {Compiler = "blas", global_symbol = "blas_main_0"} {
    %d = relay.nn.dense %x, %w : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
    relay.return %d : tensor<?x16xf32>
  }
}

// -----

// A hand-annotated matmul broadcasting its batch is not one batched GEMM.
builtin.module {
  relay.func @blas_main_0(%a: tensor<1x2x3xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}, %b: tensor<4x3x5xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> tensor<4x2x5xf32> attributes {Compiler = "blas", global_symbol = "blas_main_0"} {
    // expected-error@+1 {{blas: a matmul of shapes (1, 2, 3) and (4, 3, 5) is not one (batched) GEMM; only 2-d operands, or 3-d ones with the same batch size, go to BLAS}}
    %m = relay.matmul %a, %b : (tensor<1x2x3xf32>, tensor<4x3x5xf32>) -> tensor<4x2x5xf32>
    relay.return %m : tensor<4x2x5xf32>
  }
}

// -----

// BLAS has no integer GEMM.
builtin.module {
  relay.func @blas_main_0(%a: tensor<2x3xi32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}, %b: tensor<3x5xi32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> tensor<2x5xi32> attributes {Compiler = "blas", global_symbol = "blas_main_0"} {
    // expected-error@+1 {{blas: no GEMM for i32 elements (f32 and f64 only)}}
    %m = relay.matmul %a, %b : (tensor<2x3xi32>, tensor<3x5xi32>) -> tensor<2x5xi32>
    relay.return %m : tensor<2x5xi32>
  }
}

// -----

// An op that neither BLAS nor hetero's templates compute.
builtin.module {
  relay.func @blas_main_0(%a: tensor<2x3xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> tensor<2x3xf32> attributes {Compiler = "blas", global_symbol = "blas_main_0"} {
    // expected-error@+1 {{blas: relay.tuple cannot be compiled by the BLAS codegen}}
    %t = relay.tuple(%a) : tuple<tensor<2x3xf32>>
    %r = relay.get_item %t[0] : tuple<tensor<2x3xf32>> -> tensor<2x3xf32>
    relay.return %r : tensor<2x3xf32>
  }
}

// -----

// The nested module of a kind is named after it.
builtin.module {
  relay.func @blas(%a: tensor<4xf32>) -> tensor<4xf32> {
    relay.return %a : tensor<4xf32>
  }
  // expected-error@-4 {{external-codegen: the module already has a symbol @blas, the name of the nested module for that kind's code}}
  relay.func @blas_main_0(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> tensor<4xf32> attributes {Compiler = "blas", global_symbol = "blas_main_0"} {
    relay.return %a : tensor<4xf32>
  }
}

// -----

// A kind compiles only partitions on a device it is external codegen for.
builtin.module {
  // expected-error@+1 {{external-codegen: 'blas' cannot compile @blas_main_0: it runs on cuda:0 (cuda), and 'blas' is not external codegen for that device's target}}
  relay.func @blas_main_0(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0, target = #target.target<"cuda">>}) -> tensor<4xf32> attributes {Compiler = "blas", global_symbol = "blas_main_0"} {
    relay.return %a : tensor<4xf32>
  }
}
