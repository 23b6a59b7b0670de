// RUN: hetero-opt %s -p lower-te | filecheck %s

// 3-D windows have no CPU schedule: the direct nest, one parallel loop over
// the output, inner loops over the channels and the three window axes, a
// tap read only where all three of its input coordinates are inside.
builtin.module {
  relay.func private @k(%x: tensor<1x2x4x4x4xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}, %w: tensor<3x2x2x2x2xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<1x3x2x2x2xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive} {
    %0 = relay.nn.conv3d %x, %w {strides = array<i64: 2, 2, 2>} : (tensor<1x2x4x4x4xf32>, tensor<3x2x2x2x2xf32>) -> tensor<1x3x2x2x2xf32>
    %1 = relay.nn.max_pool3d %0 {pool_size = array<i64: 2, 2, 2>, padding = array<i64: 0, 0, 0, 1, 1, 1>} : (tensor<1x3x2x2x2xf32>) -> tensor<1x3x2x2x2xf32>
    relay.return %1 : tensor<1x3x2x2x2xf32>
  }
  relay.func @main(%x: tensor<1x2x4x4x4xf32>, %w: tensor<3x2x2x2x2xf32>) -> tensor<1x3x2x2x2xf32> {
    %0 = relay.call @k(%x, %w) : (tensor<1x2x4x4x4xf32>, tensor<3x2x2x2x2xf32>) -> tensor<1x3x2x2x2xf32>
    relay.return %0 : tensor<1x3x2x2x2xf32>
  }
}

// CHECK:      tir.prim_func @k_tir(%0: memref<1x2x4x4x4xf32>, %1: memref<3x2x2x2x2xf32>, %2: memref<1x3x2x2x2xf32>)
// CHECK:        %[[CONV:.*]] = tir.alloc : memref<1x3x2x2x2xf32>
// CHECK:        tir.for %[[O:.*]] = {{.*}} parallel {
// CHECK-NEXT:     tir.for %[[D:.*]] = {{.*}} {
// CHECK-NEXT:       tir.for %[[H:.*]] = {{.*}} {
// CHECK-NEXT:         tir.for %[[W:.*]] = {{.*}} {
// CHECK-NEXT:           memref.store %{{.*}}, %[[CONV]][%{{.*}}, %[[O]], %[[D]], %[[H]], %[[W]]]
// CHECK-NEXT:           tir.for %[[C:.*]] = {{.*}} {
// CHECK-NEXT:             tir.for %[[KD:.*]] = {{.*}} {
// CHECK-NEXT:               tir.for %[[KH:.*]] = {{.*}} {
// CHECK-NEXT:                 tir.for %[[KW:.*]] = {{.*}} {
// CHECK-COUNT-3:                arith.cmpi slt
// CHECK:                        scf.if
// CHECK-NEXT:                     memref.load %0[%{{.*}}, %[[C]], %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x2x4x4x4xf32>
// CHECK-NEXT:                     memref.load %1[%[[O]], %[[C]], %[[KD]], %[[KH]], %[[KW]]] : memref<3x2x2x2x2xf32>
// CHECK:        tir.for {{.*}} parallel {
// CHECK:          memref.store %{{.*}}, %2
// CHECK:          arith.maximumf
