// RUN: hetero-opt %s -p mark-compiler-functions-as-extern --split-input-file --verify-diagnostics
// RUN: not hetero-opt %s -p 'mark-compiler-functions-as-extern{compiler=cuda}' 2>&1 | filecheck %s --check-prefix=FILTER

// FILTER: error: unknown compiler 'cuda': no external-codegen target kind has that name

builtin.module {
  // expected-error@+1 {{unknown compiler 'vendorlib': no external-codegen target kind has that name}}
  relay.func @f(%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "vendorlib", global_symbol = "f"} {
    relay.return %a : tensor<4xf32>
  }
}
