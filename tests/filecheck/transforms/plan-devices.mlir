// RUN: hetero-opt %s -p plan-devices --split-input-file | filecheck %s
// RUN: hetero-opt %s -p plan-devices --split-input-file > %t && hetero-opt %t -p plan-devices --split-input-file | diff %t -

// Everything unconstrained goes to the default device (rule F: cpu).
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %c = relay.constant dense<1.0> : tensor<4xf32>
    %0 = relay.add %a, %b : tensor<4xf32>
    %1 = relay.multiply %0, %c : tensor<4xf32>
    relay.return %1 : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}, %b: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) {
// CHECK-NEXT: %c = relay.constant {vdevice = #target.vdevice<cpu:0{{.*}}>} dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %0 = relay.add %a, %b {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %1 = relay.multiply %0, %c {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %1 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// One device type: the default is that type (rule E).
builtin.module attributes {target.config = #target.config<[#target.target<"cuda">, #target.target<"cublas">]>} {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = relay.relu %a : tensor<4xf32>
    relay.return %0 : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.relu %a {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %0 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// Fixed form: body and result on cuda; the consumer follows, so no copy.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = relay.exp %a : tensor<4xf32>
    %1 = relay.on_device %0 to #target.vdevice<cuda> fixed : tensor<4xf32>
    %2 = relay.negative %1 : tensor<4xf32>
    relay.return %2 : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.exp %a {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %1 = relay.negative %0 {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %1 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// Free form: joins its body when nothing else constrains it (no copy) ...
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = relay.exp %a : tensor<4xf32>
    %1 = relay.on_device %0 free : tensor<4xf32>
    %2 = relay.negative %1 : tensor<4xf32>
    relay.return %2 : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.exp %a {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %1 = relay.negative %0 {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %1 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// ... and is rolled back into a copy when the two sides are constrained apart.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu>}) {
    %0 = relay.exp %a : tensor<4xf32>
    %1 = relay.on_device %0 free : tensor<4xf32>
    %2 = relay.negative %1 : tensor<4xf32>
    relay.return %2 : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.exp %a {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %1 = relay.device_copy %0 from #target.vdevice<cuda:0{{.*}}> to #target.vdevice<cpu:0{{.*}}> {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %2 = relay.negative %1 {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %2 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// device_copy constrains both sides; a copy whose ends agree disappears.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = relay.device_copy %a from #target.vdevice<cpu> to #target.vdevice<cuda> : tensor<4xf32>
    %1 = relay.exp %0 : tensor<4xf32>
    %2 = relay.device_copy %1 from #target.vdevice<cuda> to #target.vdevice<cuda:0> : tensor<4xf32>
    %3 = relay.tanh %2 : tensor<4xf32>
    relay.return %3 : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.device_copy %a from #target.vdevice<cpu:0{{.*}}> to #target.vdevice<cuda:0{{.*}}> {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %1 = relay.exp %0 {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %2 = relay.tanh %1 {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %2 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// The result is defaulted first; free parameters then take the result's device.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32>, %b: tensor<4xf32> {vdevice = #target.vdevice<cuda>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:1>}) {
    %0 = relay.exp %b : tensor<4xf32>
    relay.return %a : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:1{{.*}}>}, %b: tensor<4xf32> {vdevice = #target.vdevice<cuda:1{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:1{{.*}}>}) {
// CHECK-NEXT: %0 = relay.exp %b {vdevice = #target.vdevice<cuda:1{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %a : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// An annotation at the top of the body is fixed: it decides the result's device.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = relay.exp %a : tensor<4xf32>
    %1 = relay.on_device %0 to #target.vdevice<cuda> : tensor<4xf32>
    relay.return %1 : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.exp %a {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %0 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// Copies come after projections: only the projected field moves.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32>, %b: tensor<8xf32>) -> tensor<4xf32> {
    %t = relay.tuple(%a, %b) : tuple<tensor<4xf32>, tensor<8xf32>>
    %d = relay.on_device %t to #target.vdevice<cuda> : tuple<tensor<4xf32>, tensor<8xf32>>
    %x = relay.get_item %d[0] : tuple<tensor<4xf32>, tensor<8xf32>> -> tensor<4xf32>
    %y = relay.exp %x : tensor<4xf32>
    relay.return %y : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}, %b: tensor<8xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) {
// CHECK-NEXT: %t = relay.tuple(%a, %b) {vdevice = #target.vdevice<cuda:0{{.*}}>} : tuple<tensor<4xf32>, tensor<8xf32>>
// CHECK-NEXT: %x = relay.get_item %t[0] {vdevice = #target.vdevice<cuda:0{{.*}}>} : tuple<tensor<4xf32>, tensor<8xf32>> -> tensor<4xf32>
// CHECK-NEXT: %x_1 = relay.device_copy %x from #target.vdevice<cuda:0{{.*}}> to #target.vdevice<cpu:0{{.*}}> {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: %y = relay.exp %x_1 {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<4xf32>
// CHECK-NEXT: relay.return %y : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

// Memory scopes are part of the device: scope "a" feeding a consumer in scope "b" is copied.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0, scope = "a">}) -> tensor<4xf32> {
    %0 = relay.exp %a : tensor<4xf32>
    %1 = relay.on_device %0 to #target.vdevice<cpu:0, scope = "a"> : tensor<4xf32>
    %2 = relay.negative %1 : tensor<4xf32>
    %3 = relay.on_device %2 to #target.vdevice<cpu:0, scope = "b"> fixed : tensor<4xf32>
    relay.return %3 : tensor<4xf32>
  }
}

// CHECK: builtin.module
// CHECK-NEXT: relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}, scope = "a">}) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu:0{{.*}}, scope = "b">}) {
// CHECK-NEXT: %0 = relay.exp %a {vdevice = #target.vdevice<cpu:0{{.*}}, scope = "a">} : tensor<4xf32>
// CHECK-NEXT: %1 = relay.device_copy %0 from #target.vdevice<cpu:0{{.*}}, scope = "a"> to #target.vdevice<cpu:0{{.*}}, scope = "b"> {vdevice = #target.vdevice<cpu:0{{.*}}, scope = "b">} : tensor<4xf32>
// CHECK-NEXT: %2 = relay.negative %1 {vdevice = #target.vdevice<cpu:0{{.*}}, scope = "b">} : tensor<4xf32>
// CHECK-NEXT: relay.return %2 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
