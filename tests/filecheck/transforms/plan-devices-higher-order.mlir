// RUN: hetero-opt %s -p plan-devices --split-input-file | filecheck %s
// RUN: hetero-opt %s -p plan-devices --split-input-file > %t && hetero-opt %t -p plan-devices --split-input-file | diff %t -

// A constraint inside a closure reaches the value passed to it (TVM's test_higher_order).
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

// -----

// TVM's test_higher_order, GPU the default: the constraint on %a (inside a
// closure returned by a closure) reaches %y through %f's result and the call
// %4(%y); the inner closure lives where its result does (cuda) while its
// parameter is on the cpu.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">], fallback = cuda>} {
  relay.func @main(%x: tensor<5x7xf32>, %y: tensor<5x7xf32>) -> tensor<5x7xf32> {
    %f = relay.fn (%g: (tensor<5x7xf32>) -> tensor<5x7xf32>) -> ((tensor<5x7xf32>) -> tensor<5x7xf32>) {
      %inner = relay.fn (%a: tensor<5x7xf32>) -> tensor<5x7xf32> {
        %0 = relay.on_device %a to #target.vdevice<cpu> : tensor<5x7xf32>
        %1 = relay.call_indirect %g(%0) : (tensor<5x7xf32>) -> tensor<5x7xf32>
        %2 = relay.add %1, %x : tensor<5x7xf32>
        relay.return %2 : tensor<5x7xf32>
      }
      relay.return %inner : (tensor<5x7xf32>) -> tensor<5x7xf32>
    }
    %h = relay.fn (%b: tensor<5x7xf32>) -> tensor<5x7xf32> {
      %0 = relay.negative %b : tensor<5x7xf32>
      relay.return %0 : tensor<5x7xf32>
    }
    %2 = relay.call_indirect %f(%h) : ((tensor<5x7xf32>) -> tensor<5x7xf32>) -> ((tensor<5x7xf32>) -> tensor<5x7xf32>)
    %3 = relay.call_indirect %2(%y) : (tensor<5x7xf32>) -> tensor<5x7xf32>
    %4 = relay.subtract %x, %3 : tensor<5x7xf32>
    relay.return %4 : tensor<5x7xf32>
  }
}

// CHECK: builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">], fallback = cuda>} {
// CHECK-NEXT: relay.func @main(%x: tensor<5x7xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}, %y: tensor<5x7xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) -> (tensor<5x7xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %f = relay.fn (%g: (tensor<5x7xf32>) -> tensor<5x7xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> ((tensor<5x7xf32>) -> tensor<5x7xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) attributes {vdevice = #target.vdevice<cuda:0{{.*}}>} {
// CHECK-NEXT: %inner = relay.fn (%a: tensor<5x7xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) -> (tensor<5x7xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) attributes {vdevice = #target.vdevice<cuda:0{{.*}}>} {
// CHECK-NEXT: %0 = relay.device_copy %a from #target.vdevice<cpu:0{{.*}}> to #target.vdevice<cuda:0{{.*}}> {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<5x7xf32>
// CHECK-NEXT: %1 = relay.call_indirect %g(%0) {vdevice = #target.vdevice<cuda:0{{.*}}>} : (tensor<5x7xf32>) -> tensor<5x7xf32>
// CHECK-NEXT: %2 = relay.add %1, %x {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<5x7xf32>
// CHECK-NEXT: relay.return %2 : tensor<5x7xf32>
// CHECK-NEXT: }
// CHECK-NEXT: relay.return %inner : (tensor<5x7xf32>) -> tensor<5x7xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %h = relay.fn (%b: tensor<5x7xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<5x7xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) attributes {vdevice = #target.vdevice<cuda:0{{.*}}>} {
// CHECK-NEXT: %3 = relay.negative %b {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<5x7xf32>
// CHECK-NEXT: relay.return %3 : tensor<5x7xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %4 = relay.call_indirect %f(%h) {vdevice = #target.vdevice<cuda:0{{.*}}>} : ((tensor<5x7xf32>) -> tensor<5x7xf32>) -> ((tensor<5x7xf32>) -> tensor<5x7xf32>)
// CHECK-NEXT: %5 = relay.call_indirect %4(%y) {vdevice = #target.vdevice<cuda:0{{.*}}>} : (tensor<5x7xf32>) -> tensor<5x7xf32>
// CHECK-NEXT: %6 = relay.subtract %x, %5 {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<5x7xf32>
// CHECK-NEXT: relay.return %6 : tensor<5x7xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
// -----

// TVM's expected module for test_higher_order, planned again: the same
// module (a device on a function value constrains its result, never its
// parameters).
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">], fallback = cuda>} {
  relay.func @main(%x: tensor<5x7xf32> {vdevice = #target.vdevice<cuda>}, %y: tensor<5x7xf32> {vdevice = #target.vdevice<cpu>}) -> (tensor<5x7xf32> {vdevice = #target.vdevice<cuda>}) {
    %f = relay.fn (%g: (tensor<5x7xf32>) -> tensor<5x7xf32> {vdevice = #target.vdevice<cuda>}) -> ((tensor<5x7xf32>) -> tensor<5x7xf32> {vdevice = #target.vdevice<cuda>}) {
      %inner = relay.fn (%a: tensor<5x7xf32> {vdevice = #target.vdevice<cpu>}) -> (tensor<5x7xf32> {vdevice = #target.vdevice<cuda>}) {
        %0 = relay.device_copy %a from #target.vdevice<cpu> to #target.vdevice<cuda> : tensor<5x7xf32>
        %1 = relay.call_indirect %g(%0) : (tensor<5x7xf32>) -> tensor<5x7xf32>
        %2 = relay.add %1, %x : tensor<5x7xf32>
        relay.return %2 : tensor<5x7xf32>
      }
      relay.return %inner : (tensor<5x7xf32>) -> tensor<5x7xf32>
    }
    %h = relay.fn (%b: tensor<5x7xf32> {vdevice = #target.vdevice<cuda>}) -> (tensor<5x7xf32> {vdevice = #target.vdevice<cuda>}) {
      %0 = relay.negative %b : tensor<5x7xf32>
      relay.return %0 : tensor<5x7xf32>
    }
    %2 = relay.call_indirect %f(%h) : ((tensor<5x7xf32>) -> tensor<5x7xf32>) -> ((tensor<5x7xf32>) -> tensor<5x7xf32>)
    %3 = relay.call_indirect %2(%y) : (tensor<5x7xf32>) -> tensor<5x7xf32>
    %4 = relay.subtract %x, %3 : tensor<5x7xf32>
    relay.return %4 : tensor<5x7xf32>
  }
}

// CHECK: builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">], fallback = cuda>} {
// CHECK-NEXT: relay.func @main(%x: tensor<5x7xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}, %y: tensor<5x7xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) -> (tensor<5x7xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %f = relay.fn (%g: (tensor<5x7xf32>) -> tensor<5x7xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> ((tensor<5x7xf32>) -> tensor<5x7xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) attributes {vdevice = #target.vdevice<cuda:0{{.*}}>} {
// CHECK-NEXT: %inner = relay.fn (%a: tensor<5x7xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) -> (tensor<5x7xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) attributes {vdevice = #target.vdevice<cuda:0{{.*}}>} {
// CHECK-NEXT: %0 = relay.device_copy %a from #target.vdevice<cpu:0{{.*}}> to #target.vdevice<cuda:0{{.*}}> {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<5x7xf32>
// CHECK-NEXT: %1 = relay.call_indirect %g(%0) {vdevice = #target.vdevice<cuda:0{{.*}}>} : (tensor<5x7xf32>) -> tensor<5x7xf32>
// CHECK-NEXT: %2 = relay.add %1, %x {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<5x7xf32>
// CHECK-NEXT: relay.return %2 : tensor<5x7xf32>
// CHECK-NEXT: }
// CHECK-NEXT: relay.return %inner : (tensor<5x7xf32>) -> tensor<5x7xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %h = relay.fn (%b: tensor<5x7xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<5x7xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) attributes {vdevice = #target.vdevice<cuda:0{{.*}}>} {
// CHECK-NEXT: %3 = relay.negative %b {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<5x7xf32>
// CHECK-NEXT: relay.return %3 : tensor<5x7xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %4 = relay.call_indirect %f(%h) {vdevice = #target.vdevice<cuda:0{{.*}}>} : ((tensor<5x7xf32>) -> tensor<5x7xf32>) -> ((tensor<5x7xf32>) -> tensor<5x7xf32>)
// CHECK-NEXT: %5 = relay.call_indirect %4(%y) {vdevice = #target.vdevice<cuda:0{{.*}}>} : (tensor<5x7xf32>) -> tensor<5x7xf32>
// CHECK-NEXT: %6 = relay.subtract %x, %5 {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<5x7xf32>
// CHECK-NEXT: relay.return %6 : tensor<5x7xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
// -----

// A function-typed parameter's device, a function-typed result's device and
// the device of a call returning a function are the function's result
// device: the closure's parameter stays on the cpu.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func private @apply(%f: (tensor<4xf32>) -> tensor<4xf32> {vdevice = #target.vdevice<cuda>}, %v: tensor<4xf32> {vdevice = #target.vdevice<cpu>}) -> tensor<4xf32> {
    %0 = relay.call_indirect %f(%v) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %0 : tensor<4xf32>
  }
  relay.func private @make(%c: tensor<4xf32>) -> ((tensor<4xf32>) -> tensor<4xf32> {vdevice = #target.vdevice<cuda>}) {
    %f = relay.fn (%p: tensor<4xf32> {vdevice = #target.vdevice<cpu>}) -> tensor<4xf32> {
      %0 = relay.device_copy %p from #target.vdevice<cpu> to #target.vdevice<cuda> : tensor<4xf32>
      %1 = relay.add %0, %c : tensor<4xf32>
      relay.return %1 : tensor<4xf32>
    }
    relay.return %f : (tensor<4xf32>) -> tensor<4xf32>
  }
  relay.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
    %f = relay.call @make(%x) {vdevice = #target.vdevice<cuda>} : (tensor<4xf32>) -> ((tensor<4xf32>) -> tensor<4xf32>)
    %r = relay.call @apply(%f, %y) : ((tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
}

// CHECK: builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
// CHECK-NEXT: relay.func private @apply(%f: (tensor<4xf32>) -> tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}, %v: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.call_indirect %f(%v) {vdevice = #target.vdevice<cuda:0{{.*}}>} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: relay.return %0 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: relay.func private @make(%c: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> ((tensor<4xf32>) -> tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %f = relay.fn (%p: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) attributes {vdevice = #target.vdevice<cuda:0{{.*}}>} {
// CHECK-NEXT: %0 = relay.device_copy %p from #target.vdevice<cpu:0{{.*}}> to #target.vdevice<cuda:0{{.*}}> {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %1 = relay.add %0, %c {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %1 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: relay.return %f : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: relay.func @main(%x: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}, %y: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %f = relay.call @make(%x) {vdevice = #target.vdevice<cuda:0{{.*}}>} : (tensor<4xf32>) -> ((tensor<4xf32>) -> tensor<4xf32>)
// CHECK-NEXT: %r = relay.call @apply(%f, %y) {vdevice = #target.vdevice<cuda:0{{.*}}>} : ((tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: relay.return %r : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
// -----

// A Primitive function whose device carries only a memory scope: the scope
// is its result's, the parameter keeps its own.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%x: tensor<4xf32> {vdevice = #target.vdevice<cpu, scope = "scopeA">}) -> tensor<4xf32> {
    %f = relay.fn (%p: tensor<4xf32> {vdevice = #target.vdevice<?, scope = "scopeA">}) -> tensor<4xf32> attributes {Primitive, vdevice = #target.vdevice<?, scope = "scopeB">} {
      %0 = relay.negative %p : tensor<4xf32>
      relay.return %0 : tensor<4xf32>
    }
    %r = relay.call_indirect %f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
}

// CHECK: builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
// CHECK-NEXT: relay.func @main(%x: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}, scope = "scopeA">}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}, scope = "scopeB">}) {
// CHECK-NEXT: %f = relay.fn (%p: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}, scope = "scopeA">}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}, scope = "scopeB">}) attributes {vdevice = #target.vdevice<cpu:0{{.*}}, scope = "scopeB">, Primitive} {
// CHECK-NEXT: %0 = relay.negative %p : tensor<4xf32>
// CHECK-NEXT: relay.return %0 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %r = relay.call_indirect %f(%x) {vdevice = #target.vdevice<cpu:0{{.*}}, scope = "scopeB">} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: relay.return %r : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
