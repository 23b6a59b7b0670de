// RUN: hetero-opt %s -p simplify-activations --split-input-file | filecheck %s

// SiLU as PyTorch exports it, in either operand order: one relay.silu, the
// sigmoid gone; a device on the product stays on the silu.
// CHECK-LABEL: relay.func @silu
// CHECK-NEXT:    %0 = relay.silu %x : tensor<1x4x3x3xf32>
// CHECK-NEXT:    %1 = relay.silu %x {vdevice = #target.vdevice<cpu>} : tensor<1x4x3x3xf32>
// CHECK-NEXT:    %2 = relay.add %0, %1
// CHECK-NOT:     relay.sigmoid
relay.func @silu(%x: tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %0 = relay.sigmoid %x : tensor<1x4x3x3xf32>
  %1 = relay.multiply %x, %0 : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %2 = relay.sigmoid %x : tensor<1x4x3x3xf32>
  %3 = relay.multiply %2, %x {vdevice = #target.vdevice<cpu>} : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %4 = relay.add %1, %3 : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  relay.return %4 : tensor<1x4x3x3xf32>
}

// -----

// Left alone: products with a gate of another value (of the same shape or
// broadcast); a sigmoid used elsewhere too stays (the product becomes silu).
// CHECK-LABEL: relay.func @others
// CHECK-NEXT:    %0 = relay.sigmoid %y
// CHECK-NEXT:    %1 = relay.multiply %x, %0
// CHECK-NEXT:    %2 = relay.sigmoid %x
// CHECK-NEXT:    %3 = relay.silu %x
// CHECK-NEXT:    %4 = relay.add %3, %2
// CHECK-NEXT:    %5 = relay.sigmoid %s
// CHECK-NEXT:    %6 = relay.multiply %x, %5
relay.func @others(%x: tensor<4xf32>, %y: tensor<4xf32>, %s: tensor<1xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>, tensor<4xf32>> {
  %0 = relay.sigmoid %y : tensor<4xf32>
  %1 = relay.multiply %x, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.sigmoid %x : tensor<4xf32>
  %3 = relay.multiply %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = relay.add %3, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = relay.sigmoid %s : tensor<1xf32>
  %6 = relay.multiply %x, %5 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %7 = relay.tuple(%1, %4, %6) : tuple<tensor<4xf32>, tensor<4xf32>, tensor<4xf32>>
  relay.return %7 : tuple<tensor<4xf32>, tensor<4xf32>, tensor<4xf32>>
}
