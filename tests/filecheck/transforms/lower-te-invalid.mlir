// RUN: hetero-opt %s -p lower-te --split-input-file --verify-diagnostics

// A kernel whose device has no target: the target comes from the IR only.
builtin.module {
  // expected-error@+1 {{lower-te: Primitive function has no device with a target; run plan-devices (with targets) first}}
  relay.func private @k(%x: tensor<4xf32>) -> tensor<4xf32> attributes {Primitive} {
    %0 = relay.exp %x : tensor<4xf32>
    relay.return %0 : tensor<4xf32>
  }
}

// -----

// Dynamic shapes (lower-te-dynamic.mlir): a kernel whose code could not be
// right for every size is refused at the op; `[?] + [3]` reads its first
// operand at 0 if the `?` is 1, along the result if it is 3.
builtin.module {
  relay.func private @k(%x: tensor<?xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}, %y: tensor<3xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<3xf32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive} {
    // expected-error@+1 {{lower-te: dynamic shapes: relay.add: its shape rule fails where sizes known at run time only are not 1 and equal to each other (cannot broadcast shapes [d0.0] and [3])}}
    %0 = relay.add %x, %y : (tensor<?xf32>, tensor<3xf32>) -> tensor<3xf32>
    relay.return %0 : tensor<3xf32>
  }
}

// -----

// Dynamic shapes are compiled for CPU targets only.
builtin.module {
  // expected-error@+1 {{lower-te: dynamic shapes are compiled for CPU targets only, not 'cuda'}}
  relay.func private @k(%x: tensor<?xf32> {vdevice = #target.vdevice<cuda:0, target = #target.target<"cuda">>}) -> (tensor<?xf32> {vdevice = #target.vdevice<cuda:0, target = #target.target<"cuda">>}) attributes {Primitive} {
    %0 = relay.exp %x : tensor<?xf32>
    relay.return %0 : tensor<?xf32>
  }
}

// -----

// Function literals: one called in place is outlined (lower-te-literals.mlir);
// one passed as a value is not, and one that captures a value cannot be.
builtin.module {
  relay.func @main(%x: tensor<4xf32>) -> ((tensor<4xf32>) -> tensor<4xf32>) {
    // expected-error@+1 {{lower-te: a Primitive function literal that is not called in place must be outlined to a global relay.func first}}
    %f = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Primitive} {
      %0 = relay.exp %a : tensor<4xf32>
      relay.return %0 : tensor<4xf32>
    }
    relay.return %f : (tensor<4xf32>) -> tensor<4xf32>
  }
}

// -----

builtin.module {
  relay.func @main(%x: tensor<4xf32>) -> ((tensor<4xf32>) -> tensor<4xf32>) {
    // expected-error@+1 {{lower-te: a Compiler function literal that is not called in place must be outlined to a global relay.func first}}
    %f = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Compiler = "blas", global_symbol = "g"} {
      %0 = relay.exp %a : tensor<4xf32>
      relay.return %0 : tensor<4xf32>
    }
    relay.return %f : (tensor<4xf32>) -> tensor<4xf32>
  }
}

// -----

builtin.module {
  relay.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{a Primitive function must be closed, but this one uses %x of its enclosing function}}
    %f = relay.fn (%a: tensor<4xf32>) -> tensor<4xf32> attributes {Primitive} {
      %0 = relay.add %a, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      relay.return %0 : tensor<4xf32>
    }
    %r = relay.call_indirect %f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %r : tensor<4xf32>
  }
}

// -----

builtin.module {
  relay.func private @k(%x: tensor<4xi32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<4xi32> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive} {
    // expected-error@+1 {{lower-te: relay.exp on i32 elements is not supported (relay.exp is lowered for float elements)}}
    %0 = relay.exp %x : tensor<4xi32>
    relay.return %0 : tensor<4xi32>
  }
}

// -----

builtin.module {
  relay.func private @k(%x: tensor<4xui8> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) -> (tensor<4xui8> {vdevice = #target.vdevice<cpu:0, target = #target.target<"llvm">>}) attributes {Primitive} {
    // expected-error@+1 {{lower-te: relay.add on ui8 elements is not supported (relay.add is lowered for float and signless integer (i8 to i64) elements)}}
    %0 = relay.add %x, %x : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
    relay.return %0 : tensor<4xui8>
  }
}
