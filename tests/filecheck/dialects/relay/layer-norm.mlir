// RUN: HETERO_ROUNDTRIP
// RUN: HETERO_GENERIC_ROUNDTRIP

// relay.nn.layer_norm: the axes from `axis` (default -1, the last) are
// normalised, gamma and beta have their shape; a `?` agrees with any size.
relay.func @f(%x: tensor<2x5x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %g2: tensor<5x8xf32>, %d: tensor<?x?xf32>, %gd: tensor<3xf32>) -> tensor<2x5x8xf32> {
  %0 = relay.nn.layer_norm %x, %g, %b : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  %1 = relay.nn.layer_norm %x, %g2, %g2 {axis = 1 : i64, epsilon = 1.000000e-03 : f64} : (tensor<2x5x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<2x5x8xf32>
  %2 = relay.nn.layer_norm %d, %gd, %gd : (tensor<?x?xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x?xf32>
  relay.return %0 : tensor<2x5x8xf32>
}

// CHECK:      %0 = relay.nn.layer_norm %x, %g, %b : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
// CHECK-NEXT: %1 = relay.nn.layer_norm %x, %g2, %g2 {axis = 1 : i64, epsilon = 1.000000e-03 : f64} : (tensor<2x5x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<2x5x8xf32>
// CHECK-NEXT: %2 = relay.nn.layer_norm %d, %gd, %gd : (tensor<?x?xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x?xf32>

// CHECK-GENERIC: %0 = "relay.nn.layer_norm"(%x, %g, %b) : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
// CHECK-GENERIC: %1 = "relay.nn.layer_norm"(%x, %g2, %g2) <{axis = 1 : i64, epsilon = 1.000000e-03 : f64}> : (tensor<2x5x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<2x5x8xf32>
