// RUN: hetero-opt %s -p 'merge-composite{compilers=cudnn}' | filecheck %s

// `compilers` restricts the kinds: only cudnn here, so the dense stays.
// Matches are found inside `if` branches and plain closures, never inside
// an existing Compiler function.
builtin.module attributes {target.config = #target.config<[#target.target<"cuda">, #target.target<"cublas">, #target.target<"cudnn">]>} {
  relay.func @main(%p: tensor<i1>, %x: tensor<1x3x8x8xf32>, %k: tensor<4x3x3x3xf32>, %a: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
    %c = relay.if %p : tensor<i1> -> tensor<1x4x6x6xf32> {
      %c1 = relay.nn.conv2d %x, %k : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
      relay.yield %c1 : tensor<1x4x6x6xf32>
    } else {
      %f = relay.fn (%y: tensor<1x3x8x8xf32>) -> tensor<1x4x6x6xf32> {
        %c2 = relay.nn.conv2d %y, %k : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
        relay.return %c2 : tensor<1x4x6x6xf32>
      }
      %c3 = relay.call_indirect %f(%x) : (tensor<1x3x8x8xf32>) -> tensor<1x4x6x6xf32>
      relay.yield %c3 : tensor<1x4x6x6xf32>
    }
    %lib = relay.fn (%y: tensor<1x3x8x8xf32>) -> tensor<1x4x6x6xf32> attributes {Compiler = "cudnn", global_symbol = "mine"} {
      %c4 = relay.nn.conv2d %y, %k : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
      relay.return %c4 : tensor<1x4x6x6xf32>
    }
    %d = relay.nn.dense %a, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    relay.return %d : tensor<4x16xf32>
  }
}

// CHECK-LABEL: relay.func @main
// CHECK:       relay.if %p
// CHECK-NEXT:    relay.fn {{.*}} attributes {Composite = "cudnn.conv2d"}
// CHECK:         relay.call_indirect {{.*}}(%x, %k)
// CHECK:       } else {
// CHECK-NEXT:    %f = relay.fn
// CHECK-NEXT:      relay.fn {{.*}} attributes {Composite = "cudnn.conv2d"}
// CHECK:         relay.call_indirect {{.*}}(%y, %k)
// CHECK:       %lib = relay.fn {{.*}} attributes {Compiler = "cudnn", global_symbol = "mine"} {
// CHECK-NEXT:    %c4 = relay.nn.conv2d %y{{.*}}, %k
// CHECK:       %d = relay.nn.dense %a, %w
