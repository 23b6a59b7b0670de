// RUN: hetero-opt %s -p lower-te | filecheck %s

// A Primitive function literal called in place is outlined first, as TVM's
// LowerTE does: a private global named as fuse-ops names its groups, placed
// before its caller, and every call of the literal (here two: the literal is
// let-bound) a relay.call of it, marked with its kernel.  A second literal
// equal to the first shares its kernel (the kernel cache); a literal inside
// a closure is outlined before the closure's global.

// CHECK:      relay.func private @fused_exp_negative(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive, lowered = @fused_exp_negative_tir} {
// CHECK-NEXT:   %0 = relay.exp %a : tensor<4xf32>
// CHECK-NEXT:   %1 = relay.negative %0 : tensor<4xf32>
// CHECK-NEXT:   relay.return %1 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: tir.prim_func @fused_exp_negative_tir(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>) target #target.target<"llvm">
// CHECK:        math.exp
// CHECK-NEXT:   arith.negf
// CHECK:      relay.func private @fused_exp_negative_1({{.*}}) attributes {Primitive, lowered = @fused_exp_negative_tir} {
// CHECK:      relay.func private @fused_sqrt({{.*}}) attributes {Primitive, lowered = @fused_sqrt_tir} {
// CHECK:      tir.prim_func @fused_sqrt_tir(
// CHECK:      relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:   %r = relay.call @fused_exp_negative(%x) {lowered = @fused_exp_negative_tir} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:   %s = relay.call @fused_exp_negative(%r) {lowered = @fused_exp_negative_tir} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:   %t = relay.call @fused_exp_negative_1(%s) {lowered = @fused_exp_negative_tir} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:   %c = relay.fn (%b: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %u = relay.call @fused_sqrt(%b) {lowered = @fused_sqrt_tir} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     relay.return %u : tensor<4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   %v = relay.call_indirect %c(%t) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:   relay.return %v : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NOT:  relay.fn
builtin.module {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %f = relay.fn (%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive} {
      %0 = relay.exp %a : tensor<4xf32>
      %1 = relay.negative %0 : tensor<4xf32>
      relay.return %1 : tensor<4xf32>
    }
    %r = relay.call_indirect %f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %s = relay.call_indirect %f(%r) : (tensor<4xf32>) -> tensor<4xf32>
    %g = relay.fn (%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive} {
      %0 = relay.exp %a : tensor<4xf32>
      %1 = relay.negative %0 : tensor<4xf32>
      relay.return %1 : tensor<4xf32>
    }
    %t = relay.call_indirect %g(%s) : (tensor<4xf32>) -> tensor<4xf32>
    %c = relay.fn (%b: tensor<4xf32>) -> tensor<4xf32> {
      %k = relay.fn (%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive} {
        %0 = relay.sqrt %a : tensor<4xf32>
        relay.return %0 : tensor<4xf32>
      }
      %u = relay.call_indirect %k(%b) : (tensor<4xf32>) -> tensor<4xf32>
      relay.return %u : tensor<4xf32>
    }
    %v = relay.call_indirect %c(%t) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %v : tensor<4xf32>
  }
}
