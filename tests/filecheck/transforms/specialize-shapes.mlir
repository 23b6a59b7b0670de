// RUN: hetero-opt %s -p 'specialize-shapes{shapes=2x3x8x8,3}' | filecheck %s

// Every value computed from the parameters gets the type its operator infers
// for the new shapes, through tuples, get_item and placement; constants and
// the values computed from them only keep theirs.
relay.func @main(%x: tensor<?x3x8x8xf32>, %b: tensor<?xf32>) -> tensor<?x10xf32> {
  %w = relay.constant dense<0.1> : tensor<4x3x3x3xf32>
  %c = relay.nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x8x8xf32>
  %p = relay.nn.global_avg_pool2d %c : (tensor<?x4x8x8xf32>) -> tensor<?x4x1x1xf32>
  %f = relay.flatten %p : (tensor<?x4x1x1xf32>) -> tensor<?x4xf32>
  %wd = relay.constant dense<0.2> : tensor<10x4xf32>
  %wt = relay.negative %wd : tensor<10x4xf32>
  %d = relay.nn.dense %f, %wt : (tensor<?x4xf32>, tensor<10x4xf32>) -> tensor<?x10xf32>
  %o = relay.on_device %d to #target.vdevice<cpu> : tensor<?x10xf32>
  %t = relay.tuple(%o, %b) : tuple<tensor<?x10xf32>, tensor<?xf32>>
  %g = relay.get_item %t[0] : tuple<tensor<?x10xf32>, tensor<?xf32>> -> tensor<?x10xf32>
  %s = relay.nn.softmax %g : tensor<?x10xf32>
  relay.return %s : tensor<?x10xf32>
}

// CHECK:      relay.func @main(%x: tensor<2x3x8x8xf32>, %b: tensor<3xf32>) -> tensor<2x10xf32> {
// CHECK:        relay.nn.conv2d {{.*}} -> tensor<2x4x8x8xf32>
// CHECK-NEXT:   relay.nn.global_avg_pool2d {{.*}} -> tensor<2x4x1x1xf32>
// CHECK-NEXT:   relay.flatten {{.*}} -> tensor<2x4xf32>
// CHECK-NEXT:   relay.constant
// CHECK-NEXT:   relay.negative %wd : tensor<10x4xf32>
// CHECK-NEXT:   relay.nn.dense {{.*}} -> tensor<2x10xf32>
// CHECK-NEXT:   relay.on_device {{.*}} : tensor<2x10xf32>
// CHECK-NEXT:   relay.tuple(%o, %b) : tuple<tensor<2x10xf32>, tensor<3xf32>>
// CHECK-NEXT:   relay.get_item {{.*}} -> tensor<2x10xf32>
// CHECK-NEXT:   relay.nn.softmax %g : tensor<2x10xf32>
// CHECK-NEXT:   relay.return %s : tensor<2x10xf32>
