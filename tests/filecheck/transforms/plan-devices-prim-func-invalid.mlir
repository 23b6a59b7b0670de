// RUN: hetero-opt %s -p plan-devices --split-input-file --verify-diagnostics

// A value used once, by a prim_func's buffer in another scope, cannot be
// copied for it: a conflict naming both sides.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  tir.prim_func @k(%a: memref<8xf32, "shared">, %out: memref<8xf32>) target #target.target<"cuda"> {
  }
  relay.func @main(%x: tensor<8xf32> {vdevice = #target.vdevice<cuda, scope = "local">}) -> tensor<8xf32> {
    // expected-error@+1 {{conflicting devices for argument %x of @k: must be on cuda scope 'local' (parameter %x, line 8) and on cuda scope 'shared' (buffer %a of @k, line 6)}}
    %0 = relay.call @k(%x) : (tensor<8xf32>) -> tensor<8xf32>
    relay.return %0 : tensor<8xf32>
  }
}

// -----

// The prim_func's target decides where its result is.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  tir.prim_func @k(%a: memref<8xf32>, %out: memref<8xf32>) target #target.target<"cuda"> {
  }
  relay.func @main(%x: tensor<8xf32>) -> (tensor<8xf32> {vdevice = #target.vdevice<cpu>}) {
    %0 = relay.call @k(%x) : (tensor<8xf32>) -> tensor<8xf32>
    // expected-error@+1 {{conflicting devices for the returned value: must be on cuda (buffer %a of @k, line 19) and on cpu (result of main, line 21)}}
    relay.return %0 : tensor<8xf32>
  }
}

// -----

// A tuple's fields live together: result buffers in two scopes conflict.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  tir.prim_func @k(%a: memref<8xf32>, %o: memref<8xf32, "shared">, %p: memref<8xf32, "local">) target #target.target<"cuda"> {
  }
  relay.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{conflicting devices for the result of @k: must be on cuda scope 'shared' (buffer %o of @k, line 32) and on cuda scope 'local' (buffer %p of @k, line 32)}}
    %0 = relay.call @k(%x) : (tensor<8xf32>) -> tuple<tensor<8xf32>, tensor<8xf32>>
    relay.return %x : tensor<8xf32>
  }
}

// -----

// A prim_func for a target the configuration does not have.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  tir.prim_func @k(%a: memref<8xf32>, %out: memref<8xf32>) target #target.target<"cuda"> {
  }
  relay.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{@k runs on 'cuda', which the compilation configuration does not have}}
    %0 = relay.call @k(%x) : (tensor<8xf32>) -> tensor<8xf32>
    relay.return %0 : tensor<8xf32>
  }
}
