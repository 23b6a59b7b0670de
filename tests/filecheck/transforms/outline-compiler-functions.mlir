// RUN: hetero-opt %s -p outline-compiler-functions --split-input-file | filecheck %s

// A Compiler literal in call position becomes a global named by its
// global_symbol, keeping every attribute, its devices, and the composite
// literal inside its body; the call becomes a relay.call; the literal goes.
builtin.module {
  relay.func @main(%x: tensor<4xf32> {vdevice = #target.vdevice<cpu>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu>}) {
    %p = relay.fn (%a: tensor<4xf32> {vdevice = #target.vdevice<cpu>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu>}) attributes {vdevice = #target.vdevice<cpu>, Compiler = "blas", Primitive, Inline, global_symbol = "blas_main_0"} {
      %f = relay.fn (%b: tensor<4xf32>) -> tensor<4xf32> attributes {Composite = "blas.relu"} {
        %r = relay.relu %b : tensor<4xf32>
        relay.return %r : tensor<4xf32>
      }
      %c = relay.call_indirect %f(%a) : (tensor<4xf32>) -> tensor<4xf32>
      relay.return %c : tensor<4xf32>
    }
    %y = relay.call_indirect %p(%x) {vdevice = #target.vdevice<cpu>} : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %y : tensor<4xf32>
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   relay.func @blas_main_0(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu>}) attributes {Compiler = "blas", Primitive, Inline, global_symbol = "blas_main_0"} {
// CHECK-NEXT:     %f = relay.fn (%b: tensor<4xf32>) -> tensor<4xf32> attributes {Composite = "blas.relu"} {
// CHECK-NEXT:       %r = relay.relu %b : tensor<4xf32>
// CHECK-NEXT:       relay.return %r : tensor<4xf32>
// CHECK-NEXT:     }
// CHECK-NEXT:     %c = relay.call_indirect %f(%a) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     relay.return %c : tensor<4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   relay.func @main(%x: tensor<4xf32> {vdevice = #target.vdevice<cpu>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu>}) {
// CHECK-NEXT:     %y = relay.call @blas_main_0(%x) {vdevice = #target.vdevice<cpu>} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     relay.return %y : tensor<4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// -----

// Let-bound (in SSA: a literal called more than once) and shared symbols:
// one global per global_symbol, lifted once, every call rewritten.
builtin.module {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %p = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "blas", global_symbol = "shared"} {
      %r = relay.relu %a : tensor<4xf32>
      relay.return %r : tensor<4xf32>
    }
    %q = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "blas", global_symbol = "shared"} {
      %r = relay.relu %a : tensor<4xf32>
      relay.return %r : tensor<4xf32>
    }
    %y1 = relay.call_indirect %p(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %y2 = relay.call_indirect %p(%y1) : (tensor<4xf32>) -> tensor<4xf32>
    %y3 = relay.call_indirect %q(%y2) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %y3 : tensor<4xf32>
  }
}

// CHECK:      builtin.module {
// CHECK-NEXT:   relay.func @shared(%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "blas", global_symbol = "shared"} {
// CHECK-NEXT:     relay.relu
// CHECK-NEXT:     relay.return
// CHECK-NEXT:   }
// CHECK-NEXT:   relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %y1 = relay.call @shared(%x)
// CHECK-NEXT:     %y2 = relay.call @shared(%y1)
// CHECK-NEXT:     %y3 = relay.call @shared(%y2)
// CHECK-NEXT:     relay.return %y3
// CHECK-NEXT:   }
// CHECK-NEXT: }

// -----

// Not outlined: a literal that is never called (a value), a Composite or
// plain literal. A literal both called and used as a value keeps the value
// use. Literals in nested blocks are found.
builtin.module {
  relay.func @main(%c: tensor<i1>, %x: tensor<4xf32>) -> tuple<(tensor<4xf32>) -> tensor<4xf32>, (tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>> {
    %v = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "blas", global_symbol = "value_only"} {
      relay.return %a : tensor<4xf32>
    }
    %both = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "blas", global_symbol = "both"} {
      relay.return %a : tensor<4xf32>
    }
    %comp = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Composite = "blas.id"} {
      relay.return %a : tensor<4xf32>
    }
    %y = relay.call_indirect %both(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %z = relay.call_indirect %comp(%y) : (tensor<4xf32>) -> tensor<4xf32>
    %w = relay.if %c : tensor<i1> -> tensor<4xf32> {
      %n = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "cublas", global_symbol = "nested"} {
        relay.return %a : tensor<4xf32>
      }
      %u = relay.call_indirect %n(%z) : (tensor<4xf32>) -> tensor<4xf32>
      relay.yield %u : tensor<4xf32>
    } else {
      relay.yield %z : tensor<4xf32>
    }
    %t = relay.tuple(%v, %both, %w) : tuple<(tensor<4xf32>) -> tensor<4xf32>, (tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>>
    relay.return %t : tuple<(tensor<4xf32>) -> tensor<4xf32>, (tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>>
  }
}

// CHECK:      relay.func @both(
// CHECK:      relay.func @nested(
// CHECK:      relay.func @main(
// CHECK-NEXT:   %v = relay.fn {{.*}} global_symbol = "value_only"
// CHECK:        %both = relay.fn {{.*}} global_symbol = "both"
// CHECK:        %comp = relay.fn {{.*}} {Composite = "blas.id"}
// CHECK:        %y = relay.call @both(%x)
// CHECK-NEXT:   %z = relay.call_indirect %comp(%y)
// CHECK-NEXT:   %w = relay.if %c
// CHECK-NEXT:     %u = relay.call @nested(%z)
// CHECK:        %t = relay.tuple(%v, %both, %w)
