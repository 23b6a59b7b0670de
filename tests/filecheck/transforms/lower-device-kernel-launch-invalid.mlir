// RUN: hetero-opt %s -p lower-device-kernel-launch --split-input-file --verify-diagnostics

// Every function needs a target: without one there is nothing to compare.
tir.prim_func @main() {
  // expected-error@+1 {{the caller has no target; run bind-target before lower-device-kernel-launch}}
  tir.call @kernel() : () -> ()
}
tir.prim_func private @kernel() target #target.target<"cuda"> {
}

// -----

tir.prim_func @main() target #target.target<"llvm"> {
  // expected-error@+1 {{@kernel has no target; run bind-target before lower-device-kernel-launch}}
  tir.call @kernel() : () -> ()
}
tir.prim_func private @kernel() {
}

// -----

// Only the host launches kernels: device code cannot call the host.
tir.prim_func @kernel() target #target.target<"cuda"> {
  // expected-error@+1 {{@helper runs on 'llvm' and cannot be called from code running on 'cuda': only the host launches device kernels}}
  tir.call @helper() : () -> ()
}
tir.prim_func private @helper() target #target.target<"llvm"> {
}

// -----

// As in TVM, a callee both launched and extern-called is not supported.
tir.prim_func @host() target #target.target<"llvm"> {
  tir.call @kernel() : () -> ()
}
tir.prim_func @device() target #target.target<"cuda", {arch = "sm_80"}> {
  tir.call @kernel() : () -> ()
}
// expected-error@+1 {{@kernel is both launched and called by symbol; that is not supported}}
tir.prim_func private @kernel() target #target.target<"cuda"> {
}

// -----

// An extent read from memory is not known before the launch.
tir.prim_func @main(%sizes: memref<1xindex>) target #target.target<"llvm"> {
  // expected-error@+1 {{the extent of 'threadIdx.x' of @kernel cannot be computed on the host: it must be a constant or pure arithmetic on the kernel's parameters}}
  tir.call @kernel(%sizes) : (memref<1xindex>) -> ()
}
tir.prim_func private @kernel(%sizes: memref<1xindex>) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.load %sizes[%c0] : memref<1xindex>
  tir.for %tx = %c0 to %n step %c1 thread_binding "threadIdx.x" {
  }
}

// -----

// Several loops on one axis: the launch takes the largest extent, which
// needs them all constant.
tir.prim_func @main(%n: index) target #target.target<"llvm"> {
  tir.call @kernel(%n) : (index) -> ()
}
tir.prim_func private @kernel(%n: index) target #target.target<"cuda"> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tir.for %tx = %c0 to %c32 step %c1 thread_binding "threadIdx.x" {
  }
  // expected-error@+1 {{@kernel binds 'threadIdx.x' again with another extent, not both constant; the launch extent of an axis is the largest one}}
  tir.for %tx = %c0 to %n step %c1 thread_binding "threadIdx.x" {
  }
}

// -----

tir.prim_func @main() target #target.target<"llvm"> {
  tir.call @kernel() : () -> ()
}
tir.prim_func private @kernel() target #target.target<"cuda"> {
  %a = tir.alloc : memref<4xf32, "shared.dyn">
  // expected-error@+1 {{@kernel allocates 'shared.dyn' memory twice; a launch passes one dynamic shared memory size}}
  %b = tir.alloc : memref<4xf32, "shared.dyn">
}

// -----

// Only the error code 0 may be dropped from a launched kernel.
tir.prim_func @main() -> i32 target #target.target<"llvm"> {
  %rc = tir.call @kernel() : () -> i32
  tir.return %rc : i32
}
tir.prim_func private @kernel() -> i32 target #target.target<"cuda"> {
  %one = arith.constant 1 : i32
  // expected-error@+1 {{@kernel is launched on a device, so it may only return the error code 0}}
  tir.return %one : i32
}

// -----

tir.prim_func @main(%x: f32) target #target.target<"llvm"> {
  // expected-error@+1 {{an extern call returns at most one value; this call of @pair has 2}}
  %a, %b = tir.call @pair(%x) : (f32) -> (f32, f32)
}
tir.prim_func private @pair(%x: f32) -> (f32, f32) target #target.target<"llvm", {opt_level = 1}> {
  tir.return %x, %x : f32, f32
}
