// RUN: hetero-opt %s -p mark-compiler-functions-as-extern | filecheck %s
// RUN: hetero-opt %s -p 'mark-compiler-functions-as-extern{compiler=cublas}' | filecheck %s --check-prefix=FILTER

// Every attribute of a global Compiler function is dropped and `Extern` set;
// signature, devices and body stay; calls are unchanged.  Other functions
// and literals are untouched.  With a filter, only that kind is marked.
builtin.module {
  relay.func @blas_main_0(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu>}) attributes {Compiler = "blas", Primitive, Inline, global_symbol = "blas_main_0", SkipOptimization} {
    %r = relay.relu %a : tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
  relay.func @cublas_main_0(%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "cublas", global_symbol = "cublas_main_0"} {
    relay.return %a : tensor<4xf32>
  }
  relay.func private @helper(%a: tensor<4xf32>) -> tensor<4xf32> attributes {Primitive, global_symbol = "helper"} {
    relay.return %a : tensor<4xf32>
  }
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %p = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "blas", global_symbol = "literal"} {
      relay.return %a : tensor<4xf32>
    }
    %y = relay.call @blas_main_0(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %z = relay.call @cublas_main_0(%y) : (tensor<4xf32>) -> tensor<4xf32>
    %h = relay.call @helper(%z) : (tensor<4xf32>) -> tensor<4xf32>
    %u = relay.call_indirect %p(%h) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %u : tensor<4xf32>
  }
}

// CHECK:      relay.func @blas_main_0(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu>}) attributes {Extern} {
// CHECK-NEXT:   %r = relay.relu %a : tensor<4xf32>
// CHECK-NEXT:   relay.return %r : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: relay.func @cublas_main_0(%a: tensor<4xf32>) -> tensor<4xf32> attributes {Extern} {
// CHECK:      relay.func private @helper(%a: tensor<4xf32>) -> tensor<4xf32> attributes {Primitive, global_symbol = "helper"} {
// CHECK:      %p = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "blas", global_symbol = "literal"} {
// CHECK:      %y = relay.call @blas_main_0(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %z = relay.call @cublas_main_0(%y) : (tensor<4xf32>) -> tensor<4xf32>

// FILTER:      relay.func @blas_main_0({{.*}} attributes {Compiler = "blas", Primitive, Inline, global_symbol = "blas_main_0", SkipOptimization} {
// FILTER:      relay.func @cublas_main_0(%a: tensor<4xf32>) -> tensor<4xf32> attributes {Extern} {
