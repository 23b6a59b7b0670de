// RUN: hetero-opt %s -p partition-graph --split-input-file --verify-diagnostics

// One region, one kind.
builtin.module attributes {target.config = #target.config<[#target.target<"cuda">, #target.target<"cublas">, #target.target<"cudnn">]>} {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = relay.exp %x {relay.compiler = "cublas", relay.compiler_region = 0 : i64} : tensor<4xf32>
    // expected-error@+1 {{compiler region 0 mixes ops for 'cublas' (relay.exp) and for 'cudnn'}}
    %b = relay.tanh %a {relay.compiler = "cudnn", relay.compiler_region = 0 : i64} : tensor<4xf32>
    relay.return %b : tensor<4xf32>
  }
}

// -----

// A region that both feeds and uses an outside op cannot be one call.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = relay.exp %x {relay.compiler = "blas", relay.compiler_region = 0 : i64} : tensor<4xf32>
    %m = relay.negative %a : tensor<4xf32>
    // expected-error@+1 {{compiler region 0 is not convex: relay.tanh uses a value of relay.negative that itself depends on the region}}
    %b = relay.tanh %m {relay.compiler = "blas", relay.compiler_region = 0 : i64} : tensor<4xf32>
    relay.return %b : tensor<4xf32>
  }
}

// -----

// The region's device has no matching external kind.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4xf32> {vdevice = #target.vdevice<cuda>}) -> (tensor<4xf32> {vdevice = #target.vdevice<cuda>}) {
    // expected-error@+1 {{'blas' cannot take relay.exp: it runs on cuda:0 (cuda -host=llvm), and 'blas' is not external codegen for that device's target (configured kinds that are: none)}}
    %a = relay.exp %x {vdevice = #target.vdevice<cuda>, relay.compiler = "blas"} : tensor<4xf32>
    relay.return %a : tensor<4xf32>
  }
}

// -----

builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = relay.exp %x {vdevice = #target.vdevice<cpu:0>, relay.compiler = "blas", relay.compiler_region = 3 : i64} : tensor<4xf32>
    // expected-error@+1 {{compiler region 3 mixes ops for 'blas' on cpu:0 (relay.exp) and for 'blas' on cpu:1}}
    %b = relay.tanh %a {vdevice = #target.vdevice<cpu:1>, relay.compiler = "blas", relay.compiler_region = 3 : i64} : tensor<4xf32>
    relay.return %b : tensor<4xf32>
  }
}
