// RUN: hetero-opt %s --split-input-file --verify-diagnostics

// expected-error@+1 {{a prim_func is public (no visibility) or 'private', not 'nested'}}
"tir.prim_func"() <{sym_name = "f", function_type = () -> (), sym_visibility = "nested"}> ({
  "tir.return"() : () -> ()
}) : () -> ()

// -----

// expected-error@+1 {{entry block arguments (i64) do not match the parameter types (i32)}}
"tir.prim_func"() <{sym_name = "f", function_type = (i32) -> ()}> ({
^bb0(%x: i64):
  "tir.return"() : () -> ()
}) : () -> ()

// -----

// expected-error@+1 {{parameter #1 has type tensor<4xf32>: prim_func parameters are memrefs and scalars (integer, index, float)}}
tir.prim_func @f(%a: memref<4xf32>, %t: tensor<4xf32>) {
}

// -----

// expected-error@+1 {{parameter #0: memory space "texture" of memref<4xf32, "texture"> is not a storage scope (known: 'global', 'shared'}}
tir.prim_func @f(%a: memref<4xf32, "texture">) {
}

// -----

// expected-error@+1 {{parameter #0: memref<4xf32, "global">: the 'global' scope is written as a memref without memory space}}
tir.prim_func @f(%a: memref<4xf32, "global">) {
}

// -----

// expected-error@+1 {{result #0 has type memref<4xf32>: a prim_func returns scalars only}}
tir.prim_func @f(%a: memref<4xf32>) -> memref<4xf32> {
  tir.return %a : memref<4xf32>
}

// -----

// expected-error@+1 {{attribute 'tir.noalias' must be a bool}}
tir.prim_func @f() attributes {tir.noalias = 1 : i32} {
}

// -----

// expected-error@+1 {{attribute 'no_inline' must be a unit attribute}}
tir.prim_func @f() attributes {no_inline = true} {
}

// -----

// expected-error@+1 {{attribute 'tir.kernel_launch_params' must be an array of strings}}
tir.prim_func @f() attributes {tir.kernel_launch_params = [1]} {
}

// -----

// expected-error@+1 {{attribute 'calling_conv' must be an integer}}
tir.prim_func @f() attributes {calling_conv = "packed"} {
}

// -----

// expected-error@+1 {{expected a #target.target}}
tir.prim_func @f() target #target.vdevice<cuda> {
}

// -----

tir.prim_func @f() -> i32 {
  %c = arith.constant 0 : i64
  // expected-error@+1 {{returns (i64) but @f returns (i32)}}
  tir.return %c : i64
}

// -----

func.func @g() {
  // expected-error@+1 {{'tir.return' expects parent op 'tir.prim_func'}}
  tir.return
}

// -----

tir.prim_func @f() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{the body must have exactly one argument, the index induction variable}}
  "tir.for"(%c0, %c1, %c1) <{kind = #tir<for_kind serial>}> ({
  ^bb0(%i: index, %j: index):
    "tir.yield"() : () -> ()
  }) : (index, index, index) -> ()
}

// -----

tir.prim_func @f() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{a 'thread_binding' loop needs a thread axis}}
  "tir.for"(%c0, %c1, %c1) <{kind = #tir<for_kind thread_binding>}> ({
  ^bb0(%i: index):
    "tir.yield"() : () -> ()
  }) : (index, index, index) -> ()
}

// -----

tir.prim_func @f() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{only 'thread_binding' loops name a thread axis, not 'parallel'}}
  "tir.for"(%c0, %c1, %c1) <{kind = #tir<for_kind parallel>, thread_tag = "threadIdx.x"}> ({
  ^bb0(%i: index):
    "tir.yield"() : () -> ()
  }) : (index, index, index) -> ()
}

// -----

tir.prim_func @f() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{unknown thread axis 'threadIdx.w' (known: blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x}}
  tir.for %i = %c0 to %c1 step %c1 thread_binding "threadIdx.w" {
  }
}

// -----

tir.prim_func @f() {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  // expected-error@+1 {{a loop bound to 'threadIdx.x' must start at a constant 0}}
  tir.for %i = %c1 to %c8 step %c1 thread_binding "threadIdx.x" {
  }
}

// -----

tir.prim_func @f(%lb: index) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  // expected-error@+1 {{a loop bound to 'blockIdx.y' must start at a constant 0}}
  tir.for %i = %lb to %c8 step %c1 thread_binding "blockIdx.y" {
  }
}

// -----

tir.prim_func @f() {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  // expected-error@+1 {{a loop bound to 'threadIdx.x' must have a constant step 1}}
  tir.for %i = %c0 to %c8 step %c2 thread_binding "threadIdx.x" {
  }
}

// -----

tir.prim_func @f() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tir.for %i = %c0 to %c8 step %c1 thread_binding "threadIdx.x" {
    tir.for %j = %c0 to %c8 step %c1 {
      // expected-error@+1 {{a loop bound to 'threadIdx.x' is nested in another loop bound to 'threadIdx.x'}}
      tir.for %k = %c0 to %c8 step %c1 thread_binding "threadIdx.x" {
      }
    }
  }
}

// -----

tir.prim_func @f() {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{Expected `serial`, `parallel`, `vectorized`, `unrolled`, or `thread_binding`}}
  tir.for %i = %c0 to %c0 step %c0 sequential {
  }
}

// -----

tir.prim_func @f(%n: index) {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{the step must be positive, not 0}}
  tir.for %i = %c0 to %n step %c0 {
  }
}

// -----

func.func @g(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{'tir.for' expects ancestor op 'tir.prim_func'}}
  tir.for %i = %c0 to %n step %c1 {
  }
  func.return
}

// -----

tir.prim_func @f() {
  // expected-error@+1 {{the body of a target region takes no arguments}}
  "tir.target_region"() <{target = #target.target<"cuda">}> ({
  ^bb0(%x: index):
    "tir.yield"() : () -> ()
  }) : () -> ()
}

// -----

tir.prim_func @f() {
  // expected-error@+1 {{expected a #target.target}}
  tir.target_region "cuda" {
  }
}

// -----

tir.prim_func @f() {
  "scf.execute_region"() ({
    // expected-error@+1 {{'tir.yield' expects parent op to be one of 'tir.for', 'tir.target_region'}}
    "tir.yield"() : () -> ()
  }) : () -> ()
}

// -----

tir.prim_func @f() {
  // expected-error@+1 {{memory space "texture" of memref<4xf32, "texture"> is not a storage scope}}
  %b = tir.alloc : memref<4xf32, "texture">
}

// -----

tir.prim_func @f() {
  // expected-error@+1 {{memref<4xf32, "global">: the 'global' scope is written as a memref without memory space}}
  %b = tir.alloc : memref<4xf32, "global">
}

// -----

tir.prim_func @f() {
  // expected-error@+1 {{memref<4x4xf32, strided<[1, 4]>, "shared">: an allocated buffer has the default layout}}
  %b = tir.alloc : memref<4x4xf32, strided<[1, 4]>, "shared">
}

// -----

tir.prim_func @f(%n: index) {
  // expected-error@+1 {{memref<?x?xf32, "local"> has 2 dynamic dimension(s) but 1 size operand(s) are given}}
  %b = tir.alloc(%n) : memref<?x?xf32, "local">
}

// -----

tir.prim_func @f() {
  // expected-error@+1 {{no symbol named @nope}}
  tir.call @nope() : () -> ()
}

// -----

func.func @g() {
  func.return
}
tir.prim_func @f() {
  // expected-error@+1 {{@g is a 'func.func', not a 'tir.prim_func'}}
  tir.call @g() : () -> ()
}

// -----

tir.prim_func private @g(%a: memref<4xf32>, %n: i32) {
}
tir.prim_func @f(%a: memref<4xf32>) {
  // expected-error@+1 {{@g takes 2 argument(s), 1 given}}
  tir.call @g(%a) : (memref<4xf32>) -> ()
}

// -----

tir.prim_func private @g(%a: memref<4xf32>, %n: i32) {
}
tir.prim_func @f(%a: memref<4xf32>, %n: i64) {
  // expected-error@+1 {{argument #1 has type i64 but @g expects i32}}
  tir.call @g(%a, %n) : (memref<4xf32>, i64) -> ()
}

// -----

tir.prim_func private @g() -> i32 {
  %c = arith.constant 0 : i32
  tir.return %c : i32
}
tir.prim_func @f() {
  // expected-error@+1 {{@g returns (i32), but the call has results ()}}
  tir.call @g() : () -> ()
}

// -----

tir.prim_func private @k() -> i32 {
  %c = arith.constant 0 : i32
  tir.return %c : i32
}
tir.prim_func @f() {
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{a launched kernel returns nothing, but @k does}}
  tir.launch @k() grid(%c1) block(%c1) : ()
}

// -----

tir.prim_func private @k() target #target.target<"llvm"> {
}
tir.prim_func @f() {
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{@k is for the host target 'llvm'; call it with tir.call}}
  tir.launch @k() grid(%c1) block(%c1) : ()
}

// -----

tir.prim_func private @k() target #target.target<"cuda"> {
}
tir.prim_func @f() {
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{a launch has 1 to 3 block extents, not 4}}
  tir.launch @k() grid(%c1) block(%c1, %c1, %c1, %c1) : ()
}

// -----

tir.prim_func private @k() target #target.target<"cuda"> {
}
tir.prim_func @f() {
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{a launch has 1 to 3 grid extents, not 0}}
  tir.launch @k() grid() block(%c1) : ()
}

// -----

tir.prim_func private @k() target #target.target<"cuda"> {
}
tir.prim_func @f() {
  %c1 = arith.constant 1 : index
  tir.target_region #target.target<"cuda"> {
    // expected-error@+1 {{'tir.launch' can only run on the host, but it is inside a target region for 'cuda'}}
    tir.launch @k() grid(%c1) block(%c1) : ()
  }
}

// -----

tir.prim_func @f(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  tir.for %i = %c0 to %c4 step %c1 thread_binding "threadIdx.x" {
    // expected-error@+1 {{'tir.call_packed' can only run on the host, but it is inside a loop bound to 'threadIdx.x'}}
    %rc = tir.call_packed "log"(%a) : (memref<4xf32>) -> i32
  }
}

// -----

tir.prim_func @f(%a: memref<4xf32>) target #target.target<"cuda", {arch = "sm_80"}> {
  // expected-error@+1 {{'tir.call_packed' can only run on the host, but it is in a function for target 'cuda -arch=sm_80'}}
  tir.call_packed "log"(%a) : (memref<4xf32>) -> ()
}

// -----

tir.prim_func @f(%t: i32) {
  %x = "test.op"() : () -> tensor<4xf32>
  // expected-error@+1 {{argument #0 has type tensor<4xf32>: packed calls pass memrefs and scalars}}
  tir.call_packed "log"(%x) : (tensor<4xf32>) -> ()
}

// -----

tir.prim_func @f(%x: f32) {
  // expected-error@+1 {{packed calls return at most one scalar, not (i32, i32)}}
  %a, %b = tir.call_packed "two"(%x) : (f32) -> (i32, i32)
}

// -----

tir.prim_func @f(%x: f32) {
  // expected-error@+1 {{extern calls return at most one scalar, not (memref<4xf32>)}}
  %m = tir.call_extern "make"(%x) : (f32) -> memref<4xf32>
}
