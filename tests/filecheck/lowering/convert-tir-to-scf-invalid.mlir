// RUN: hetero-opt %s --split-input-file --verify-diagnostics -p convert-tir-to-scf

// expected-error@+1 {{convert-tir-to-scf: @k is for the non-CPU target 'cuda' (the GPU path lowers it, after split-host-device)}}
tir.prim_func @k(%a: memref<32xf32>) target #target.target<"cuda"> {
}

// -----

tir.prim_func @host() {
  // expected-error@+1 {{convert-tir-to-scf: a target region for the non-CPU target 'cuda'}}
  tir.target_region #target.target<"cuda"> {
  }
}

// -----

tir.prim_func @bound() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  // expected-error@+1 {{convert-tir-to-scf: a loop bound to 'threadIdx.x' in a CPU function (thread bindings are for GPU targets)}}
  tir.for %t = %c0 to %c32 step %c1 thread_binding "threadIdx.x" {
  }
}

// -----

tir.prim_func @sort(%a: memref<8xf32>) -> i32 {
  // expected-error@+1 {{convert-tir-to-scf: packed call 'tvm.contrib.sort': the CPU runtime has no packed functions}}
  %rc = tir.call_packed "tvm.contrib.sort"(%a) : (memref<8xf32>) -> i32
  tir.return %rc : i32
}

// -----

tir.prim_func @shared() {
  // expected-error@+1 {{convert-tir-to-scf: a 'shared' buffer in a CPU function (only global, local)}}
  %s = tir.alloc : memref<32xf32, "shared">
}

// -----

tir.prim_func @clash(%x: f32) -> f32 {
  %i = arith.fptosi %x : f32 to i32
  // expected-error@+1 {{convert-tir-to-scf: extern 'clash' is called with (i32) -> (i32), which clashes with the symbol @clash of the module}}
  %y = tir.call_extern "clash"(%i) : (i32) -> i32
  tir.return %x : f32
}
