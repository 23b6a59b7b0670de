// RUN: hetero-opt %s -p convert-memref-to-llvm | filecheck %s
// RUN: hetero-opt %s -p convert-memref-to-llvm{index-bitwidth=32} | filecheck %s --check-prefix=I32

// memref.extract_aligned_pointer_as_index is the element pointer as an
// integer of the index width: how the blas codegen hands a buffer to a C
// library (docs/external-codegens.md), whatever the buffer's shape.
// CHECK:       func.func @library_call(%[[A:.*]]: !llvm.ptr, %[[B:.*]]: !llvm.ptr, %{{.*}}: i64)
// CHECK-NEXT:    %[[PA:.*]] = llvm.ptrtoint %[[A]] : !llvm.ptr to i64
// CHECK-NEXT:    %[[IA:.*]] = builtin.unrealized_conversion_cast %[[PA]] : i64 to index
// CHECK-NEXT:    %[[PB:.*]] = llvm.ptrtoint %[[B]] : !llvm.ptr to i64
// CHECK-NEXT:    %[[IB:.*]] = builtin.unrealized_conversion_cast %[[PB]] : i64 to index
// CHECK-NEXT:    func.call @gemm(%[[IA]], %[[IB]]) : (index, index) -> ()
// I32:         llvm.ptrtoint %{{.*}} : !llvm.ptr to i32
func.func @library_call(%a: memref<4x8xf32>, %b: memref<?x3xf64>) {
  %pa = "memref.extract_aligned_pointer_as_index"(%a) : (memref<4x8xf32>) -> index
  %pb = "memref.extract_aligned_pointer_as_index"(%b) : (memref<?x3xf64>) -> index
  func.call @gemm(%pa, %pb) : (index, index) -> ()
  func.return
}
func.func private @gemm(index, index)
