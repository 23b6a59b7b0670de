// RUN: hetero-opt %s -p lower-te,lower-aot-main,plan-memory | filecheck %s

// An entry function of dynamic shapes (docs/dynamic-shapes.md): the host
// function takes dynamic memrefs, sizes each intermediate by the shape
// functions from its parameters' sizes (`memref.dim`), allocated per call
// (plan-memory's arena is for static buffers), and calls the kernels.
#cpu = #target.vdevice<cpu:0, target = #target.target<"llvm">>
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func private @k(%x: tensor<1x?xf32> {vdevice = #cpu}) -> (tensor<?xf32> {vdevice = #cpu}) attributes {Primitive} {
    %0 = relay.reshape %x {newshape = array<i64: -1>} : (tensor<1x?xf32>) -> tensor<?xf32>
    relay.return %0 : tensor<?xf32>
  }
  relay.func private @e(%x: tensor<?xf32> {vdevice = #cpu}) -> (tensor<?xf32> {vdevice = #cpu}) attributes {Primitive} {
    %0 = relay.exp %x : tensor<?xf32>
    relay.return %0 : tensor<?xf32>
  }
  relay.func @main(%x: tensor<1x?xf32> {vdevice = #cpu}) -> (tensor<?xf32> {vdevice = #cpu}) {
    %0 = relay.call @k(%x) : (tensor<1x?xf32>) -> tensor<?xf32>
    %1 = relay.call @e(%0) : (tensor<?xf32>) -> tensor<?xf32>
    relay.return %1 : tensor<?xf32>
  }
}

// CHECK:      tir.prim_func @main_host(%0: memref<1x?xf32>, %1: memref<?xf32>)
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:   %[[S:.*]] = memref.dim %0, %[[ONE]] : memref<1x?xf32>
// CHECK-NEXT:   %[[T:.*]] = tir.alloc(%[[S]]) : memref<?xf32>
// CHECK-NEXT:   tir.call @k_tir(%0, %[[T]]) : (memref<1x?xf32>, memref<?xf32>) -> ()
// CHECK-NEXT:   tir.call @e_tir(%[[T]], %1) : (memref<?xf32>, memref<?xf32>) -> ()
