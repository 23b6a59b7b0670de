// RUN: hetero-opt %s --split-input-file --verify-diagnostics

relay.func @use_before_definition(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{operand #0 does not dominate this use}}
  %0 = relay.add %1, %a : tensor<4xf32>
  // expected-note@+1 {{operand defined here (after the use)}}
  %1 = relay.exp %a : tensor<4xf32>
  relay.return %0 : tensor<4xf32>
}

// -----

relay.func @own_result_in_own_region(%c: tensor<i1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note@+1 {{operand defined here (by an op that holds the use in its regions)}}
  %r = relay.if %c : tensor<i1> -> tensor<4xf32> {
    // expected-error@+1 {{operand #0 does not dominate this use}}
    relay.yield %r : tensor<4xf32>
  } else {
    relay.yield %a : tensor<4xf32>
  }
  relay.return %r : tensor<4xf32>
}

// -----

// expected-error@+1 {{operand #0 does not dominate this use}}
%0 = relay.exp %a : tensor<4xf32>
// expected-note@+1 {{operand defined here (in a region that does not hold the use)}}
relay.func @outside(%a: tensor<4xf32>) -> tensor<4xf32> {
  relay.return %a : tensor<4xf32>
}

// -----

func.func @not_dominating_block(%c: i1) -> i32 {
  cf.cond_br %c, ^a, ^b
^a:
  // expected-note@+1 {{operand defined here (in a block that does not dominate the use)}}
  %x = arith.constant 1 : i32
  cf.br ^b
^b:
  // expected-error@+1 {{operand #0 does not dominate this use}}
  func.return %x : i32
}

// -----

// Valid: a dominating block's values, an unreachable block's uses (not
// checked, as in MLIR), and a module's ops in any order (a graph region).

func.func @dominating_block(%c: i1) -> i32 {
  %y = arith.constant 2 : i32
  cf.cond_br %c, ^a, ^b
^a:
  %x = arith.constant 1 : i32
  cf.br ^b
^b:
  func.return %y : i32
^dead:
  func.return %x : i32
}

relay.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.call @later(%a) : (tensor<4xf32>) -> tensor<4xf32>
  relay.return %0 : tensor<4xf32>
}

relay.func @later(%a: tensor<4xf32>) -> tensor<4xf32> {
  relay.return %a : tensor<4xf32>
}
