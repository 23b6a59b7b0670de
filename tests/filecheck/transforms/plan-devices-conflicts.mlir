// RUN: hetero-opt %s -p plan-devices --split-input-file | filecheck %s
// RUN: hetero-opt %s -p plan-devices --split-input-file > %t && hetero-opt %t -p plan-devices --split-input-file | diff %t -

// %b is needed on the cpu and on cuda: it is copied for the later use (docs/design.md §3.5, TVM #15019).
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
    %0 = relay.add %a, %b : tensor<4xf32>
    %1 = relay.on_device %0 to #target.vdevice<cpu> : tensor<4xf32>
    %2 = relay.add %b, %c : tensor<4xf32>
    %3 = relay.on_device %2 to #target.vdevice<cuda> : tensor<4xf32>
    %4 = relay.subtract %1, %3 : tensor<4xf32>
    relay.return %4 : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}, %b: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}, %c: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.device_copy %b from #target.vdevice<cpu:0{{.*}}> to #target.vdevice<cuda:0{{.*}}> {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %1 = relay.add %a, %b {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %2 = relay.add %0, %c {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %3 = relay.device_copy %2 from #target.vdevice<cuda:0{{.*}}> to #target.vdevice<cpu:0{{.*}}> {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %4 = relay.subtract %1, %3 {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %4 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// A constant used on two devices: one copy, shared by both cuda uses.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu>}, %g: tensor<4xf32> {vdevice = #target.vdevice<cuda>}) -> tensor<4xf32> {
    %k = relay.constant dense<2.0> : tensor<4xf32>
    %0 = relay.multiply %a, %k : tensor<4xf32>
    %1 = relay.multiply %g, %k : tensor<4xf32>
    %2 = relay.add %g, %k : tensor<4xf32>
    %3 = relay.add %1, %2 : tensor<4xf32>
    %4 = relay.on_device %3 to #target.vdevice<cuda> : tensor<4xf32>
    %5 = relay.add %0, %4 : tensor<4xf32>
    relay.return %5 : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}, %g: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) {
// CHECK-NEXT: %k = relay.constant {vdevice = #target.vdevice<cpu:0{{.*}}>} dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %0 = relay.device_copy %k from #target.vdevice<cpu:0{{.*}}> to #target.vdevice<cuda:0{{.*}}> {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %1 = relay.multiply %a, %k {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %2 = relay.multiply %g, %0 {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %3 = relay.add %g, %0 {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %4 = relay.add %2, %3 {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %5 = relay.device_copy %4 from #target.vdevice<cuda:0{{.*}}> to #target.vdevice<cpu:0{{.*}}> {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %6 = relay.add %1, %5 {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %6 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// Two memory scopes on one device demanded of one value: a copy between scopes.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = relay.exp %a : tensor<4xf32>
    %1 = relay.negative %0 : tensor<4xf32>
    %2 = relay.on_device %1 to #target.vdevice<cpu, scope = "a"> : tensor<4xf32>
    %3 = relay.tanh %0 : tensor<4xf32>
    %4 = relay.on_device %3 to #target.vdevice<cpu, scope = "b"> : tensor<4xf32>
    %5 = relay.add %2, %4 : tensor<4xf32>
    relay.return %5 : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}, scope = "a">}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.exp %a {vdevice = #target.vdevice<cpu:0{{.*}}, scope = "a">} : tensor<4xf32>
// CHECK-NEXT: %1 = relay.device_copy %0 from #target.vdevice<cpu:0{{.*}}, scope = "a"> to #target.vdevice<cpu:0{{.*}}, scope = "b"> {vdevice = #target.vdevice<cpu:0{{.*}}, scope = "b">} : tensor<4xf32>
// CHECK-NEXT: %2 = relay.negative %0 {vdevice = #target.vdevice<cpu:0{{.*}}, scope = "a">} : tensor<4xf32>
// CHECK-NEXT: %3 = relay.device_copy %2 from #target.vdevice<cpu:0{{.*}}, scope = "a"> to #target.vdevice<cpu:0{{.*}}> {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %4 = relay.tanh %1 {vdevice = #target.vdevice<cpu:0{{.*}}, scope = "b">} : tensor<4xf32>
// CHECK-NEXT: %5 = relay.device_copy %4 from #target.vdevice<cpu:0{{.*}}, scope = "b"> to #target.vdevice<cpu:0{{.*}}> {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %6 = relay.add %3, %5 {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %6 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
