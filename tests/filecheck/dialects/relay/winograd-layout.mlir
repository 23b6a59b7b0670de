// RUN: hetero-opt %s | filecheck %s
// RUN: hetero-opt %s --print-op-generic | hetero-opt | filecheck %s

// A 3x3 weight in the Winograd domain of F(2x2, 3x3) (16 positions) and of
// F(4x4, 3x3) (36), 20 output channels in blocks of 16 (the last block zero
// past channel 20): conv2d reads them as the OIHW weight they hold, so the
// result type is that of a 20-channel 3x3 conv2d.
// CHECK-LABEL: relay.func @winograd
// CHECK:         %0 = relay.nn.conv2d %x, %u2 {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "winograd2_OI16o", channels = 20 : i64} : (tensor<1x4x9x9xf32>, tensor<16x2x4x16xf32>) -> tensor<1x20x9x9xf32>
// CHECK:         %1 = relay.nn.conv2d %x, %u4 {kernel_layout = "winograd4_OI16o", channels = 20 : i64} : (tensor<1x4x9x9xf32>, tensor<36x2x4x16xf32>) -> tensor<1x20x7x7xf32>
relay.func @winograd(%x: tensor<1x4x9x9xf32>, %u2: tensor<16x2x4x16xf32>, %u4: tensor<36x2x4x16xf32>) -> tensor<1x20x7x7xf32> {
  %0 = relay.nn.conv2d %x, %u2 {padding = array<i64: 1, 1, 1, 1>, kernel_layout = "winograd2_OI16o", channels = 20 : i64} : (tensor<1x4x9x9xf32>, tensor<16x2x4x16xf32>) -> tensor<1x20x9x9xf32>
  %1 = relay.nn.conv2d %x, %u4 {kernel_layout = "winograd4_OI16o", channels = 20 : i64} : (tensor<1x4x9x9xf32>, tensor<36x2x4x16xf32>) -> tensor<1x20x7x7xf32>
  relay.return %1 : tensor<1x20x7x7xf32>
}
