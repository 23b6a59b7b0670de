// RUN: hetero-opt %s --split-input-file -p convert-cf-to-llvm | filecheck %s

// Branches keep their operands; index block arguments become i64.
// CHECK-LABEL: func.func @branches
// CHECK-SAME: (%[[C:.*]]: i1, %[[X:.*]]: f32, %[[N:.*]]: index)
func.func @branches(%c: i1, %x: f32, %n: index) -> index {
  // CHECK-NEXT: %[[M:.*]] = builtin.unrealized_conversion_cast %[[N]] : index to i64
  // CHECK-NEXT: llvm.br ^[[LOOP:.*]](%[[M]], %[[X]] : i64, f32)
  cf.br ^loop(%n, %x : index, f32)
// CHECK-NEXT: ^[[LOOP]](%[[I:.*]]: i64, %[[Y:.*]]: f32):
^loop(%i: index, %y: f32):
  // CHECK-NEXT: %[[II:.*]] = builtin.unrealized_conversion_cast %[[I]] : i64 to index
  // CHECK-NEXT: llvm.cond_br %[[C]], ^[[LOOP]](%[[I]], %[[Y]] : i64, f32), ^[[EXIT:.*]]
  cf.cond_br %c, ^loop(%i, %y : index, f32), ^exit
// CHECK-NEXT: ^[[EXIT]]:
^exit:
  // CHECK-NEXT: func.return %[[II]] : index
  func.return %i : index
}

// -----

// Two edges into one block with different arguments: one goes through a new block.
// CHECK-LABEL: func.func @same_successor
func.func @same_successor(%c: i1, %a: i32, %b: i32) -> i32 {
  // CHECK-NEXT: llvm.cond_br %{{.*}}, ^[[JOIN:.*]](%{{.*}} : i32), ^[[FORWARD:.*]]
  // CHECK-NEXT: ^[[FORWARD]]:
  // CHECK-NEXT: llvm.br ^[[JOIN]](%{{.*}} : i32)
  cf.cond_br %c, ^join(%a : i32), ^join(%b : i32)
^join(%v: i32):
  func.return %v : i32
}

// -----

// A switch is a chain of compares, the last one falling to the default.
// CHECK-LABEL: func.func @switch
// CHECK-SAME: (%[[F:.*]]: i32, %[[A:.*]]: f32, %[[B:.*]]: f32)
func.func @switch(%flag: i32, %a: f32, %b: f32) -> f32 {
  // CHECK-NEXT: %[[K0:.*]] = llvm.mlir.constant(1 : i32) : i32
  // CHECK-NEXT: %[[T0:.*]] = llvm.icmp "eq" %[[F]], %[[K0]] : i32
  // CHECK-NEXT: llvm.cond_br %[[T0]], ^[[ONE:.*]](%[[A]] : f32), ^[[NEXT:.*]]
  // CHECK-NEXT: ^[[NEXT]]:
  // CHECK-NEXT: %[[K1:.*]] = llvm.mlir.constant(7 : i32) : i32
  // CHECK-NEXT: %[[T1:.*]] = llvm.icmp "eq" %[[F]], %[[K1]] : i32
  // CHECK-NEXT: llvm.cond_br %[[T1]], ^[[SEVEN:.*]], ^[[ONE]](%[[B]] : f32)
  cf.switch %flag : i32, [
    default: ^one(%b : f32),
    1: ^one(%a : f32),
    7: ^seven
  ]
^one(%v: f32):
  func.return %v : f32
^seven:
  func.return %a : f32
}

// -----

// A switch without cases branches to its default.
// CHECK-LABEL: func.func @default_only
func.func @default_only(%flag: index) {
  // CHECK-NEXT: llvm.br ^[[D:.*]]
  cf.switch %flag : index, [
    default: ^d
  ]
^d:
  func.return
}

// -----

// A failing assert traps.
// CHECK-LABEL: func.func @assert
func.func @assert(%ok: i1) {
  // CHECK-NEXT: llvm.cond_br %{{.*}}, ^[[REST:.*]], ^[[FAIL:.*]]
  // CHECK-NEXT: ^[[REST]]:
  // CHECK-NEXT: func.return
  // CHECK-NEXT: ^[[FAIL]]:
  // CHECK-NEXT: llvm.call_intrinsic "llvm.trap"() : () -> ()
  // CHECK-NEXT: llvm.unreachable
  cf.assert %ok, "must hold"
  func.return
}
