// RUN: hetero-opt %s -p 'plan-devices{default=cuda}' --split-input-file --verify-diagnostics

// The module's own configuration wins (its default device is the cpu, by
// rule F), so a `default` that contradicts it is an error naming the fix
// rather than an option silently ignored.
// expected-error@+1 {{plan-devices{default=cuda}: the module's target.config puts the default device on 'cpu'; write `fallback = cuda` in its #target.config or drop the option}}
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">]>} {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    relay.return %a : tensor<4xf32>
  }
}

// -----

// ... and so is one against an explicit fallback.
// expected-error@+1 {{plan-devices{default=cuda}: the module's target.config puts the default device on 'cpu'; write `fallback = cuda` in its #target.config or drop the option}}
builtin.module attributes {target.config = #target.config<[#target.target<"llvm">, #target.target<"cuda">], fallback = cpu>} {
  relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    relay.return %a : tensor<4xf32>
  }
}
