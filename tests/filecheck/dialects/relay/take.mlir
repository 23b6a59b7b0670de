// RUN: HETERO_ROUNDTRIP
// RUN: HETERO_GENERIC_ROUNDTRIP

// relay.take: dimension `axis` of the data becomes the dimensions of the
// (integer) indices; a scalar index drops it; the axis may count from the
// end, and dynamic sizes pass through.
relay.func @f(%w: tensor<100x64xf32>, %i: tensor<2x7xi32>, %s: tensor<i64>, %d: tensor<?x5xf32>, %j: tensor<?xi64>) -> tensor<2x7x64xf32> {
  %0 = relay.take %w, %i : (tensor<100x64xf32>, tensor<2x7xi32>) -> tensor<2x7x64xf32>
  %1 = relay.take %w, %i {axis = 1 : i64} : (tensor<100x64xf32>, tensor<2x7xi32>) -> tensor<100x2x7xf32>
  %2 = relay.take %w, %s {axis = -1 : i64} : (tensor<100x64xf32>, tensor<i64>) -> tensor<100xf32>
  %3 = relay.take %d, %j : (tensor<?x5xf32>, tensor<?xi64>) -> tensor<?x5xf32>
  relay.return %0 : tensor<2x7x64xf32>
}

// CHECK:      %0 = relay.take %w, %i : (tensor<100x64xf32>, tensor<2x7xi32>) -> tensor<2x7x64xf32>
// CHECK-NEXT: %1 = relay.take %w, %i {axis = 1 : i64} : (tensor<100x64xf32>, tensor<2x7xi32>) -> tensor<100x2x7xf32>
// CHECK-NEXT: %2 = relay.take %w, %s {axis = -1 : i64} : (tensor<100x64xf32>, tensor<i64>) -> tensor<100xf32>
// CHECK-NEXT: %3 = relay.take %d, %j : (tensor<?x5xf32>, tensor<?xi64>) -> tensor<?x5xf32>

// CHECK-GENERIC: %0 = "relay.take"(%w, %i) : (tensor<100x64xf32>, tensor<2x7xi32>) -> tensor<2x7x64xf32>
// CHECK-GENERIC: %1 = "relay.take"(%w, %i) <{axis = 1 : i64}> : (tensor<100x64xf32>, tensor<2x7xi32>) -> tensor<100x2x7xf32>
