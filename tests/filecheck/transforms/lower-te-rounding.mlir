// RUN: hetero-opt %s -p lower-te | filecheck %s

// floor, ceil, round (halves to even) and erf as the math dialect's ops.
builtin.module {
  relay.func private @k(%x: tensor<8xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<8xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive} {
    %0 = relay.floor %x : tensor<8xf32>
    %1 = relay.ceil %0 : tensor<8xf32>
    %2 = relay.round %1 : tensor<8xf32>
    %3 = relay.erf %2 : tensor<8xf32>
    relay.return %3 : tensor<8xf32>
  }
  relay.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    %0 = relay.call @k(%x) : (tensor<8xf32>) -> tensor<8xf32>
    relay.return %0 : tensor<8xf32>
  }
}

// CHECK:      %[[X:.*]] = memref.load %0
// CHECK-NEXT: %[[F:.*]] = math.floor %[[X]] : f32
// CHECK-NEXT: %[[C:.*]] = math.ceil %[[F]] : f32
// CHECK-NEXT: %[[R:.*]] = math.roundeven %[[C]] : f32
// CHECK-NEXT: %[[E:.*]] = math.erf %[[R]] : f32
// CHECK-NEXT: memref.store %[[E]], %1
