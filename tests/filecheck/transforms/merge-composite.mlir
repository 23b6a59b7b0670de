// RUN: hetero-opt %s -p merge-composite --split-input-file | filecheck %s

// A match becomes a Composite literal called in place; its inputs are the
// literal's parameters, in the order the pattern visits them.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
    %d = relay.nn.dense %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    %e = relay.nn.bias_add %d, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
    %r = relay.relu %e : tensor<4x16xf32>
    relay.return %r : tensor<4x16xf32>
  }
}

// CHECK:      relay.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT:   %[[F:.*]] = relay.fn (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<16x8xf32>, %[[B:.*]]: tensor<16xf32>) -> tensor<4x16xf32> attributes {Composite = "blas.dense_bias_relu"} {
// CHECK-NEXT:     %[[D:.*]] = relay.nn.dense %[[X]], %[[W]] : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:     %[[E:.*]] = relay.nn.bias_add %[[D]], %[[B]] : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:     %[[R:.*]] = relay.relu %[[E]] : tensor<4x16xf32>
// CHECK-NEXT:     relay.return %[[R]] : tensor<4x16xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[C:.*]] = relay.call_indirect %[[F]](%x, %w, %b) : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:   relay.return %[[C]] : tensor<4x16xf32>

// -----

// An inner op used outside the match cannot move into it: the dense with two
// users is only `blas.dense`, and the bias_add stays a plain op.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tuple<tensor<4x16xf32>, tensor<4x16xf32>> {
    %d = relay.nn.dense %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    %e = relay.nn.bias_add %d, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
    %t = relay.tuple(%d, %e) : tuple<tensor<4x16xf32>, tensor<4x16xf32>>
    relay.return %t : tuple<tensor<4x16xf32>, tensor<4x16xf32>>
  }
}

// CHECK:      %[[F:.*]] = relay.fn {{.*}} attributes {Composite = "blas.dense"} {
// CHECK-NEXT:   relay.nn.dense
// CHECK-NEXT:   relay.return
// CHECK-NEXT: }
// CHECK-NEXT: %[[D:.*]] = relay.call_indirect %[[F]](%x, %w)
// CHECK-NEXT: %e = relay.nn.bias_add %[[D]], %b
// CHECK-NEXT: relay.tuple(%[[D]], %e)

// -----

// A kind only takes a match on a device it is external codegen for: the
// dense on cuda goes to cublas, the one on the cpu to blas; the composite,
// its parameters, result and call carry the match's device.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">, #target.target<"cublas">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4x8xf32> {vdevice = #target.vdevice<cuda>}, %w: tensor<16x8xf32> {vdevice = #target.vdevice<cuda>}, %a: tensor<4x8xf32> {vdevice = #target.vdevice<cpu>}) -> (tensor<4x16xf32> {vdevice = #target.vdevice<cpu>}) {
    %d = relay.nn.dense %x, %w {vdevice = #target.vdevice<cuda>} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    %c = relay.device_copy %w from #target.vdevice<cuda> to #target.vdevice<cpu> {vdevice = #target.vdevice<cpu>} : tensor<16x8xf32>
    %e = relay.nn.dense %a, %c {vdevice = #target.vdevice<cpu>} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    %dc = relay.device_copy %d from #target.vdevice<cuda> to #target.vdevice<cpu> {vdevice = #target.vdevice<cpu>} : tensor<4x16xf32>
    %s = relay.add %dc, %e {vdevice = #target.vdevice<cpu>} : tensor<4x16xf32>
    relay.return %s : tensor<4x16xf32>
  }
}

// CHECK:      %[[G:.*]] = relay.fn (%{{.*}}: tensor<4x8xf32> {vdevice = #target.vdevice<cuda>}, %{{.*}}: tensor<16x8xf32> {vdevice = #target.vdevice<cuda>}) -> (tensor<4x16xf32> {vdevice = #target.vdevice<cuda>}) attributes {vdevice = #target.vdevice<cuda>, Composite = "cublas.dense"} {
// CHECK-NEXT:   relay.nn.dense {{.*}} {vdevice = #target.vdevice<cuda>}
// CHECK-NEXT:   relay.return
// CHECK-NEXT: }
// CHECK-NEXT: %[[D:.*]] = relay.call_indirect %[[G]](%x, %w) {vdevice = #target.vdevice<cuda>}
// CHECK-NEXT: %c = relay.device_copy %w
// CHECK-NEXT: %[[H:.*]] = relay.fn ({{.*}}) -> (tensor<4x16xf32> {vdevice = #target.vdevice<cpu>}) attributes {vdevice = #target.vdevice<cpu>, Composite = "blas.dense"} {
// CHECK-NEXT:   relay.nn.dense {{.*}} {vdevice = #target.vdevice<cpu>}
// CHECK-NEXT:   relay.return
// CHECK-NEXT: }
// CHECK-NEXT: %[[E:.*]] = relay.call_indirect %[[H]](%a, %c) {vdevice = #target.vdevice<cpu>}
// CHECK-NEXT: relay.device_copy %[[D]]

// -----

// No external kind for the device: the op stays with the regular target.
// Unplanned ops are on the default device (here the cpu, rule F).
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">, #target.target<"cublas">]>} {
  relay.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
    %d = relay.nn.dense %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    relay.return %d : tensor<4x16xf32>
  }
}

// CHECK:      relay.func @main
// CHECK-NEXT:   %d = relay.nn.dense %x, %w
// CHECK-NEXT:   relay.return %d

// -----

// Predicates: BLAS has no f16 GEMM, cuBLAS has; a batched matmul is one
// call only without broadcasting of the batch; rank 4 is no pattern.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">, #target.target<"cublas">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4x8xf16> {vdevice = #target.vdevice<cpu>}, %w: tensor<16x8xf16> {vdevice = #target.vdevice<cpu>},
                   %gx: tensor<4x8xf16> {vdevice = #target.vdevice<cuda>}, %gw: tensor<16x8xf16> {vdevice = #target.vdevice<cuda>},
                   %a: tensor<2x3x4xf32> {vdevice = #target.vdevice<cpu>}, %b: tensor<2x4x5xf32> {vdevice = #target.vdevice<cpu>}, %b1: tensor<1x4x5xf32> {vdevice = #target.vdevice<cpu>},
                   %a4: tensor<2x2x3x4xf32> {vdevice = #target.vdevice<cpu>}, %b4: tensor<2x2x4x5xf32> {vdevice = #target.vdevice<cpu>}) -> (tuple<tensor<4x16xf16>, tensor<4x16xf16>, tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x2x3x5xf32>> {vdevice = #target.vdevice<cpu>}) {
    %cpu_half = relay.nn.dense %x, %w {vdevice = #target.vdevice<cpu>} : (tensor<4x8xf16>, tensor<16x8xf16>) -> tensor<4x16xf16>
    %gpu_half = relay.nn.dense %gx, %gw {vdevice = #target.vdevice<cuda>} : (tensor<4x8xf16>, tensor<16x8xf16>) -> tensor<4x16xf16>
    %copy = relay.device_copy %gpu_half from #target.vdevice<cuda> to #target.vdevice<cpu> {vdevice = #target.vdevice<cpu>} : tensor<4x16xf16>
    %batched = relay.matmul %a, %b {vdevice = #target.vdevice<cpu>} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
    %broadcast = relay.matmul %a, %b1 {vdevice = #target.vdevice<cpu>} : (tensor<2x3x4xf32>, tensor<1x4x5xf32>) -> tensor<2x3x5xf32>
    %rank4 = relay.matmul %a4, %b4 {vdevice = #target.vdevice<cpu>} : (tensor<2x2x3x4xf32>, tensor<2x2x4x5xf32>) -> tensor<2x2x3x5xf32>
    %t = relay.tuple(%cpu_half, %copy, %batched, %broadcast, %rank4) {vdevice = #target.vdevice<cpu>} : tuple<tensor<4x16xf16>, tensor<4x16xf16>, tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x2x3x5xf32>>
    relay.return %t : tuple<tensor<4x16xf16>, tensor<4x16xf16>, tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x2x3x5xf32>>
  }
}

// CHECK:      %cpu_half = relay.nn.dense %x, %w
// CHECK-NEXT: relay.fn {{.*}} Composite = "cublas.dense"
// CHECK:      relay.call_indirect {{.*}}(%gx, %gw)
// CHECK-NEXT: %copy = relay.device_copy
// CHECK-NEXT: relay.fn {{.*}} Composite = "blas.batch_matmul"
// CHECK:      relay.call_indirect {{.*}}(%a, %b)
// CHECK-NEXT: %broadcast = relay.matmul %a, %b1
// CHECK-NEXT: %rank4 = relay.matmul %a4, %b4

// -----

// cuDNN takes conv2d with its bias and relu as one composite.
builtin.module attributes {target.config = #target.config<[#target.target<"cuda">, #target.target<"cudnn">]>} {
  relay.func @main(%x: tensor<1x3x8x8xf32>, %k: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
    %c = relay.nn.conv2d %x, %k : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
    %e = relay.nn.bias_add %c, %b : (tensor<1x4x6x6xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
    %r = relay.relu %e : tensor<1x4x6x6xf32>
    relay.return %r : tensor<1x4x6x6xf32>
  }
}

// CHECK:      relay.fn {{.*}} attributes {Composite = "cudnn.conv2d_bias_relu"} {
// CHECK-NEXT:   relay.nn.conv2d
// CHECK-NEXT:   relay.nn.bias_add
// CHECK-NEXT:   relay.relu
// CHECK-NEXT:   relay.return
// CHECK-NEXT: }
// CHECK-NEXT: %{{.*}} = relay.call_indirect %{{.*}}(%x, %k, %b)
// CHECK-NEXT: relay.return

// -----

// Precedence between external kinds of one device type is the config's
// order: with cutlass listed before cublas, cutlass takes the dense.
builtin.module attributes {target.config = #target.config<[#target.target<"cuda">, #target.target<"cutlass">, #target.target<"cublas">]>} {
  relay.func @main(%x: tensor<4x8xf16>, %w: tensor<16x8xf16>) -> tensor<4x16xf16> {
    %d = relay.nn.dense %x, %w : (tensor<4x8xf16>, tensor<16x8xf16>) -> tensor<4x16xf16>
    relay.return %d : tensor<4x16xf16>
  }
}

// CHECK: relay.fn {{.*}} attributes {Composite = "cutlass.dense"}

// -----

// A dense weight in panels (`NK<b>n`, packed for hetero's own GEMM) is not
// what a GEMM library reads: BLAS does not take it.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4x8xf32>, %w: tensor<1x8x16xf32>) -> tensor<4x16xf32> {
    %d = relay.nn.dense %x, %w {weight_layout = "NK16n", units = 16 : i64} : (tensor<4x8xf32>, tensor<1x8x16xf32>) -> tensor<4x16xf32>
    relay.return %d : tensor<4x16xf32>
  }
}

// CHECK-NOT: Composite
// CHECK:     %d = relay.nn.dense %x, %w {weight_layout = "NK16n", units = 16 : i64}
