// RUN: hetero-opt %s -p 'specialize-shapes{shapes=6x5}' --split-input-file --verify-diagnostics

// A size that contradicts a static dimension.
// expected-error@+1 {{specialize-shapes: parameter #0 of type tensor<?x4xf32> cannot have shape [6, 5]}}
relay.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  relay.return %x : tensor<?x4xf32>
}

// -----

// A shape that no longer fits an operator: the operator's own inference says why.
relay.func @main(%x: tensor<?x?xf32>) -> tensor<?x4xf32> {
  // expected-error@+1 {{specialize-shapes: cannot reshape 30 elements into newshape [-1, 4]}}
  %r = relay.reshape %x {newshape = array<i64: -1, 4>} : (tensor<?x?xf32>) -> tensor<?x4xf32>
  relay.return %r : tensor<?x4xf32>
}

// -----

// Calls are not looked into.
relay.func private @f(%y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  relay.return %y : tensor<?x?xf32>
}
relay.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error@+1 {{specialize-shapes: cannot re-type 'relay.call' for the new shapes}}
  %r = relay.call @f(%x) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  relay.return %r : tensor<?x?xf32>
}

// -----

// Nor are nested regions that capture a re-typed value.
relay.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = relay.constant dense<true> : tensor<i1>
  // expected-error@+1 {{specialize-shapes: cannot re-type the body of 'relay.if' for the new shapes}}
  %r = relay.if %c : tensor<i1> -> tensor<?x?xf32> {
    %e = relay.exp %x : tensor<?x?xf32>
    relay.yield %e : tensor<?x?xf32>
  } else {
    relay.yield %x : tensor<?x?xf32>
  }
  relay.return %r : tensor<?x?xf32>
}
