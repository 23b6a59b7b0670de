// RUN: hetero-opt %s --split-input-file --verify-diagnostics

// Tensor operators: result types, shapes and attributes.

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{result type mismatch: expected tensor<2x3xf32>, got tensor<3x2xf32>}}
  %0 = relay.exp %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %y: tensor<4x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{cannot broadcast shapes [2, 3] and [4, 3]}}
  %0 = relay.add %x, %y : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %y: tensor<2x3xf16>) -> tensor<2x3xf32> {
  // expected-error@+1 {{element type mismatch: operand 0 is f32, operand 1 is f16}}
  %0 = relay.multiply %x, %y : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{missing required attribute 'a_min'}}
  %0 = relay.clip %x {a_max = 6.0} : tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'a_min' must be a float, got 0 : i64}}
  %0 = relay.clip %x {a_min = 0, a_max = 6.0} : tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{a_min (6.0) must not exceed a_max (0.0)}}
  %0 = relay.clip %x {a_min = 6.0, a_max = 0.0} : tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %w: tensor<4x5xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{reduction dimension mismatch: data [2, 3] has K = 3, weight [4, 5] has K = 5}}
  %0 = relay.nn.dense %x, %w : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x4xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %w: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{dense weight [N, K] must have rank 2, got shape [3]}}
  %0 = relay.nn.dense %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %w: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{matmul's second operand must have rank >= 2, got shape [3]}}
  %0 = relay.matmul %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %w: tensor<4x5xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{reduction dimension mismatch: [2, 3] has K = 3, [4, 5] has K = 4}}
  %0 = relay.matmul %x, %w : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3x4xf32>, %w: tensor<3x4x5xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{cannot broadcast shapes [2] and [3]}}
  %0 = relay.matmul %x, %w : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  relay.return %x : tensor<2x3x4xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{conv2d data (NCHW) must have rank 4, got shape [2, 3]}}
  %0 = relay.nn.conv2d %x, %w : (tensor<2x3xf32>, tensor<8x3x3x3xf32>) -> tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{weight expects 3 input channels (3 x groups 1), but the data has 4}}
  %0 = relay.nn.conv2d %img, %w : (tensor<1x4x9x9xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x7x7xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{input channels (4) are not divisible by groups (3)}}
  %0 = relay.nn.conv2d %img, %w {groups = 3} : (tensor<1x4x9x9xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x7x7xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>, %w: tensor<9x2x3x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{output channels (9) are not divisible by groups (2)}}
  %0 = relay.nn.conv2d %img, %w {groups = 2} : (tensor<1x4x9x9xf32>, tensor<9x2x3x3xf32>) -> tensor<1x9x7x7xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

// Weight layouts: OIHW, OIHW<b>o or winograd<m>_OI<b>o, whose weight must match `channels`.
relay.func @f(%img: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32> {
  // expected-error@+1 {{'kernel_layout' must be "OIHW", "OIHW<b>o" or "winograd<m>_OI<b>o" (b >= 1, m = 2 or 4), got "HWIO"}}
  %0 = relay.nn.conv2d %img, %w {kernel_layout = "HWIO"} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
  relay.return %0 : tensor<1x8x7x7xf32>
}

// -----

relay.func @f(%img: tensor<1x4x9x9xf32>, %w: tensor<1x4x3x3x16xf32>) -> tensor<1x8x7x7xf32> {
  // expected-error@+1 {{kernel_layout "OIHW16o" needs 'channels'}}
  %0 = relay.nn.conv2d %img, %w {kernel_layout = "OIHW16o"} : (tensor<1x4x9x9xf32>, tensor<1x4x3x3x16xf32>) -> tensor<1x8x7x7xf32>
  relay.return %0 : tensor<1x8x7x7xf32>
}

// -----

relay.func @f(%img: tensor<1x4x9x9xf32>, %w: tensor<1x4x3x3x16xf32>) -> tensor<1x20x7x7xf32> {
  // expected-error@+1 {{a weight in layout OIHW16o for 20 output channels has shape [2, I, KH, KW, 16], got [1, 4, 3, 3, 16]}}
  %0 = relay.nn.conv2d %img, %w {kernel_layout = "OIHW16o", channels = 20 : i64} : (tensor<1x4x9x9xf32>, tensor<1x4x3x3x16xf32>) -> tensor<1x20x7x7xf32>
  relay.return %0 : tensor<1x20x7x7xf32>
}

// -----

// Winograd tiles are 2 or 4 outputs wide (F(2x2, 3x3), F(4x4, 3x3)).
relay.func @f(%img: tensor<1x4x9x9xf32>, %w: tensor<25x1x4x16xf32>) -> tensor<1x8x7x7xf32> {
  // expected-error@+1 {{'kernel_layout' must be "OIHW", "OIHW<b>o" or "winograd<m>_OI<b>o" (b >= 1, m = 2 or 4), got "winograd3_OI16o"}}
  %0 = relay.nn.conv2d %img, %w {kernel_layout = "winograd3_OI16o", channels = 8 : i64} : (tensor<1x4x9x9xf32>, tensor<25x1x4x16xf32>) -> tensor<1x8x7x7xf32>
  relay.return %0 : tensor<1x8x7x7xf32>
}

// -----

relay.func @f(%img: tensor<1x4x9x9xf32>, %w: tensor<16x1x4x16xf32>) -> tensor<1x8x7x7xf32> {
  // expected-error@+1 {{kernel_layout "winograd2_OI16o" needs 'channels'}}
  %0 = relay.nn.conv2d %img, %w {kernel_layout = "winograd2_OI16o"} : (tensor<1x4x9x9xf32>, tensor<16x1x4x16xf32>) -> tensor<1x8x7x7xf32>
  relay.return %0 : tensor<1x8x7x7xf32>
}

// -----

// F(4x4, 3x3) transforms 6x6 tiles: 36 positions, not 16.
relay.func @f(%img: tensor<1x4x9x9xf32>, %w: tensor<16x2x4x16xf32>) -> tensor<1x20x7x7xf32> {
  // expected-error@+1 {{a weight in layout winograd4_OI16o for 20 output channels has shape [36, 2, I, 16], got [16, 2, 4, 16]}}
  %0 = relay.nn.conv2d %img, %w {kernel_layout = "winograd4_OI16o", channels = 20 : i64} : (tensor<1x4x9x9xf32>, tensor<16x2x4x16xf32>) -> tensor<1x20x7x7xf32>
  relay.return %0 : tensor<1x20x7x7xf32>
}

// -----

relay.func @f(%img: tensor<1x4x9x9xf32>, %w: tensor<16x1x4x3x3xf32>) -> tensor<1x8x7x7xf32> {
  // expected-error@+1 {{conv2d weight (winograd2_OI16o) must have rank 4, got shape [16, 1, 4, 3, 3]}}
  %0 = relay.nn.conv2d %img, %w {kernel_layout = "winograd2_OI16o", channels = 8 : i64} : (tensor<1x4x9x9xf32>, tensor<16x1x4x3x3xf32>) -> tensor<1x8x7x7xf32>
  relay.return %0 : tensor<1x8x7x7xf32>
}

// -----

relay.func @f(%img: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32> {
  // expected-error@+1 {{'channels' is 6 but the OIHW weight has 8 outputs}}
  %0 = relay.nn.conv2d %img, %w {channels = 6 : i64} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
  relay.return %0 : tensor<1x8x7x7xf32>
}

// -----

relay.func @f(%img: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32> {
  // expected-error@+1 {{conv2d weight (OIHW8o) must have rank 5, got shape [8, 4, 3, 3]}}
  %0 = relay.nn.conv2d %img, %w {kernel_layout = "OIHW8o", channels = 8 : i64} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
  relay.return %0 : tensor<1x8x7x7xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'strides' must have 2 values, got 3}}
  %0 = relay.nn.conv2d %img, %w {strides = array<i64: 1, 1, 1>} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'strides' must be >= 1, got [0, 1]}}
  %0 = relay.nn.conv2d %img, %w {strides = array<i64: 0, 1>} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'padding' must be an array<i64: ...>, got [1 : i64, 1 : i64, 1 : i64, 1 : i64]}}
  %0 = relay.nn.conv2d %img, %w {padding = [1, 1, 1, 1]} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x9x9xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'groups' must be an integer, got 1.000000e+00 : f64}}
  %0 = relay.nn.conv2d %img, %w {groups = 1.0} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'groups' must be >= 1, got 0}}
  %0 = relay.nn.conv2d %img, %w {groups = 0} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x7x7xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>, %w: tensor<8x4x5x5xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{window of extent 13 does not fit in the padded input of size 9}}
  %0 = relay.nn.conv2d %img, %w {dilation = array<i64: 3, 1>} : (tensor<1x4x9x9xf32>, tensor<8x4x5x5xf32>) -> tensor<1x8x1x5xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{result type mismatch: expected tensor<1x8x5x5xf32>, got tensor<1x8x4x4xf32>}}
  %0 = relay.nn.conv2d %img, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x4x4xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{bias has 3 elements, but the data has 4 channels on axis 1}}
  %0 = relay.nn.bias_add %img, %b : (tensor<1x4x9x9xf32>, tensor<3xf32>) -> tensor<1x4x9x9xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>, %b: tensor<4x1xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{bias must have rank 1, got shape [4, 1]}}
  %0 = relay.nn.bias_add %img, %b : (tensor<1x4x9x9xf32>, tensor<4x1xf32>) -> tensor<1x4x9x9xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{axis 4 is out of range: expected -4 <= axis < 4}}
  %0 = relay.nn.bias_add %img, %b {axis = 4} : (tensor<1x4x9x9xf32>, tensor<4xf32>) -> tensor<1x4x9x9xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>, %v: tensor<4xf32>, %m: tensor<5xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{moving_mean has 5 elements, but the data has 4 channels on axis 1}}
  %0 = relay.nn.batch_norm %img, %v, %v, %m, %v : (tensor<1x4x9x9xf32>, tensor<4xf32>, tensor<4xf32>, tensor<5xf32>, tensor<4xf32>) -> tensor<1x4x9x9xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>, %v: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'epsilon' must be a float, got "small"}}
  %0 = relay.nn.batch_norm %img, %v, %v, %v, %v {epsilon = "small"} : (tensor<1x4x9x9xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x9x9xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{missing required attribute 'pool_size'}}
  %0 = relay.nn.max_pool2d %img : tensor<1x4x9x9xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{pooling data (NCHW) must have rank 4, got shape [2, 3]}}
  %0 = relay.nn.max_pool2d %x {pool_size = array<i64: 2, 2>} : tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'ceil_mode' must be true or false, got 1 : i64}}
  %0 = relay.nn.max_pool2d %img {pool_size = array<i64: 2, 2>, ceil_mode = 1} : (tensor<1x4x9x9xf32>) -> tensor<1x4x8x8xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'count_include_pad' must be true or false, got "yes"}}
  %0 = relay.nn.avg_pool2d %img {pool_size = array<i64: 2, 2>, count_include_pad = "yes"} : (tensor<1x4x9x9xf32>) -> tensor<1x4x8x8xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'padding' must be >= 0, got [0, -1, 0, 0]}}
  %0 = relay.nn.avg_pool2d %img {pool_size = array<i64: 2, 2>, padding = array<i64: 0, -1, 0, 0>} : (tensor<1x4x9x9xf32>) -> tensor<1x4x8x8xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %img: tensor<1x4x9x9xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{result type mismatch: expected tensor<1x4x5x5xf32>, got tensor<1x4x4x4xf32>}}
  %0 = relay.nn.max_pool2d %img {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true} : (tensor<1x4x9x9xf32>) -> tensor<1x4x4x4xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{pooling data (NCHW) must have rank 4, got shape [2, 3]}}
  %0 = relay.nn.global_avg_pool2d %x : (tensor<2x3xf32>) -> tensor<2x3x1x1xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{axis 2 is out of range: expected -2 <= axis < 2}}
  %0 = relay.nn.softmax %x {axis = 2} : tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{missing required attribute 'newshape'}}
  %0 = relay.reshape %x : tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{cannot reshape [2, 3] (6 elements) into [4, 2] (8 elements)}}
  %0 = relay.reshape %x {newshape = array<i64: 4, 2>} : (tensor<2x3xf32>) -> tensor<4x2xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{cannot reshape 6 elements into newshape [4, -1]}}
  %0 = relay.reshape %x {newshape = array<i64: 4, -1>} : (tensor<2x3xf32>) -> tensor<4x?xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{newshape may contain at most one -1}}
  %0 = relay.reshape %x {newshape = array<i64: -1, -1>} : (tensor<2x3xf32>) -> tensor<?x?xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{newshape[2] = 0 copies input dimension 2, but the input has rank 2}}
  %0 = relay.reshape %x {newshape = array<i64: 3, 2, 0>} : (tensor<2x3xf32>) -> tensor<3x2x1xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{invalid newshape value -2: expected a size, 0 or -1}}
  %0 = relay.reshape %x {newshape = array<i64: -2>} : (tensor<2x3xf32>) -> tensor<6xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'newshape' must be an array<i64: ...>, got array<i32: 6>}}
  %0 = relay.reshape %x {newshape = array<i32: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{axes must list all 2 dimensions, got [0]}}
  %0 = relay.transpose %x {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{axes [1, -1] is not a permutation of the 2 dimensions}}
  %0 = relay.transpose %x {axes = array<i64: 1, -1>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{axis 3 is out of range: expected -2 <= axis <= 2}}
  %0 = relay.flatten %x {axis = 3} : (tensor<2x3xf32>) -> tensor<6x1xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{operand 1 has rank 1, but operand 0 has rank 2}}
  %0 = relay.concatenate %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %y: tensor<2x4xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{operand 1 has size 4 in dimension 1, expected 3}}
  %0 = relay.concatenate %x, %y : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{concatenate needs at least one operand}}
  %0 = "relay.concatenate"() : () -> tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{cannot squeeze dimension 0 of size 2}}
  %0 = relay.squeeze %x {axis = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{axis -4 is out of range: expected -3 <= axis < 3}}
  %0 = relay.expand_dims %x {axis = -4} : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'num_newaxis' must be >= 0, got -1}}
  %0 = relay.expand_dims %x {axis = 0, num_newaxis = -1} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{missing required attribute 'axis'}}
  %0 = relay.expand_dims %x : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %t: tuple<tensor<2x3xf32>, tensor<2x3xf32>>) -> tensor<2x3xf32> {
  // expected-error@+1 {{index 2 is out of range for tuple<tensor<2x3xf32>, tensor<2x3xf32>> (2 elements)}}
  %0 = relay.get_item %t[2] : tuple<tensor<2x3xf32>, tensor<2x3xf32>> -> tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %t: tuple<tensor<2x3xf32>, tensor<2x3xf32>>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'index' must be >= 0, got -1}}
  %0 = relay.get_item %t[-1] : tuple<tensor<2x3xf32>, tensor<2x3xf32>> -> tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>, %t: tuple<tensor<2x3xf32>, tensor<2x3xf32>>) -> tensor<2x3xf32> {
  // expected-error@+1 {{result type mismatch: expected tensor<2x3xf32> (element 0), got tensor<3xf32>}}
  %0 = relay.get_item %t[0] : tuple<tensor<2x3xf32>, tensor<2x3xf32>> -> tensor<3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{result type mismatch: expected tuple<tensor<2x3xf32>>, got tuple<tensor<3xf32>>}}
  %0 = "relay.tuple"(%x) : (tensor<2x3xf32>) -> tuple<tensor<3xf32>>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{result type mismatch: expected tensor<2xf32> (the value's), got tensor<3xf32>}}
  %0 = "relay.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{result type mismatch: expected tensor<2x3xf32> (the operand's), got tensor<3x2xf32>}}
  %0 = "relay.on_device"(%x) <{device = #target.vdevice<cpu>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{the fixed form of relay.on_device needs a device that is not fully unconstrained}}
  %0 = relay.on_device %x to #target.vdevice<?> fixed : tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{the normal form of relay.on_device needs a device that is not fully unconstrained}}
  %0 = "relay.on_device"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{the free form of relay.on_device (constrain_body = false, constrain_result = false) takes no device, got #target.vdevice<cuda>}}
  %0 = "relay.on_device"(%x) <{device = #target.vdevice<cuda>, constrain_body = false}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'constrain_result' must be true or false, got 1 : i64}}
  %0 = "relay.on_device"(%x) <{device = #target.vdevice<cuda>, constrain_result = 1}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{the source device must not be fully unconstrained}}
  %0 = relay.device_copy %x from #target.vdevice<?> to #target.vdevice<cuda> : tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{the destination device must not be fully unconstrained}}
  %0 = relay.device_copy %x from #target.vdevice<cpu> to #target.vdevice<?> : tensor<2x3xf32>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{result type mismatch: expected tensor<2x3xf32> (the operand's), got tensor<6xf32>}}
  %0 = "relay.device_copy"(%x) <{src = #target.vdevice<cpu>, dst = #target.vdevice<cuda>}> : (tensor<2x3xf32>) -> tensor<6xf32>
  relay.return %x : tensor<2x3xf32>
}
// -----

// Functions, calls, control flow, device operators and their syntax.

// expected-error@+1 {{a relay function has exactly one result, got 2}}
"relay.func"() <{sym_name = "f", function_type = (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)}> ({
^bb0(%x: tensor<2xf32>):
  "relay.return"(%x) : (tensor<2xf32>) -> ()
}) : () -> ()

// -----

// expected-error@+1 {{the body must have exactly one block, got 2}}
"relay.func"() <{sym_name = "f", function_type = (tensor<2xf32>) -> tensor<2xf32>}> ({
^bb0(%x: tensor<2xf32>):
  "relay.return"(%x) : (tensor<2xf32>) -> ()
^bb1:
  "relay.return"(%x) : (tensor<2xf32>) -> ()
}) : () -> ()

// -----

// expected-error@+1 {{parameter types (tensor<3xf32>) do not match the function type's inputs (tensor<2xf32>)}}
"relay.func"() <{sym_name = "f", function_type = (tensor<2xf32>) -> tensor<2xf32>}> ({
^bb0(%x: tensor<3xf32>):
  "relay.return"(%x) : (tensor<3xf32>) -> ()
}) : () -> ()

// -----

// expected-error@+1 {{the body must end with relay.return}}
relay.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = relay.exp %x : tensor<2xf32>
}

// -----

// expected-error@+1 {{arg_attrs has 1 entries, expected 2}}
"relay.func"() <{sym_name = "f", function_type = (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>, arg_attrs = [{}]}> ({
^bb0(%x: tensor<2xf32>, %y: tensor<2xf32>):
  "relay.return"(%x) : (tensor<2xf32>) -> ()
}) : () -> ()

// -----

// expected-error@+1 {{arg_attrs[0]: 'vdevice' must be a #target.vdevice, got "cuda"}}
relay.func @f(%x: tensor<2xf32> {vdevice = "cuda"}) -> tensor<2xf32> {
  relay.return %x : tensor<2xf32>
}

// -----

// expected-error@+1 {{res_attrs[0]: 'vdevice' must be a #target.vdevice, got 0 : i64}}
relay.func @f(%x: tensor<2xf32>) -> (tensor<2xf32> {vdevice = 0}) {
  relay.return %x : tensor<2xf32>
}

// -----

// expected-error@+1 {{function attribute 'Primitive' must be a unit attribute, got 1 : i64}}
relay.func @f(%x: tensor<2xf32>) -> tensor<2xf32> attributes {Primitive = 1} {
  relay.return %x : tensor<2xf32>
}

// -----

// expected-error@+1 {{function attribute 'Compiler' must be a string, got unit}}
relay.func @f(%x: tensor<2xf32>) -> tensor<2xf32> attributes {Compiler} {
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{function attribute 'Composite' must be a string, got 3 : i64}}
  %f = relay.fn (%a: tensor<2xf32>) -> tensor<2xf32> attributes {Composite = 3} {
    relay.return %a : tensor<2xf32>
  }
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{returned type tensor<2xf32> does not match the function's result type tensor<3xf32>}}
  relay.return %x : tensor<2xf32>
}

// -----

%x = "test.op"() : () -> tensor<2xf32>
// expected-error@+1 {{'relay.return' expects parent op to be one of 'relay.func', 'relay.fn'}}
relay.return %x : tensor<2xf32>

// -----

relay.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{@nope could not be found in the symbol table}}
  %0 = relay.call @nope(%x) : (tensor<2xf32>) -> tensor<2xf32>
  relay.return %x : tensor<2xf32>
}

// -----

func.func @g() {
  func.return
}
relay.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{@g is a func.func, not a relay.func or a tir.prim_func}}
  %0 = relay.call @g() : () -> tensor<2xf32>
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{@f takes 1 argument(s), but the call passes 2}}
  %0 = relay.call @f(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>, %y: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{argument 1 of the call to @f: expected tensor<3xf32>, got tensor<2xf32>}}
  %0 = relay.call @f(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{result type of the call to @f: expected tensor<2xf32>, got tensor<?xf32>}}
  %0 = relay.call @f(%x) : (tensor<2xf32>) -> tensor<?xf32>
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>, %g: (tensor<2xf32>) -> tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{the callee takes 1 argument(s), but the call passes 2}}
  %0 = "relay.call_indirect"(%g, %x, %x) : ((tensor<2xf32>) -> tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>, %g: (tensor<3xf32>) -> tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{argument 0 of the call to the callee: expected tensor<3xf32>, got tensor<2xf32>}}
  %0 = "relay.call_indirect"(%g, %x) : ((tensor<3xf32>) -> tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>, %g: (tensor<2xf32>) -> tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{result type of the call to the callee: expected tensor<2xf32>, got tensor<3xf32>}}
  %0 = "relay.call_indirect"(%g, %x) : ((tensor<2xf32>) -> tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>, %c: tensor<2xi1>) -> tensor<2xf32> {
  // expected-error@+1 {{the condition must be a tensor<i1>, got tensor<2xi1>}}
  %0 = relay.if %c : tensor<2xi1> -> tensor<2xf32> {
    relay.yield %x : tensor<2xf32>
  } else {
    relay.yield %x : tensor<2xf32>
  }
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>, %c: tensor<i1>) -> tensor<2xf32> {
  // expected-error@+1 {{the then branch must be one block without arguments}}
  %0 = "relay.if"(%c) ({
  ^bb0(%a: tensor<2xf32>):
    "relay.yield"(%a) : (tensor<2xf32>) -> ()
  }, {
    "relay.yield"(%x) : (tensor<2xf32>) -> ()
  }) : (tensor<i1>) -> tensor<2xf32>
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>, %c: tensor<i1>) -> tensor<2xf32> {
  // expected-error@+1 {{the else branch must end with relay.yield}}
  %0 = relay.if %c : tensor<i1> -> tensor<2xf32> {
    relay.yield %x : tensor<2xf32>
  } else {
    %1 = relay.exp %x : tensor<2xf32>
  }
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>, %c: tensor<i1>) -> tensor<3xf32> {
  %0 = relay.if %c : tensor<i1> -> tensor<3xf32> {
    // expected-error@+1 {{yielded type tensor<2xf32> does not match the relay.if result type tensor<3xf32>}}
    relay.yield %x : tensor<2xf32>
  } else {
    relay.yield %x : tensor<2xf32>
  }
  relay.return %0 : tensor<3xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'device' is part of the op's syntax and cannot be given in its attribute dictionary}}
  %0 = relay.on_device %x to #target.vdevice<cpu> {device = #target.vdevice<cpu>} : tensor<2xf32>
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{expected a #target.vdevice, got #target.target<"cuda">}}
  %0 = relay.on_device %x to #target.target<"cuda"> : tensor<2xf32>
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{expected 'to <vdevice>' or 'free'}}
  %0 = relay.on_device %x on #target.vdevice<cpu> : tensor<2xf32>
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{expected a function type, got tensor<2xf32>}}
  %0 = relay.call @f(%x) : tensor<2xf32>
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{expected exactly one result type, got (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)}}
  %0 = relay.call @f(%x) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{expected a tuple type, got tensor<2xf32>}}
  %0 = relay.tuple(%x) : tensor<2xf32>
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{expected a dense tensor attribute (dense<...> : tensor<...>), got 1.000000e+00 : f32}}
  %0 = relay.constant 1.0 : f32
  relay.return %x : tensor<2xf32>
}

// -----

// expected-error@+1 {{Attribute dictionary entry 'arg_attrs' is already passed through the operation custom assembly format}}
relay.func @f(%x: tensor<2xf32>) -> tensor<2xf32> attributes {arg_attrs = []} {
  relay.return %x : tensor<2xf32>
}

// -----

relay.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{result type mismatch: expected tensor<2xi64>, got tensor<3xi64>}}
  %0 = relay.shape_of %x : (tensor<2x3xf32>) -> tensor<3xi64>
  relay.return %x : tensor<2x3xf32>
}

// -----

relay.func @f(%x: tensor<5x3xf32>, %i: tensor<2xf32>) -> tensor<5x3xf32> {
  // expected-error@+1 {{indices must be integers, got f32}}
  %0 = relay.take %x, %i : (tensor<5x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  relay.return %x : tensor<5x3xf32>
}

// -----

relay.func @f(%x: tensor<5x3xf32>, %i: tensor<2xi64>) -> tensor<5x3xf32> {
  // expected-error@+1 {{axis 2 is out of range: expected -2 <= axis < 2}}
  %0 = relay.take %x, %i {axis = 2 : i64} : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<5x2xf32>
  relay.return %x : tensor<5x3xf32>
}

// -----

relay.func @f(%x: tensor<5x3xf32>, %i: tensor<2xi64>) -> tensor<5x3xf32> {
  // expected-error@+1 {{result type mismatch: expected tensor<2x3xf32>, got tensor<5x3xf32>}}
  %0 = relay.take %x, %i : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<5x3xf32>
  relay.return %x : tensor<5x3xf32>
}

// -----

relay.func @f(%x: tensor<1x4x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x4x5x5xf32> {
  // expected-error@+1 {{weight expects 3 input channels, but the data has 4}}
  %0 = relay.nn.conv2d_transpose %x, %w : (tensor<1x4x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x7x7xf32>
  relay.return %x : tensor<1x4x5x5xf32>
}

// -----

relay.func @f(%x: tensor<1x4x5x5xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x5x5xf32> {
  // expected-error@+1 {{output_padding (2) must be smaller than the stride or the dilation (2)}}
  %0 = relay.nn.conv2d_transpose %x, %w {strides = array<i64: 2, 2>, output_padding = array<i64: 2, 0>} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x13x11xf32>
  relay.return %x : tensor<1x4x5x5xf32>
}

// -----

relay.func @f(%x: tensor<1x4x2x2xf32>, %w: tensor<4x2x1x1xf32>) -> tensor<1x4x2x2xf32> {
  // expected-error@+1 {{padding (2) leaves no output of an input of size 2}}
  %0 = relay.nn.conv2d_transpose %x, %w {padding = array<i64: 1, 0, 1, 0>} : (tensor<1x4x2x2xf32>, tensor<4x2x1x1xf32>) -> tensor<1x2x0x2xf32>
  relay.return %x : tensor<1x4x2x2xf32>
}

// -----

relay.func @f(%x: tensor<1x4x5x5xf32>, %w: tensor<2x4x1x1x1xf32>) -> tensor<1x4x5x5xf32> {
  // expected-error@+1 {{conv3d data (NCDHW) must have rank 5, got shape [1, 4, 5, 5]}}
  %0 = relay.nn.conv3d %x, %w : (tensor<1x4x5x5xf32>, tensor<2x4x1x1x1xf32>) -> tensor<1x2x5x5x5xf32>
  relay.return %x : tensor<1x4x5x5xf32>
}

// -----

relay.func @f(%x: tensor<1x4x5x5x5xf32>) -> tensor<1x4x5x5x5xf32> {
  // expected-error@+1 {{window of extent 7 does not fit in the padded input of size 5}}
  %0 = relay.nn.max_pool3d %x {pool_size = array<i64: 2, 7, 2>} : (tensor<1x4x5x5x5xf32>) -> tensor<1x4x4x1x4xf32>
  relay.return %x : tensor<1x4x5x5x5xf32>
}

// -----

relay.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'dtype' must be a float or integer type, got index}}
  %0 = relay.cast %x {dtype = index} : (tensor<4xf32>) -> tensor<4xindex>
  relay.return %x : tensor<4xf32>
}

// -----

relay.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{result type mismatch: expected tensor<4xi32>, got tensor<4xf32>}}
  %0 = relay.cast %x {dtype = i32} : (tensor<4xf32>) -> tensor<4xf32>
  relay.return %x : tensor<4xf32>
}

// -----

relay.func @f(%x: tensor<3xf32>, %i: tensor<3xi32>) -> tensor<3xf32> {
  // expected-error@+1 {{element type mismatch: operand 0 is f32, operand 1 is i32}}
  %0 = relay.less %x, %i : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xi1>
  relay.return %x : tensor<3xf32>
}

// -----

relay.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{operand 0 must be of i1, got f32}}
  %0 = relay.logical_not %x : tensor<3xf32>
  relay.return %x : tensor<3xf32>
}

// -----

relay.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{the condition must be of i1, got f32}}
  %0 = relay.where %x, %x, %x : tensor<3xf32>
  relay.return %x : tensor<3xf32>
}

// -----

// Dense weight layouts: NK or NK<b>n (panels of b outputs), whose weight must match `units`.
relay.func @f(%x: tensor<4x5xf32>, %w: tensor<7x5xf32>) -> tensor<4x7xf32> {
  // expected-error@+1 {{'weight_layout' must be "NK" or "NK<b>n" (b >= 1), got "KN"}}
  %0 = relay.nn.dense %x, %w {weight_layout = "KN"} : (tensor<4x5xf32>, tensor<7x5xf32>) -> tensor<4x7xf32>
  relay.return %0 : tensor<4x7xf32>
}

// -----

relay.func @f(%x: tensor<4x5xf32>, %w: tensor<2x5x4xf32>) -> tensor<4x7xf32> {
  // expected-error@+1 {{weight_layout "NK4n" needs 'units'}}
  %0 = relay.nn.dense %x, %w {weight_layout = "NK4n"} : (tensor<4x5xf32>, tensor<2x5x4xf32>) -> tensor<4x7xf32>
  relay.return %0 : tensor<4x7xf32>
}

// -----

relay.func @f(%x: tensor<4x5xf32>, %w: tensor<2x5x4xf32>) -> tensor<4x9xf32> {
  // expected-error@+1 {{a weight in layout NK4n for 9 units has shape [3, K, 4], got [2, 5, 4]}}
  %0 = relay.nn.dense %x, %w {weight_layout = "NK4n", units = 9 : i64} : (tensor<4x5xf32>, tensor<2x5x4xf32>) -> tensor<4x9xf32>
  relay.return %0 : tensor<4x9xf32>
}

// -----

relay.func @f(%x: tensor<4x5xf32>, %w: tensor<7x5xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'units' is 8 but the weight has 7 rows}}
  %0 = relay.nn.dense %x, %w {units = 8 : i64} : (tensor<4x5xf32>, tensor<7x5xf32>) -> tensor<4x8xf32>
  relay.return %0 : tensor<4x8xf32>
}

// -----

relay.func @f(%x: tensor<4x5xf32>) -> tensor<4xi64> {
  // expected-error@+1 {{axis 2 is out of range for rank 2}}
  %0 = relay.arange_like %x {axis = 2 : i64, dtype = i64} : (tensor<4x5xf32>) -> tensor<4xi64>
  relay.return %0 : tensor<4xi64>
}

// -----

relay.func @f(%x: tensor<6xf32>, %l: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{cannot reshape [6] (6 elements) to [2, 2] (4 elements)}}
  %0 = relay.reshape_like %x, %l : (tensor<6xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  relay.return %0 : tensor<2x2xf32>
}
