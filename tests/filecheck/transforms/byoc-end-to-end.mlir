// RUN: hetero-opt %s -p plan-devices,merge-composite,annotate-target,merge-compiler-regions,partition-graph,outline-compiler-functions,mark-compiler-functions-as-extern | filecheck %s
// RUN: hetero-opt %s -p plan-devices,merge-composite,annotate-target,merge-compiler-regions,partition-graph,outline-compiler-functions,mark-compiler-functions-as-extern,verify-devices,plan-devices,verify-devices > /dev/null

// dense → relu → conv2d on the GPU, a matmul on the CPU, with the regular
// target of each device type first and the external kinds after it: the
// dense goes to cuBLAS, the convolution to cuDNN, the matmul to the CPU BLAS;
// the relu and reshape stay with cuda.  Each partition is outlined and
// marked extern; calls keep their devices, and the planned module still
// verifies (and re-plans to itself) after partitioning.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">, #target.target<"cublas">, #target.target<"cudnn">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %k: tensor<2x1x3x3xf32>, %a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tuple<tensor<1x2x2x14xf32>, tensor<3x5xf32>> {
    %d = relay.nn.dense %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    %r = relay.relu %d : tensor<4x16xf32>
    %s = relay.reshape %r {newshape = array<i64: 1, 1, 4, 16>} : (tensor<4x16xf32>) -> tensor<1x1x4x16xf32>
    %c = relay.nn.conv2d %s, %k : (tensor<1x1x4x16xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x2x14xf32>
    %cg = relay.on_device %c to #target.vdevice<cuda> : tensor<1x2x2x14xf32>
    %m = relay.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
    %t = relay.tuple(%cg, %m) : tuple<tensor<1x2x2x14xf32>, tensor<3x5xf32>>
    relay.return %t : tuple<tensor<1x2x2x14xf32>, tensor<3x5xf32>>
  }
}

// CHECK:      relay.func @cublas_main_0(%x: tensor<4x8xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}, %w: tensor<16x8xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4x16xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) attributes {Extern} {
// CHECK-NEXT:   %[[F:.*]] = relay.fn {{.*}} attributes {vdevice = #target.vdevice<cuda:0{{.*}}>, Composite = "cublas.dense"} {
// CHECK-NEXT:     relay.nn.dense
// CHECK-NEXT:     relay.return
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[C:.*]] = relay.call_indirect %[[F]](%x, %w)
// CHECK-NEXT:   relay.return %[[C]]
// CHECK-NEXT: }
// CHECK-NEXT: relay.func @cudnn_main_0(%s: tensor<1x1x4x16xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}, %k: tensor<2x1x3x3xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<1x2x2x14xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) attributes {Extern} {
// CHECK-NEXT:   %[[G:.*]] = relay.fn {{.*}} Composite = "cudnn.conv2d"} {
// CHECK-NEXT:     relay.nn.conv2d
// CHECK-NEXT:     relay.return
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[D:.*]] = relay.call_indirect %[[G]](%s, %k)
// CHECK-NEXT:   relay.return %[[D]]
// CHECK-NEXT: }
// CHECK-NEXT: relay.func @blas_main_0(%a: tensor<3x4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}, %b: tensor<4x5xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) -> (tensor<3x5xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) attributes {Extern} {
// CHECK-NEXT:   %[[H:.*]] = relay.fn {{.*}} Composite = "blas.matmul"} {
// CHECK-NEXT:     relay.matmul
// CHECK-NEXT:     relay.return
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[E:.*]] = relay.call_indirect %[[H]](%a, %b)
// CHECK-NEXT:   relay.return %[[E]]
// CHECK-NEXT: }
// CHECK-NEXT: relay.func @main(
// CHECK-NEXT:   %d = relay.call @cublas_main_0(%x, %w) {vdevice = #target.vdevice<cuda:0{{.*}}>}
// CHECK-NEXT:   %r = relay.relu %d {vdevice = #target.vdevice<cuda:0{{.*}}>}
// CHECK-NEXT:   %s = relay.reshape %r {{.*}}vdevice = #target.vdevice<cuda:0{{.*}}>}
// CHECK-NEXT:   %c = relay.call @cudnn_main_0(%s, %k) {vdevice = #target.vdevice<cuda:0{{.*}}>}
// CHECK-NEXT:   %cg = relay.device_copy %c
// CHECK-NEXT:   %m = relay.call @blas_main_0(%a, %b) {vdevice = #target.vdevice<cpu:0{{.*}}>}
// CHECK-NEXT:   %t = relay.tuple(%cg, %m)
// CHECK-NEXT:   relay.return %t
