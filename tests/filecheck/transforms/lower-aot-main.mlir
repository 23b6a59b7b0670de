// RUN: hetero-opt %s -p plan-devices,fuse-ops,lower-te,lower-aot-main | filecheck %s

// Two kernels on two CPU devices: the host function takes the relay
// parameter, then the constant (its value recorded in `hetero.constants`),
// then the output; the first kernel writes an intermediate, the device_copy
// is a copy loop nest into a second one, and the last kernel writes the output.
// The kernels the host calls are marked `no_inline`: compiled out of line.

builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%x: tensor<3x4xf32>) -> tensor<3x2xf32> {
    %w = relay.constant dense<[[1.0, 2.0, 3.0, 4.0], [0.5, 0.5, 0.5, 0.5]]> : tensor<2x4xf32>
    %0 = relay.nn.dense %x, %w : (tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<3x2xf32>
    %1 = relay.on_device %0 to #target.vdevice<cpu:0> fixed : tensor<3x2xf32>
    %2 = relay.device_copy %1 from #target.vdevice<cpu:0> to #target.vdevice<cpu:1> : tensor<3x2xf32>
    %3 = relay.nn.softmax %2 : tensor<3x2xf32>
    %r = relay.on_device %3 to #target.vdevice<cpu:1> fixed : tensor<3x2xf32>
    relay.return %r : tensor<3x2xf32>
  }
}

// CHECK:      relay.func @main(
// CHECK:      tir.prim_func @main_host(%0: memref<3x4xf32>, %1: memref<2x4xf32>, %2: memref<3x2xf32>) target #target.target<"llvm">
// CHECK-SAME:   attributes {tir.is_entry_func = true, hetero.constants = [dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01]]> : tensor<2x4xf32>]} {
// CHECK:        %[[T0:.*]] = tir.alloc {vdevice = #target.vdevice<cpu:0, {{.*}}>} : memref<3x2xf32>
// CHECK-NEXT:   tir.call @fused_nn_dense_tir(%0, %1, %[[T0]]) : (memref<3x4xf32>, memref<2x4xf32>, memref<3x2xf32>) -> ()
// CHECK-NEXT:   %[[T1:.*]] = tir.alloc {vdevice = #target.vdevice<cpu:1, {{.*}}>} : memref<3x2xf32>
// CHECK-NEXT:   tir.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK-NEXT:     tir.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:       %[[V:.*]] = memref.load %[[T0]][%[[I]], %[[J]]] : memref<3x2xf32>
// CHECK-NEXT:       memref.store %[[V]], %[[T1]][%[[I]], %[[J]]] : memref<3x2xf32>
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   tir.call @fused_nn_softmax_tir(%[[T1]], %2) : (memref<3x2xf32>, memref<3x2xf32>) -> ()
// CHECK-NEXT: }
// CHECK:      tir.prim_func @fused_nn_dense_tir(
// CHECK-SAME:   attributes {tir.noalias = true, no_inline}
// CHECK:      tir.prim_func @fused_nn_softmax_tir(
// CHECK-SAME:   attributes {tir.noalias = true, no_inline}
