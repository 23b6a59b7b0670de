// RUN: hetero-opt %s -p outline-compiler-functions --split-input-file --verify-diagnostics
// RUN: not hetero-opt %s -p 'outline-compiler-functions{compiler=acl}' --split-input-file 2>&1 | filecheck %s --check-prefix=FILTER

// FILTER: error: unknown compiler 'acl': no external-codegen target kind has that name

builtin.module {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{unknown compiler 'acl': no external-codegen target kind has that name}}
    %p = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "acl", global_symbol = "acl_0"} {
      relay.return %a : tensor<4xf32>
    }
    %y = relay.call_indirect %p(%x) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %y : tensor<4xf32>
  }
}

// -----

// The default cache names globals by the literal's global_symbol.
builtin.module {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{outline-compiler-functions needs a 'global_symbol' on every Compiler function it outlines (or structural_cache=true to name them)}}
    %p = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "blas"} {
      relay.return %a : tensor<4xf32>
    }
    %y = relay.call_indirect %p(%x) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %y : tensor<4xf32>
  }
}

// -----

// A Compiler function is closed.
builtin.module {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %e = relay.exp %x : tensor<4xf32>
    // expected-error@+1 {{a Compiler function must be closed, but this one uses %e of its enclosing function}}
    %p = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "blas", global_symbol = "blas_0"} {
      %s = relay.add %a, %e : tensor<4xf32>
      relay.return %s : tensor<4xf32>
    }
    %y = relay.call_indirect %p(%x) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %y : tensor<4xf32>
  }
}

// -----

// A global_symbol naming a global that is not the same kind's function.
builtin.module {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{cannot outline to @main: that global is not a Compiler function of type (tensor<4xf32>) -> tensor<4xf32>, this is a 'blas' function of type (tensor<4xf32>) -> tensor<4xf32>}}
    %p = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "blas", global_symbol = "main"} {
      relay.return %a : tensor<4xf32>
    }
    %y = relay.call_indirect %p(%x) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %y : tensor<4xf32>
  }
}
