// Plain, unmodified xdsl-opt sees hetero's dialects and passes through the
// `xdsl.universe` entry point.
// RUN: xdsl-opt %s -p plan-devices | filecheck %s

builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = relay.relu %a : tensor<4xf32>
    relay.return %0 : tensor<4xf32>
  }
}

// CHECK: %0 = relay.relu %a {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm", host = #target.target<"llvm">>>} : tensor<4xf32>
