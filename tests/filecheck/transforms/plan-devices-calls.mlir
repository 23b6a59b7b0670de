// RUN: hetero-opt %s -p plan-devices --split-input-file | filecheck %s
// RUN: hetero-opt %s -p plan-devices --split-input-file > %t && hetero-opt %t -p plan-devices --split-input-file | diff %t -

// Every call of a relay function agrees: the annotation inside @f reaches the caller's arguments.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func private @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = relay.exp %x : tensor<4xf32>
    %1 = relay.on_device %0 to #target.vdevice<cuda> fixed : tensor<4xf32>
    relay.return %1 : tensor<4xf32>
  }
  relay.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %0 = relay.call @f(%a) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = relay.call @f(%b) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = relay.add %0, %1 : tensor<4xf32>
    relay.return %2 : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func private @f(%x: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.exp %x {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %0 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}, %b: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.call @f(%a) {vdevice = #target.vdevice<cuda:0{{.*}}>} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %1 = relay.call @f(%b) {vdevice = #target.vdevice<cuda:0{{.*}}>} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %2 = relay.add %0, %1 {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %2 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// Primitive ops are polymorphic per op: two adds on two devices, copies at the boundary.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = relay.add %a, %a : tensor<4xf32>
    %1 = relay.on_device %0 to #target.vdevice<cuda> : tensor<4xf32>
    %2 = relay.add %1, %1 : tensor<4xf32>
    relay.return %2 : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.add %a, %a {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %1 = relay.device_copy %0 from #target.vdevice<cuda:0{{.*}}> to #target.vdevice<cpu:0{{.*}}> {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %2 = relay.add %1, %1 {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %2 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// Recursion: the function's one domain is shared by its recursive call.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @loop(%n: tensor<f32>, %acc: tensor<f32> {vdevice = #target.vdevice<cuda>}) -> tensor<f32> {
    %zero = relay.constant dense<0.0> : tensor<f32>
    %one = relay.constant dense<1.0> : tensor<f32>
    %done = relay.constant dense<true> : tensor<i1>
    %r = relay.if %done : tensor<i1> -> tensor<f32> {
      relay.yield %acc : tensor<f32>
    } else {
      %m = relay.subtract %n, %one : tensor<f32>
      %s = relay.add %acc, %n : tensor<f32>
      %rec = relay.call @loop(%m, %s) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      relay.yield %rec : tensor<f32>
    }
    relay.return %r : tensor<f32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @loop(%n: tensor<f32> {vdevice = #target.vdevice<cuda:0{{.*}}>}, %acc: tensor<f32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<f32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %zero = relay.constant {vdevice = #target.vdevice<cuda:0{{.*}}>} dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %one = relay.constant {vdevice = #target.vdevice<cuda:0{{.*}}>} dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %done = relay.constant {vdevice = #target.vdevice<cuda:0{{.*}}>} dense<true> : tensor<i1>
// CHECK-NEXT: %r = relay.if %done {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<i1> -> tensor<f32> {
// CHECK-NEXT: relay.yield %acc : tensor<f32>
// CHECK-NEXT: } else {
// CHECK-NEXT: %m = relay.subtract %n, %one {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<f32>
// CHECK-NEXT: %s = relay.add %acc, %n {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<f32>
// CHECK-NEXT: %rec = relay.call @loop(%m, %s) {vdevice = #target.vdevice<cuda:0{{.*}}>} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT: relay.yield %rec : tensor<f32>
// CHECK-NEXT: }
// CHECK-NEXT: relay.return %r : tensor<f32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// A diamond: both paths run where their join is annotated; the copy follows the join.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %l = relay.exp %a : tensor<4xf32>
    %r = relay.tanh %a : tensor<4xf32>
    %j = relay.add %l, %r : tensor<4xf32>
    %k = relay.on_device %j to #target.vdevice<cuda> : tensor<4xf32>
    %out = relay.negative %k : tensor<4xf32>
    relay.return %out : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) {
// CHECK-NEXT: %l = relay.exp %a {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %r = relay.tanh %a {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %j = relay.add %l, %r {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %k = relay.device_copy %j from #target.vdevice<cuda:0{{.*}}> to #target.vdevice<cpu:0{{.*}}> {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %out = relay.negative %k {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %out : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
