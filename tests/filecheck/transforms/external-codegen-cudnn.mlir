// RUN: hetero-opt %s -p plan-devices,merge-composite,annotate-target,merge-compiler-regions,partition-graph,outline-compiler-functions,external-codegen | filecheck %s
// REQUIRES: cudnn

// The cudnn codegen (docs/external-codegens.md): a grouped conv2d with its
// bias and relu, then a depthwise one without, on the GPU: one partition, a
// host prim_func (it only calls) passing the pointers of x, w, the bias and
// y to each layer's stub, named after everything the layer is; the first
// layer's result is an intermediate buffer of the partition.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">, #target.target<"cudnn">], fallback = cuda>} {
  relay.func @main(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>, %d: tensor<6x1x3x3xf32>) -> tensor<1x6x4x4xf32> {
    %c = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x8x8xf32>
    %cb = relay.nn.bias_add %c, %b : (tensor<1x6x8x8xf32>, tensor<6xf32>) -> tensor<1x6x8x8xf32>
    %r = relay.relu %cb : tensor<1x6x8x8xf32>
    %e = relay.nn.conv2d %r, %d {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, groups = 6 : i64} : (tensor<1x6x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x4x4xf32>
    relay.return %e : tensor<1x6x4x4xf32>
  }
}

// CHECK:      relay.func @cudnn_main_0(
// CHECK:        %{{.*}} = relay.fn {{.*}} Composite = "cudnn.conv2d_bias_relu"
// CHECK:        %{{.*}} = relay.fn {{.*}} Composite = "cudnn.conv2d"

// CHECK:      builtin.module @cudnn attributes {hetero.external_codegen = "cudnn"} {
// CHECK-NEXT:   tir.prim_func @cudnn_main_0(%[[X:.*]]: memref<1x4x8x8xf32>, %[[W:.*]]: memref<6x2x3x3xf32>, %[[B:.*]]: memref<6xf32>, %[[D:.*]]: memref<6x1x3x3xf32>, %[[OUT:.*]]: memref<1x6x4x4xf32>) target #target.target<"llvm"> {
// CHECK-NEXT:     %[[R:.*]] = tir.alloc : memref<1x6x8x8xf32>
// CHECK-NEXT:     %[[PX:.*]] = "memref.extract_aligned_pointer_as_index"(%[[X]])
// CHECK-NEXT:     %[[PW:.*]] = "memref.extract_aligned_pointer_as_index"(%[[W]])
// CHECK-NEXT:     %[[PB:.*]] = "memref.extract_aligned_pointer_as_index"(%[[B]])
// CHECK-NEXT:     %[[PR:.*]] = "memref.extract_aligned_pointer_as_index"(%[[R]])
// CHECK-NEXT:     tir.call_extern "hetero_cudnn_f32_x1x4x8x8_w6x2x3x3_p1x1_s1x1_d1x1_g2_bias_relu"(%[[PX]], %[[PW]], %[[PB]], %[[PR]]) : (index, index, index, index) -> ()
// CHECK-NEXT:     %[[PR2:.*]] = "memref.extract_aligned_pointer_as_index"(%[[R]])
// CHECK-NEXT:     %[[PD:.*]] = "memref.extract_aligned_pointer_as_index"(%[[D]])
// CHECK-NEXT:     %[[POUT:.*]] = "memref.extract_aligned_pointer_as_index"(%[[OUT]])
// CHECK-NEXT:     tir.call_extern "hetero_cudnn_f32_x1x6x8x8_w6x1x3x3_p1x1_s2x2_d1x1_g6"(%[[PR2]], %[[PD]], %[[POUT]]) : (index, index, index) -> ()
// CHECK-NEXT:   }
// CHECK-NEXT: }
