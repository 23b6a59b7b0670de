// RUN: hetero-opt %s -p simplify-inference --split-input-file | filecheck %s
// RUN: hetero-opt %s -p simplify-inference,fold-constant --split-input-file | filecheck %s --check-prefix=FOLDED

// batch_norm on NCHW data: scale s = γ/√(σ²+ε) broadcast as [C,1,1], shift
// β − μ·s as a bias_add on axis 1.
relay.func @nchw(%x: tensor<1x2x3x3xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %0 = relay.nn.batch_norm %x, %g, %b, %m, %v {epsilon = 1.0e-3 : f64} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  relay.return %0 : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: relay.func @nchw
// CHECK-NEXT:    %[[EPS:.*]] = relay.constant dense<1.000000e-03> : tensor<f32>
// CHECK-NEXT:    %[[VE:.*]] = relay.add %v, %[[EPS]]
// CHECK-NEXT:    %[[ROOT:.*]] = relay.sqrt %[[VE]]
// CHECK-NEXT:    %[[S:.*]] = relay.divide %g, %[[ROOT]]
// CHECK-NEXT:    %[[MS:.*]] = relay.multiply %m, %[[S]]
// CHECK-NEXT:    %[[SHIFT:.*]] = relay.subtract %b, %[[MS]]
// CHECK-NEXT:    %[[S3:.*]] = relay.expand_dims %[[S]] {axis = 1 : i64, num_newaxis = 2 : i64} : (tensor<2xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[Y:.*]] = relay.multiply %x, %[[S3]]
// CHECK-NEXT:    %{{.*}} = relay.nn.bias_add %[[Y]], %[[SHIFT]] {axis = 1 : i64}

// -----

// On the last axis (dense outputs) the scale needs no new dimensions.
// Constant statistics fold to two constants.
relay.func @last_axis(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %g = relay.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %b = relay.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %m = relay.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %v = relay.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %0 = relay.nn.batch_norm %x, %g, %b, %m, %v {axis = 1 : i64, epsilon = 0.0 : f64} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  relay.return %0 : tensor<4x2xf32>
}

// CHECK-LABEL: relay.func @last_axis
// CHECK-NOT:     relay.expand_dims
// CHECK:         relay.multiply %x, %{{.*}} : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>

// FOLDED-LABEL: relay.func @last_axis
// FOLDED-NEXT:    %[[S:.*]] = relay.constant dense<1.000000e+00> : tensor<2xf32>
// FOLDED-NEXT:    %[[SHIFT:.*]] = relay.constant dense<[-1.000000e+00, 1.000000e+00]> : tensor<2xf32>
// FOLDED-NEXT:    %[[Y:.*]] = relay.multiply %x, %[[S]] : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// FOLDED-NEXT:    relay.nn.bias_add %[[Y]], %[[SHIFT]] {axis = 1 : i64}
