// RUN: hetero-opt %s --verify-diagnostics -p convert-vector-to-llvm

func.func @unlowered_memref(%m: memref<8xf32>, %i: index) -> vector<8xf32> {
  // expected-error@+1 {{'vector.load' on a memref not lowered yet: run convert-memref-to-llvm first}}
  %0 = vector.load %m[%i] : memref<8xf32>, vector<8xf32>
  func.return %0 : vector<8xf32>
}
