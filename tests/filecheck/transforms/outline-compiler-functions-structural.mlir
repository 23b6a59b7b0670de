// RUN: hetero-opt %s -p 'outline-compiler-functions{structural_cache=true}' | filecheck %s

// Collage's cache: structurally equal partitions share one global (named
// by the first one's global_symbol); a different body gets its own; a
// literal without a global_symbol gets `<kind>_<n>`.
builtin.module {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %p = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "blas", Primitive, global_symbol = "blas_main_0"} {
      %r = relay.relu %a : tensor<4xf32>
      relay.return %r : tensor<4xf32>
    }
    %y = relay.call_indirect %p(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %q = relay.fn (%b: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "blas", Primitive, global_symbol = "blas_main_1"} {
      %s = relay.relu %b : tensor<4xf32>
      relay.return %s : tensor<4xf32>
    }
    %z = relay.call_indirect %q(%y) : (tensor<4xf32>) -> tensor<4xf32>
    %o = relay.fn (%b: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "blas", Primitive, global_symbol = "blas_main_2"} {
      %s = relay.exp %b : tensor<4xf32>
      relay.return %s : tensor<4xf32>
    }
    %u = relay.call_indirect %o(%z) : (tensor<4xf32>) -> tensor<4xf32>
    %n = relay.fn (%b: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "blas", Primitive} {
      %s = relay.tanh %b : tensor<4xf32>
      relay.return %s : tensor<4xf32>
    }
    %v = relay.call_indirect %n(%u) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %v : tensor<4xf32>
  }
}

// CHECK:      relay.func @blas_main_0(
// CHECK-NEXT:   relay.relu
// CHECK:      relay.func @blas_main_2(
// CHECK-NEXT:   relay.exp
// CHECK:      relay.func @blas_0(%{{.*}}) -> tensor<4xf32> attributes {Compiler = "blas", Primitive, global_symbol = "blas_0"} {
// CHECK-NEXT:   relay.tanh
// CHECK:      relay.func @main(
// CHECK-NEXT:   %y = relay.call @blas_main_0(%x)
// CHECK-NEXT:   %z = relay.call @blas_main_0(%y)
// CHECK-NEXT:   %u = relay.call @blas_main_2(%z)
// CHECK-NEXT:   %v = relay.call @blas_0(%u)
// CHECK-NEXT:   relay.return %v
