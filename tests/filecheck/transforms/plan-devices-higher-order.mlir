// RUN: hetero-opt %s -p plan-devices --split-input-file | filecheck %s
// RUN: hetero-opt %s -p plan-devices --split-input-file > %t && hetero-opt %t -p plan-devices --split-input-file | diff %t -

// A constraint inside a closure reaches the value passed to it (spec test_higher_order).
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func private @apply(%f: (tensor<4xf32>) -> tensor<4xf32>, %v: tensor<4xf32>) -> tensor<4xf32> {
    %0 = relay.call_indirect %f(%v) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %0 : tensor<4xf32>
  }
  relay.func @main(%y: tensor<4xf32>) -> tensor<4xf32> {
    %g = relay.fn (%a: tensor<4xf32> {vdevice = #target.vdevice<cuda>}) -> tensor<4xf32> {
      %0 = relay.negative %a : tensor<4xf32>
      relay.return %0 : tensor<4xf32>
    }
    %r = relay.call @apply(%g, %y) : ((tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func private @apply(%f: (tensor<4xf32>) -> tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}, %v: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.call_indirect %f(%v) {vdevice = #target.vdevice<cuda:0{{.*}}>} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: relay.return %0 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: relay.func @main(%y: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %g = relay.fn (%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) attributes {vdevice = #target.vdevice<cuda:0{{.*}}>} {
// CHECK-NEXT: %0 = relay.negative %a {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %0 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %r = relay.call @apply(%g, %y) {vdevice = #target.vdevice<cuda:0{{.*}}>} : ((tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: relay.return %r : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// A closure returned from a function: its captured value and result follow the call.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func private @adder(%c: tensor<4xf32>) -> ((tensor<4xf32>) -> tensor<4xf32>) {
    %f = relay.fn (%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = relay.add %x, %c : tensor<4xf32>
      relay.return %0 : tensor<4xf32>
    }
    relay.return %f : (tensor<4xf32>) -> tensor<4xf32>
  }
  relay.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %f = relay.call @adder(%a) : (tensor<4xf32>) -> ((tensor<4xf32>) -> tensor<4xf32>)
    %r = relay.call_indirect %f(%b) : (tensor<4xf32>) -> tensor<4xf32>
    %s = relay.on_device %r to #target.vdevice<cuda> fixed : tensor<4xf32>
    %t = relay.exp %s : tensor<4xf32>
    relay.return %t : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func private @adder(%c: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> ((tensor<4xf32>) -> tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %f = relay.fn (%x: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) attributes {vdevice = #target.vdevice<cuda:0{{.*}}>} {
// CHECK-NEXT: %0 = relay.add %x, %c {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %0 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: relay.return %f : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}, %b: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %f = relay.call @adder(%a) {vdevice = #target.vdevice<cuda:0{{.*}}>} : (tensor<4xf32>) -> ((tensor<4xf32>) -> tensor<4xf32>)
// CHECK-NEXT: %r = relay.call_indirect %f(%b) {vdevice = #target.vdevice<cuda:0{{.*}}>} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %t = relay.exp %r {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %t : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// Functions in a tuple collapse onto the tuple's device: all their parameters and results.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %f = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> {
      relay.return %a : tensor<4xf32>
    }
    %t = relay.tuple(%f, %x) : tuple<(tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>>
    %d = relay.on_device %t to #target.vdevice<cuda> fixed : tuple<(tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>>
    %g = relay.get_item %d[0] : tuple<(tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>> -> (tensor<4xf32>) -> tensor<4xf32>
    %r = relay.call_indirect %g(%x) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%x: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %f = relay.fn (%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) attributes {vdevice = #target.vdevice<cuda:0{{.*}}>} {
// CHECK-NEXT: relay.return %a : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %t = relay.tuple(%f, %x) {vdevice = #target.vdevice<cuda:0{{.*}}>} : tuple<(tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>>
// CHECK-NEXT: %g = relay.get_item %t[0] {vdevice = #target.vdevice<cuda:0{{.*}}>} : tuple<(tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>> -> (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %r = relay.call_indirect %g(%x) {vdevice = #target.vdevice<cuda:0{{.*}}>} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: relay.return %r : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// A function chosen by `if`: both branches share one function domain, collapsed onto the condition's device.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%c: tensor<i1> {vdevice = #target.vdevice<cuda>}, %x: tensor<4xf32>) -> tensor<4xf32> {
    %f = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = relay.exp %a : tensor<4xf32>
      relay.return %0 : tensor<4xf32>
    }
    %g = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = relay.tanh %a : tensor<4xf32>
      relay.return %0 : tensor<4xf32>
    }
    %h = relay.if %c : tensor<i1> -> (tensor<4xf32>) -> tensor<4xf32> {
      relay.yield %f : (tensor<4xf32>) -> tensor<4xf32>
    } else {
      relay.yield %g : (tensor<4xf32>) -> tensor<4xf32>
    }
    %r = relay.call_indirect %h(%x) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%c: tensor<i1> {vdevice = #target.vdevice<cuda:0{{.*}}>}, %x: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %f = relay.fn (%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) attributes {vdevice = #target.vdevice<cuda:0{{.*}}>} {
// CHECK-NEXT: %0 = relay.exp %a {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %0 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %g = relay.fn (%a_1: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) attributes {vdevice = #target.vdevice<cuda:0{{.*}}>} {
// CHECK-NEXT: %1 = relay.tanh %a_1 {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %1 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %h = relay.if %c {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<i1> -> (tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: relay.yield %f : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: relay.yield %g : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %r = relay.call_indirect %h(%x) {vdevice = #target.vdevice<cuda:0{{.*}}>} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: relay.return %r : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
