// RUN: hetero-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A returned type may refine the declared result type, as in Relay: a static
// size where the result type has `?`, in tensors and in tuples' elements.
// Rank, element type and the sizes the result type states must agree.

// CHECK: relay.func @static_for_dynamic(%x: tensor<2x4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT: relay.return %x : tensor<2x4xf32>
relay.func @static_for_dynamic(%x: tensor<2x4xf32>) -> tensor<?x4xf32> {
  relay.return %x : tensor<2x4xf32>
}

// -----

// CHECK: relay.fn (%a: tensor<3xf32>, %b: tensor<?xi32>) -> tuple<tensor<?xf32>, tensor<?xi32>>
relay.func @in_tuple(%x: tensor<3xf32>, %y: tensor<?xi32>) -> tensor<3xf32> {
  %f = relay.fn (%a: tensor<3xf32>, %b: tensor<?xi32>) -> tuple<tensor<?xf32>, tensor<?xi32>> {
    %t = relay.tuple(%a, %b) : tuple<tensor<3xf32>, tensor<?xi32>>
    relay.return %t : tuple<tensor<3xf32>, tensor<?xi32>>
  }
  relay.return %x : tensor<3xf32>
}

// -----

relay.func @dynamic_for_static(%x: tensor<?x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{returned type tensor<?x4xf32> does not match the function's result type tensor<2x4xf32>}}
  relay.return %x : tensor<?x4xf32>
}

// -----

relay.func @other_size(%x: tensor<2x4xf32>) -> tensor<?x5xf32> {
  // expected-error@+1 {{returned type tensor<2x4xf32> does not match the function's result type tensor<?x5xf32>}}
  relay.return %x : tensor<2x4xf32>
}

// -----

relay.func @other_rank(%x: tensor<2x4xf32>) -> tensor<?xf32> {
  // expected-error@+1 {{returned type tensor<2x4xf32> does not match the function's result type tensor<?xf32>}}
  relay.return %x : tensor<2x4xf32>
}

// -----

relay.func @other_element(%x: tensor<2x4xf32>) -> tensor<?x4xf16> {
  // expected-error@+1 {{returned type tensor<2x4xf32> does not match the function's result type tensor<?x4xf16>}}
  relay.return %x : tensor<2x4xf32>
}

// -----

relay.func @tuple_length(%x: tensor<2xf32>) -> tuple<tensor<?xf32>> {
  %t = relay.tuple(%x, %x) : tuple<tensor<2xf32>, tensor<2xf32>>
  // expected-error@+1 {{returned type tuple<tensor<2xf32>, tensor<2xf32>> does not match the function's result type tuple<tensor<?xf32>>}}
  relay.return %t : tuple<tensor<2xf32>, tensor<2xf32>>
}
