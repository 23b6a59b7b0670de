// RUN: hetero-opt %s -p plan-devices,lower-te | filecheck %s
// REQUIRES: blas

// Compiler function literals called in place are handed to their external
// codegen, as TVM's LowerTE does: lower-te first runs the BYOC passes' last
// steps on them (outline-compiler-functions with its structural cache,
// external-codegen, mark-compiler-functions-as-extern).  The two equal
// literals share one global, named by the first one's global_symbol; it is
// Extern, its code is in the nested module @blas, and both calls name it.

// CHECK:      relay.func @blas_dense({{.*}}) attributes {Extern} {
// CHECK:      relay.func @main(
// CHECK-NEXT:   %r = relay.call @blas_dense(%x, %w) {{{.*}}lowered = @blas_dense}
// CHECK-NEXT:   %s = relay.call @blas_dense(%y, %w) {{{.*}}lowered = @blas_dense}
// CHECK-NOT:    relay.fn
// CHECK:      builtin.module @blas attributes {hetero.external_codegen = "blas"} {
// CHECK-NEXT:   tir.prim_func @blas_dense(
// CHECK:          tir.call_extern "scipy_cblas_sgemm"
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %y: tensor<4x8xf32>) -> tuple<tensor<4x16xf32>, tensor<4x16xf32>> {
    %f = relay.fn (%a: tensor<4x8xf32>, %b: tensor<16x8xf32>) -> tensor<4x16xf32> attributes {Compiler = "blas", global_symbol = "blas_dense"} {
      %0 = relay.nn.dense %a, %b : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
      relay.return %0 : tensor<4x16xf32>
    }
    %g = relay.fn (%a: tensor<4x8xf32>, %b: tensor<16x8xf32>) -> tensor<4x16xf32> attributes {Compiler = "blas"} {
      %0 = relay.nn.dense %a, %b : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
      relay.return %0 : tensor<4x16xf32>
    }
    %r = relay.call_indirect %f(%x, %w) : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    %s = relay.call_indirect %g(%y, %w) : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    %t = relay.tuple(%r, %s) : tuple<tensor<4x16xf32>, tensor<4x16xf32>>
    relay.return %t : tuple<tensor<4x16xf32>, tensor<4x16xf32>>
  }
}
