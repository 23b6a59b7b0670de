// RUN: hetero-opt %s -p lower-te | filecheck %s

// relay.nn.layer_norm is one kernel: a parallel loop over the rows; per row
// one vectorized pass sums d = x - x[row, 0] and d² into 16 partial sums
// each (whole vectors of 16 lanes, then the 5 left of 37), halved to one
// (8, 4, 2, 1 lanes); then one vectorized pass stores
// (d - mean(d)) * rstd * gamma + beta through the fused relu.
builtin.module {
  relay.func private @k(%x: tensor<6x37xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}, %g: tensor<37xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}, %b: tensor<37xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<6x37xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive} {
    %0 = relay.nn.layer_norm %x, %g, %b : (tensor<6x37xf32>, tensor<37xf32>, tensor<37xf32>) -> tensor<6x37xf32>
    %1 = relay.relu %0 : tensor<6x37xf32>
    relay.return %1 : tensor<6x37xf32>
  }
  relay.func @main(%x: tensor<6x37xf32>, %g: tensor<37xf32>, %b: tensor<37xf32>) -> tensor<6x37xf32> {
    %0 = relay.call @k(%x, %g, %b) : (tensor<6x37xf32>, tensor<37xf32>, tensor<37xf32>) -> tensor<6x37xf32>
    relay.return %0 : tensor<6x37xf32>
  }
}

// CHECK:      tir.prim_func @k_tir(%0: memref<6x37xf32>, %1: memref<37xf32>, %2: memref<37xf32>, %3: memref<6x37xf32>)
// CHECK:        tir.for %[[ROW:.*]] = {{.*}} parallel {
// CHECK-NEXT:     %[[SHIFT:.*]] = memref.load %0[%[[ROW]], %{{.*}}] : memref<6x37xf32>
// CHECK-NEXT:     %[[SUMS:.*]] = tir.alloc : memref<16xf32, "local">
// CHECK-NEXT:     %[[SQUARES:.*]] = tir.alloc : memref<16xf32, "local">
// CHECK:          tir.for {{.*}} vectorized {
// CHECK:            %[[X:.*]] = memref.load %0[%[[ROW]], %{{.*}}] : memref<6x37xf32>
// CHECK-NEXT:       %[[D:.*]] = arith.subf %[[X]], %[[SHIFT]] : f32
// CHECK-NEXT:       %[[D2:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK:          tir.for %{{.*}} = %{{.*}} to %[[FIVE:.*]] step %{{.*}} vectorized {
// CHECK:          tir.for %{{.*}} = %{{.*}} to %[[EIGHT:.*]] step %{{.*}} vectorized {
// CHECK:          tir.for %{{.*}} = %{{.*}} to %[[FOUR:.*]] step %{{.*}} vectorized {
// CHECK:          %[[MEAN:.*]] = arith.divf
// CHECK:          math.sqrt
// CHECK-NEXT:     %[[RSTD:.*]] = arith.divf
// CHECK-NEXT:     tir.for %[[P:.*]] = {{.*}} vectorized {
// CHECK-NEXT:       %[[Y:.*]] = memref.load %0[%[[ROW]], %[[P]]] : memref<6x37xf32>
// CHECK-NEXT:       %[[E:.*]] = arith.subf %[[Y]], %[[SHIFT]] : f32
// CHECK-NEXT:       %[[C:.*]] = arith.subf %[[E]], %[[MEAN]] : f32
// CHECK-NEXT:       %[[N:.*]] = arith.mulf %[[C]], %[[RSTD]] : f32
// CHECK-NEXT:       %[[G:.*]] = memref.load %1[%[[P]]] : memref<37xf32>
// CHECK-NEXT:       %[[S:.*]] = arith.mulf %[[N]], %[[G]] : f32
// CHECK-NEXT:       %[[B:.*]] = memref.load %2[%[[P]]] : memref<37xf32>
// CHECK-NEXT:       %[[V:.*]] = arith.addf %[[S]], %[[B]] : f32
// CHECK-NEXT:       %[[POSITIVE:.*]] = arith.cmpf ogt, %[[V]]
// CHECK-NEXT:       %[[R:.*]] = arith.select %[[POSITIVE]], %[[V]]
// CHECK-NEXT:       memref.store %[[R]], %3[%[[ROW]], %[[P]]] : memref<6x37xf32>
