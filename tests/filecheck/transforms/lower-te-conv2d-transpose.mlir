// RUN: hetero-opt %s -p lower-te --split-input-file | filecheck %s

// relay.nn.conv2d_transpose on a CPU runs the conv2d schedule: the input
// spread out (a zero between pixels for stride 2) into a buffer, then a
// stride-1 conv2d padded by dilation * (kernel - 1) - padding with the
// weight flipped (tap 2 - ky) and its channels exchanged.
builtin.module {
  relay.func private @k(%x: tensor<1x2x3x3xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}, %w: tensor<2x1x3x3xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<1x1x6x6xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive} {
    %0 = relay.nn.conv2d_transpose %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>} : (tensor<1x2x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<1x1x6x6xf32>
    %1 = relay.relu %0 : tensor<1x1x6x6xf32>
    relay.return %1 : tensor<1x1x6x6xf32>
  }
  relay.func @main(%x: tensor<1x2x3x3xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x1x6x6xf32> {
    %0 = relay.call @k(%x, %w) : (tensor<1x2x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<1x1x6x6xf32>
    relay.return %0 : tensor<1x1x6x6xf32>
  }
}

// CHECK:      tir.prim_func @k_tir(%0: memref<1x2x3x3xf32>, %1: memref<2x1x3x3xf32>, %2: memref<1x1x6x6xf32>)
// CHECK:        %[[SPREAD:.*]] = tir.alloc : memref<1x2x5x5xf32>
// CHECK:          tir.for %[[X:.*]] = {{.*}} vectorized {
// CHECK-NEXT:       %[[IY:.*]] = arith.divsi %[[Y:.*]], %[[TWO:.*]] : index
// CHECK-NEXT:       %[[IX:.*]] = arith.divsi %[[X]], %[[TWO]] : index
// CHECK-NEXT:       %[[V:.*]] = memref.load %0[%{{.*}}, %{{.*}}, %[[IY]], %[[IX]]]
// CHECK:            %[[ON_GRID:.*]] = arith.andi
// CHECK-NEXT:       %[[S:.*]] = arith.select %[[ON_GRID]], %[[V]], %{{.*}} : f32
// CHECK-NEXT:       memref.store %[[S]], %[[SPREAD]]
// CHECK:        tir.alloc : memref<{{.*}}xf32, "local">
// CHECK:        arith.subi %{{.*}}, %{{.*}} : index
// CHECK:        memref.load %1[

// -----

// Padding beyond the window's reach (a 1x1 kernel cropped by 1): the
// gather form, each output element summing the input pixels whose window
// reaches it: (y + pt - ky * dh) a whole multiple of the stride inside the
// image.
builtin.module {
  relay.func private @k(%x: tensor<1x2x3x3xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}, %w: tensor<2x1x1x1xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<1x1x4x4xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive} {
    %0 = relay.nn.conv2d_transpose %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>} : (tensor<1x2x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x1x4x4xf32>
    %1 = relay.relu %0 : tensor<1x1x4x4xf32>
    relay.return %1 : tensor<1x1x4x4xf32>
  }
  relay.func @main(%x: tensor<1x2x3x3xf32>, %w: tensor<2x1x1x1xf32>) -> tensor<1x1x4x4xf32> {
    %0 = relay.call @k(%x, %w) : (tensor<1x2x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x1x4x4xf32>
    relay.return %0 : tensor<1x1x4x4xf32>
  }
}

// CHECK:      tir.prim_func @k_tir(%0: memref<1x2x3x3xf32>, %1: memref<2x1x1x1xf32>, %2: memref<1x1x4x4xf32>)
// CHECK-DAG:    %[[LIMIT:.*]] = arith.constant 5 : index
// CHECK-DAG:    %[[STRIDE:.*]] = arith.constant 2 : index
// CHECK-DAG:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:        tir.for %[[Y:.*]] = {{.*}} parallel {
// CHECK-NEXT:     tir.for %[[X:.*]] = {{.*}} {
// CHECK-NEXT:       memref.store {{.*}}, %2[%[[ZERO]], %[[ZERO]], %[[Y]], %[[X]]]
// CHECK-NEXT:       tir.for %[[C:.*]] = {{.*}} {
// CHECK-NEXT:         %[[ROW:.*]] = arith.addi %[[Y]], %[[ONE]] : index
// CHECK-NEXT:         %[[COL:.*]] = arith.addi %[[X]], %[[ONE]] : index
// CHECK:              arith.cmpi slt, %[[ROW]], %[[LIMIT]] : index
// CHECK:              %[[ROW_REM:.*]] = arith.remsi %[[ROW]], %[[STRIDE]] : index
// CHECK-NEXT:         arith.cmpi eq, %[[ROW_REM]], %[[ZERO]] : index
// CHECK-NEXT:         %[[COL_REM:.*]] = arith.remsi %[[COL]], %[[STRIDE]] : index
// CHECK-NEXT:         arith.cmpi eq, %[[COL_REM]], %[[ZERO]] : index
// CHECK:              scf.if %{{.*}} {
// CHECK-NEXT:           %[[IY:.*]] = arith.divsi %[[ROW]], %[[STRIDE]] : index
// CHECK-NEXT:           %[[IX:.*]] = arith.divsi %[[COL]], %[[STRIDE]] : index
// CHECK-NEXT:           %[[PIXEL:.*]] = memref.load %0[%[[ZERO]], %[[C]], %[[IY]], %[[IX]]]
// CHECK-NEXT:           %[[WEIGHT:.*]] = memref.load %1[%[[C]], %[[ZERO]], %[[ZERO]], %[[ZERO]]]
// CHECK-NEXT:           arith.mulf %[[PIXEL]], %[[WEIGHT]] : f32
// CHECK:        tir.for {{.*}} parallel {
// CHECK:            arith.cmpf ogt
