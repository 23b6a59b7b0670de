// RUN: hetero-opt %s -p inline --verify-diagnostics --split-input-file

// Inline functions calling one another in a cycle cannot be inlined.
builtin.module {
  relay.func @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {Inline} {
    %r = relay.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
  relay.func @g(%x: tensor<4xf32>) -> tensor<4xf32> attributes {Inline} {
    // expected-error@+1 {{inline: @f is marked Inline but calls itself through @g: a recursive function cannot be inlined}}
    %r = relay.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
}
