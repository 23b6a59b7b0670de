// RUN: hetero-opt %s -p lower-te | filecheck %s

// Comparisons, logic and where inline into one expression: cmpf with the
// unordered "une" for not_equal (true where a NaN is), cmpi signed for
// ints, xori with true for logical_not, select for where.
builtin.module {
  relay.func private @k(%x: tensor<8xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}, %i: tensor<8xi64> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<8xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive} {
    %0 = relay.not_equal %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
    %1 = relay.less %i, %i : (tensor<8xi64>, tensor<8xi64>) -> tensor<8xi1>
    %2 = relay.logical_or %0, %1 : (tensor<8xi1>, tensor<8xi1>) -> tensor<8xi1>
    %3 = relay.logical_not %2 : tensor<8xi1>
    %4 = relay.where %3, %x, %x : (tensor<8xi1>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    relay.return %4 : tensor<8xf32>
  }
  relay.func @main(%x: tensor<8xf32>, %i: tensor<8xi64>) -> tensor<8xf32> {
    %0 = relay.call @k(%x, %i) : (tensor<8xf32>, tensor<8xi64>) -> tensor<8xf32>
    relay.return %0 : tensor<8xf32>
  }
}

// CHECK:      tir.prim_func @k_tir(%0: memref<8xf32>, %1: memref<8xi64>, %2: memref<8xf32>)
// CHECK:        %[[TRUE:.*]] = arith.constant true
// CHECK:        %[[NE:.*]] = arith.cmpf une, %{{.*}}, %{{.*}} : f32
// CHECK:        %[[LT:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:   %[[OR:.*]] = arith.ori %[[NE]], %[[LT]] : i1
// CHECK-NEXT:   %[[NOT:.*]] = arith.xori %[[OR]], %[[TRUE]] : i1
// CHECK:        %[[R:.*]] = arith.select %[[NOT]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:   memref.store %[[R]], %2
