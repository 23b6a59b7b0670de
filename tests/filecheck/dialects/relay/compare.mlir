// RUN: HETERO_ROUNDTRIP
// RUN: HETERO_GENERIC_ROUNDTRIP

// Comparisons give i1 tensors (NumPy broadcasting); the logical operators
// take i1; where broadcasts its three operands.
relay.func @f(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %i: tensor<2x1xi32>, %b: tensor<2x1xi1>) -> tensor<2x3xf32> {
  %0 = relay.less %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %1 = relay.equal %i, %i : (tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi1>
  %2 = relay.logical_and %0, %b : (tensor<2x3xi1>, tensor<2x1xi1>) -> tensor<2x3xi1>
  %3 = relay.logical_or %2, %1 : (tensor<2x3xi1>, tensor<2x1xi1>) -> tensor<2x3xi1>
  %4 = relay.logical_not %3 : tensor<2x3xi1>
  %5 = relay.where %b, %x, %y : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %6 = relay.greater_equal %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  relay.return %5 : tensor<2x3xf32>
}

// CHECK:      %0 = relay.less %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %1 = relay.equal %i, %i : (tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x1xi1>
// CHECK-NEXT: %2 = relay.logical_and %0, %b : (tensor<2x3xi1>, tensor<2x1xi1>) -> tensor<2x3xi1>
// CHECK-NEXT: %3 = relay.logical_or %2, %1 : (tensor<2x3xi1>, tensor<2x1xi1>) -> tensor<2x3xi1>
// CHECK-NEXT: %4 = relay.logical_not %3 : tensor<2x3xi1>
// CHECK-NEXT: %5 = relay.where %b, %x, %y : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %6 = relay.greater_equal %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>

// CHECK-GENERIC: %5 = "relay.where"(%b, %x, %y) : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
