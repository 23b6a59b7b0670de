// Two devices in one module. The add is annotated to run on the GPU, the exp
// on the CPU (the default device of this configuration, which spans two
// device types); plan-devices puts one device_copy at the boundary.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">, #target.target<"cublas">]>} {
  relay.func @main(%a: tensor<5x7xf32>, %b: tensor<5x7xf32>) -> tensor<5x7xf32> {
    %0 = relay.add %a, %b : tensor<5x7xf32>
    %1 = relay.on_device %0 to #target.vdevice<cuda> : tensor<5x7xf32>
    %2 = relay.exp %1 : tensor<5x7xf32>
    %3 = relay.on_device %2 to #target.vdevice<cpu> : tensor<5x7xf32>
    %4 = relay.multiply %3, %3 : tensor<5x7xf32>
    relay.return %4 : tensor<5x7xf32>
  }
}
