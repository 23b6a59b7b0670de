// RUN: hetero-opt %s -p partition-graph --split-input-file | filecheck %s

// An annotated composite call becomes a Compiler function literal called in
// place: the composite literal moves inside, the function is closed, its
// parameters, result and call are on the region's device.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">, #target.target<"cublas">]>} {
  relay.func @main(%x: tensor<4x8xf32> {vdevice = #target.vdevice<cuda>}, %w: tensor<16x8xf32> {vdevice = #target.vdevice<cuda>}) -> (tensor<4x16xf32> {vdevice = #target.vdevice<cuda>}) {
    %f = relay.fn (%a: tensor<4x8xf32> {vdevice = #target.vdevice<cuda>}, %b: tensor<16x8xf32> {vdevice = #target.vdevice<cuda>}) -> (tensor<4x16xf32> {vdevice = #target.vdevice<cuda>}) attributes {vdevice = #target.vdevice<cuda>, Composite = "cublas.dense"} {
      %d = relay.nn.dense %a, %b {vdevice = #target.vdevice<cuda>} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
      relay.return %d : tensor<4x16xf32>
    }
    %c = relay.call_indirect %f(%x, %w) {vdevice = #target.vdevice<cuda>, relay.compiler = "cublas"} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    %r = relay.relu %c {vdevice = #target.vdevice<cuda>} : tensor<4x16xf32>
    relay.return %r : tensor<4x16xf32>
  }
}

// CHECK:      relay.func @main
// CHECK-NEXT:   %[[P:.*]] = relay.fn (%[[X:.*]]: tensor<4x8xf32> {vdevice = #target.vdevice<cuda>}, %[[W:.*]]: tensor<16x8xf32> {vdevice = #target.vdevice<cuda>}) -> (tensor<4x16xf32> {vdevice = #target.vdevice<cuda>}) attributes {vdevice = #target.vdevice<cuda>, Compiler = "cublas", Primitive, global_symbol = "cublas_main_0"} {
// CHECK-NEXT:     %f = relay.fn ({{.*}}) -> (tensor<4x16xf32> {vdevice = #target.vdevice<cuda>}) attributes {vdevice = #target.vdevice<cuda>, Composite = "cublas.dense"} {
// CHECK-NEXT:       relay.nn.dense
// CHECK-NEXT:       relay.return
// CHECK-NEXT:     }
// CHECK-NEXT:     %[[C:.*]] = relay.call_indirect %f(%[[X]], %[[W]]) {vdevice = #target.vdevice<cuda>} :
// CHECK-NEXT:     relay.return %[[C]] : tensor<4x16xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[OUT:.*]] = relay.call_indirect %[[P]](%x, %w) {vdevice = #target.vdevice<cuda>} :
// CHECK-NEXT:   %r = relay.relu %[[OUT]]

// -----

// A merged region becomes one function; a value of the region used after it
// is returned too (a tuple, projected after the call); an op between the
// region's ops that uses its values moves after the call.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>} {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = relay.exp %x {relay.compiler = "blas", relay.compiler_region = 0 : i64} : tensor<4xf32>
    %m = relay.negative %a : tensor<4xf32>
    %b = relay.tanh %a {relay.compiler = "blas", relay.compiler_region = 0 : i64} : tensor<4xf32>
    %s = relay.add %m, %b : tensor<4xf32>
    relay.return %s : tensor<4xf32>
  }
}

// CHECK:      relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:   %[[P:.*]] = relay.fn (%[[X:.*]]: tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>> attributes {Compiler = "blas", Primitive, global_symbol = "blas_main_0"} {
// CHECK-NEXT:     %[[A:.*]] = relay.exp %[[X]] : tensor<4xf32>
// CHECK-NEXT:     %[[B:.*]] = relay.tanh %[[A]] : tensor<4xf32>
// CHECK-NEXT:     %[[T:.*]] = relay.tuple(%[[A]], %[[B]]) : tuple<tensor<4xf32>, tensor<4xf32>>
// CHECK-NEXT:     relay.return %[[T]] : tuple<tensor<4xf32>, tensor<4xf32>>
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[C:.*]] = relay.call_indirect %[[P]](%x) : (tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
// CHECK-NEXT:   %[[A2:.*]] = relay.get_item %[[C]][0]
// CHECK-NEXT:   %[[B2:.*]] = relay.get_item %[[C]][1]
// CHECK-NEXT:   %m = relay.negative %[[A2]] : tensor<4xf32>
// CHECK-NEXT:   %s = relay.add %m, %[[B2]] : tensor<4xf32>
// CHECK-NEXT:   relay.return %s : tensor<4xf32>

// -----

// Without region numbers each annotated op is its own partition; names are
// <kind>_<function>_<n>, skipping names the module already uses; partitions
// are made in nested blocks too.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"blas">]>} {
  relay.func private @blas_f_0(%x: tensor<4xf32>) -> tensor<4xf32> {
    relay.return %x : tensor<4xf32>
  }
  relay.func @f(%p: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
    %a = relay.exp %x {relay.compiler = "blas"} : tensor<4xf32>
    %b = relay.tanh %a {relay.compiler = "blas"} : tensor<4xf32>
    %c = relay.if %p : tensor<i1> -> tensor<4xf32> {
      %d = relay.relu %b {relay.compiler = "blas"} : tensor<4xf32>
      relay.yield %d : tensor<4xf32>
    } else {
      relay.yield %b : tensor<4xf32>
    }
    relay.return %c : tensor<4xf32>
  }
}

// CHECK:      relay.func @f
// CHECK-NEXT:   relay.fn {{.*}} attributes {Compiler = "blas", Primitive, global_symbol = "blas_f_1"} {
// CHECK-NEXT:     relay.exp
// CHECK:        %[[A:.*]] = relay.call_indirect
// CHECK-NEXT:   relay.fn {{.*}} attributes {Compiler = "blas", Primitive, global_symbol = "blas_f_2"} {
// CHECK-NEXT:     relay.tanh
// CHECK:        %[[B:.*]] = relay.call_indirect %{{.*}}(%[[A]])
// CHECK-NEXT:   relay.if %p
// CHECK-NEXT:     relay.fn {{.*}} attributes {Compiler = "blas", Primitive, global_symbol = "blas_f_3"} {
// CHECK-NEXT:       relay.relu
// CHECK:          %[[D:.*]] = relay.call_indirect %{{.*}}(%[[B]])
// CHECK-NEXT:     relay.yield %[[D]]
