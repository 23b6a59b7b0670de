// RUN: hetero-opt %s -p lower-te,lower-aot-main --split-input-file --verify-diagnostics

// An external codegen's function is compiled for static shapes: an entry
// function of dynamic shapes that calls one is refused (specialize instead).
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func private @ext(%x: tensor<?xf32>) -> tensor<?xf32> attributes {Extern} {
    relay.return %x : tensor<?xf32>
  }
  relay.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
    // expected-error@+1 {{lower-aot-main: @ext is an external codegen's, compiled for static shapes only: compile this program per shape (hetero.compile's dynamic="specialize")}}
    %0 = relay.call @ext(%x) : (tensor<?xf32>) -> tensor<?xf32>
    relay.return %0 : tensor<?xf32>
  }
}

// -----

// Tuples are not given shape functions (yet).
#cpu = #target.vdevice<cpu:0, target = #target.target<"llvm">>
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func private @k(%x: tensor<?xf32> {vdevice = #cpu}) -> (tensor<?xf32> {vdevice = #cpu}) attributes {Primitive} {
    %0 = relay.exp %x : tensor<?xf32>
    relay.return %0 : tensor<?xf32>
  }
  relay.func @main(%x: tensor<?xf32> {vdevice = #cpu}) -> tuple<tensor<?xf32>, tensor<?xf32>> {
    %0 = relay.call @k(%x) : (tensor<?xf32>) -> tensor<?xf32>
    // expected-error@+1 {{lower-aot-main: dynamic shapes: relay.tuple: tuples are not supported with dynamic shapes}}
    %1 = relay.tuple(%0, %x) : tuple<tensor<?xf32>, tensor<?xf32>>
    relay.return %1 : tuple<tensor<?xf32>, tensor<?xf32>>
  }
}
