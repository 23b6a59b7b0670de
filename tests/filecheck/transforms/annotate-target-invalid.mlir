// RUN: hetero-opt %s -p annotate-target --split-input-file --verify-diagnostics

// A compiler name must be a registered external-codegen kind ...
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
    // expected-error@+1 {{unknown compiler 'openblas': no external-codegen target kind has that name (known: blas, cublas, cudnn, cutlass, dnnl, tensorrt}}
    %d = relay.nn.dense %x, %w {relay.compiler = "openblas"} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    relay.return %d : tensor<4x16xf32>
  }
}

// -----

// ... which a regular kind is not ...
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{unknown compiler 'llvm': no external-codegen target kind has that name}}
    %d = relay.relu %x {relay.compiler = "llvm"} : tensor<4xf32>
    relay.return %d : tensor<4xf32>
  }
}

// -----

// ... also in a composite's name.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{unknown compiler in composite name 'mkl': no external-codegen target kind has that name}}
    %f = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Composite = "mkl.relu"} {
      %r = relay.relu %a : tensor<4xf32>
      relay.return %r : tensor<4xf32>
    }
    %c = relay.call_indirect %f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %c : tensor<4xf32>
  }
}

// -----

// The kind must be in the compilation configuration.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">, #target.target<"cublas">]>} {
  relay.func @main(%x: tensor<1x3x8x8xf32>, %k: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
    // expected-error@+1 {{compiler 'cudnn' is not in the compilation configuration (its external kinds: cublas)}}
    %c = relay.nn.conv2d %x, %k {relay.compiler = "cudnn"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
    relay.return %c : tensor<1x4x6x6xf32>
  }
}

// -----

// A region's device must have the kind as its external codegen: cudnn
// cannot take a convolution that plan-devices put on the cpu.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">, #target.target<"cudnn">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<1x3x8x8xf32> {vdevice = #target.vdevice<cpu>}, %k: tensor<4x3x3x3xf32> {vdevice = #target.vdevice<cpu>}) -> (tensor<1x4x6x6xf32> {vdevice = #target.vdevice<cpu>}) {
    // expected-error@+1 {{'cudnn' cannot take relay.nn.conv2d: it runs on cpu:0 (llvm -host=llvm), and 'cudnn' is not external codegen for that device's target (configured kinds that are: blas)}}
    %c = relay.nn.conv2d %x, %k {vdevice = #target.vdevice<cpu>, relay.compiler = "cudnn"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
    relay.return %c : tensor<1x4x6x6xf32>
  }
}

// -----

builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{'relay.compiler' must be a string naming a compiler}}
    %d = relay.relu %x {relay.compiler = 1 : i64} : tensor<4xf32>
    relay.return %d : tensor<4xf32>
  }
}

// -----

builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{relay.return cannot go to an external codegen: only a computation producing one value can}}
    "relay.return"(%x) {relay.compiler = "blas"} : (tensor<4xf32>) -> ()
  }
}

// -----

// A composite call goes to the kind its pattern belongs to.
builtin.module attributes {target.config = #target.config<[#target.target<"cuda">, #target.target<"cublas">, #target.target<"cudnn">]>} {
  relay.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
    %f = relay.fn (%a: tensor<4x8xf32>, %b: tensor<16x8xf32>) -> tensor<4x16xf32> attributes {Composite = "cublas.dense"} {
      %d = relay.nn.dense %a, %b : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
      relay.return %d : tensor<4x16xf32>
    }
    // expected-error@+1 {{a call of composite 'cublas.dense' cannot go to 'cudnn'}}
    %c = relay.call_indirect %f(%x, %w) {relay.compiler = "cudnn"} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    relay.return %c : tensor<4x16xf32>
  }
}
