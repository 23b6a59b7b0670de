// RUN: hetero-opt %s --split-input-file --verify-diagnostics

relay.func @f(%x: tensor<2x5x8xf32>, %g: tensor<5xf32>) -> tensor<2x5x8xf32> {
  // expected-error@+1 {{gamma has shape [5], but the normalised axes of the data are [8]}}
  %0 = relay.nn.layer_norm %x, %g, %g : (tensor<2x5x8xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<2x5x8xf32>
  relay.return %0 : tensor<2x5x8xf32>
}

// -----

relay.func @f(%x: tensor<2x5x8xf32>, %g: tensor<5x8xf32>, %b: tensor<8xf32>) -> tensor<2x5x8xf32> {
  // expected-error@+1 {{beta has shape [8], but the normalised axes of the data are [5, 8]}}
  %0 = relay.nn.layer_norm %x, %g, %b {axis = -2 : i64} : (tensor<2x5x8xf32>, tensor<5x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  relay.return %0 : tensor<2x5x8xf32>
}

// -----

relay.func @f(%x: tensor<2x5x8xf32>, %g: tensor<8xf32>) -> tensor<2x5x8xf32> {
  // expected-error@+1 {{axis 3 is out of range: expected -3 <= axis < 3}}
  %0 = relay.nn.layer_norm %x, %g, %g {axis = 3 : i64} : (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  relay.return %0 : tensor<2x5x8xf32>
}
