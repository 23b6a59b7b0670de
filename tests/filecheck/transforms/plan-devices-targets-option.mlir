// RUN: hetero-opt %s -p 'plan-devices{targets="cuda"}' --split-input-file | filecheck %s
// RUN: not hetero-opt %s -p 'plan-devices{targets="llvm,tpu"}' 2>&1 | filecheck %s --check-prefix=BAD

// `targets` fills a missing configuration ...
builtin.module {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    relay.return %a : tensor<4xf32>
  }
}

// CHECK: builtin.module attributes {target.config = #target.config<[#target.target<"cuda">]>} {
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {

// -----

// ... but never overrides the module's own.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    relay.return %a : tensor<4xf32>
  }
}

// CHECK: builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) {

// BAD: error: plan-devices: bad targets 'llvm,tpu': unknown target kind 'tpu'
