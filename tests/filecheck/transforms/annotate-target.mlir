// RUN: hetero-opt %s -p annotate-target --split-input-file | filecheck %s
// RUN: hetero-opt %s -p annotate-target --split-input-file > %t && hetero-opt %t -p annotate-target --split-input-file | diff %t -

// A composite call is annotated with the kind its name starts with; ops no
// pattern covers (here relu, tuple, get_item) stay unannotated, never an error.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">, #target.target<"cublas">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4x8xf32> {vdevice = #target.vdevice<cuda>}, %w: tensor<16x8xf32> {vdevice = #target.vdevice<cuda>}) -> (tensor<4x16xf32> {vdevice = #target.vdevice<cuda>}) {
    %f = relay.fn (%a: tensor<4x8xf32> {vdevice = #target.vdevice<cuda>}, %b: tensor<16x8xf32> {vdevice = #target.vdevice<cuda>}) -> (tensor<4x16xf32> {vdevice = #target.vdevice<cuda>}) attributes {vdevice = #target.vdevice<cuda>, Composite = "cublas.dense"} {
      %d = relay.nn.dense %a, %b {vdevice = #target.vdevice<cuda>} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
      relay.return %d : tensor<4x16xf32>
    }
    %c = relay.call_indirect %f(%x, %w) {vdevice = #target.vdevice<cuda>} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    %r = relay.relu %c {vdevice = #target.vdevice<cuda>} : tensor<4x16xf32>
    %t = relay.tuple(%r) {vdevice = #target.vdevice<cuda>} : tuple<tensor<4x16xf32>>
    %g = relay.get_item %t[0] {vdevice = #target.vdevice<cuda>} : tuple<tensor<4x16xf32>> -> tensor<4x16xf32>
    relay.return %g : tensor<4x16xf32>
  }
}

// CHECK:      %f = relay.fn {{.*}} Composite = "cublas.dense"
// CHECK:      %c = relay.call_indirect %f(%x, %w) {vdevice = #target.vdevice<cuda>, relay.compiler = "cublas"}
// CHECK-NEXT: %r = relay.relu %c {vdevice = #target.vdevice<cuda>} :
// CHECK-NEXT: %t = relay.tuple(%r) {vdevice = #target.vdevice<cuda>} :
// CHECK-NEXT: %g = relay.get_item %t[0] {vdevice = #target.vdevice<cuda>} :

// -----

// A composite whose kind cannot take it where it runs (cublas on the cpu)
// is inlined back: its ops stay with the device's regular target.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">, #target.target<"cublas">]>} {
  relay.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
    %f = relay.fn (%a: tensor<4x8xf32>, %b: tensor<16x8xf32>) -> tensor<4x16xf32> attributes {Composite = "cublas.dense"} {
      %d = relay.nn.dense %a, %b : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
      relay.return %d : tensor<4x16xf32>
    }
    %c = relay.call_indirect %f(%x, %w) : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    relay.return %c : tensor<4x16xf32>
  }
}

// CHECK:      relay.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT:   %d = relay.nn.dense %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:   relay.return %d : tensor<4x16xf32>
// CHECK-NEXT: }

// -----

// An annotation already there is kept when it is valid for the op's device
// (here written by hand on a plain op, for a kind with no composite).
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
    %d = relay.nn.dense %x, %w {relay.compiler = "blas"} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    relay.return %d : tensor<4x16xf32>
  }
}

// CHECK: %d = relay.nn.dense %x, %w {relay.compiler = "blas"}
