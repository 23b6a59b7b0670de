// REQUIRES: mlir-opt
// The generic form of hetero's llvm dialect is valid upstream MLIR.
// RUN: hetero-opt %s -p lower-to-llvm --print-op-generic | %mlir-opt | filecheck %s

// CHECK-LABEL: llvm.func @axpy
// CHECK-SAME: (%{{.*}}: f32, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: i64)
// CHECK: llvm.getelementptr inbounds
// CHECK: llvm.intr.prefetch
// CHECK: llvm.intr.fma
// CHECK: llvm.fcmp "olt"
// CHECK: llvm.fptosi
// CHECK: llvm.extractelement
func.func @axpy(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>) -> (i32, f32) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %va = vector.broadcast %a : f32 to vector<4xf32>
  scf.for %i = %c0 to %n step %c4 {
    memref.prefetch %x[%i], read, locality<3>, data : memref<?xf32>
    %vx = vector.load %x[%i] : memref<?xf32>, vector<4xf32>
    %vy = vector.load %y[%i] : memref<?xf32>, vector<4xf32>
    %r = vector.fma %va, %vx, %vy : vector<4xf32>
    vector.store %r, %y[%i] : memref<?xf32>, vector<4xf32>
  }
  %lt = arith.cmpf olt, %a, %a : f32
  %b = arith.select %lt, %a, %a : f32
  %i = arith.fptosi %b : f32 to i32
  %v = vector.load %y[%c0] : memref<?xf32>, vector<4xf32>
  %e = vector.extract %v[2] : f32 from vector<4xf32>
  return %i, %e : i32, f32
}
