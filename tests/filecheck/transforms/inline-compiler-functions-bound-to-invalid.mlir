// RUN: hetero-opt %s -p 'inline-compiler-functions-bound-to{globals=lib_0}' --split-input-file --verify-diagnostics

// expected-error@+1 {{inline-compiler-functions-bound-to: no relay.func @lib_0 in the module}}
builtin.module {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    relay.return %x : tensor<4xf32>
  }
}

// -----

// Only composite literals are inlined with their partition.
builtin.module {
  relay.func @lib_0(%a: tensor<4xf32>) -> tensor<4xf32> attributes {Extern} {
    // expected-error@+1 {{@lib_0 calls a function literal that is not a Composite function; only composites are inlined with their partition}}
    %f = relay.fn (%p: tensor<4xf32>) -> tensor<4xf32> {
      relay.return %p : tensor<4xf32>
    }
    %c = relay.call_indirect %f(%a) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %c : tensor<4xf32>
  }
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = relay.call @lib_0(%x) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %y : tensor<4xf32>
  }
}

// -----

// A call this pass does not rewrite would dangle.
builtin.module {
  relay.func @lib_0(%a: tensor<4xf32>) -> tensor<4xf32> attributes {Extern} {
    relay.return %a : tensor<4xf32>
  }
  relay.func @other(%x: tensor<4xf32>) -> tensor<4xf32> attributes {SkipOptimization} {
    // expected-error@+1 {{@lib_0 cannot be removed: it is still called here, in a function that is not optimizable}}
    %y = relay.call @lib_0(%x) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %y : tensor<4xf32>
  }
}
