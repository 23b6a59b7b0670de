// RUN: HETERO_ROUNDTRIP
// RUN: HETERO_GENERIC_ROUNDTRIP

// relay.cast: the shape kept, the element type `dtype`.
relay.func @f(%x: tensor<2x?xi64>, %y: tensor<4xf32>) -> tensor<2x?xf32> {
  %0 = relay.cast %x {dtype = f32} : (tensor<2x?xi64>) -> tensor<2x?xf32>
  %1 = relay.cast %y {dtype = i1} : (tensor<4xf32>) -> tensor<4xi1>
  %2 = relay.cast %y {dtype = ui8} : (tensor<4xf32>) -> tensor<4xui8>
  relay.return %0 : tensor<2x?xf32>
}

// CHECK:      %0 = relay.cast %x {dtype = f32} : (tensor<2x?xi64>) -> tensor<2x?xf32>
// CHECK-NEXT: %1 = relay.cast %y {dtype = i1} : (tensor<4xf32>) -> tensor<4xi1>
// CHECK-NEXT: %2 = relay.cast %y {dtype = ui8} : (tensor<4xf32>) -> tensor<4xui8>

// CHECK-GENERIC: %0 = "relay.cast"(%x) <{dtype = f32}> : (tensor<2x?xi64>) -> tensor<2x?xf32>
