// RUN: hetero-opt %s -p alter-op-layout --split-input-file | filecheck %s

// A 1x1 conv2d with 256 input channels (a reduction of 256) on an AVX-512
// CPU: its constant weight is packed for the channel-lanes schedule (64
// output channels = 4 vectors), on the weight's device; the old constant
// is erased.
// CHECK-LABEL: relay.func @packed
// CHECK-NOT:     tensor<64x256x1x1xf32>
// CHECK:         %[[W:.*]] = relay.constant {vdevice = #target.vdevice<cpu:0, {{.*}}} dense_resource<packed{{.*}}> : tensor<1x256x1x1x64xf32>
// CHECK-NEXT:    %c = relay.nn.conv2d %x, %[[W]] {vdevice = {{.*}}, kernel_layout = "OIHW64o", channels = 64 : i64} : (tensor<1x256x7x7xf32>, tensor<1x256x1x1x64xf32>) -> tensor<1x64x7x7xf32>
relay.func @packed(%x: tensor<1x256x7x7xf32>) -> tensor<1x64x7x7xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} dense<0.5> : tensor<64x256x1x1xf32>
  %c = relay.nn.conv2d %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} : (tensor<1x256x7x7xf32>, tensor<64x256x1x1xf32>) -> tensor<1x64x7x7xf32>
  relay.return %c : tensor<1x64x7x7xf32>
}

// -----

// AVX2: 16 channels a tile (2 vectors of 8); 100 output channels fill 7
// tiles to 89 %, under the 90 % asked: left.  A reduction of 32 x 3 x 3 = 288.
// CHECK-LABEL: relay.func @avx2_and_padding
// CHECK:         relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, vdevice = {{.*}}} : (tensor<1x32x14x14xf32>, tensor<100x32x3x3xf32>)
relay.func @avx2_and_padding(%x: tensor<1x32x14x14xf32>) -> tensor<1x100x14x14xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}>>} dense<0.5> : tensor<100x32x3x3xf32>
  %c = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}>>} : (tensor<1x32x14x14xf32>, tensor<100x32x3x3xf32>) -> tensor<1x100x14x14xf32>
  relay.return %c : tensor<1x100x14x14xf32>
}

// -----

// 96 output channels fill 6 AVX2 tiles (a 1x1 conv: no Winograd).
// CHECK-LABEL: relay.func @avx2_packed
// CHECK:         relay.nn.conv2d %x, %{{.*}} {vdevice = {{.*}}, kernel_layout = "OIHW16o", channels = 96 : i64} : (tensor<1x288x14x14xf32>, tensor<6x288x1x1x16xf32>)
relay.func @avx2_packed(%x: tensor<1x288x14x14xf32>) -> tensor<1x96x14x14xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}>>} dense<0.5> : tensor<96x288x1x1xf32>
  %c = relay.nn.conv2d %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}>>} : (tensor<1x288x14x14xf32>, tensor<96x288x1x1xf32>) -> tensor<1x96x14x14xf32>
  relay.return %c : tensor<1x96x14x14xf32>
}

// -----

// A 3x3 conv of stride 2: channel lanes, 16 a tile with AVX2.
// CHECK-LABEL: relay.func @avx2_packed_3x3
// CHECK:         relay.nn.conv2d %x, %{{.*}} {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, vdevice = {{.*}}, kernel_layout = "OIHW16o", channels = 96 : i64} : (tensor<1x32x14x14xf32>, tensor<6x32x3x3x16xf32>)
relay.func @avx2_packed_3x3(%x: tensor<1x32x14x14xf32>) -> tensor<1x96x7x7xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}>>} dense<0.5> : tensor<96x32x3x3xf32>
  %c = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}>>} : (tensor<1x32x14x14xf32>, tensor<96x32x3x3xf32>) -> tensor<1x96x7x7xf32>
  relay.return %c : tensor<1x96x7x7xf32>
}

// -----

// A 3x3 conv of stride 1 goes to the Winograd domain of F(2x2, 3x3): its
// weight, transformed at compile time, is [16 positions, 96 / 16 channel
// blocks, 32 inputs, 16 channels] on AVX2 (two vectors a block).
// CHECK-LABEL: relay.func @avx2_winograd
// CHECK:         relay.nn.conv2d %x, %{{.*}} {padding = array<i64: 1, 1, 1, 1>, vdevice = {{.*}}, kernel_layout = "winograd2_OI16o", channels = 96 : i64} : (tensor<1x32x14x14xf32>, tensor<16x6x32x16xf32>)
relay.func @avx2_winograd(%x: tensor<1x32x14x14xf32>) -> tensor<1x96x14x14xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}>>} dense<0.5> : tensor<96x32x3x3xf32>
  %c = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}>>} : (tensor<1x32x14x14xf32>, tensor<96x32x3x3xf32>) -> tensor<1x96x14x14xf32>
  relay.return %c : tensor<1x96x14x14xf32>
}

// -----

// AVX-512: blocks of 64 channels; a 28x28 result takes F(4x4, 3x3) (6x6
// tiles: 36 positions).  The transformed weight is a dense_resource (its
// values: tests/test_winograd.py).
// CHECK-LABEL: relay.func @winograd
// CHECK:         %[[U:.*]] = relay.constant {vdevice = {{.*}}} dense_resource<packed{{.*}}> : tensor<36x2x64x64xf32>
// CHECK-NEXT:    relay.nn.conv2d %x, %[[U]] {vdevice = {{.*}}, kernel_layout = "winograd4_OI64o", channels = 128 : i64} : (tensor<1x64x30x30xf32>, tensor<36x2x64x64xf32>) -> tensor<1x128x28x28xf32>
relay.func @winograd(%x: tensor<1x64x30x30xf32>) -> tensor<1x128x28x28xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} dense<0.5> : tensor<128x64x3x3xf32>
  %c = relay.nn.conv2d %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} : (tensor<1x64x30x30xf32>, tensor<128x64x3x3xf32>) -> tensor<1x128x28x28xf32>
  relay.return %c : tensor<1x128x28x28xf32>
}

// -----

// 48 output channels: blocks of 3 vectors (48), not 64 with a quarter empty.
// CHECK-LABEL: relay.func @winograd_48
// CHECK:         relay.nn.conv2d %x, %{{.*}} {padding = array<i64: 1, 1, 1, 1>, vdevice = {{.*}}, kernel_layout = "winograd2_OI48o", channels = 48 : i64} : (tensor<1x32x13x13xf32>, tensor<16x1x32x48xf32>)
relay.func @winograd_48(%x: tensor<1x32x13x13xf32>) -> tensor<1x48x13x13xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} dense<0.5> : tensor<48x32x3x3xf32>
  %c = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} : (tensor<1x32x13x13xf32>, tensor<48x32x3x3xf32>) -> tensor<1x48x13x13xf32>
  relay.return %c : tensor<1x48x13x13xf32>
}

// -----

// Stride 2, dilation 2, a 2x2 window or a 6x6 result (fewer than 7x7
// pixels) keep the direct schedules: channel lanes for these deep reductions.
// CHECK-LABEL: relay.func @not_winograd
// CHECK:         relay.nn.conv2d %x, %{{.*}} {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, vdevice = {{.*}}, kernel_layout = "OIHW64o", channels = 64 : i64}
// CHECK:         relay.nn.conv2d %x, %{{.*}} {padding = array<i64: 2, 2, 2, 2>, dilation = array<i64: 2, 2>, vdevice = {{.*}}, kernel_layout = "OIHW64o", channels = 64 : i64}
// CHECK:         relay.nn.conv2d %x, %{{.*}} {vdevice = {{.*}}, kernel_layout = "OIHW64o", channels = 64 : i64} : (tensor<1x64x14x14xf32>, tensor<1x64x2x2x64xf32>)
// CHECK:         relay.nn.conv2d %s, %{{.*}} {vdevice = {{.*}}, kernel_layout = "OIHW64o", channels = 64 : i64} : (tensor<1x64x8x8xf32>, tensor<1x64x3x3x64xf32>)
#cpu = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>
relay.func @not_winograd(%x: tensor<1x64x14x14xf32>, %s: tensor<1x64x8x8xf32>) -> tuple<tensor<1x64x7x7xf32>, tensor<1x64x14x14xf32>, tensor<1x64x13x13xf32>, tensor<1x64x6x6xf32>> {
  %w = relay.constant {vdevice = #cpu} dense<0.5> : tensor<64x64x3x3xf32>
  %w2 = relay.constant {vdevice = #cpu} dense<0.5> : tensor<64x64x2x2xf32>
  %a = relay.nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, vdevice = #cpu} : (tensor<1x64x14x14xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x7x7xf32>
  %b = relay.nn.conv2d %x, %w {padding = array<i64: 2, 2, 2, 2>, dilation = array<i64: 2, 2>, vdevice = #cpu} : (tensor<1x64x14x14xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x14x14xf32>
  %c = relay.nn.conv2d %x, %w2 {vdevice = #cpu} : (tensor<1x64x14x14xf32>, tensor<64x64x2x2xf32>) -> tensor<1x64x13x13xf32>
  %d = relay.nn.conv2d %s, %w {vdevice = #cpu} : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x6x6xf32>
  %t = relay.tuple(%a, %b, %c, %d) : tuple<tensor<1x64x7x7xf32>, tensor<1x64x14x14xf32>, tensor<1x64x13x13xf32>, tensor<1x64x6x6xf32>>
  relay.return %t : tuple<tensor<1x64x7x7xf32>, tensor<1x64x14x14xf32>, tensor<1x64x13x13xf32>, tensor<1x64x6x6xf32>>
}

// -----

// 1000 output channels in 16 tiles of 64 (98 %): the packed weight is
// zero past channel 1000; `channels` says how many there are.
// CHECK-LABEL: relay.func @padded_channels
// CHECK:         relay.nn.conv2d %x, %{{.*}} {vdevice = {{.*}}, kernel_layout = "OIHW64o", channels = 1000 : i64} : (tensor<1x512x13x13xf32>, tensor<16x512x1x1x64xf32>)
relay.func @padded_channels(%x: tensor<1x512x13x13xf32>) -> tensor<1x1000x13x13xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} dense<0.5> : tensor<1000x512x1x1xf32>
  %c = relay.nn.conv2d %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} : (tensor<1x512x13x13xf32>, tensor<1000x512x1x1xf32>) -> tensor<1x1000x13x13xf32>
  relay.return %c : tensor<1x1000x13x13xf32>
}

// -----

// A reduction of 64: the transposed store costs more than the lanes gain.
// The pixel-lane tile's rows (8 output channels, half a vector) get their
// 1x1 weights side by side for each input channel: `OIHW8o`.
// CHECK-LABEL: relay.func @shallow
// CHECK:         relay.nn.conv2d %x, %{{.*}} {vdevice = {{.*}}, kernel_layout = "OIHW8o", channels = 64 : i64} : (tensor<1x64x7x7xf32>, tensor<8x64x1x1x8xf32>)
relay.func @shallow(%x: tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} dense<0.5> : tensor<64x64x1x1xf32>
  %c = relay.nn.conv2d %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} : (tensor<1x64x7x7xf32>, tensor<64x64x1x1xf32>) -> tensor<1x64x7x7xf32>
  relay.return %c : tensor<1x64x7x7xf32>
}

// -----

// 16 output channels would use a quarter of a 64-channel tile, but a 7x7
// image fills only 49 of the pixel lanes' 64: channel lanes in a tile of
// one vector, which divides the channels.
// CHECK-LABEL: relay.func @few_channels
// CHECK:         relay.nn.conv2d %x, %{{.*}} {vdevice = {{.*}}, kernel_layout = "OIHW16o", channels = 16 : i64} : (tensor<1x256x7x7xf32>, tensor<1x256x1x1x16xf32>)
relay.func @few_channels(%x: tensor<1x256x7x7xf32>) -> tensor<1x16x7x7xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} dense<0.5> : tensor<16x256x1x1xf32>
  %c = relay.nn.conv2d %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} : (tensor<1x256x7x7xf32>, tensor<16x256x1x1xf32>) -> tensor<1x16x7x7xf32>
  relay.return %c : tensor<1x16x7x7xf32>
}

// -----

// Pixel lanes keep `OIHW` for wider windows (a 3x3 reduction of 27: a
// first layer) and where the tile's rows fill whole vectors (4 rows, 4
// lanes with SSE2), which the block would mistake for channel lanes.
// CHECK-LABEL: relay.func @pixel_lanes_unpacked
// CHECK:         relay.nn.conv2d %x, %w {{.*}} : (tensor<1x3x16x16xf32>, tensor<64x3x3x3xf32>)
// CHECK:         relay.nn.conv2d %y, %v {{.*}} : (tensor<1x64x7x7xf32>, tensor<64x64x1x1xf32>)
relay.func @pixel_lanes_unpacked(%x: tensor<1x3x16x16xf32>, %y: tensor<1x64x7x7xf32>) -> tuple<tensor<1x64x14x14xf32>, tensor<1x64x7x7xf32>> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} dense<0.5> : tensor<64x3x3x3xf32>
  %a = relay.nn.conv2d %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} : (tensor<1x3x16x16xf32>, tensor<64x3x3x3xf32>) -> tensor<1x64x14x14xf32>
  %v = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+sse2"]}>>} dense<0.5> : tensor<64x64x1x1xf32>
  %b = relay.nn.conv2d %y, %v {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+sse2"]}>>} : (tensor<1x64x7x7xf32>, tensor<64x64x1x1xf32>) -> tensor<1x64x7x7xf32>
  %t = relay.tuple(%a, %b) : tuple<tensor<1x64x14x14xf32>, tensor<1x64x7x7xf32>>
  relay.return %t : tuple<tensor<1x64x14x14xf32>, tensor<1x64x7x7xf32>>
}

// -----

// A weight computed at run time (here a parameter) is not packed.
// CHECK-LABEL: relay.func @weight_param
// CHECK:         relay.nn.conv2d %x, %w {vdevice = {{.*}}} : (tensor<1x256x7x7xf32>, tensor<64x256x1x1xf32>)
relay.func @weight_param(%x: tensor<1x256x7x7xf32>, %w: tensor<64x256x1x1xf32>) -> tensor<1x64x7x7xf32> {
  %c = relay.nn.conv2d %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} : (tensor<1x256x7x7xf32>, tensor<64x256x1x1xf32>) -> tensor<1x64x7x7xf32>
  relay.return %c : tensor<1x64x7x7xf32>
}

// -----

// Grouped convolutions keep OIHW.
// CHECK-LABEL: relay.func @grouped
// CHECK:         relay.nn.conv2d %x, %w {groups = 2 : i64, vdevice = {{.*}}} : (tensor<1x512x7x7xf32>, tensor<64x256x1x1xf32>)
relay.func @grouped(%x: tensor<1x512x7x7xf32>) -> tensor<1x64x7x7xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} dense<0.5> : tensor<64x256x1x1xf32>
  %c = relay.nn.conv2d %x, %w {groups = 2 : i64, vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} : (tensor<1x512x7x7xf32>, tensor<64x256x1x1xf32>) -> tensor<1x64x7x7xf32>
  relay.return %c : tensor<1x64x7x7xf32>
}

// -----

// Not placed (no plan-devices): no target to ask.
// CHECK-LABEL: relay.func @unplaced
// CHECK:         relay.nn.conv2d %x, %w : (tensor<1x256x7x7xf32>, tensor<64x256x1x1xf32>)
relay.func @unplaced(%x: tensor<1x256x7x7xf32>) -> tensor<1x64x7x7xf32> {
  %w = relay.constant dense<0.5> : tensor<64x256x1x1xf32>
  %c = relay.nn.conv2d %x, %w : (tensor<1x256x7x7xf32>, tensor<64x256x1x1xf32>) -> tensor<1x64x7x7xf32>
  relay.return %c : tensor<1x64x7x7xf32>
}

// -----

// The old constant stays for its other user.
// CHECK-LABEL: relay.func @shared
// CHECK:         %w = relay.constant {vdevice = {{.*}}} dense<5.000000e-01> : tensor<64x256x1x1xf32>
// CHECK:         relay.nn.conv2d %x, %{{.*}} {vdevice = {{.*}}, kernel_layout = "OIHW64o", channels = 64 : i64} : (tensor<1x256x7x7xf32>, tensor<1x256x1x1x64xf32>)
// CHECK:         relay.tuple(%c, %w)
relay.func @shared(%x: tensor<1x256x7x7xf32>) -> tuple<tensor<1x64x7x7xf32>, tensor<64x256x1x1xf32>> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} dense<0.5> : tensor<64x256x1x1xf32>
  %c = relay.nn.conv2d %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} : (tensor<1x256x7x7xf32>, tensor<64x256x1x1xf32>) -> tensor<1x64x7x7xf32>
  %t = relay.tuple(%c, %w) : tuple<tensor<1x64x7x7xf32>, tensor<64x256x1x1xf32>>
  relay.return %t : tuple<tensor<1x64x7x7xf32>, tensor<64x256x1x1xf32>>
}

// -----

// A BYOC partition (a `Compiler` function) is its external codegen's: left.
// CHECK-LABEL: relay.func @byoc_partition
// CHECK:         relay.nn.conv2d %x, %w {vdevice = {{.*}}} : (tensor<1x256x7x7xf32>, tensor<64x256x1x1xf32>)
relay.func @byoc_partition(%x: tensor<1x256x7x7xf32>) -> tensor<1x64x7x7xf32> attributes {Compiler = "vendorlib", global_symbol = "byoc_partition"} {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} dense<0.5> : tensor<64x256x1x1xf32>
  %c = relay.nn.conv2d %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} : (tensor<1x256x7x7xf32>, tensor<64x256x1x1xf32>) -> tensor<1x64x7x7xf32>
  relay.return %c : tensor<1x64x7x7xf32>
}

// -----

// Already in a packed layout (here one this target's schedule does not use): left.
// CHECK-LABEL: relay.func @already_packed
// CHECK:         relay.nn.conv2d %x, %w {vdevice = {{.*}}, kernel_layout = "OIHW8o", channels = 64 : i64}
relay.func @already_packed(%x: tensor<1x256x7x7xf32>) -> tensor<1x64x7x7xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>} dense<0.5> : tensor<8x256x1x1x8xf32>
  %c = relay.nn.conv2d %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "x86-64", mattr = ["+avx512f"]}>>, kernel_layout = "OIHW8o", channels = 64 : i64} : (tensor<1x256x7x7xf32>, tensor<8x256x1x1x8xf32>) -> tensor<1x64x7x7xf32>
  relay.return %c : tensor<1x64x7x7xf32>
}

// -----

// A dense of 197 rows on an AVX-512 CPU: its constant [N, K] weight is
// packed in the GEMM schedule's panels of nr = 32 outputs (2 vectors of 16),
// [ceil(100 / 32), K, 32], zero past N; the old constant is erased.
// CHECK-LABEL: relay.func @dense_avx512
// CHECK-NOT:     tensor<100x24xf32>
// CHECK:         %[[W:.*]] = relay.constant {vdevice = #target.vdevice<cpu:0, {{.*}}} dense_resource<packed{{.*}}> : tensor<4x24x32xf32>
// CHECK-NEXT:    %d = relay.nn.dense %x, %[[W]] {vdevice = {{.*}}, weight_layout = "NK32n", units = 100 : i64} : (tensor<197x24xf32>, tensor<4x24x32xf32>) -> tensor<197x100xf32>
relay.func @dense_avx512(%x: tensor<197x24xf32>) -> tensor<197x100xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}>>} dense<0.5> : tensor<100x24xf32>
  %d = relay.nn.dense %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}>>} : (tensor<197x24xf32>, tensor<100x24xf32>) -> tensor<197x100xf32>
  relay.return %d : tensor<197x100xf32>
}

// -----

// AVX2: panels of 16 outputs (2 vectors of 8).
// CHECK-LABEL: relay.func @dense_avx2
// CHECK:         relay.nn.dense %x, %{{.*}} {vdevice = {{.*}}, weight_layout = "NK16n", units = 100 : i64} : (tensor<197x24xf32>, tensor<7x24x16xf32>) -> tensor<197x100xf32>
relay.func @dense_avx2(%x: tensor<197x24xf32>) -> tensor<197x100xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}>>} dense<0.5> : tensor<100x24xf32>
  %d = relay.nn.dense %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}>>} : (tensor<197x24xf32>, tensor<100x24xf32>) -> tensor<197x100xf32>
  relay.return %d : tensor<197x100xf32>
}

// -----

// One row (a GEMV: a classifier at batch 1): its dot products read [N, K]
// along K as it is, so the weight is left.
// CHECK-LABEL: relay.func @dense_gemv
// CHECK:         relay.nn.dense %x, %w {vdevice = {{.*}}} : (tensor<1x24xf32>, tensor<100x24xf32>)
relay.func @dense_gemv(%x: tensor<1x24xf32>) -> tensor<1x100xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}>>} dense<0.5> : tensor<100x24xf32>
  %d = relay.nn.dense %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}>>} : (tensor<1x24xf32>, tensor<100x24xf32>) -> tensor<1x100xf32>
  relay.return %d : tensor<1x100xf32>
}

// -----

// On an external codegen's target (BLAS reads [N, K]): left.
// CHECK-LABEL: relay.func @dense_blas
// CHECK:         relay.nn.dense %x, %w {vdevice = {{.*}}} : (tensor<8x24xf32>, tensor<100x24xf32>)
relay.func @dense_blas(%x: tensor<8x24xf32>) -> tensor<8x100xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"blas">>} dense<0.5> : tensor<100x24xf32>
  %d = relay.nn.dense %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"blas">>} : (tensor<8x24xf32>, tensor<100x24xf32>) -> tensor<8x100xf32>
  relay.return %d : tensor<8x100xf32>
}

// -----

// In a BYOC partition: left.
// CHECK-LABEL: relay.func @dense_byoc_partition
// CHECK:         relay.nn.dense %x, %w {vdevice = {{.*}}} : (tensor<8x24xf32>, tensor<100x24xf32>)
relay.func @dense_byoc_partition(%x: tensor<8x24xf32>) -> tensor<8x100xf32> attributes {Compiler = "blas", global_symbol = "dense_byoc_partition"} {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}>>} dense<0.5> : tensor<100x24xf32>
  %d = relay.nn.dense %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}>>} : (tensor<8x24xf32>, tensor<100x24xf32>) -> tensor<8x100xf32>
  relay.return %d : tensor<8x100xf32>
}

// -----

// Already in panels: left.
// CHECK-LABEL: relay.func @dense_already_packed
// CHECK:         relay.nn.dense %x, %w {vdevice = {{.*}}, weight_layout = "NK16n", units = 100 : i64} : (tensor<8x24xf32>, tensor<7x24x16xf32>)
relay.func @dense_already_packed(%x: tensor<8x24xf32>) -> tensor<8x100xf32> {
  %w = relay.constant {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}>>} dense<0.5> : tensor<7x24x16xf32>
  %d = relay.nn.dense %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}>>, weight_layout = "NK16n", units = 100 : i64} : (tensor<8x24xf32>, tensor<7x24x16xf32>) -> tensor<8x100xf32>
  relay.return %d : tensor<8x100xf32>
}

// -----

// A weight computed at run time: left (packing would cost a copy per call).
// CHECK-LABEL: relay.func @dense_computed_weight
// CHECK:         relay.nn.dense %x, %w {vdevice = {{.*}}} : (tensor<8x24xf32>, tensor<100x24xf32>)
relay.func @dense_computed_weight(%x: tensor<8x24xf32>, %w: tensor<100x24xf32>) -> tensor<8x100xf32> {
  %d = relay.nn.dense %x, %w {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}>>} : (tensor<8x24xf32>, tensor<100x24xf32>) -> tensor<8x100xf32>
  relay.return %d : tensor<8x100xf32>
}
