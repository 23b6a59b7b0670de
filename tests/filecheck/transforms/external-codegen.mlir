// RUN: hetero-opt %s -p plan-devices,merge-composite,annotate-target,merge-compiler-regions,partition-graph,outline-compiler-functions,external-codegen | filecheck %s
// RUN: hetero-opt %s -p plan-devices,merge-composite,annotate-target,merge-compiler-regions,partition-graph,outline-compiler-functions,external-codegen,external-codegen | filecheck %s
// REQUIRES: blas

// The blas codegen (docs/external-codegens.md) on three partitions, all
// generated in one call of its hook into the nested module @blas:
// * dense+bias+relu: one cblas_sgemm (row-major, w transposed) straight into
//   the output, then the bias and relu in place, rows parallel, each row
//   vectorized;
// * a batched matmul: one cblas_sgemm_batch_strided with the batch strides;
// * an f64 matmul feeding a matmul: cblas_dgemm twice, the first into a
//   buffer of its own.
// The relay functions stay as they are; running the pass again adds nothing.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>, %p: tensor<2x3x4xf32>, %q: tensor<2x4x5xf32>, %u: tensor<3x6xf64>, %v: tensor<6x2xf64>, %z: tensor<2x7xf64>) -> tuple<tensor<4x16xf32>, tensor<2x3x5xf32>, tensor<3x7xf64>> {
    %d = relay.nn.dense %x, %w : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    %db = relay.nn.bias_add %d, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
    %r = relay.relu %db : tensor<4x16xf32>
    %m = relay.matmul %p, %q : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
    %f = relay.matmul %u, %v : (tensor<3x6xf64>, tensor<6x2xf64>) -> tensor<3x2xf64>
    %g = relay.matmul %f, %z : (tensor<3x2xf64>, tensor<2x7xf64>) -> tensor<3x7xf64>
    %t = relay.tuple(%r, %m, %g) : tuple<tensor<4x16xf32>, tensor<2x3x5xf32>, tensor<3x7xf64>>
    relay.return %t : tuple<tensor<4x16xf32>, tensor<2x3x5xf32>, tensor<3x7xf64>>
  }
}

// CHECK:      relay.func @blas_main_0({{.*}}) attributes {{{.*}}Compiler = "blas"
// CHECK:      builtin.module @blas attributes {hetero.external_codegen = "blas"} {
// CHECK-NEXT:   tir.prim_func @blas_main_0(%[[X:.*]]: memref<4x8xf32>, %[[W:.*]]: memref<16x8xf32>, %[[B:.*]]: memref<16xf32>, %[[OUT:.*]]: memref<4x16xf32>) target #target.target<"llvm", host = #target.target<"llvm">> attributes {tir.noalias = true} {
// CHECK-DAG:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:      %[[ROWMAJOR:.*]] = arith.constant 101 : i32
// CHECK-DAG:      %[[NOTRANS:.*]] = arith.constant 111 : i32
// CHECK-DAG:      %[[TRANS:.*]] = arith.constant 112 : i32
// CHECK-DAG:      %[[C4:.*]] = arith.constant 4 : i32
// CHECK-DAG:      %[[C16:.*]] = arith.constant 16 : i32
// CHECK-DAG:      %[[C8:.*]] = arith.constant 8 : i32
// CHECK:          %[[PX:.*]] = "memref.extract_aligned_pointer_as_index"(%[[X]])
// CHECK-NEXT:     %[[PW:.*]] = "memref.extract_aligned_pointer_as_index"(%[[W]])
// CHECK-NEXT:     %[[POUT:.*]] = "memref.extract_aligned_pointer_as_index"(%[[OUT]])
// CHECK-NEXT:     tir.call_extern "scipy_cblas_sgemm"(%[[ROWMAJOR]], %[[NOTRANS]], %[[TRANS]], %[[C4]], %[[C16]], %[[C8]], %[[ONE]], %[[PX]], %[[C8]], %[[PW]], %[[C8]], %[[ZERO]], %[[POUT]], %[[C16]]) : (i32, i32, i32, i32, i32, i32, f32, index, i32, index, i32, f32, index, i32) -> ()
// CHECK-NEXT:     tir.for %[[I:.*]] = {{.*}} parallel {
// CHECK-NEXT:       tir.for %[[J:.*]] = {{.*}} vectorized {
// CHECK-NEXT:         %[[C:.*]] = memref.load %[[OUT]][%[[I]], %[[J]]]
// CHECK-NEXT:         %[[BJ:.*]] = memref.load %[[B]][%[[J]]]
// CHECK-NEXT:         %[[SUM:.*]] = arith.addf %[[C]], %[[BJ]]
// CHECK-NEXT:         %[[POS:.*]] = arith.cmpf ogt, %[[SUM]], %[[ZERO]]
// CHECK-NEXT:         %[[RELU:.*]] = arith.select %[[POS]], %[[SUM]], %[[ZERO]]
// CHECK-NEXT:         memref.store %[[RELU]], %[[OUT]][%[[I]], %[[J]]]
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   tir.prim_func @blas_main_1(%{{.*}}: memref<2x3x4xf32>, %{{.*}}: memref<2x4x5xf32>, %{{.*}}: memref<2x3x5xf32>)
// CHECK-DAG:      %[[M:.*]] = arith.constant 3 : i32
// CHECK-DAG:      %[[N:.*]] = arith.constant 5 : i32
// CHECK-DAG:      %[[K:.*]] = arith.constant 4 : i32
// CHECK-DAG:      %[[MK:.*]] = arith.constant 12 : i32
// CHECK-DAG:      %[[KN:.*]] = arith.constant 20 : i32
// CHECK-DAG:      %[[MN:.*]] = arith.constant 15 : i32
// CHECK-DAG:      %[[BATCH:.*]] = arith.constant 2 : i32
// CHECK:          tir.call_extern "scipy_cblas_sgemm_batch_strided"(%{{.*}}, %{{.*}}, %{{.*}}, %[[M]], %[[N]], %[[K]], %{{.*}}, %{{.*}}, %[[K]], %[[MK]], %{{.*}}, %[[N]], %[[KN]], %{{.*}}, %{{.*}}, %[[N]], %[[MN]], %[[BATCH]])
// CHECK-NOT:      tir.for
// CHECK:        tir.prim_func @blas_main_2(%{{.*}}: memref<3x6xf64>, %{{.*}}: memref<6x2xf64>, %{{.*}}: memref<2x7xf64>, %[[OUT2:.*]]: memref<3x7xf64>)
// CHECK:          %[[TMP:.*]] = tir.alloc : memref<3x2xf64>
// CHECK:          %[[PTMP:.*]] = "memref.extract_aligned_pointer_as_index"(%[[TMP]])
// CHECK-NEXT:     tir.call_extern "scipy_cblas_dgemm"({{.*}}, %[[PTMP]], %{{.*}}) : (i32, i32, i32, i32, i32, i32, f64, index, i32, index, i32, f64, index, i32) -> ()
// CHECK-NEXT:     %[[PTMP2:.*]] = "memref.extract_aligned_pointer_as_index"(%[[TMP]])
// CHECK:          "memref.extract_aligned_pointer_as_index"(%[[OUT2]])
// CHECK-NEXT:     tir.call_extern "scipy_cblas_dgemm"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[PTMP2]],
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-NOT:  tir.prim_func
