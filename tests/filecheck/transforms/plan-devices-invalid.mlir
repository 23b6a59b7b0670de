// RUN: hetero-opt %s -p plan-devices --split-input-file --verify-diagnostics

// A parameter on the cpu consumed (only) by a computation pinned to cuda.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%x: tensor<4xf32> {vdevice = #target.vdevice<cpu>}) -> tensor<4xf32> {
    %0 = relay.exp %x : tensor<4xf32>
    // expected-error@+1 {{conflicting devices for the result of relay.exp (line 6): must be on cpu (parameter %x, line 5) and on cuda (annotated at line 8)}}
    %1 = relay.on_device %0 to #target.vdevice<cuda> fixed : tensor<4xf32>
    relay.return %1 : tensor<4xf32>
  }
}

// -----

// The result is declared on the cpu, the body's top annotation says cuda.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%x: tensor<4xf32>) -> (tensor<4xf32> {vdevice = #target.vdevice<cpu>}) {
    %0 = relay.exp %x : tensor<4xf32>
    %1 = relay.on_device %0 to #target.vdevice<cuda> : tensor<4xf32>
    // expected-error@+1 {{conflicting devices for the returned value: must be on cuda (annotated at line 19) and on cpu (result of main, line 17)}}
    relay.return %1 : tensor<4xf32>
  }
}

// -----

// One op cannot run on two devices.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %0 = relay.on_device %a to #target.vdevice<cpu> fixed : tensor<4xf32>
    %1 = relay.on_device %b to #target.vdevice<cuda> fixed : tensor<4xf32>
    // expected-error@+1 {{conflicting devices for the result of relay.on_device (line 31), an operand of relay.subtract: must be on cuda (annotated at line 31) and on cpu (annotated at line 30)}}
    %2 = relay.subtract %0, %1 : tensor<4xf32>
    relay.return %2 : tensor<4xf32>
  }
}

// -----

// Every call of a relay function agrees with its parameters' devices.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func private @f(%x: tensor<4xf32> {vdevice = #target.vdevice<cuda>}) -> tensor<4xf32> {
    relay.return %x : tensor<4xf32>
  }
  relay.func @main(%a: tensor<4xf32> {vdevice = #target.vdevice<cpu>}) -> tensor<4xf32> {
    // expected-error@+1 {{conflicting devices for argument %a of @f: must be on cpu (parameter %a, line 45) and on cuda (parameter %x, line 42)}}
    %0 = relay.call @f(%a) : (tensor<4xf32>) -> tensor<4xf32>
    relay.return %0 : tensor<4xf32>
  }
}

// -----

// Both branches of an if yield on the if's one device.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%c: tensor<i1>, %a: tensor<4xf32> {vdevice = #target.vdevice<cpu>}, %b: tensor<4xf32> {vdevice = #target.vdevice<cuda>}) -> tensor<4xf32> {
    %r = relay.if %c : tensor<i1> -> tensor<4xf32> {
      relay.yield %a : tensor<4xf32>
    } else {
      // expected-error@+1 {{conflicting devices for the branch result: must be on cuda (parameter %b, line 56) and on cpu (parameter %a, line 56)}}
      relay.yield %b : tensor<4xf32>
    }
    relay.return %r : tensor<4xf32>
  }
}

// -----

// A device type the configuration has no target for.
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">]>} {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error@+1 {{cannot place a value on cuda: no target is specified for device type 'cuda'}}
    %0 = relay.on_device %a to #target.vdevice<cuda> : tensor<4xf32>
    relay.return %0 : tensor<4xf32>
  }
}

// -----

// No configuration at all (and no `targets` option): say how to give one.
// expected-error@+1 {{plan-devices needs a compilation configuration: add a `target.config = #target.config<[...]>` module attribute or pass `plan-devices{targets="llvm,cuda"}`}}
builtin.module {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    relay.return %a : tensor<4xf32>
  }
}
