// RUN: hetero-opt %s -p fuse-ops --split-input-file | filecheck %s

// conv2d + bias_add + relu become one kernel; the relu result is also used by
// the add, so it ends the first group and the second kernel takes it as a
// parameter.  Unplanned module: all ops count as one device, no vdevice.
builtin.module {
  relay.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
    %0 = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
    %1 = relay.nn.bias_add %0, %b : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
    %2 = relay.relu %1 : tensor<1x2x4x4xf32>
    %3 = relay.nn.conv2d %2, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
    %4 = relay.add %3, %2 : tensor<1x2x4x4xf32>
    relay.return %4 : tensor<1x2x4x4xf32>
  }
}

// CHECK:      relay.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
// CHECK-NEXT:   %0 = relay.call @fused_nn_conv2d_nn_bias_add_relu(%x, %w, %b) : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:   %1 = relay.call @fused_nn_conv2d_add(%0, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:   relay.return %1 : tensor<1x2x4x4xf32>
// CHECK:      relay.func private @fused_nn_conv2d_nn_bias_add_relu(%0: tensor<1x2x4x4xf32>, %1: tensor<2x2x3x3xf32>, %2: tensor<2xf32>) -> tensor<1x2x4x4xf32> attributes {Primitive} {
// CHECK-NEXT:   %3 = relay.nn.conv2d %0, %1
// CHECK-NEXT:   %4 = relay.nn.bias_add %3, %2
// CHECK-NEXT:   %5 = relay.relu %4
// CHECK-NEXT:   relay.return %5
// CHECK:      relay.func private @fused_nn_conv2d_add(%0: tensor<1x2x4x4xf32>, %1: tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32> attributes {Primitive} {
// CHECK-NEXT:   %2 = relay.nn.conv2d %0, %1
// CHECK-NEXT:   %3 = relay.add %2, %0

// -----

// Planned: a device_copy is a boundary, each kernel carries its device on
// parameters, result and call; the opaque softmax stands alone (nothing
// fuses into or after it).
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%x: tensor<2x4xf32> {vdevice = #target.vdevice<cpu>}, %w: tensor<3x4xf32> {vdevice = #target.vdevice<cpu>}) -> (tensor<2x3xf32> {vdevice = #target.vdevice<cuda>}) {
    %0 = relay.nn.dense %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
    %1 = relay.relu %0 {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>} : tensor<2x3xf32>
    %2 = relay.device_copy %1 from #target.vdevice<cpu:0, target = #target.target<"llvm">> to #target.vdevice<cuda:0, target = #target.target<"cuda">> {vdevice = #target.vdevice<cuda:0, target = #target.target<"cuda">>} : tensor<2x3xf32>
    %3 = relay.exp %2 {vdevice = #target.vdevice<cuda:0, target = #target.target<"cuda">>} : tensor<2x3xf32>
    %4 = relay.nn.softmax %3 {vdevice = #target.vdevice<cuda:0, target = #target.target<"cuda">>} : tensor<2x3xf32>
    %5 = relay.negative %4 {vdevice = #target.vdevice<cuda:0, target = #target.target<"cuda">>} : tensor<2x3xf32>
    relay.return %5 : tensor<2x3xf32>
  }
}

// CHECK:      %0 = relay.call @fused_nn_dense_relu(%x, %w) {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}
// CHECK-NEXT: %1 = relay.device_copy %0
// CHECK-NEXT: %2 = relay.call @fused_exp(%1) {vdevice = #target.vdevice<cuda:0, target = #target.target<"cuda">>}
// CHECK-NEXT: %3 = relay.call @fused_nn_softmax(%2)
// CHECK-NEXT: %4 = relay.call @fused_negative(%3)
// CHECK:      relay.func private @fused_nn_dense_relu(%0: tensor<2x4xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}, %1: tensor<3x4xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<2x3xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive}
