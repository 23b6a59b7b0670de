// RUN: HETERO_ROUNDTRIP
// RUN: HETERO_GENERIC_ROUNDTRIP

// relay.reshape_like: `x`'s elements and element type in the shape of
// `like` (whose elements are not read), but for the last `keep` axes, which
// are `x`'s; sizes known at run time only pass through.
relay.func @f(%x: tensor<?xf32>, %like: tensor<?x1x1x?xi1>, %y: tensor<6xi64>, %l: tensor<2x3xf32>) -> tensor<?x1x1x?xf32> {
  %0 = relay.reshape_like %x, %like : (tensor<?xf32>, tensor<?x1x1x?xi1>) -> tensor<?x1x1x?xf32>
  %1 = relay.reshape_like %y, %l : (tensor<6xi64>, tensor<2x3xf32>) -> tensor<2x3xi64>
  %2 = relay.reshape_like %l, %like {keep = 1 : i64} : (tensor<2x3xf32>, tensor<?x1x1x?xi1>) -> tensor<?x1x1x3xf32>
  relay.return %0 : tensor<?x1x1x?xf32>
}

// CHECK:      %0 = relay.reshape_like %x, %like : (tensor<?xf32>, tensor<?x1x1x?xi1>) -> tensor<?x1x1x?xf32>
// CHECK-NEXT: %1 = relay.reshape_like %y, %l : (tensor<6xi64>, tensor<2x3xf32>) -> tensor<2x3xi64>
// CHECK-NEXT: %2 = relay.reshape_like %l, %like {keep = 1 : i64} : (tensor<2x3xf32>, tensor<?x1x1x?xi1>) -> tensor<?x1x1x3xf32>

// CHECK-GENERIC: %0 = "relay.reshape_like"(%x, %like) : (tensor<?xf32>, tensor<?x1x1x?xi1>) -> tensor<?x1x1x?xf32>
