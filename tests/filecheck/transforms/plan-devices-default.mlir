// RUN: hetero-opt %s -p 'plan-devices{targets="llvm,cuda" default=cuda}' --split-input-file | filecheck %s
// RUN: hetero-opt %s -p 'plan-devices{targets="llvm,cuda,cublas" default=cublas}' --split-input-file | filecheck %s --check-prefix=KIND
// RUN: hetero-opt %s -p 'plan-devices{targets="llvm,cuda" default=cuda}' --split-input-file > %t && hetero-opt %t -p 'plan-devices{default=cuda}' --split-input-file | diff %t -
// RUN: not hetero-opt %s -p 'plan-devices{targets="llvm,cuda" default=gpu}' --split-input-file 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not hetero-opt %s -p 'plan-devices{targets="llvm" default=cuda}' --split-input-file 2>&1 | filecheck %s --check-prefix=MISSING

// TVM's usual CPU + GPU build with the GPU as default device: `default` sets
// the configuration's fallback, so what no constraint places runs on cuda
// and only the annotated value is on the cpu.
builtin.module {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = relay.exp %a : tensor<4xf32>
    %1 = relay.on_device %0 to #target.vdevice<cpu> : tensor<4xf32>
    %2 = relay.negative %1 : tensor<4xf32>
    relay.return %2 : tensor<4xf32>
  }
}

// CHECK: builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">], fallback = cuda>} {
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.exp %a {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %1 = relay.device_copy %0 from #target.vdevice<cpu:0{{.*}}> to #target.vdevice<cuda:0{{.*}}> {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %2 = relay.negative %1 {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>

// A target kind stands for its device type: cuBLAS's is cuda, whose regular
// target (cuda, not the library) is the default device's.
// KIND: builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">, #target.target<"cublas">], fallback = cuda>} {
// KIND: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0, target = #target.target<"cuda"{{.*}}>}) {

// UNKNOWN: error: plan-devices: unknown default device 'gpu': name a device type (cpu, cuda, {{.*}}) or a target kind
// MISSING: error: plan-devices: bad targets 'llvm': no target is given for the default device type 'cuda'

// -----

// A module's own configuration wins; a default that agrees with it is
// fine (one that does not: plan-devices-default-invalid.mlir).
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">], fallback = cuda>} {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    relay.return %a : tensor<4xf32>
  }
}

// CHECK: builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">], fallback = cuda>} {
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
