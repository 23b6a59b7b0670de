// RUN: hetero-opt %s --split-input-file --verify-diagnostics -p convert-tir-to-gpu

tir.prim_func @global_buffer(%a: memref<8xf32>) target #target.target<"cuda"> {
  // expected-error@+1 {{convert-tir-to-gpu: a 'global' buffer inside a kernel (kernels allocate 'local' and 'shared' buffers only; allocate it on the host: split-host-device)}}
  %t = tir.alloc : memref<8xf32>
}

// -----

tir.prim_func @two_grids(%a: memref<8xf32>) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tir.for %b = %c0 to %c8 step %c1 thread_binding "blockIdx.x" {
  }
  // expected-error@+1 {{convert-tir-to-gpu: @two_grids has 2 block-bound loop nests; one kernel runs one grid (split the function with split-host-device)}}
  tir.for %b = %c0 to %c8 step %c1 thread_binding "blockIdx.x" {
  }
}

// -----

tir.prim_func @dynamic_extent(%a: memref<?xf32>, %n: index) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{convert-tir-to-gpu: a loop bound to 'threadIdx.x' needs a constant positive extent (it is the launch size)}}
  tir.for %t = %c0 to %n step %c1 thread_binding "threadIdx.x" {
  }
}

// -----

tir.prim_func @virtual_thread() target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error@+1 {{convert-tir-to-gpu: the thread axis 'vthread' is not supported}}
  tir.for %t = %c0 to %c4 step %c1 thread_binding "vthread" {
  }
}

// -----

tir.prim_func @parallel() target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error@+1 {{convert-tir-to-gpu: a 'parallel' loop inside a kernel (bind it to a thread axis)}}
  tir.for %t = %c0 to %c4 step %c1 parallel {
  }
}

// -----

tir.prim_func @calls(%x: f32) target #target.target<"cuda"> {
  // expected-error@+1 {{convert-tir-to-gpu: 'tir.call_extern' inside a kernel (GPU code cannot call; run inline-private-functions first)}}
  %y = tir.call_extern "erff"(%x) : (f32) -> f32
}

// -----

tir.prim_func @dynamic_shared(%n: index) target #target.target<"cuda"> {
  // expected-error@+1 {{convert-tir-to-gpu: a buffer of dynamic size inside a kernel}}
  %t = tir.alloc(%n) : memref<?xf32, "shared">
}

// -----

// expected-error@+1 {{convert-tir-to-gpu: the kernel @returns returns values; kernels write their results to buffers}}
tir.prim_func @returns() -> i32 target #target.target<"cuda"> {
  %c = arith.constant 0 : i32
  tir.return %c : i32
}

// -----

tir.prim_func @calls_prim_func(%x: f32) target #target.target<"cuda"> {
  // expected-error@+1 {{convert-tir-to-gpu: 'tir.call' inside a kernel (GPU code cannot call; run inline-private-functions first)}}
  %y = tir.call @helper(%x) : (f32) -> f32
}
tir.prim_func private @helper(%x: f32) -> f32 target #target.target<"cuda"> {
  tir.return %x : f32
}

// -----

// Host-only calls pass the verifier in a function with a host, but one with
// a thread-bound loop is a kernel (annotate-device-regions and
// split-host-device have not run).
tir.prim_func @calls_packed(%a: memref<8xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{convert-tir-to-gpu: 'tir.call_packed' inside a kernel (GPU code cannot call; run inline-private-functions first)}}
  %rc = tir.call_packed "tvm.contrib.sort"(%a) : (memref<8xf32>) -> i32
  tir.for %tx = %c0 to %c1 step %c1 thread_binding "threadIdx.x" {
  }
}

// -----

tir.prim_func @launches(%a: memref<8xf32>) target #target.target<"cuda", host = #target.target<"llvm">> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{convert-tir-to-gpu: 'tir.launch' inside a kernel (GPU code cannot call; run inline-private-functions first)}}
  tir.launch @inner(%a) grid(%c1) block(%c1) : (memref<8xf32>)
  tir.for %tx = %c0 to %c1 step %c1 thread_binding "threadIdx.x" {
  }
}
tir.prim_func @inner(%a: memref<8xf32>) target #target.target<"cuda"> {
}

// -----

tir.prim_func @nested_region(%a: memref<8xf32>) target #target.target<"cuda"> {
  // expected-error@+1 {{convert-tir-to-gpu: a target region inside a kernel}}
  tir.target_region #target.target<"cuda"> {
  }
}

// -----

tir.prim_func @host(%a: memref<8xf32>) target #target.target<"llvm"> {
  %c1 = arith.constant 1 : index
  %bytes = arith.constant 256 : index
  // expected-error@+1 {{convert-tir-to-gpu: dynamic shared memory is not supported}}
  tir.launch @kernel(%a) grid(%c1) block(%c1) dynamic_shared_memory(%bytes) : (memref<8xf32>)
}
tir.prim_func @kernel(%a: memref<8xf32>) target #target.target<"cuda"> {
}
