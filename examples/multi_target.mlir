// Two devices in one module: the add runs on the GPU (its result is annotated
// to live there), the multiply on the CPU, the default device of this config.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">, #target.target<"cublas">]>} {
  relay.func @main(%a: tensor<5x7xf32>, %b: tensor<5x7xf32>) -> tensor<5x7xf32> {
    %0 = relay.add %a, %b : tensor<5x7xf32>
    %1 = relay.on_device %0 to #target.vdevice<cuda> : tensor<5x7xf32>
    %2 = relay.multiply %1, %b : tensor<5x7xf32>
    relay.return %2 : tensor<5x7xf32>
  }
}
