// RUN: hetero-opt %s -p 'annotate-target{compilers=cudnn}' | filecheck %s

// `compilers` restricts the kinds: the cublas composite is inlined back, the
// cudnn one is annotated.
builtin.module attributes {target.config = #target.config<[#target.target<"cuda">, #target.target<"cublas">, #target.target<"cudnn">]>} {
  relay.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %i: tensor<1x3x8x8xf32>, %k: tensor<4x3x3x3xf32>) -> tuple<tensor<4x16xf32>, tensor<1x4x6x6xf32>> {
    %f = relay.fn (%a: tensor<4x8xf32>, %b: tensor<16x8xf32>) -> tensor<4x16xf32> attributes {Composite = "cublas.dense"} {
      %d = relay.nn.dense %a, %b : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
      relay.return %d : tensor<4x16xf32>
    }
    %c = relay.call_indirect %f(%x, %w) : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    %g = relay.fn (%a: tensor<1x3x8x8xf32>, %b: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> attributes {Composite = "cudnn.conv2d"} {
      %v = relay.nn.conv2d %a, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
      relay.return %v : tensor<1x4x6x6xf32>
    }
    %e = relay.call_indirect %g(%i, %k) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
    %t = relay.tuple(%c, %e) : tuple<tensor<4x16xf32>, tensor<1x4x6x6xf32>>
    relay.return %t : tuple<tensor<4x16xf32>, tensor<1x4x6x6xf32>>
  }
}

// CHECK:      relay.func @main
// CHECK-NEXT:   %d = relay.nn.dense %x, %w :
// CHECK-NEXT:   %g = relay.fn {{.*}} attributes {Composite = "cudnn.conv2d"} {
// CHECK:        %e = relay.call_indirect %g(%i, %k) {relay.compiler = "cudnn"}
// CHECK-NEXT:   %t = relay.tuple(%d, %e)
