// RUN: hetero-opt %s -p lower-te | filecheck %s

// relay.cast as NumPy's astype: float to int toward zero (fptosi), a
// narrower int truncated, nonzero to true, true to 1.0 (uitofp of i1).
builtin.module {
  relay.func private @k(%x: tensor<8xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}, %i: tensor<8xi64> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<8xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive} {
    %0 = relay.cast %x {dtype = i32} : (tensor<8xf32>) -> tensor<8xi32>
    %1 = relay.cast %i {dtype = i32} : (tensor<8xi64>) -> tensor<8xi32>
    %2 = relay.add %0, %1 : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
    %3 = relay.cast %2 {dtype = i1} : (tensor<8xi32>) -> tensor<8xi1>
    %4 = relay.cast %3 {dtype = f32} : (tensor<8xi1>) -> tensor<8xf32>
    relay.return %4 : tensor<8xf32>
  }
  relay.func @main(%x: tensor<8xf32>, %i: tensor<8xi64>) -> tensor<8xf32> {
    %0 = relay.call @k(%x, %i) : (tensor<8xf32>, tensor<8xi64>) -> tensor<8xf32>
    relay.return %0 : tensor<8xf32>
  }
}

// CHECK:      tir.prim_func @k_tir(%0: memref<8xf32>, %1: memref<8xi64>, %2: memref<8xf32>)
// CHECK:        %[[X:.*]] = memref.load %0
// CHECK-NEXT:   %[[XI:.*]] = arith.fptosi %[[X]] : f32 to i32
// CHECK-NEXT:   %[[I:.*]] = memref.load %1
// CHECK-NEXT:   %[[II:.*]] = arith.trunci %[[I]] : i64 to i32
// CHECK-NEXT:   %[[SUM:.*]] = arith.addi %[[XI]], %[[II]] : i32
// CHECK-NEXT:   %[[B:.*]] = arith.cmpi ne, %[[SUM]], %{{.*}} : i32
// CHECK-NEXT:   %[[F:.*]] = arith.uitofp %[[B]] : i1 to f32
// CHECK-NEXT:   memref.store %[[F]], %2
