// RUN: hetero-opt %s -p merge-compiler-regions --split-input-file | filecheck %s
// RUN: hetero-opt %s -p merge-compiler-regions --split-input-file > %t && hetero-opt %t -p merge-compiler-regions --split-input-file | diff %t -

// Connected ops of one kind form one region; another kind starts a new one;
// regions are numbered per module in program order.
builtin.module {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = relay.exp %x {relay.compiler = "cublas"} : tensor<4xf32>
    %b = relay.tanh %a {relay.compiler = "cublas"} : tensor<4xf32>
    %c = relay.relu %b {relay.compiler = "cudnn"} : tensor<4xf32>
    %d = relay.negative %c {relay.compiler = "cudnn"} : tensor<4xf32>
    relay.return %d : tensor<4xf32>
  }
}

// CHECK:      %a = relay.exp %x {relay.compiler = "cublas", relay.compiler_region = 0 : i64}
// CHECK-NEXT: %b = relay.tanh %a {relay.compiler = "cublas", relay.compiler_region = 0 : i64}
// CHECK-NEXT: %c = relay.relu %b {relay.compiler = "cudnn", relay.compiler_region = 1 : i64}
// CHECK-NEXT: %d = relay.negative %c {relay.compiler = "cudnn", relay.compiler_region = 1 : i64}

// -----

// No cycle: %c cannot join %a's region, since %a → %b (not annotated) → %c
// would make the region both feed and consume %b.
builtin.module {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = relay.exp %x {relay.compiler = "cublas"} : tensor<4xf32>
    %b = relay.relu %a : tensor<4xf32>
    %c = relay.add %a, %b {relay.compiler = "cublas"} : tensor<4xf32>
    relay.return %c : tensor<4xf32>
  }
}

// CHECK:      %a = relay.exp %x {relay.compiler = "cublas", relay.compiler_region = 0 : i64}
// CHECK-NEXT: %b = relay.relu %a :
// CHECK-NEXT: %c = relay.add %a, %b {relay.compiler = "cublas", relay.compiler_region = 1 : i64}

// -----

// A diamond, and two independent producers joined by their consumer: one
// region each; an unconnected op of the same kind stays apart.
builtin.module {
  relay.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
    %a = relay.exp %x {relay.compiler = "cublas"} : tensor<4xf32>
    %b1 = relay.tanh %a {relay.compiler = "cublas"} : tensor<4xf32>
    %b2 = relay.relu %a {relay.compiler = "cublas"} : tensor<4xf32>
    %c = relay.add %b1, %b2 {relay.compiler = "cublas"} : tensor<4xf32>
    %p = relay.exp %y {relay.compiler = "blas"} : tensor<4xf32>
    %q = relay.tanh %y {relay.compiler = "blas"} : tensor<4xf32>
    %u = relay.negative %y {relay.compiler = "blas"} : tensor<4xf32>
    %r = relay.add %p, %q {relay.compiler = "blas"} : tensor<4xf32>
    %s = relay.add %c, %r : tensor<4xf32>
    %t = relay.add %s, %u : tensor<4xf32>
    relay.return %t : tensor<4xf32>
  }
}

// CHECK:      %a = relay.exp %x {relay.compiler = "cublas", relay.compiler_region = 0 : i64}
// CHECK-NEXT: %b1 = relay.tanh %a {relay.compiler = "cublas", relay.compiler_region = 0 : i64}
// CHECK-NEXT: %b2 = relay.relu %a {relay.compiler = "cublas", relay.compiler_region = 0 : i64}
// CHECK-NEXT: %c = relay.add %b1, %b2 {relay.compiler = "cublas", relay.compiler_region = 0 : i64}
// CHECK-NEXT: %p = relay.exp %y {relay.compiler = "blas", relay.compiler_region = 1 : i64}
// CHECK-NEXT: %q = relay.tanh %y {relay.compiler = "blas", relay.compiler_region = 1 : i64}
// CHECK-NEXT: %u = relay.negative %y {relay.compiler = "blas", relay.compiler_region = 2 : i64}
// CHECK-NEXT: %r = relay.add %p, %q {relay.compiler = "blas", relay.compiler_region = 1 : i64}

// -----

// Two producer regions with a path between them through an outside op
// (%a → %x2 → %b): %c joins the one it can without a cycle (%b's) only.
builtin.module {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = relay.exp %x {relay.compiler = "cublas"} : tensor<4xf32>
    %x2 = relay.relu %a : tensor<4xf32>
    %b = relay.tanh %x2 {relay.compiler = "cublas"} : tensor<4xf32>
    %c = relay.add %a, %b {relay.compiler = "cublas"} : tensor<4xf32>
    relay.return %c : tensor<4xf32>
  }
}

// CHECK:      %a = relay.exp %x {relay.compiler = "cublas", relay.compiler_region = 0 : i64}
// CHECK-NEXT: %x2 = relay.relu %a :
// CHECK-NEXT: %b = relay.tanh %x2 {relay.compiler = "cublas", relay.compiler_region = 1 : i64}
// CHECK-NEXT: %c = relay.add %a, %b {relay.compiler = "cublas", relay.compiler_region = 1 : i64}

// -----

// Regions never span devices or blocks.
builtin.module {
  relay.func @main(%p: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
    %a = relay.exp %x {vdevice = #target.vdevice<cuda:0>, relay.compiler = "cublas"} : tensor<4xf32>
    %b = relay.tanh %a {vdevice = #target.vdevice<cuda:1>, relay.compiler = "cublas"} : tensor<4xf32>
    %c = relay.if %p : tensor<i1> -> tensor<4xf32> {
      %d = relay.relu %b {relay.compiler = "cublas"} : tensor<4xf32>
      relay.yield %d : tensor<4xf32>
    } else {
      relay.yield %b : tensor<4xf32>
    }
    relay.return %c : tensor<4xf32>
  }
}

// CHECK:      %a = relay.exp %x {vdevice = #target.vdevice<cuda:0>, relay.compiler = "cublas", relay.compiler_region = 0 : i64}
// CHECK-NEXT: %b = relay.tanh %a {vdevice = #target.vdevice<cuda:1>, relay.compiler = "cublas", relay.compiler_region = 1 : i64}
// CHECK:      %d = relay.relu %b {relay.compiler = "cublas", relay.compiler_region = 2 : i64}

// -----

// A value captured by a nested region is an input of the op holding it:
// %c depends on %b through the `if`, which cannot be in a region.
builtin.module {
  relay.func @main(%p: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
    %a = relay.exp %x {relay.compiler = "cublas"} : tensor<4xf32>
    %b = relay.if %p : tensor<i1> -> tensor<4xf32> {
      relay.yield %a : tensor<4xf32>
    } else {
      relay.yield %x : tensor<4xf32>
    }
    %c = relay.add %a, %b {relay.compiler = "cublas"} : tensor<4xf32>
    relay.return %c : tensor<4xf32>
  }
}

// CHECK:      %a = relay.exp %x {relay.compiler = "cublas", relay.compiler_region = 0 : i64}
// CHECK:      %c = relay.add %a, %b {relay.compiler = "cublas", relay.compiler_region = 1 : i64}
