// RUN: hetero-opt %s -p alter-data-layout --split-input-file | filecheck %s

// Two convolutions on an AVX-512 CPU (16 f32 lanes) whose target asks for
// blocked activations (`data_layout = "NCHWc"`): the first reads its
// NCHW input and writes NCHW16c; the bias (a constant along the channels)
// becomes an add of a [1, C/16, 1, 1, 16] constant, relu runs on the blocks,
// the second conv reads and writes blocks, and the result goes back to NCHW
// once, for the return.
// CHECK-LABEL: relay.func @chain
// CHECK:         %[[C1:.*]] = relay.nn.conv2d %x, %w1 {vdevice = {{.*}}, data_layout = "NCHW", out_layout = "NCHW16c"} : (tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<1x2x6x6x16xf32>
// CHECK-NEXT:    %[[B:.*]] = relay.constant {vdevice = {{.*}}} dense<{{.*}}> : tensor<1x2x1x1x16xf32>
// CHECK-NEXT:    %[[A:.*]] = relay.add %[[C1]], %[[B]] {vdevice = {{.*}}} : (tensor<1x2x6x6x16xf32>, tensor<1x2x1x1x16xf32>) -> tensor<1x2x6x6x16xf32>
// CHECK-NEXT:    %[[R:.*]] = relay.relu %[[A]] {vdevice = {{.*}}} : tensor<1x2x6x6x16xf32>
// CHECK-NEXT:    %[[C2:.*]] = relay.nn.conv2d %[[R]], %w2 {vdevice = {{.*}}, data_layout = "NCHW16c", out_layout = "NCHW16c"} : (tensor<1x2x6x6x16xf32>, tensor<32x32x1x1xf32>) -> tensor<1x2x6x6x16xf32>
// CHECK-NEXT:    %[[OUT:.*]] = relay.layout_transform %[[C2]] {src_layout = "NCHW16c", dst_layout = "NCHW", vdevice = {{.*}}} : (tensor<1x2x6x6x16xf32>) -> tensor<1x32x6x6xf32>
// CHECK-NEXT:    relay.return %[[OUT]] : tensor<1x32x6x6xf32>
relay.func @chain(%x: tensor<1x16x8x8xf32>, %w1: tensor<32x16x3x3xf32>, %w2: tensor<32x32x1x1xf32>) -> tensor<1x32x6x6xf32> {
  %b = relay.constant dense<0.5> : tensor<32xf32>
  %0 = relay.nn.conv2d %x, %w1 {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"], data_layout = "NCHWc"}>>} : (tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x6x6xf32>
  %1 = relay.nn.bias_add %0, %b {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"], data_layout = "NCHWc"}>>} : (tensor<1x32x6x6xf32>, tensor<32xf32>) -> tensor<1x32x6x6xf32>
  %2 = relay.relu %1 {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"], data_layout = "NCHWc"}>>} : tensor<1x32x6x6xf32>
  %3 = relay.nn.conv2d %2, %w2 {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"], data_layout = "NCHWc"}>>} : (tensor<1x32x6x6xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x6x6xf32>
  relay.return %3 : tensor<1x32x6x6xf32>
}

// -----

// A residual block: the add of two blocked values, a scalar multiplier
// (kept as it is), max pooling, concatenation along the channels and global
// average pooling all run on blocks; the flatten after them reads NCHW.
// CHECK-LABEL: relay.func @block
// CHECK:         %[[C:.*]] = relay.nn.conv2d %x, %w0 {{{.*}}data_layout = "NCHW", out_layout = "NCHW16c"} : {{.*}} -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[D:.*]] = relay.nn.conv2d %[[C]], %w {{{.*}}data_layout = "NCHW16c", out_layout = "NCHW16c"} : {{.*}} -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[S:.*]] = relay.add %[[D]], %[[C]] : tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[M:.*]] = relay.multiply %[[S]], %two : (tensor<1x2x8x8x16xf32>, tensor<f32>) -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[P:.*]] = relay.nn.max_pool2d %[[M]] {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NCHW16c"} : (tensor<1x2x8x8x16xf32>) -> tensor<1x2x4x4x16xf32>
// CHECK-NEXT:    %[[J:.*]] = relay.concatenate %[[P]], %[[P]] {axis = 1 : i64} : (tensor<1x2x4x4x16xf32>, tensor<1x2x4x4x16xf32>) -> tensor<1x4x4x4x16xf32>
// CHECK-NEXT:    %[[G:.*]] = relay.nn.global_avg_pool2d %[[J]] {layout = "NCHW16c"} : (tensor<1x4x4x4x16xf32>) -> tensor<1x4x1x1x16xf32>
// CHECK-NEXT:    %[[N:.*]] = relay.layout_transform %[[G]] {src_layout = "NCHW16c", dst_layout = "NCHW"{{.*}}} : (tensor<1x4x1x1x16xf32>) -> tensor<1x64x1x1xf32>
// CHECK-NEXT:    relay.flatten %[[N]]
// CHECK-NOT:     layout_transform
relay.func @block(%x: tensor<1x64x8x8xf32>, %w0: tensor<32x64x1x1xf32>, %w: tensor<32x32x1x1xf32>) -> tensor<1x64xf32> {
  %two = relay.constant dense<2.0> : tensor<f32>
  %0 = relay.nn.conv2d %x, %w0 {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"], data_layout = "NCHWc"}>>} : (tensor<1x64x8x8xf32>, tensor<32x64x1x1xf32>) -> tensor<1x32x8x8xf32>
  %1 = relay.nn.conv2d %0, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"], data_layout = "NCHWc"}>>} : (tensor<1x32x8x8xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x8x8xf32>
  %2 = relay.add %1, %0 : (tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %3 = relay.multiply %2, %two : (tensor<1x32x8x8xf32>, tensor<f32>) -> tensor<1x32x8x8xf32>
  %4 = relay.nn.max_pool2d %3 {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x32x8x8xf32>) -> tensor<1x32x4x4xf32>
  %5 = relay.concatenate %4, %4 {axis = 1 : i64} : (tensor<1x32x4x4xf32>, tensor<1x32x4x4xf32>) -> tensor<1x64x4x4xf32>
  %6 = relay.nn.global_avg_pool2d %5 : (tensor<1x64x4x4xf32>) -> tensor<1x64x1x1xf32>
  %7 = relay.flatten %6 : (tensor<1x64x1x1xf32>) -> tensor<1x64xf32>
  relay.return %7 : tensor<1x64xf32>
}

// -----

// Left in NCHW: a conv without a device, one whose target keeps the default
// `data_layout = "NCHW"`, a grouped conv, one on a GPU, one of NCHW data
// with a reduction of 27 (an RGB 3x3: under the CPU's 64); a conv whose 40
// output channels do not fill blocks reads blocked data but writes NCHW; a
// constant that varies along the width is no channel constant, so the add
// reads the conv's result back in NCHW.
// CHECK-LABEL: relay.func @kept
// CHECK:         relay.nn.conv2d %x, %w : (tensor<1x64x8x8xf32>, tensor<32x64x1x1xf32>) -> tensor<1x32x8x8xf32>
// CHECK:         relay.nn.conv2d %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>} : (tensor<1x64x8x8xf32>, tensor<32x64x1x1xf32>) -> tensor<1x32x8x8xf32>
// CHECK:         relay.nn.conv2d %x, %g {groups = 64 : i64, vdevice = {{.*}}} : (tensor<1x64x8x8xf32>, tensor<64x1x1x1xf32>) -> tensor<1x64x8x8xf32>
// CHECK:         relay.nn.conv2d %x, %w {vdevice = #target.vdevice<cuda:0{{.*}}} : (tensor<1x64x8x8xf32>, tensor<32x64x1x1xf32>) -> tensor<1x32x8x8xf32>
// CHECK:         relay.nn.conv2d %rgb, %k {padding = array<i64: 1, 1, 1, 1>, vdevice = {{.*}}} : (tensor<1x3x8x8xf32>, tensor<32x3x3x3xf32>) -> tensor<1x32x8x8xf32>
// CHECK:         %[[B:.*]] = relay.nn.conv2d %x, %w {{{.*}}out_layout = "NCHW16c"} : {{.*}} -> tensor<1x2x8x8x16xf32>
// CHECK-NEXT:    %[[N:.*]] = relay.layout_transform %[[B]] {src_layout = "NCHW16c", dst_layout = "NCHW"{{.*}}} : (tensor<1x2x8x8x16xf32>) -> tensor<1x32x8x8xf32>
// CHECK-NEXT:    relay.nn.conv2d %[[B]], %w40 {{{.*}}data_layout = "NCHW16c", out_layout = "NCHW"} : (tensor<1x2x8x8x16xf32>, tensor<40x32x1x1xf32>) -> tensor<1x40x8x8xf32>
// CHECK-NEXT:    relay.add %[[N]], %row : (tensor<1x32x8x8xf32>, tensor<8xf32>) -> tensor<1x32x8x8xf32>
relay.func @kept(%x: tensor<1x64x8x8xf32>, %rgb: tensor<1x3x8x8xf32>, %w: tensor<32x64x1x1xf32>, %g: tensor<64x1x1x1xf32>, %k: tensor<32x3x3x3xf32>, %w40: tensor<40x32x1x1xf32>) -> tensor<1x32x8x8xf32> {
  %row = relay.constant dense<1.0> : tensor<8xf32>
  %0 = relay.nn.conv2d %x, %w : (tensor<1x64x8x8xf32>, tensor<32x64x1x1xf32>) -> tensor<1x32x8x8xf32>
  %default = relay.nn.conv2d %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>} : (tensor<1x64x8x8xf32>, tensor<32x64x1x1xf32>) -> tensor<1x32x8x8xf32>
  %1 = relay.nn.conv2d %x, %g {groups = 64 : i64, vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"], data_layout = "NCHWc"}>>} : (tensor<1x64x8x8xf32>, tensor<64x1x1x1xf32>) -> tensor<1x64x8x8xf32>
  %2 = relay.nn.conv2d %x, %w {vdevice = #target.vdevice<cuda:0, target = #target.target<"cuda">>} : (tensor<1x64x8x8xf32>, tensor<32x64x1x1xf32>) -> tensor<1x32x8x8xf32>
  %rgb_conv = relay.nn.conv2d %rgb, %k {padding = array<i64: 1, 1, 1, 1>, vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"], data_layout = "NCHWc"}>>} : (tensor<1x3x8x8xf32>, tensor<32x3x3x3xf32>) -> tensor<1x32x8x8xf32>
  %3 = relay.nn.conv2d %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"], data_layout = "NCHWc"}>>} : (tensor<1x64x8x8xf32>, tensor<32x64x1x1xf32>) -> tensor<1x32x8x8xf32>
  %4 = relay.nn.conv2d %3, %w40 {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"], data_layout = "NCHWc"}>>} : (tensor<1x32x8x8xf32>, tensor<40x32x1x1xf32>) -> tensor<1x40x8x8xf32>
  %5 = relay.add %3, %row : (tensor<1x32x8x8xf32>, tensor<8xf32>) -> tensor<1x32x8x8xf32>
  relay.return %5 : tensor<1x32x8x8xf32>
}
