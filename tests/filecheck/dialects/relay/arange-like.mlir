// RUN: HETERO_ROUNDTRIP
// RUN: HETERO_GENERIC_ROUNDTRIP

// relay.arange_like: `start + step * i` along `axis` of the operand (whose
// elements are not read), a 1-D tensor of `dtype`; a dynamic size passes
// through, the axis may count from the end.
relay.func @f(%x: tensor<?x5xi1>, %y: tensor<4x6xf32>) -> tensor<?xi64> {
  %0 = relay.arange_like %x {dtype = i64} : (tensor<?x5xi1>) -> tensor<?xi64>
  %1 = relay.arange_like %y {axis = -1 : i64, start = 2 : i64, step = 3 : i64, dtype = f32} : (tensor<4x6xf32>) -> tensor<6xf32>
  relay.return %0 : tensor<?xi64>
}

// CHECK:      %0 = relay.arange_like %x {dtype = i64} : (tensor<?x5xi1>) -> tensor<?xi64>
// CHECK-NEXT: %1 = relay.arange_like %y {axis = -1 : i64, start = 2 : i64, step = 3 : i64, dtype = f32} : (tensor<4x6xf32>) -> tensor<6xf32>

// CHECK-GENERIC: %0 = "relay.arange_like"(%x) <{dtype = i64}> : (tensor<?x5xi1>) -> tensor<?xi64>
