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

// -----

// Closures that are only applied are beta-reduced: each call becomes a copy
// of the body (captured values as they are, parameters bound to the
// arguments), innermost first; a closure passed to a closure is reduced once
// the outer one is; the literals are erased.
relay.func @closures(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %f = relay.fn (%p: tensor<4xf32>) -> tensor<4xf32> {
    %g = relay.fn (%q: tensor<4xf32>) -> tensor<4xf32> {
      %e = relay.exp %q : tensor<4xf32>
      relay.return %e : tensor<4xf32>
    }
    %a = relay.add %p, %y : tensor<4xf32>
    %b = relay.call_indirect %g(%a) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %b : tensor<4xf32>
  }
  %0 = relay.call_indirect %f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.call_indirect %f(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %h = relay.fn (%k: (tensor<4xf32>) -> tensor<4xf32>, %v: tensor<4xf32>) -> tensor<4xf32> {
    %r = relay.call_indirect %k(%v) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
  %n = relay.fn (%m: tensor<4xf32>) -> tensor<4xf32> {
    %r = relay.negative %m : tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
  %2 = relay.call_indirect %h(%n, %1) : ((tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  relay.return %2 : tensor<4xf32>
}

// CHECK-LABEL: relay.func @closures
// CHECK-NEXT:    %[[A0:.*]] = relay.add %x, %y : tensor<4xf32>
// CHECK-NEXT:    %[[E0:.*]] = relay.exp %[[A0]] : tensor<4xf32>
// CHECK-NEXT:    %[[A1:.*]] = relay.add %[[E0]], %y : tensor<4xf32>
// CHECK-NEXT:    %[[E1:.*]] = relay.exp %[[A1]] : tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = relay.negative %[[E1]] : tensor<4xf32>
// CHECK-NEXT:    relay.return %[[R]] : tensor<4xf32>

// -----

// Kept: a closure used other than as a callee, a Composite literal (BYOC's),
// one with a placed parameter, one whose call is placed.
relay.func @kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %f = relay.fn (%p: tensor<4xf32>) -> tensor<4xf32> {
    relay.return %p : tensor<4xf32>
  }
  %t = relay.tuple(%f) : tuple<(tensor<4xf32>) -> tensor<4xf32>>
  %c = relay.fn (%p: tensor<4xf32>) -> tensor<4xf32> attributes {Composite = "add"} {
    %r = relay.add %p, %p : tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
  %0 = relay.call_indirect %c(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %d = relay.fn (%p: tensor<4xf32> {vdevice = #target.vdevice<cpu:1>}) -> tensor<4xf32> {
    relay.return %p : tensor<4xf32>
  }
  %1 = relay.call_indirect %d(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %e = relay.fn (%p: tensor<4xf32>) -> tensor<4xf32> {
    relay.return %p : tensor<4xf32>
  }
  %2 = relay.call_indirect %e(%1) {vdevice = #target.vdevice<cpu:1>} : (tensor<4xf32>) -> tensor<4xf32>
  relay.return %2 : tensor<4xf32>
}

// CHECK-LABEL: relay.func @kept
// CHECK-COUNT-4: relay.fn
// CHECK-NOT:     relay.fn
