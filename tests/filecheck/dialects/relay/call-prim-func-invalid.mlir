// RUN: hetero-opt %s --split-input-file --verify-diagnostics

// Calls of a tir.prim_func: arity, buffer types, results.

builtin.module {
  tir.prim_func @f(%a: memref<8xf32>, %out: memref<8xf32>) {
  }
  relay.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{@f takes 2 buffer(s), but the call passes 2 argument(s) and a result of 1 tensor(s): a tir.prim_func called from relay takes a buffer per argument, then one per tensor of the result}}
    %0 = relay.call @f(%x, %x) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    relay.return %0 : tensor<8xf32>
  }
}

// -----

// The result's tensors each need a buffer: a tuple of two is two parameters.
builtin.module {
  tir.prim_func @f(%a: memref<8xf32>, %out: memref<8xf32>) {
  }
  relay.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{@f takes 2 buffer(s), but the call passes 1 argument(s) and a result of 2 tensor(s)}}
    %0 = relay.call @f(%x) : (tensor<8xf32>) -> tuple<tensor<8xf32>, tensor<8xf32>>
    relay.return %x : tensor<8xf32>
  }
}

// -----

builtin.module {
  tir.prim_func @f(%a: memref<4xf32>, %out: memref<8xf32>) {
  }
  relay.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{argument 0 of the call to @f is tensor<8xf32>, but parameter #0 of @f is memref<4xf32>: expected a memref of the tensor's shape and element type}}
    %0 = relay.call @f(%x) : (tensor<8xf32>) -> tensor<8xf32>
    relay.return %0 : tensor<8xf32>
  }
}

// -----

builtin.module {
  tir.prim_func @f(%a: memref<8xf32>, %out: memref<8xi32>) {
  }
  relay.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{result tensor 0 of the call to @f is tensor<8xf32>, but parameter #1 of @f is memref<8xi32>}}
    %0 = relay.call @f(%x) : (tensor<8xf32>) -> tensor<8xf32>
    relay.return %0 : tensor<8xf32>
  }
}

// -----

// A scalar parameter has no tensor to hold.
builtin.module {
  tir.prim_func @f(%a: memref<8xf32>, %n: index) {
  }
  relay.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{result tensor 0 of the call to @f is tensor<8xf32>, but parameter #1 of @f is index}}
    %0 = relay.call @f(%x) : (tensor<8xf32>) -> tensor<8xf32>
    relay.return %0 : tensor<8xf32>
  }
}

// -----

// Buffers have static shapes.
builtin.module {
  tir.prim_func @f(%a: memref<8xf32>, %out: memref<8xf32>) {
  }
  relay.func @main(%x: tensor<?xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{argument 0 of the call to @f is tensor<?xf32>, but parameter #0 of @f is memref<8xf32>}}
    %0 = relay.call @f(%x) : (tensor<?xf32>) -> tensor<8xf32>
    relay.return %0 : tensor<8xf32>
  }
}

// -----

builtin.module {
  tir.prim_func @f(%a: memref<8xf32>, %out: memref<8xf32>) -> i32 {
    %0 = arith.constant 0 : i32
    tir.return %0 : i32
  }
  relay.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
    // expected-error@+1 {{@f returns i32: a tir.prim_func called from relay returns nothing and writes its result into its last parameters}}
    %0 = relay.call @f(%x) : (tensor<8xf32>) -> tensor<8xf32>
    relay.return %0 : tensor<8xf32>
  }
}
