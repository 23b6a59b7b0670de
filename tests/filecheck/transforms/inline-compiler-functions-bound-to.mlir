// RUN: hetero-opt %s -p inline-compiler-functions-bound-to | filecheck %s --check-prefix=NONE
// RUN: hetero-opt %s -p 'inline-compiler-functions-bound-to{globals=blas_main_0}' | filecheck %s

// Without globals nothing changes.  A listed global is inlined at each call
// (its params bound to the arguments, its composite calls inlined as well,
// devices kept) and removed; other globals stay.
builtin.module {
  relay.func @blas_main_0(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu>}, %b: tensor<4xf32> {vdevice = #target.vdevice<cpu>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu>}) attributes {Extern} {
    %f = relay.fn (%p: tensor<4xf32>, %q: tensor<4xf32>) -> tensor<4xf32> attributes {Composite = "blas.add_relu"} {
      %s = relay.add %p, %q {vdevice = #target.vdevice<cpu>} : tensor<4xf32>
      %r = relay.relu %s {vdevice = #target.vdevice<cpu>} : tensor<4xf32>
      relay.return %r : tensor<4xf32>
    }
    %c = relay.call_indirect %f(%a, %b) {vdevice = #target.vdevice<cpu>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %e = relay.exp %c {vdevice = #target.vdevice<cpu>} : tensor<4xf32>
    relay.return %e : tensor<4xf32>
  }
  relay.func @cublas_main_0(%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "cublas", global_symbol = "cublas_main_0"} {
    relay.return %a : tensor<4xf32>
  }
  relay.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
    %u = relay.call @blas_main_0(%x, %y) {vdevice = #target.vdevice<cpu>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %v = relay.call @blas_main_0(%u, %u) {vdevice = #target.vdevice<cpu>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %w = relay.call @cublas_main_0(%v) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %w : tensor<4xf32>
  }
}

// NONE:      relay.func @blas_main_0(
// NONE:      relay.func @main(
// NONE-NEXT:   %u = relay.call @blas_main_0(%x, %y)

// CHECK:      builtin.module {
// CHECK-NEXT:   relay.func @cublas_main_0(
// CHECK:        relay.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %[[S1:.*]] = relay.add %x, %y {vdevice = #target.vdevice<cpu>} : tensor<4xf32>
// CHECK-NEXT:     %[[R1:.*]] = relay.relu %[[S1]] {vdevice = #target.vdevice<cpu>} : tensor<4xf32>
// CHECK-NEXT:     %[[E1:.*]] = relay.exp %[[R1]] {vdevice = #target.vdevice<cpu>} : tensor<4xf32>
// CHECK-NEXT:     %[[S2:.*]] = relay.add %[[E1]], %[[E1]] {vdevice = #target.vdevice<cpu>} : tensor<4xf32>
// CHECK-NEXT:     %[[R2:.*]] = relay.relu %[[S2]] {vdevice = #target.vdevice<cpu>} : tensor<4xf32>
// CHECK-NEXT:     %[[E2:.*]] = relay.exp %[[R2]] {vdevice = #target.vdevice<cpu>} : tensor<4xf32>
// CHECK-NEXT:     %w = relay.call @cublas_main_0(%[[E2]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     relay.return %w : tensor<4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
