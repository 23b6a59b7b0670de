// RUN: hetero-opt %s -p fold-constant --split-input-file | filecheck %s
// RUN: hetero-opt %s -p fold-constant --split-input-file > %t && hetero-opt %t -p fold-constant --split-input-file | diff %t -

// A chain of operators on constants folds to one constant (computed by the
// reference interpreter); the inputs, now unused, are erased.  The op that
// also reads the parameter stays.
relay.func @chain(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = relay.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %b = relay.constant dense<2.0> : tensor<2xf32>
  %0 = relay.multiply %a, %b : tensor<2xf32>
  %1 = relay.exp %0 : tensor<2xf32>
  %2 = relay.negative %1 : tensor<2xf32>
  %3 = relay.add %x, %2 : tensor<2xf32>
  relay.return %3 : tensor<2xf32>
}

// CHECK-LABEL: relay.func @chain
// CHECK-NEXT:    %0 = relay.constant dense<[-7.38905573, -2980.95801]> : tensor<2xf32>
// CHECK-NEXT:    %1 = relay.add %x, %0 : tensor<2xf32>
// CHECK-NEXT:    relay.return %1 : tensor<2xf32>

// -----

// Attribute-carrying operators fold with their attributes; the folded
// constant keeps the op's vdevice.  shape_of of a static tensor is its shape,
// even when the tensor is not constant.
relay.func @attrs(%x: tensor<2x3xf32>) -> tensor<2xi64> {
  %w = relay.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = relay.transpose %w {axes = array<i64: 1, 0>, vdevice = #target.vdevice<cpu:1>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %r = relay.reshape %t {newshape = array<i64: 6>} : (tensor<3x2xf32>) -> tensor<6xf32>
  %s = relay.shape_of %x : (tensor<2x3xf32>) -> tensor<2xi64>
  relay.return %s : tensor<2xi64>
}

// CHECK-LABEL: relay.func @attrs
// CHECK-NEXT:    %s = relay.constant dense<[2, 3]> : tensor<2xi64>
// CHECK-NEXT:    relay.return %s : tensor<2xi64>

// -----

// Placement and control are never folded through.
relay.func @placement() -> tensor<2xf32> {
  %a = relay.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = relay.on_device %a to #target.vdevice<cpu:0> fixed : tensor<2xf32>
  %1 = relay.device_copy %0 from #target.vdevice<cpu:0> to #target.vdevice<cpu:1> : tensor<2xf32>
  %2 = relay.exp %1 : tensor<2xf32>
  relay.return %2 : tensor<2xf32>
}

// CHECK-LABEL: relay.func @placement
// CHECK-NEXT:    relay.constant
// CHECK-NEXT:    relay.on_device
// CHECK-NEXT:    relay.device_copy
// CHECK-NEXT:    relay.exp

// -----

// A large folded value is stored as a dense_resource blob.
relay.func @large() -> tensor<100xf32> {
  %a = relay.constant dense<1.5> : tensor<100xf32>
  %0 = relay.relu %a : tensor<100xf32>
  relay.return %0 : tensor<100xf32>
}

// CHECK-LABEL: relay.func @large
// CHECK-NEXT:    %0 = relay.constant dense_resource<relu{{.*}}> : tensor<100xf32>

// -----

// Boolean results are not folded (their storage convention is the
// interpreter's business), though their operands are constants.
relay.func @boolean() -> tensor<2xi1> {
  %a = relay.constant dense<[true, false]> : tensor<2xi1>
  %0 = relay.reshape %a {newshape = array<i64: 2>} : (tensor<2xi1>) -> tensor<2xi1>
  relay.return %0 : tensor<2xi1>
}

// CHECK-LABEL: relay.func @boolean
// CHECK-NEXT:    relay.constant
// CHECK-NEXT:    relay.reshape

// -----

// A relay.if of a constant condition becomes its taken branch: the branch's
// ops move before it (a nested if of a constant folds too), its yielded value
// replaces the if's; the untaken branch and the condition are gone.
relay.func @taken(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %t = relay.constant dense<true> : tensor<i1>
  %f = relay.constant dense<false> : tensor<i1>
  %0 = relay.if %t : tensor<i1> -> tensor<2xf32> {
    %e = relay.exp %x : tensor<2xf32>
    %1 = relay.if %f : tensor<i1> -> tensor<2xf32> {
      relay.yield %e : tensor<2xf32>
    } else {
      %n = relay.negative %e : tensor<2xf32>
      relay.yield %n : tensor<2xf32>
    }
    relay.yield %1 : tensor<2xf32>
  } else {
    %s = relay.sigmoid %y : tensor<2xf32>
    relay.yield %s : tensor<2xf32>
  }
  %2 = relay.if %f : tensor<i1> -> tensor<2xf32> {
    relay.yield %x : tensor<2xf32>
  } else {
    relay.yield %y : tensor<2xf32>
  }
  %3 = relay.add %0, %2 : tensor<2xf32>
  relay.return %3 : tensor<2xf32>
}

// CHECK-LABEL: relay.func @taken
// CHECK-NEXT:    %e = relay.exp %x : tensor<2xf32>
// CHECK-NEXT:    %n = relay.negative %e : tensor<2xf32>
// CHECK-NEXT:    %0 = relay.add %n, %y : tensor<2xf32>
// CHECK-NEXT:    relay.return %0 : tensor<2xf32>

// -----

// An if whose condition is not a constant stays; so does a constant-condition
// if placed elsewhere than its taken value (that placement is a copy).
relay.func @kept(%x: tensor<2xf32>, %c: tensor<i1>) -> tensor<2xf32> {
  %t = relay.constant dense<true> : tensor<i1>
  %0 = relay.if %c : tensor<i1> -> tensor<2xf32> {
    relay.yield %x : tensor<2xf32>
  } else {
    %n = relay.negative %x : tensor<2xf32>
    relay.yield %n : tensor<2xf32>
  }
  %1 = relay.if %t {vdevice = #target.vdevice<cpu:1>} : tensor<i1> -> tensor<2xf32> {
    relay.yield %0 : tensor<2xf32>
  } else {
    relay.yield %x : tensor<2xf32>
  }
  relay.return %1 : tensor<2xf32>
}

// CHECK-LABEL: relay.func @kept
// CHECK-NEXT:    %t = relay.constant dense<true> : tensor<i1>
// CHECK-NEXT:    %0 = relay.if %c : tensor<i1> -> tensor<2xf32> {
// CHECK:         %1 = relay.if %t {vdevice = #target.vdevice<cpu:1>} : tensor<i1> -> tensor<2xf32> {
