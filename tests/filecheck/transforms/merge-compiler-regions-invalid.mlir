// RUN: hetero-opt %s -p merge-compiler-regions --split-input-file --verify-diagnostics

builtin.module {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{unknown compiler 'cuda': no external-codegen target kind has that name}}
    %a = relay.exp %x {relay.compiler = "cuda"} : tensor<4xf32>
    relay.return %a : tensor<4xf32>
  }
}
