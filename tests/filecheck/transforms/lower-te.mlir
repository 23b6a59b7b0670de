// RUN: sed -e 's/@ISA@/mcpu = "skylake-avx512", mattr = ["+avx512f"]/' %s | hetero-opt -p lower-te | filecheck %s --check-prefixes=CHECK,AVX512
// RUN: sed -e 's/@ISA@/mcpu = "haswell", mattr = ["+avx2", "-avx512f"]/' %s | hetero-opt -p lower-te | filecheck %s --check-prefixes=CHECK,AVX2

// dense + bias_add + relu: on a CPU target the dense runs the CPU schedule
// (te/schedules/cpu_gemm.py, tested in lower-te-cpu-schedule.mlir) and
// applies the elementwise epilogue as it stores each element of a register
// tile: no intermediate buffer; the prim_func's target is the kernel's
// device's; calls are marked with the lowered symbol, calls of Extern
// functions with the external symbol.  The register tile is the target's
// width, 32 columns with AVX-512, 16 with AVX2 (the RUN lines pin each in
// turn), and the dense's 2 rows high (`_even_rows`: at most 12 or 6).
#cpu = #target.vdevice<cpu:0, target = #target.target<"llvm", {@ISA@}>>

builtin.module {
  relay.func private @k(%x: tensor<2x3xf32> {vdevice = #cpu}, %w: tensor<4x3xf32> {vdevice = #cpu}, %b: tensor<4xf32> {vdevice = #cpu}) -> (tensor<2x4xf32> {vdevice = #cpu}) attributes {Primitive} {
    %0 = relay.nn.dense %x, %w : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
    %1 = relay.nn.bias_add %0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %2 = relay.relu %1 : tensor<2x4xf32>
    relay.return %2 : tensor<2x4xf32>
  }
  relay.func private @ext(%x: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {Extern} {
    relay.return %x : tensor<2x4xf32>
  }
  relay.func @main(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
    %0 = relay.call @k(%x, %w, %b) : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %1 = relay.call @ext(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    relay.return %1 : tensor<2x4xf32>
  }
}

// CHECK:      relay.func private @k({{.*}} attributes {Primitive, lowered = @k_tir} {
// AVX512:     tir.prim_func @k_tir(%0: memref<2x3xf32>, %1: memref<4x3xf32>, %2: memref<4xf32>, %3: memref<2x4xf32>) target #target.target<"llvm", {mcpu = "skylake-avx512", mattr = ["+avx512f"]}> attributes {tir.noalias = true} {
// AVX2:       tir.prim_func @k_tir(%0: memref<2x3xf32>, %1: memref<4x3xf32>, %2: memref<4xf32>, %3: memref<2x4xf32>) target #target.target<"llvm", {mcpu = "haswell", mattr = ["+avx2", "-avx512f"]}> attributes {tir.noalias = true} {
// CHECK-NOT:    tir.alloc : memref<2x4xf32>
// AVX512:       %[[ACC:.*]] = tir.alloc : memref<2x32xf32, "local">
// AVX2:         %[[ACC:.*]] = tir.alloc : memref<2x16xf32, "local">
// CHECK:        arith.addf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK:        tir.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} unrolled {
// CHECK-NEXT:     tir.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} vectorized {
// CHECK-NEXT:       %[[D:.*]] = memref.load %[[ACC]][%[[I]], %[[J]]]
// CHECK-NEXT:       %[[M:.*]] = arith.addi %{{.*}}, %[[I]] : index
// CHECK-NEXT:       %[[N:.*]] = arith.addi %{{.*}}, %[[J]] : index
// CHECK-NEXT:       %[[B:.*]] = memref.load %2[%[[N]]]
// CHECK-NEXT:       %[[S:.*]] = arith.addf %[[D]], %[[B]] : f32
// CHECK-NEXT:       %[[POS:.*]] = arith.cmpf ogt, %[[S]], %[[Z:.*]] : f32
// CHECK-NEXT:       %[[R:.*]] = arith.select %[[POS]], %[[S]], %[[Z]] : f32
// CHECK-NEXT:       memref.store %[[R]], %3[%[[M]], %[[N]]]
// CHECK:      relay.func @main
// CHECK-NEXT:   %0 = relay.call @k(%x, %w, %b) {lowered = @k_tir}
// CHECK-NEXT:   %1 = relay.call @ext(%0) {lowered = @ext}
