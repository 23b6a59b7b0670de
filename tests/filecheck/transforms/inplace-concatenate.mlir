// RUN: hetero-opt %s -p inplace-concatenate --split-input-file | filecheck %s

// A fire module's concatenation: the kernel @cat_tir only concatenates its
// parameters along the channels of a batch of one, so its inputs become
// views of the result's bytes (%b at 2*3*3*4 = 72 bytes) and its call goes.
// The byte buffer takes the place of the first allocation, with the
// result's vdevice.
builtin.module {
  relay.func private @cat(%0: tensor<1x2x3x3xf32>, %1: tensor<1x4x3x3xf32>) -> tensor<1x6x3x3xf32>
      attributes {Primitive, lowered = @cat_tir} {
    %r = relay.concatenate %0, %1 {axis = 1} : (tensor<1x2x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x6x3x3xf32>
    relay.return %r : tensor<1x6x3x3xf32>
  }
  tir.prim_func @cat_tir(%a: memref<1x2x3x3xf32>, %b: memref<1x4x3x3xf32>, %c: memref<1x6x3x3xf32>) {
  }
  tir.prim_func @main_host(%x: memref<1x2x3x3xf32>, %out: memref<1x6x3x3xf32>) {
    %a = tir.alloc {vdevice = #target.vdevice<cpu:0>} : memref<1x2x3x3xf32>
    tir.call_extern "k"(%x, %a) : (memref<1x2x3x3xf32>, memref<1x2x3x3xf32>) -> ()
    %b = tir.alloc {vdevice = #target.vdevice<cpu:0>} : memref<1x4x3x3xf32>
    tir.call_extern "k"(%x, %b) : (memref<1x2x3x3xf32>, memref<1x4x3x3xf32>) -> ()
    %c = tir.alloc {vdevice = #target.vdevice<cpu:0>} : memref<1x6x3x3xf32>
    tir.call @cat_tir(%a, %b, %c) : (memref<1x2x3x3xf32>, memref<1x4x3x3xf32>, memref<1x6x3x3xf32>) -> ()
    tir.call_extern "k"(%c, %out) : (memref<1x6x3x3xf32>, memref<1x6x3x3xf32>) -> ()
  }
}

// CHECK-LABEL: tir.prim_func @main_host
// CHECK-NEXT:    %[[RAW:.*]] = tir.alloc {vdevice = #target.vdevice<cpu:0>} : memref<216xi8>
// CHECK-NEXT:    %[[OA:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[A:.*]] = memref.view %[[RAW]][%[[OA]]][] : memref<216xi8> to memref<1x2x3x3xf32>
// CHECK-NEXT:    tir.call_extern "k"(%x, %[[A]])
// CHECK-NEXT:    %[[OB:.*]] = arith.constant 72 : index
// CHECK-NEXT:    %[[B:.*]] = memref.view %[[RAW]][%[[OB]]][] : memref<216xi8> to memref<1x4x3x3xf32>
// CHECK-NEXT:    tir.call_extern "k"(%x, %[[B]])
// CHECK-NEXT:    %[[OC:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C:.*]] = memref.view %[[RAW]][%[[OC]]][] : memref<216xi8> to memref<1x6x3x3xf32>
// CHECK-NEXT:    tir.call_extern "k"(%[[C]], %out)
// CHECK-NEXT:  }

// -----

// Left as copies: a batch of two (each part is two runs of the result), an
// input that is a parameter, a result that is the output parameter, a
// result written before the concatenation, and a kernel that also applies
// a relu.
builtin.module {
  relay.func private @cat2(%0: tensor<2x2x3xf32>, %1: tensor<2x1x3xf32>) -> tensor<2x3x3xf32>
      attributes {Primitive, lowered = @cat2_tir} {
    %r = relay.concatenate %0, %1 {axis = 1} : (tensor<2x2x3xf32>, tensor<2x1x3xf32>) -> tensor<2x3x3xf32>
    relay.return %r : tensor<2x3x3xf32>
  }
  relay.func private @cat(%0: tensor<1x2x3xf32>, %1: tensor<1x1x3xf32>) -> tensor<1x3x3xf32>
      attributes {Primitive, lowered = @cat_tir} {
    %r = relay.concatenate %0, %1 {axis = 1} : (tensor<1x2x3xf32>, tensor<1x1x3xf32>) -> tensor<1x3x3xf32>
    relay.return %r : tensor<1x3x3xf32>
  }
  relay.func private @cat_relu(%0: tensor<1x2x3xf32>, %1: tensor<1x1x3xf32>) -> tensor<1x3x3xf32>
      attributes {Primitive, lowered = @cat_relu_tir} {
    %c = relay.concatenate %0, %1 {axis = 1} : (tensor<1x2x3xf32>, tensor<1x1x3xf32>) -> tensor<1x3x3xf32>
    %r = relay.relu %c : tensor<1x3x3xf32>
    relay.return %r : tensor<1x3x3xf32>
  }
  tir.prim_func @cat2_tir(%a: memref<2x2x3xf32>, %b: memref<2x1x3xf32>, %c: memref<2x3x3xf32>) {
  }
  tir.prim_func @cat_tir(%a: memref<1x2x3xf32>, %b: memref<1x1x3xf32>, %c: memref<1x3x3xf32>) {
  }
  tir.prim_func @cat_relu_tir(%a: memref<1x2x3xf32>, %b: memref<1x1x3xf32>, %c: memref<1x3x3xf32>) {
  }
  tir.prim_func @main_host(%x: memref<1x2x3xf32>, %y: memref<1x1x3xf32>, %u: memref<2x2x3xf32>,
                           %out: memref<1x3x3xf32>) {
    %a = tir.alloc : memref<2x2x3xf32>
    %b = tir.alloc : memref<2x1x3xf32>
    %c = tir.alloc : memref<2x3x3xf32>
    tir.call @cat2_tir(%a, %b, %c) : (memref<2x2x3xf32>, memref<2x1x3xf32>, memref<2x3x3xf32>) -> ()
    %d = tir.alloc : memref<1x3x3xf32>
    tir.call @cat_tir(%x, %y, %d) : (memref<1x2x3xf32>, memref<1x1x3xf32>, memref<1x3x3xf32>) -> ()
    %e = tir.alloc : memref<1x2x3xf32>
    %f = tir.alloc : memref<1x1x3xf32>
    tir.call @cat_tir(%e, %f, %out) : (memref<1x2x3xf32>, memref<1x1x3xf32>, memref<1x3x3xf32>) -> ()
    %h = tir.alloc : memref<1x3x3xf32>
    tir.call_extern "k"(%x, %h) : (memref<1x2x3xf32>, memref<1x3x3xf32>) -> ()
    tir.call @cat_tir(%e, %f, %h) : (memref<1x2x3xf32>, memref<1x1x3xf32>, memref<1x3x3xf32>) -> ()
    %g = tir.alloc : memref<1x3x3xf32>
    tir.call @cat_relu_tir(%e, %f, %g) : (memref<1x2x3xf32>, memref<1x1x3xf32>, memref<1x3x3xf32>) -> ()
  }
}

// CHECK-LABEL: tir.prim_func @main_host
// CHECK-NOT:     memref.view
// CHECK:         tir.call @cat2_tir
// CHECK:         tir.call @cat_tir(%x, %y
// CHECK:         tir.call @cat_tir({{.*}}, %out)
// CHECK:         tir.call @cat_tir({{.*}}, %h)
// CHECK:         tir.call @cat_relu_tir
