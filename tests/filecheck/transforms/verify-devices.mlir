// RUN: hetero-opt %S/plan-devices-conflicts.mlir -p plan-devices,verify-devices --split-input-file | filecheck %s --check-prefix=PLANNED
// RUN: hetero-opt %s -p verify-devices --split-input-file --verify-diagnostics

// Everything plan-devices produces verifies.
// PLANNED-COUNT-3: builtin.module

// A planned module with a consistent copy verifies.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0>}) {
    %0 = relay.exp %a {vdevice = #target.vdevice<cuda:0>} : tensor<4xf32>
    %1 = relay.device_copy %0 from #target.vdevice<cuda:0> to #target.vdevice<cpu:0> {vdevice = #target.vdevice<cpu:0>} : tensor<4xf32>
    relay.return %1 : tensor<4xf32>
  }
}

// -----

builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0>}) {
    // expected-error@+1 {{operand #0 is on cuda:0 but relay.exp expects it on cpu:0: a relay.device_copy is missing}}
    %0 = relay.exp %a {vdevice = #target.vdevice<cpu:0>} : tensor<4xf32>
    relay.return %0 : tensor<4xf32>
  }
}

// -----

builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0>}) {
    %0 = relay.exp %a {vdevice = #target.vdevice<cuda:0>} : tensor<4xf32>
    // expected-error@+1 {{operand #0 is on cuda:0 but relay.return expects it on cpu:0: a relay.device_copy is missing}}
    relay.return %0 : tensor<4xf32>
  }
}

// -----

builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0>}) {
    // expected-error@+1 {{relay.exp has no vdevice}}
    %0 = relay.exp %a : tensor<4xf32>
    relay.return %0 : tensor<4xf32>
  }
}

// -----

builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0>}) {
    // expected-error@+1 {{relay.on_device is left in a planned module}}
    %0 = relay.on_device %a to #target.vdevice<cpu:0> {vdevice = #target.vdevice<cpu:0>} : tensor<4xf32>
    relay.return %0 : tensor<4xf32>
  }
}

// -----

builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  // expected-error@+1 {{function parameters and result must all have a vdevice}}
  relay.func @main(%a: tensor<4xf32>) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0>}) {
    relay.return %a : tensor<4xf32>
  }
}
