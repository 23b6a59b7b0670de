// RUN: hetero-opt %s -p plan-devices,merge-composite,annotate-target,merge-compiler-regions,partition-graph,outline-compiler-functions,mark-compiler-functions-as-extern | filecheck %s

// The dnnl pattern table (docs/external-codegens.md): a conv2d takes its
// bias, a residual add (either operand order) and a relu as post-ops, a
// depthwise (grouped) conv2d is a conv2d like any other, a dense takes its
// bias; the f64 dense (oneDNN computes f32 here) stays with llvm.  The two
// convolutions form one partition.  Partitioning needs no library: only
// external-codegen does.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"dnnl">]>} {
  relay.func @main(%x: tensor<1x8x10x10xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16xf32>, %wd: tensor<16x1x3x3xf32>, %r: tensor<1x16x5x5xf32>, %fw: tensor<10x400xf32>, %fb: tensor<10xf32>, %u: tensor<2x3xf64>, %v: tensor<4x3xf64>) -> tuple<tensor<1x10xf32>, tensor<2x4xf64>> {
    %c = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x5x5xf32>
    %cb = relay.nn.bias_add %c, %b : (tensor<1x16x5x5xf32>, tensor<16xf32>) -> tensor<1x16x5x5xf32>
    %a = relay.relu %cb : tensor<1x16x5x5xf32>
    %d = relay.nn.conv2d %a, %wd {padding = array<i64: 1, 1, 1, 1>, groups = 16 : i64} : (tensor<1x16x5x5xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x5x5xf32>
    %s = relay.add %r, %d : tensor<1x16x5x5xf32>
    %t = relay.relu %s : tensor<1x16x5x5xf32>
    %f = relay.reshape %t {newshape = array<i64: 1, 400>} : (tensor<1x16x5x5xf32>) -> tensor<1x400xf32>
    %g = relay.nn.dense %f, %fw : (tensor<1x400xf32>, tensor<10x400xf32>) -> tensor<1x10xf32>
    %h = relay.nn.bias_add %g, %fb : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
    %k = relay.nn.dense %u, %v : (tensor<2x3xf64>, tensor<4x3xf64>) -> tensor<2x4xf64>
    %o = relay.tuple(%h, %k) : tuple<tensor<1x10xf32>, tensor<2x4xf64>>
    relay.return %o : tuple<tensor<1x10xf32>, tensor<2x4xf64>>
  }
}

// CHECK:      relay.func @dnnl_main_0(%x: {{.*}}, %w: {{.*}}, %b: {{.*}}, %r: {{.*}}, %wd: {{.*}}) -> {{.*}} attributes {Extern} {
// CHECK:        Composite = "dnnl.conv2d_bias_relu"
// CHECK-NEXT:     relay.nn.conv2d
// CHECK-NEXT:     relay.nn.bias_add
// CHECK-NEXT:     relay.relu
// CHECK:        Composite = "dnnl.conv2d_radd_relu"
// CHECK-NEXT:     relay.nn.conv2d {{.*}}groups = 16
// CHECK-NEXT:     relay.add %r_1, %d
// CHECK-NEXT:     relay.relu
// CHECK:        relay.call_indirect %0(%x, %w, %b)
// CHECK-NEXT:   relay.call_indirect %1(%r, %a_2, %wd)
// CHECK:      relay.func @dnnl_main_1(%f: {{.*}}) -> {{.*}} attributes {Extern} {
// CHECK:        Composite = "dnnl.dense_bias"
// CHECK:      relay.func @main(
// CHECK-NEXT:   relay.call @dnnl_main_0(%x, %w, %b, %r, %wd)
// CHECK-NEXT:   relay.reshape
// CHECK-NEXT:   relay.call @dnnl_main_1(%f, %fw, %fb)
// CHECK-NEXT:   relay.nn.dense %u, %v
