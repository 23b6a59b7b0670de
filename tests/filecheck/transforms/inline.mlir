// RUN: hetero-opt %s -p inline --split-input-file | filecheck %s

// An Inline helper calling another, called in a branch and after it: every
// call becomes the helper's body; the private helper is erased, the public
// one stays.
builtin.module {
  relay.func private @twice(%x: tensor<4xf32>) -> tensor<4xf32> attributes {Inline} {
    %y = relay.call @negate(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %r = relay.add %y, %y : tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
  relay.func @negate(%x: tensor<4xf32>) -> tensor<4xf32> attributes {Inline} {
    %r = relay.negative %x : tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
  relay.func @main(%x: tensor<4xf32>, %c: tensor<i1>) -> tensor<4xf32> {
    %r = relay.if %c : tensor<i1> -> tensor<4xf32> {
      %a = relay.call @twice(%x) : (tensor<4xf32>) -> tensor<4xf32>
      relay.yield %a : tensor<4xf32>
    } else {
      relay.yield %x : tensor<4xf32>
    }
    %s = relay.call @negate(%r) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %s : tensor<4xf32>
  }
}

// CHECK-NOT:   @twice
// CHECK:       relay.func @negate(%x: tensor<4xf32>) -> tensor<4xf32> attributes {Inline} {
// CHECK-NEXT:    %r = relay.negative %x : tensor<4xf32>
// CHECK-NEXT:    relay.return %r : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: relay.func @main
// CHECK:         relay.if %c
// CHECK-NEXT:      %[[N:.*]] = relay.negative %x : tensor<4xf32>
// CHECK-NEXT:      %[[A:.*]] = relay.add %[[N]], %[[N]] : tensor<4xf32>
// CHECK-NEXT:      relay.yield %[[A]] : tensor<4xf32>
// CHECK:         %[[S:.*]] = relay.negative %r : tensor<4xf32>
// CHECK-NEXT:    relay.return %[[S]] : tensor<4xf32>
// CHECK-NOT:   relay.call

// -----

// Without Inline functions the module is unchanged.
relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = relay.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  relay.return %r : tensor<4xf32>
}
relay.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  relay.return %x : tensor<4xf32>
}

// CHECK-LABEL: relay.func @main
// CHECK-NEXT:    %r = relay.call @f(%x)
