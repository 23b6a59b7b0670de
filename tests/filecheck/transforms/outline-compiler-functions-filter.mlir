// RUN: hetero-opt %s -p 'outline-compiler-functions{compiler=cublas}' | filecheck %s

// With a compiler filter, literals of other kinds are untouched.
builtin.module {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %p = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "blas", global_symbol = "blas_main_0"} {
      relay.return %a : tensor<4xf32>
    }
    %q = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "cublas", global_symbol = "cublas_main_0"} {
      relay.return %a : tensor<4xf32>
    }
    %y = relay.call_indirect %p(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %z = relay.call_indirect %q(%y) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %z : tensor<4xf32>
  }
}

// CHECK:      relay.func @cublas_main_0(
// CHECK:      relay.func @main(
// CHECK-NEXT:   %p = relay.fn {{.*}} attributes {Compiler = "blas", global_symbol = "blas_main_0"}
// CHECK:        %y = relay.call_indirect %p(%x)
// CHECK-NEXT:   %z = relay.call @cublas_main_0(%y)
