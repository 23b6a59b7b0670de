// RUN: hetero-opt %s --split-input-file --verify-diagnostics

func.func @rank(%w: memref<8x4xf32>, %i: index) {
  // expected-error@+1 {{expected 2 indices for memref<8x4xf32>, got 1}}
  "memref.prefetch"(%w, %i) <{isWrite = false, localityHint = 3 : i32, isDataCache = true}> : (memref<8x4xf32>, index) -> ()
  func.return
}

// -----

func.func @locality(%w: memref<8xf32>, %i: index) {
  // expected-error@+1 {{locality must be 0 to 3, got 4}}
  memref.prefetch %w[%i], read, locality<4>, data : memref<8xf32>
  func.return
}

// -----

func.func @access(%w: memref<8xf32>, %i: index) {
  // expected-error@+1 {{expected 'read' or 'write'}}
  memref.prefetch %w[%i], load, locality<3>, data : memref<8xf32>
  func.return
}

// -----

func.func @cache(%w: memref<8xf32>, %i: index) {
  // expected-error@+1 {{expected 'data' or 'instr'}}
  memref.prefetch %w[%i], read, locality<3>, code : memref<8xf32>
  func.return
}
