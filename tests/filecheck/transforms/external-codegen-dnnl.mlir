// RUN: hetero-opt %s -p plan-devices,merge-composite,annotate-target,merge-compiler-regions,partition-graph,outline-compiler-functions,external-codegen | filecheck %s
// REQUIRES: dnnl

// The dnnl codegen (docs/external-codegens.md): a conv2d with its bias, a
// residual add and a relu is one oneDNN primitive, made at compile time; the
// prim_func passes its buffers' pointers (src, weights, bias, dst, addend,
// then the buffers it allocates for oneDNN's blocked layouts: how many
// depends on the host's kernels) in a stack array to hetero_dnnl_execute
// with the primitive's plan.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"dnnl">]>} {
  relay.func @main(%x: tensor<1x8x10x10xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16xf32>, %s: tensor<1x16x10x10xf32>) -> tensor<1x16x10x10xf32> {
    %c = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x10x10xf32>
    %cb = relay.nn.bias_add %c, %b : (tensor<1x16x10x10xf32>, tensor<16xf32>) -> tensor<1x16x10x10xf32>
    %a = relay.add %cb, %s : tensor<1x16x10x10xf32>
    %r = relay.relu %a : tensor<1x16x10x10xf32>
    relay.return %r : tensor<1x16x10x10xf32>
  }
}

// CHECK:      builtin.module @dnnl attributes {hetero.external_codegen = "dnnl"} {
// CHECK-NEXT:   tir.prim_func @dnnl_main_0(%[[X:.*]]: memref<1x8x10x10xf32>, %[[W:.*]]: memref<16x8x3x3xf32>, %[[B:.*]]: memref<16xf32>, %[[S:.*]]: memref<1x16x10x10xf32>, %[[OUT:.*]]: memref<1x16x10x10xf32>) target #target.target<"llvm", host = #target.target<"llvm">> attributes {tir.noalias = true} {
// CHECK-DAG:      %[[PLAN:.*]] = arith.constant {{[0-9]+}} : index
// CHECK-DAG:      %[[ARGS:.*]] = tir.alloc : memref<{{[0-9]+}}xindex, "local">
// CHECK:          %[[PX:.*]] = "memref.extract_aligned_pointer_as_index"(%[[X]])
// CHECK-NEXT:     memref.store %[[PX]], %[[ARGS]][%{{.*}}]
// CHECK-NEXT:     %[[PW:.*]] = "memref.extract_aligned_pointer_as_index"(%[[W]])
// CHECK-NEXT:     memref.store %[[PW]], %[[ARGS]][%{{.*}}]
// CHECK-NEXT:     %[[PB:.*]] = "memref.extract_aligned_pointer_as_index"(%[[B]])
// CHECK-NEXT:     memref.store %[[PB]], %[[ARGS]][%{{.*}}]
// CHECK-NEXT:     %[[POUT:.*]] = "memref.extract_aligned_pointer_as_index"(%[[OUT]])
// CHECK-NEXT:     memref.store %[[POUT]], %[[ARGS]][%{{.*}}]
// CHECK-NEXT:     %[[PS:.*]] = "memref.extract_aligned_pointer_as_index"(%[[S]])
// CHECK-NEXT:     memref.store %[[PS]], %[[ARGS]][%{{.*}}]
// CHECK:          %[[PARGS:.*]] = "memref.extract_aligned_pointer_as_index"(%[[ARGS]])
// CHECK-NEXT:     %{{.*}} = tir.call_extern "hetero_dnnl_execute"(%[[PLAN]], %[[PARGS]]) : (index, index) -> i32
// CHECK-NEXT:   }
