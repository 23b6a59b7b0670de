// RUN: hetero-opt %s -p lower-te | filecheck %s

// Integer elementwise arithmetic (signless integers: the signed ints of ONNX
// and NumPy): add, multiply, relu as arith.addi/muli/maxsi; divide truncates
// toward zero and guards the two divisors for which x86's idiv traps: 0
// gives 0, -1 gives the (wrapping) negation.
builtin.module {
  relay.func private @k(%x: tensor<6xi64> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}, %y: tensor<6xi64> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<6xi64> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive} {
    %0 = relay.add %x, %y : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>
    %1 = relay.multiply %x, %0 : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>
    %2 = relay.divide %1, %y : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>
    %3 = relay.relu %2 : tensor<6xi64>
    relay.return %3 : tensor<6xi64>
  }
  relay.func @main(%x: tensor<6xi64>, %y: tensor<6xi64>) -> tensor<6xi64> {
    %0 = relay.call @k(%x, %y) : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>
    relay.return %0 : tensor<6xi64>
  }
}

// CHECK:      tir.prim_func @k_tir(%0: memref<6xi64>, %1: memref<6xi64>, %2: memref<6xi64>)
// CHECK-DAG:    %[[MINUS_ONE:.*]] = arith.constant -1 : i64
// CHECK-DAG:    %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:    %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:        tir.for
// CHECK:          %[[SUM:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:     %[[PRODUCT:.*]] = arith.muli %{{.*}}, %[[SUM]] : i64
// CHECK-NEXT:     %[[Y:.*]] = memref.load %1
// CHECK-NEXT:     %[[BY_ZERO:.*]] = arith.cmpi eq, %[[Y]], %[[ZERO]] : i64
// CHECK-NEXT:     %[[BY_MINUS_ONE:.*]] = arith.cmpi eq, %[[Y]], %[[MINUS_ONE]] : i64
// CHECK-NEXT:     %[[TRAPS:.*]] = arith.ori %[[BY_ZERO]], %[[BY_MINUS_ONE]] : i1
// CHECK-NEXT:     %[[SAFE:.*]] = arith.select %[[TRAPS]], %[[ONE]], %[[Y]] : i64
// CHECK-NEXT:     %[[QUOTIENT:.*]] = arith.divsi %[[PRODUCT]], %[[SAFE]] : i64
// CHECK-NEXT:     %[[NEGATED:.*]] = arith.subi %[[ZERO]], %[[PRODUCT]] : i64
// CHECK-NEXT:     %[[NOT_ZERO:.*]] = arith.select %[[BY_MINUS_ONE]], %[[NEGATED]], %[[QUOTIENT]] : i64
// CHECK-NEXT:     %[[DIVIDED:.*]] = arith.select %[[BY_ZERO]], %[[ZERO]], %[[NOT_ZERO]] : i64
// CHECK-NEXT:     %[[RELU:.*]] = arith.maxsi %[[DIVIDED]], %[[ZERO]] : i64
// CHECK-NEXT:     memref.store %[[RELU]], %2
