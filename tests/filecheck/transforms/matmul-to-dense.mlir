// RUN: hetero-opt %s -p matmul-to-dense --split-input-file | filecheck %s

// A 3-D activation by a constant 2-D weight: a dense layer over the 4 rows,
// the weight transposed at compile time to dense's [N, K]; the bias add and
// the activation after it compute on the rows, the reshape back sunk after them.
relay.func @rows_3d(%x: tensor<1x4x3xf32>) -> tensor<1x4x2xf32> {
  %w = relay.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %b = relay.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %0 = relay.matmul %x, %w : (tensor<1x4x3xf32>, tensor<3x2xf32>) -> tensor<1x4x2xf32>
  %1 = relay.add %0, %b : (tensor<1x4x2xf32>, tensor<2xf32>) -> tensor<1x4x2xf32>
  %2 = relay.relu %1 : tensor<1x4x2xf32>
  relay.return %2 : tensor<1x4x2xf32>
}

// CHECK-LABEL: relay.func @rows_3d
// CHECK-NEXT:    %[[B:.*]] = relay.constant dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>
// CHECK-NEXT:    %[[X:.*]] = relay.reshape %x {newshape = array<i64: 4, 3>} : (tensor<1x4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %[[W:.*]] = relay.constant dense<{{\[\[}}1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT:    %[[D:.*]] = relay.nn.dense %[[X]], %[[W]] : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    %[[A:.*]] = relay.add %[[D]], %[[B]] : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    %[[R:.*]] = relay.relu %[[A]] : tensor<4x2xf32>
// CHECK-NEXT:    %[[Y:.*]] = relay.reshape %[[R]] {newshape = array<i64: 1, 4, 2>} : (tensor<4x2xf32>) -> tensor<1x4x2xf32>
// CHECK-NEXT:    relay.return %[[Y]]

// -----

// 4-D, with a weight the same for every batch ([1, K, N]) and a bias of
// shape [1, 1, 1, N] (reshaped to [N] and folded); the next layer's input
// reshape meets the first's reshape back: the two cancel, the rows flow on.
relay.func @rows_4d(%x: tensor<2x3x2x3xf32>) -> tensor<2x3x2x2xf32> {
  %w = relay.constant dense<1.0> : tensor<1x3x2xf32>
  %b = relay.constant dense<[[[[0.5, -0.5]]]]> : tensor<1x1x1x2xf32>
  %v = relay.constant dense<2.0> : tensor<2x2xf32>
  %0 = relay.matmul %x, %w : (tensor<2x3x2x3xf32>, tensor<1x3x2xf32>) -> tensor<2x3x2x2xf32>
  %1 = relay.add %0, %b : (tensor<2x3x2x2xf32>, tensor<1x1x1x2xf32>) -> tensor<2x3x2x2xf32>
  %2 = relay.matmul %1, %v : (tensor<2x3x2x2xf32>, tensor<2x2xf32>) -> tensor<2x3x2x2xf32>
  relay.return %2 : tensor<2x3x2x2xf32>
}

// CHECK-LABEL: relay.func @rows_4d
// CHECK-NEXT:    %[[X:.*]] = relay.reshape %x {newshape = array<i64: 12, 3>} : (tensor<2x3x2x3xf32>) -> tensor<12x3xf32>
// CHECK-NEXT:    %[[W:.*]] = relay.constant dense<1.000000e+00> : tensor<2x3xf32>
// CHECK-NEXT:    %[[D:.*]] = relay.nn.dense %[[X]], %[[W]] : (tensor<12x3xf32>, tensor<2x3xf32>) -> tensor<12x2xf32>
// CHECK-NEXT:    %[[B:.*]] = relay.constant dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>
// CHECK-NEXT:    %[[A:.*]] = relay.add %[[D]], %[[B]] : (tensor<12x2xf32>, tensor<2xf32>) -> tensor<12x2xf32>
// CHECK-NEXT:    %[[V:.*]] = relay.constant dense<2.000000e+00> : tensor<2x2xf32>
// CHECK-NEXT:    %[[E:.*]] = relay.nn.dense %[[A]], %[[V]] : (tensor<12x2xf32>, tensor<2x2xf32>) -> tensor<12x2xf32>
// CHECK-NEXT:    %[[Y:.*]] = relay.reshape %[[E]] {newshape = array<i64: 2, 3, 2, 2>}
// CHECK-NEXT:    relay.return %[[Y]]

// -----

// A 2-D matmul by a constant is a dense layer with no reshape.
relay.func @rows_2d(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = relay.constant dense<1.0> : tensor<3x2xf32>
  %0 = relay.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  relay.return %0 : tensor<4x2xf32>
}

// CHECK-LABEL: relay.func @rows_2d
// CHECK-NEXT:    %[[W:.*]] = relay.constant dense<1.000000e+00> : tensor<2x3xf32>
// CHECK-NEXT:    %[[D:.*]] = relay.nn.dense %x, %[[W]] : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    relay.return %[[D]]

// -----

// Left alone: a weight computed at run time, attention's product of two
// activations, a weight with a real batch ([2, K, N]).
relay.func @kept(%x: tensor<1x4x3xf32>, %w: tensor<3x2xf32>, %k: tensor<1x3x4xf32>) -> tuple<tensor<1x4x2xf32>, tensor<1x4x4xf32>, tensor<2x4x2xf32>> {
  %c = relay.constant dense<1.0> : tensor<2x3x2xf32>
  %0 = relay.matmul %x, %w : (tensor<1x4x3xf32>, tensor<3x2xf32>) -> tensor<1x4x2xf32>
  %1 = relay.matmul %x, %k : (tensor<1x4x3xf32>, tensor<1x3x4xf32>) -> tensor<1x4x4xf32>
  %2 = relay.matmul %x, %c : (tensor<1x4x3xf32>, tensor<2x3x2xf32>) -> tensor<2x4x2xf32>
  %3 = relay.tuple(%0, %1, %2) : tuple<tensor<1x4x2xf32>, tensor<1x4x4xf32>, tensor<2x4x2xf32>>
  relay.return %3 : tuple<tensor<1x4x2xf32>, tensor<1x4x4xf32>, tensor<2x4x2xf32>>
}

// CHECK-LABEL: relay.func @kept
// CHECK-NOT:     relay.nn.dense
// CHECK-NOT:     relay.reshape
// CHECK:         relay.return

// -----

// A reshape feeding a reduction stays; the residual add of an activation
// that is not a row reshape keeps the reshape before it (no copy of %r is
// made to move it); a bias_add (its axis names a dimension) is not moved.
relay.func @stays(%x: tensor<1x4x3xf32>, %r: tensor<1x4x2xf32>) -> tuple<tensor<1x4x2xf32>, tensor<1x4x2xf32>, tensor<1x4x1xf32>> {
  %w = relay.constant dense<1.0> : tensor<3x2xf32>
  %b = relay.constant dense<1.0> : tensor<2xf32>
  %0 = relay.matmul %x, %w : (tensor<1x4x3xf32>, tensor<3x2xf32>) -> tensor<1x4x2xf32>
  %1 = relay.add %0, %r : tensor<1x4x2xf32>
  %2 = relay.nn.bias_add %0, %b {axis = 2 : i64} : (tensor<1x4x2xf32>, tensor<2xf32>) -> tensor<1x4x2xf32>
  %3 = relay.sum %0 {axis = array<i64: 2>, keepdims = true} : (tensor<1x4x2xf32>) -> tensor<1x4x1xf32>
  %4 = relay.tuple(%1, %2, %3) : tuple<tensor<1x4x2xf32>, tensor<1x4x2xf32>, tensor<1x4x1xf32>>
  relay.return %4 : tuple<tensor<1x4x2xf32>, tensor<1x4x2xf32>, tensor<1x4x1xf32>>
}

// CHECK-LABEL: relay.func @stays
// CHECK:         %[[D:.*]] = relay.nn.dense
// CHECK-NEXT:    %[[Y:.*]] = relay.reshape %[[D]] {newshape = array<i64: 1, 4, 2>}
// CHECK-NEXT:    relay.add %[[Y]], %r
// CHECK-NEXT:    relay.nn.bias_add %[[Y]]
// CHECK-NEXT:    relay.sum %[[Y]]

// -----

// Rows known at run time only (a batch and a sequence compiled once): the
// dense layer reads `[-1, K]` rows, and its `[?, N]` result is shaped back
// like the matmul's input but for the last axis (`reshape_like`, keep = 1),
// as one `-1` could not name two sizes; the bias add and the activation
// compute on the rows, the reshape back sunk after them, and the next
// layer's `[-1, K]` rows of it are the rows themselves (shaped back like
// the first input, which holds the leading sizes).  A 2-D input needs no
// reshape.
relay.func @run_time_rows(%x: tensor<?x?x3xf32>, %y: tensor<?x3xf32>) -> tensor<?x?x3xf32> {
  %w = relay.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %v = relay.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = relay.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %0 = relay.matmul %x, %w : (tensor<?x?x3xf32>, tensor<3x2xf32>) -> tensor<?x?x2xf32>
  %1 = relay.add %0, %b : (tensor<?x?x2xf32>, tensor<2xf32>) -> tensor<?x?x2xf32>
  %2 = relay.relu %1 : tensor<?x?x2xf32>
  %3 = relay.matmul %2, %v : (tensor<?x?x2xf32>, tensor<2x3xf32>) -> tensor<?x?x3xf32>
  %4 = relay.matmul %y, %w : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  relay.return %3 : tensor<?x?x3xf32>
}

// CHECK-LABEL: relay.func @run_time_rows
// CHECK:         %[[X:.*]] = relay.reshape %x {newshape = array<i64: -1, 3>} : (tensor<?x?x3xf32>) -> tensor<?x3xf32>
// CHECK:         %[[D:.*]] = relay.nn.dense %[[X]], %{{.*}} : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x2xf32>
// CHECK-NEXT:    %[[A:.*]] = relay.add %[[D]], %{{.*}} : (tensor<?x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
// CHECK-NEXT:    %[[R:.*]] = relay.relu %[[A]] : tensor<?x2xf32>
// CHECK:         %[[E:.*]] = relay.nn.dense %[[R]], %{{.*}} : (tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:    %[[Y:.*]] = relay.reshape_like %[[E]], %x {keep = 1 : i64} : (tensor<?x3xf32>, tensor<?x?x3xf32>) -> tensor<?x?x3xf32>
// CHECK:         relay.nn.dense %y, %{{.*}} : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x2xf32>
// CHECK:         relay.return %[[Y]]
