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
  // expected-error@+1 {{Expected one of 'read', 'write'}}
  memref.prefetch %w[%i], load, locality<3>, data : memref<8xf32>
  func.return
}

// -----

func.func @cache(%w: memref<8xf32>, %i: index) {
  // expected-error@+1 {{Expected one of 'data', 'instr'}}
  memref.prefetch %w[%i], read, locality<3>, code : memref<8xf32>
  func.return
}

// -----

func.func @wide_locality(%w: memref<8xf32>, %i: index) {
  // expected-error@+1 {{Expected attribute i32 but got i64}}
  "memref.prefetch"(%w, %i) <{isDataCache = true, isWrite = false, localityHint = 3 : i64}> : (memref<8xf32>, index) -> ()
  func.return
}

// -----

llvm.func @immediates(%p: !llvm.ptr) {
  // expected-error@+1 {{hint must be 0 to 3, got 9}}
  "llvm.intr.prefetch"(%p) <{cache = 1 : i32, hint = 9 : i32, rw = 0 : i32}> : (!llvm.ptr) -> ()
  llvm.return
}

// -----

llvm.func @access(%p: !llvm.ptr) {
  // expected-error@+1 {{rw must be 0 to 1, got 2}}
  "llvm.intr.prefetch"(%p) <{cache = 1 : i32, hint = 3 : i32, rw = 2 : i32}> : (!llvm.ptr) -> ()
  llvm.return
}
