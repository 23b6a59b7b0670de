// RUN: hetero-opt %s --split-input-file --verify-diagnostics

// Verifier errors of the operators added for the ONNX frontend.

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'pad_width' must have 2 values per dimension (4), got 2}}
  %0 = relay.nn.pad %x {pad_width = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'pad_width' must be >= 0, got [0, 0, -1, 0]}}
  %0 = relay.nn.pad %x {pad_width = array<i64: 0, 0, -1, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{reflect padding (0, 3) must be smaller than the dimension (3)}}
  %0 = relay.nn.pad %x {pad_width = array<i64: 0, 0, 0, 3>, pad_mode = "reflect"} : (tensor<2x3xf32>) -> tensor<2x6xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'pad_mode' must be one of "constant", "edge", "reflect", got "wrap"}}
  %0 = relay.nn.pad %x {pad_width = array<i64: 0, 0, 0, 1>, pad_mode = "wrap"} : (tensor<2x3xf32>) -> tensor<2x4xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{result type mismatch: expected tensor<2x5xf32>, got tensor<2x4xf32>}}
  %0 = relay.nn.pad %x {pad_width = array<i64: 0, 0, 1, 1>} : (tensor<2x3xf32>) -> tensor<2x4xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'size' must be >= 1, got 0}}
  %0 = relay.nn.lrn %x {size = 0} : tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{axis 2 is out of range: expected -2 <= axis < 2}}
  %0 = relay.nn.lrn %x {axis = 2} : tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'end' must have one value per dimension (2), got 1}}
  %0 = relay.strided_slice %x {begin = array<i64: 0, 0>, end = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'strides' must be >= 1, got [1, 0]}}
  %0 = relay.strided_slice %x {begin = array<i64: 0, 0>, end = array<i64: 2, 3>, strides = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{result type mismatch: expected tensor<1x2xf32>, got tensor<2x3xf32>}}
  %0 = relay.strided_slice %x {begin = array<i64: 1, 1>, end = array<i64: 5, 3>} : tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %y: tensor<2x3xf16>) -> tensor<2x3xf32> {
  // expected-error@+1 {{element type mismatch: operand 0 is f32, operand 1 is f16}}
  %0 = relay.power %x, %y : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{axis [1, -1] names a dimension twice}}
  %0 = relay.sum %x {axis = array<i64: 1, -1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{axis 2 is out of range: expected -2 <= axis < 2}}
  %0 = relay.mean %x {axis = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{result type mismatch: expected tensor<2x1xf32>, got tensor<2xf32>}}
  %0 = relay.mean %x {axis = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2xf32>
  relay.return %x : tensor<2x3xf32>
}
