// RUN: hetero-opt %s -p plan-devices --split-input-file | filecheck %s
// RUN: hetero-opt %s -p plan-devices --split-input-file > %t && hetero-opt %t -p plan-devices --split-input-file | diff %t -

// Shapes are host data: computed on the host device while the measured
// tensor stays on the GPU, with no copy of it; the shape arithmetic follows.
builtin.module attributes {target.config = #target.config<[#target.target<"cuda">, #target.target<"llvm">], fallback = cuda>} {
  relay.func @main(%x: tensor<?x3xf32> {vdevice = #target.vdevice<cuda>}) -> tensor<2xi64> {
    %0 = relay.exp %x : tensor<?x3xf32>
    %s = relay.shape_of %0 : (tensor<?x3xf32>) -> tensor<2xi64>
    %t = relay.add %s, %s : tensor<2xi64>
    relay.return %t : tensor<2xi64>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%x: tensor<?x3xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<2xi64> {vdevice = #target.vdevice<cpu:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.exp %x {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<?x3xf32>
// CHECK-NEXT: %s = relay.shape_of %0 {vdevice = #target.vdevice<cpu:0{{.*}}>} : (tensor<?x3xf32>) -> tensor<2xi64>
// CHECK-NEXT: %t = relay.add %s, %s {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<2xi64>
// CHECK-NEXT: relay.return %t : tensor<2xi64>
// CHECK-NEXT: }
// CHECK-NEXT: }
