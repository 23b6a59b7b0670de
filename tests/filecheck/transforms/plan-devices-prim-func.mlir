// RUN: hetero-opt %s -p plan-devices,verify-devices --split-input-file | filecheck %s
// RUN: hetero-opt %s -p plan-devices --split-input-file > %t && hetero-opt %t -p plan-devices --split-input-file | diff %t -

// A call of a tir.prim_func (TVM's call_lowered) places its arguments and
// result on the prim_func's target: with the GPU as default device, the
// value annotated on cuda is copied to the cpu for the CPU kernel, and
// what the kernel computes stays on the cpu.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">], fallback = cuda>} {
  tir.prim_func @vadd(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>) target #target.target<"llvm"> {
  }
  relay.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
    %0 = relay.exp %x : tensor<8xf32>
    %1 = relay.on_device %0 to #target.vdevice<cuda> : tensor<8xf32>
    %2 = relay.call @vadd(%1, %y) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %3 = relay.negative %2 : tensor<8xf32>
    relay.return %3 : tensor<8xf32>
  }
}

// CHECK: tir.prim_func @vadd(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>) target #target.target<"llvm"> {
// CHECK: relay.func @main(%x: tensor<8xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}, %y: tensor<8xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) -> (tensor<8xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.exp %x {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<8xf32>
// CHECK-NEXT: %1 = relay.device_copy %0 from #target.vdevice<cuda:0{{.*}}> to #target.vdevice<cpu:0{{.*}}> {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<8xf32>
// CHECK-NEXT: %2 = relay.call @vadd(%1, %y) {vdevice = #target.vdevice<cpu:0{{.*}}>} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT: %3 = relay.negative %2 {vdevice = #target.vdevice<cpu:0{{.*}}>} : tensor<8xf32>
// CHECK-NEXT: relay.return %3 : tensor<8xf32>

// -----

// A buffer's memory scope constrains its argument: %x, in scope 'local',
// is copied into 'shared' for @k and read where it is by the negative.
// Global buffers leave the scope free.  A prim_func without a target runs
// where its arguments are, one device per call: @any in 'local' once, in
// no scope the other time.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  tir.prim_func @k(%a: memref<8xf32, "shared">, %out: memref<8xf32>) target #target.target<"cuda"> {
  }
  tir.prim_func @any(%a: memref<8xf32>, %out: memref<8xf32>) {
  }
  relay.func @main(%x: tensor<8xf32> {vdevice = #target.vdevice<cuda, scope = "local">}) -> tensor<8xf32> {
    %0 = relay.call @k(%x) : (tensor<8xf32>) -> tensor<8xf32>
    %1 = relay.negative %x : tensor<8xf32>
    %2 = relay.call @any(%0) : (tensor<8xf32>) -> tensor<8xf32>
    %3 = relay.call @any(%1) : (tensor<8xf32>) -> tensor<8xf32>
    %4 = relay.on_device %3 to #target.vdevice<cuda> : tensor<8xf32>
    %5 = relay.add %2, %4 : tensor<8xf32>
    relay.return %5 : tensor<8xf32>
  }
}

// CHECK: relay.func @main(%x: tensor<8xf32> {vdevice = #target.vdevice<cuda:0{{.*}}, scope = "local">}) -> (tensor<8xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) {
// CHECK-NEXT: %0 = relay.device_copy %x from #target.vdevice<cuda:0{{.*}}, scope = "local"> to #target.vdevice<cuda:0{{.*}}, scope = "shared"> {vdevice = #target.vdevice<cuda:0{{.*}}, scope = "shared">} : tensor<8xf32>
// CHECK-NEXT: %1 = relay.call @k(%0) {vdevice = #target.vdevice<cuda:0{{.*}}>} : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT: %2 = relay.negative %x {vdevice = #target.vdevice<cuda:0{{.*}}, scope = "local">} : tensor<8xf32>
// CHECK-NEXT: %3 = relay.call @any(%1) {vdevice = #target.vdevice<cuda:0{{.*}}>} : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT: %4 = relay.call @any(%2) {vdevice = #target.vdevice<cuda:0{{.*}}, scope = "local">} : (tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT: %5 = relay.device_copy %4 from #target.vdevice<cuda:0{{.*}}, scope = "local"> to #target.vdevice<cuda:0{{.*}}> {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<8xf32>
// CHECK-NEXT: %6 = relay.add %3, %5 {vdevice = #target.vdevice<cuda:0{{.*}}>} : tensor<8xf32>
// CHECK-NEXT: relay.return %6 : tensor<8xf32>
