// The README's example: one copy, exactly at the device boundary, and the
// planned module verifies.
// RUN: hetero-opt %S/../../../examples/multi_target.mlir -p plan-devices,verify-devices | filecheck %s

// CHECK:      relay.func @main(%a: tensor<5x7xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}, %b: tensor<5x7xf32> {vdevice = #target.vdevice<cuda:0{{.*}}>}) -> (tensor<5x7xf32> {vdevice = #target.vdevice<cpu:0{{.*}}>}) {
// CHECK-NEXT:   %0 = relay.add %a, %b {vdevice = #target.vdevice<cuda:0{{.*}}>}
// CHECK-NEXT:   %1 = relay.device_copy %0 from #target.vdevice<cuda:0{{.*}}> to #target.vdevice<cpu:0{{.*}}> {vdevice = #target.vdevice<cpu:0{{.*}}>}
// CHECK-NEXT:   %2 = relay.exp %1 {vdevice = #target.vdevice<cpu:0{{.*}}>}
// CHECK-NEXT:   %3 = relay.multiply %2, %2 {vdevice = #target.vdevice<cpu:0{{.*}}>}
// CHECK-NEXT:   relay.return %3
// CHECK-NOT:  relay.device_copy
