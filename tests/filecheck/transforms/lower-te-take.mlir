// RUN: hetero-opt %s -p lower-te | filecheck %s

// relay.take reads the index element once per output element, counts a
// negative one from the end and clamps it into the axis: the data is
// never read out of bounds.  An embedding lookup's row is the vectorized
// innermost loop, its index the same for every lane.
builtin.module {
  relay.func private @k(%w: tensor<100x64xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}, %i: tensor<2x7xi32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<2x7x64xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive} {
    %0 = relay.take %w, %i : (tensor<100x64xf32>, tensor<2x7xi32>) -> tensor<2x7x64xf32>
    relay.return %0 : tensor<2x7x64xf32>
  }
  relay.func @main(%w: tensor<100x64xf32>, %i: tensor<2x7xi32>) -> tensor<2x7x64xf32> {
    %0 = relay.call @k(%w, %i) : (tensor<100x64xf32>, tensor<2x7xi32>) -> tensor<2x7x64xf32>
    relay.return %0 : tensor<2x7x64xf32>
  }
}

// CHECK:      tir.prim_func @k_tir(%0: memref<100x64xf32>, %1: memref<2x7xi32>, %2: memref<2x7x64xf32>)
// CHECK-DAG:    %[[LAST:.*]] = arith.constant 99 : index
// CHECK-DAG:    %[[EXTENT:.*]] = arith.constant 100 : index
// CHECK-DAG:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:        tir.for %[[B:.*]] = {{.*}} parallel {
// CHECK-NEXT:     tir.for %[[S:.*]] = {{.*}} {
// CHECK-NEXT:       tir.for %[[C:.*]] = {{.*}} vectorized {
// CHECK-NEXT:         %[[RAW:.*]] = memref.load %1[%[[B]], %[[S]]] : memref<2x7xi32>
// CHECK-NEXT:         %[[I:.*]] = arith.index_cast %[[RAW]] : i32 to index
// CHECK-NEXT:         %[[NEGATIVE:.*]] = arith.cmpi slt, %[[I]], %[[ZERO]] : index
// CHECK-NEXT:         %[[FROM_END:.*]] = arith.addi %[[I]], %[[EXTENT]] : index
// CHECK-NEXT:         %[[WRAPPED:.*]] = arith.select %[[NEGATIVE]], %[[FROM_END]], %[[I]] : index
// CHECK-NEXT:         %[[LOW:.*]] = arith.maxsi %[[WRAPPED]], %[[ZERO]] : index
// CHECK-NEXT:         %[[ROW:.*]] = arith.minsi %[[LOW]], %[[LAST]] : index
// CHECK-NEXT:         %[[V:.*]] = memref.load %0[%[[ROW]], %[[C]]] : memref<100x64xf32>
// CHECK-NEXT:         memref.store %[[V]], %2[%[[B]], %[[S]], %[[C]]] : memref<2x7x64xf32>
