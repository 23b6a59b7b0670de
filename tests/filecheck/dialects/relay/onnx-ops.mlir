// RUN: HETERO_ROUNDTRIP
// RUN: HETERO_GENERIC_ROUNDTRIP

// Operators added for the ONNX frontend: pad, lrn, strided_slice, log, sqrt,
// abs, power, sum, mean, and dense_resource constants.

// CHECK:      relay.func @pad(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x9x7xf32> {
// CHECK-NEXT:   %0 = relay.nn.pad %x {pad_width = array<i64: 0, 0, 0, 0, 1, 2, 0, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x7x5xf32>
// CHECK-NEXT:   %1 = relay.nn.pad %0 {pad_width = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>, pad_value = 5.000000e-01 : f64, pad_mode = "edge"} : (tensor<1x2x7x5xf32>) -> tensor<1x2x9x7xf32>
// CHECK-NEXT:   %2 = relay.nn.pad %x {pad_width = array<i64: 0, 0, 0, 0, 3, 3, 0, 0>, pad_mode = "reflect"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x10x4xf32>
// CHECK-NEXT:   relay.return %1 : tensor<1x2x9x7xf32>
relay.func @pad(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x9x7xf32> {
  %0 = relay.nn.pad %x {pad_width = array<i64: 0, 0, 0, 0, 1, 2, 0, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x7x5xf32>
  %1 = relay.nn.pad %0 {pad_width = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>, pad_value = 0.5, pad_mode = "edge"} : (tensor<1x2x7x5xf32>) -> tensor<1x2x9x7xf32>
  %2 = relay.nn.pad %x {pad_width = array<i64: 0, 0, 0, 0, 3, 3, 0, 0>, pad_mode = "reflect"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x10x4xf32>
  relay.return %1 : tensor<1x2x9x7xf32>
}

// CHECK:      relay.func @lrn_slice(%x: tensor<?x8x5x5xf32>) -> tensor<?x4x2x5xf32> {
// CHECK-NEXT:   %0 = relay.nn.lrn %x {size = 3 : i64, alpha = 1.000000e-04 : f64, beta = 7.500000e-01 : f64, bias = 1.000000e+00 : f64} : tensor<?x8x5x5xf32>
// CHECK-NEXT:   %1 = relay.nn.lrn %0 : tensor<?x8x5x5xf32>
// CHECK-NEXT:   %2 = relay.strided_slice %1 {begin = array<i64: 0, 0, 1, 0>, end = array<i64: 4611686018427387904, 8, 4, 99>, strides = array<i64: 1, 2, 2, 1>} : (tensor<?x8x5x5xf32>) -> tensor<?x4x2x5xf32>
// CHECK-NEXT:   relay.return %2 : tensor<?x4x2x5xf32>
relay.func @lrn_slice(%x: tensor<?x8x5x5xf32>) -> tensor<?x4x2x5xf32> {
  %0 = relay.nn.lrn %x {size = 3, alpha = 1.0e-4, beta = 0.75, bias = 1.0} : tensor<?x8x5x5xf32>
  %1 = relay.nn.lrn %0 : tensor<?x8x5x5xf32>
  %2 = relay.strided_slice %1 {begin = array<i64: 0, 0, 1, 0>, end = array<i64: 4611686018427387904, 8, 4, 99>, strides = array<i64: 1, 2, 2, 1>} : (tensor<?x8x5x5xf32>) -> tensor<?x4x2x5xf32>
  relay.return %2 : tensor<?x4x2x5xf32>
}

// CHECK:      relay.func @math(%x: tensor<3xf32>, %y: tensor<1xf32>) -> tensor<3xf32> {
// CHECK-NEXT:   %0 = relay.abs %x : tensor<3xf32>
// CHECK-NEXT:   %1 = relay.sqrt %0 : tensor<3xf32>
// CHECK-NEXT:   %2 = relay.log %1 : tensor<3xf32>
// CHECK-NEXT:   %3 = relay.power %2, %y : (tensor<3xf32>, tensor<1xf32>) -> tensor<3xf32>
relay.func @math(%x: tensor<3xf32>, %y: tensor<1xf32>) -> tensor<3xf32> {
  %0 = relay.abs %x : tensor<3xf32>
  %1 = relay.sqrt %0 : tensor<3xf32>
  %2 = relay.log %1 : tensor<3xf32>
  %3 = relay.power %2, %y : (tensor<3xf32>, tensor<1xf32>) -> tensor<3xf32>
  relay.return %3 : tensor<3xf32>
}

// CHECK:      relay.func @reduce(%x: tensor<2x?x4xf32>) -> tensor<f32> {
// CHECK-NEXT:   %0 = relay.sum %x {axis = array<i64: 0, -1>, keepdims = true} : (tensor<2x?x4xf32>) -> tensor<1x?x1xf32>
// CHECK-NEXT:   %1 = relay.mean %x {axis = array<i64: 1>} : (tensor<2x?x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:   %2 = relay.mean %x : (tensor<2x?x4xf32>) -> tensor<f32>
relay.func @reduce(%x: tensor<2x?x4xf32>) -> tensor<f32> {
  %0 = relay.sum %x {axis = array<i64: 0, -1>, keepdims = true} : (tensor<2x?x4xf32>) -> tensor<1x?x1xf32>
  %1 = relay.mean %x {axis = array<i64: 1>} : (tensor<2x?x4xf32>) -> tensor<2x4xf32>
  %2 = relay.mean %x : (tensor<2x?x4xf32>) -> tensor<f32>
  relay.return %2 : tensor<f32>
}

// CHECK:      relay.func @resource() -> tensor<2x2xf32> {
// CHECK-NEXT:   %0 = relay.constant dense_resource<weights> : tensor<2x2xf32>
// CHECK:      dialect_resources: {
// CHECK-NEXT:   builtin: {
// CHECK-NEXT:     weights: "0x040000000000803F000000400000404000008040"

// CHECK-GENERIC: "relay.nn.pad"(%x) <{pad_width = array<i64: 0, 0, 0, 0, 1, 2, 0, 1>}>
// CHECK-GENERIC: "relay.nn.lrn"(%x) <{size = 3 : i64, alpha = 1.000000e-04 : f64, beta = 7.500000e-01 : f64, bias = 1.000000e+00 : f64}>
// CHECK-GENERIC: "relay.constant"() <{value = dense_resource<weights> : tensor<2x2xf32>}>
relay.func @resource() -> tensor<2x2xf32> {
  %0 = relay.constant dense_resource<weights> : tensor<2x2xf32>
  relay.return %0 : tensor<2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
