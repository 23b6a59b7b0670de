// RUN: hetero-opt %s --split-input-file --verify-diagnostics -p convert-to-llvm

// Whatever no pattern converts is an error at the op, named by this pass.
func.func @copy(%a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error@+1 {{convert-to-llvm: no lowering for 'memref.copy'}}
  "memref.copy"(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

func.func @two_d(%v: vector<2x4xf32>) -> vector<2x4xf32> {
  // expected-error@-1 {{'func.func': type vector<2x4xf32> has no LLVM equivalent (scalars and 1-D vectors only)}}
  %r = arith.addf %v, %v : vector<2x4xf32>
  return %r : vector<2x4xf32>
}

// -----

func.func @two_d_constant() {
  // expected-error@+1 {{'arith.constant': type vector<2x4xf32> has no LLVM equivalent (scalars and 1-D vectors only)}}
  %c = arith.constant dense<1.0> : vector<2x4xf32>
  %r = arith.addf %c, %c : vector<2x4xf32>
  return
}

// -----

func.func @through_block(%a: memref<4xf32>) {
  // expected-error@+1 {{memrefs passed through block arguments: not supported}}
  cf.br ^next(%a : memref<4xf32>)
^next(%b: memref<4xf32>):
  return
}
