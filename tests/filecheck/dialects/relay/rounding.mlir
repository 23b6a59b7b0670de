// RUN: HETERO_ROUNDTRIP
// RUN: HETERO_GENERIC_ROUNDTRIP

relay.func @f(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = relay.floor %x : tensor<2x?xf32>
  %1 = relay.ceil %x : tensor<2x?xf32>
  %2 = relay.round %x : tensor<2x?xf32>
  %3 = relay.erf %x : tensor<2x?xf32>
  relay.return %0 : tensor<2x?xf32>
}

// CHECK:      %0 = relay.floor %x : tensor<2x?xf32>
// CHECK-NEXT: %1 = relay.ceil %x : tensor<2x?xf32>
// CHECK-NEXT: %2 = relay.round %x : tensor<2x?xf32>
// CHECK-NEXT: %3 = relay.erf %x : tensor<2x?xf32>

// CHECK-GENERIC: %2 = "relay.round"(%x) : (tensor<2x?xf32>) -> tensor<2x?xf32>
